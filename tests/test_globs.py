"""Globs without wcmatch on the hook path: brace-aware splitting, bounded expansion, and a
regex translation whose answers equal wcmatch's GLOBSTAR | BRACE | DOTGLOB."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import shared_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st
from wcmatch import glob as wcglob

from engram import frontmatter, glob_match, globs

FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB


def ours(pattern: str, path: str) -> bool:
    return re.match(globs.translate(pattern), path) is not None


def theirs(pattern: str, path: str) -> bool:
    return wcglob.globmatch(path, pattern, flags=FLAGS)


# --- splitting and normalising --------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("**/*.{ts,tsx}", ["**/*.{ts,tsx}"]),
    ("**/*.scala, **/build.sbt, **/build.sc", ["**/*.scala", "**/build.sbt", "**/build.sc"]),
    ("a/{b,{c,d}}/*.{x,y}, e", ["a/{b,{c,d}}/*.{x,y}", "e"]),
    ("[a,b]*, c", ["[a,b]*", "c"]),
    ("'x,y', z", ["'x,y'", "z"]),
    ("", [""]),
])
def test_split_top_level_only_splits_outside_braces(text: str, expected: list[str]) -> None:
    assert globs.split_top_level(text) == expected


@pytest.mark.parametrize("value, expected", [
    (None, []),
    (False, []),
    ("", []),
    ([], []),
    ("**/*.py", ["**/*.py"]),
    ("'**/*.py'", ["**/*.py"]),
    ('"gui/**/*.tsx"', ["gui/**/*.tsx"]),
    ("**/*.{ts,tsx}", ["**/*.{ts,tsx}"]),
    ("a/**, b/**", ["a/**", "b/**"]),
    ('["gui/**/*", "core/**/*"]', ["gui/**/*", "core/**/*"]),  # flow list kept as text
    (["gui/**/*", "core/**/*"], ["gui/**/*", "core/**/*"]),
    (["a, b", None, "a"], ["a", "b"]),  # comma list inside a list item; duplicates dropped
    (["**/*.{md,mdx}"], ["**/*.{md,mdx}"]),
])
def test_normalize_every_shape_to_a_list(value: object, expected: list[str]) -> None:
    assert globs.normalize(value) == expected


def test_naive_comma_split_would_break_braces() -> None:
    """The regression the data README measured: `**/*.{ts` and `tsx}` match nothing."""
    normalized = globs.normalize("**/*.{ts,tsx}")
    assert len(normalized) == 1
    assert ours(normalized[0], "core/a.ts") and ours(normalized[0], "gui/b.tsx")


# --- brace expansion ------------------------------------------------------------------------

def test_expand_braces_nested_and_literal() -> None:
    assert sorted(globs.expand_braces("a/{b,c}/*.{x,y}")) == [
        "a/b/*.x", "a/b/*.y", "a/c/*.x", "a/c/*.y"]
    assert sorted(globs.expand_braces("a{b,{c,d}}")) == ["ab", "ac", "ad"]
    assert sorted(globs.expand_braces("{,x}y")) == ["xy", "y"]
    assert globs.expand_braces("plain/*.py") == ["plain/*.py"]
    # `{x}` has one option: wcmatch reads it literally.
    assert ours("{x}", "{x}") and theirs("{x}", "{x}")
    assert not ours("{x}", "x")


def test_expand_braces_is_bounded() -> None:
    bomb = "{a,b}" * 11  # 2048 patterns
    with pytest.raises(globs.GlobError):
        globs.expand_braces(bomb)
    assert len(globs.expand_braces("{a,b}" * 9)) == 512
    with pytest.raises(globs.GlobError):
        globs.translate("a" * (globs.MAX_GLOB_CHARS + 1))


def test_unbalanced_braces_are_literal() -> None:
    assert globs.expand_braces("a{b,c") == ["a{b,c"]
    assert ours("a{b,c", "a{b,c") == theirs("a{b,c", "a{b,c") is True


# --- semantics equal to wcmatch -------------------------------------------------------------

CASES = [
    ("**", ["a", "a/b", ".hidden", "a/.b/c"]),
    ("**/*", ["a", "a/b/c.py", ".env"]),
    ("*", ["a", "a/b", ".x"]),
    ("*.py", ["a.py", "src/a.py", ".py"]),
    ("**/*.py", ["a.py", "src/a.py", "src/deep/er/a.py", ".hidden/a.py", "a.pyc"]),
    ("src/**", ["src", "src/a", "src/a/b", "srcx/a"]),
    ("src/**/*", ["src", "src/a", "src/a/b"]),
    ("src/**/test_*.py", ["src/test_a.py", "src/x/y/test_b.py", "test_a.py"]),
    ("docs/**/*.{md,mdx}", ["docs/a.md", "docs/x/b.mdx", "docs/c.txt", "a.md"]),
    ("core/llm/llms/**/*.{ts,test.ts}", ["core/llm/llms/a.ts", "core/llm/llms/x/a.test.ts"]),
    ("extensions/intellij/**/*Test.kt", ["extensions/intellij/a/FooTest.kt", "FooTest.kt"]),
    ("**/__tests__/e2e/**", ["apps/web/__tests__/e2e/a.ts", "__tests__/e2e/x/y", "e2e/a"]),
    ("/**/*.", ["a.", "/a.", "x/y."]),
    ("docs/\\*_/_.{md,mdx}", ["docs/a/b.md", "docs/*_/_.md"]),
    ("a?c", ["abc", "a/c", "ac"]),
    ("[ab]*.py", ["a.py", "b1.py", "c.py"]),
    ("[!a]*", ["a", "b", ".x"]),
    ("[]]", ["]", "[]]"]),
    ("[]a]x", ["ax", "]x", "[]a]x"]),
    ("[]x", ["[]x", "x"]),
    ("[z-a]", ["z", "a", "-"]),
    ("a//b", ["a/b", "ab"]),  # touched paths are normalised: never "a//b"
    ("{x}", ["{x}", "x"]),
    ("*.{}", ["a.{}", "a."]),
]


@pytest.mark.parametrize("pattern, paths", CASES)
def test_translate_agrees_with_wcmatch(pattern: str, paths: list[str]) -> None:
    for path in paths:
        assert ours(pattern, path) == theirs(pattern, path), (pattern, path)


def spec_matches(pattern: str, path: str) -> bool | None:
    """The hook's regex-free answer (engram.glob_match), None when the glob keeps its regex."""
    spec = globs.match_spec(pattern)
    return None if spec is None else glob_match.matches(spec, path)


@pytest.mark.parametrize("pattern, paths", CASES)
def test_match_spec_agrees_with_the_regex(pattern: str, paths: list[str]) -> None:
    for path in paths + ["", "/", "a/", "/a", "a//b", "x\n", "a.py\n", "src/a\nb/c"]:
        assert spec_matches(pattern, path) in (None, ours(pattern, path)), (pattern, path)


def test_match_spec_keeps_the_regex_only_for_classes_and_many_globstars() -> None:
    assert globs.match_spec("[ab]*.py") is None and globs.match_spec("app/[id]/page.tsx") is None
    assert globs.match_spec("/".join(["**", "a"] * (glob_match.MAX_GLOBSTARS + 1))) is None
    for pattern in ("a[", "[]", "[!]", "**/*.{ts,tsx}", "src/**", "a?c", "*a*b*c", "\\[x]"):
        assert globs.match_spec(pattern) is not None, pattern
    with pytest.raises(globs.GlobError):
        globs.match_spec("{a,b}" * 11)
    with pytest.raises(globs.GlobError):
        globs.match_spec("a" * (globs.MAX_GLOB_CHARS + 1))


def test_translated_regexes_always_compile() -> None:
    """A glob once produced a regex that only failed when the router compiled it."""
    for pattern in ["[]", "[]x", "[!]", "[z-a]", "[[:alpha:]]x", "a[", "[\\]]", "[&&a]"]:
        re.compile(globs.translate(pattern))


def _corpus_patterns() -> set[str]:
    data = shared_or_skip("data")
    patterns: set[str] = set()
    for path in data.rglob("*"):
        if path.is_file() and path.suffix in (".md", ".mdc"):
            parsed = frontmatter.parse(path.read_text(encoding="utf-8"))
            for key in ("globs", "applyTo", "paths", "applies_to"):
                if key in parsed.data:
                    patterns.update(globs.normalize(parsed.data[key]))
    return patterns


def _corpus_paths() -> set[str]:
    paths: set[str] = set()
    for name in ("continue", "inbox-zero"):
        for line in shared_or_skip("data", name, "tasks.jsonl").read_text("utf-8").splitlines():
            paths.update(json.loads(line)["files"])
    return paths


def _probe_paths(pattern: str) -> set[str]:
    """Paths built from the pattern itself, so every pattern gets hits as well as misses."""
    probes: set[str] = set()
    for expanded in globs.expand_braces(pattern):
        concrete = expanded.replace("**", "deep/er").replace("*", "x").replace("?", "q")
        concrete = re.sub(r"\[!?\^?([^\]]*)\]", lambda m: (m.group(1) or "z")[:1], concrete)
        for candidate in (concrete, concrete.lstrip("/"), "pre/" + concrete, concrete + "x",
                          expanded.replace("**/", "").replace("*", "")):
            # Touched paths are normalised and relative: no empty, "." or ".." segments.
            if all(part not in ("", ".", "..") for part in candidate.split("/")):
                probes.add(candidate)
    return probes


def test_corpus_patterns_agree_with_wcmatch() -> None:
    patterns = _corpus_patterns()
    assert len(patterns) > 250  # 195 distinct applyTo values alone, plus cursor and continue
    paths = _corpus_paths()
    assert len(paths) > 1000
    checked = 0
    matched = 0
    for pattern in sorted(patterns):
        regex = re.compile(globs.translate(pattern))
        reference = wcglob.compile(pattern, flags=FLAGS)
        spec = globs.match_spec(pattern)
        for path in paths | _probe_paths(pattern):
            expected = reference.match(path)
            assert (regex.match(path) is not None) == expected, (pattern, path)
            assert spec is None or glob_match.matches(spec, path) == expected, (pattern, path)
            checked += 1
            matched += expected
    assert matched > 1000 and checked - matched > 1000  # both answers were exercised


# --- hypothesis: simple globs and paths -----------------------------------------------------

SEGMENT_PARTS = ["a", "b", "ab", ".", "x.py", "*", "?", "[ab]", "[!a]", "{a,b}", "{a,.b}",
                 "{c,{d,e}}", "_", "-", "*.py", ".*"]
# At most 6 brace groups of 3 options: 729 expansions, inside the 1000 limit.
glob_segment = st.lists(st.sampled_from(SEGMENT_PARTS), min_size=1, max_size=2).map("".join)
glob_strategy = st.lists(st.one_of(glob_segment, st.just("**")), min_size=1, max_size=3).map(
    "/".join)
path_segment = st.sampled_from(["a", "b", "ab", "ba", ".a", ".b", "x.py", "a.py", "_", "-",
                                "c", "d", "e", "aa", "b.a", "q"])
path_strategy = st.lists(path_segment, min_size=1, max_size=5).map("/".join)


@settings(max_examples=600, deadline=None)
@given(glob_strategy, path_strategy)
def test_hypothesis_translate_equals_wcmatch(pattern: str, path: str) -> None:
    assert ours(pattern, path) == theirs(pattern, path)


@settings(max_examples=600, deadline=None)
@given(glob_strategy, path_strategy)
def test_hypothesis_buckets_never_hide_a_match(pattern: str, path: str) -> None:
    """The router only tests a path against globs filed under the path's keys."""
    if ours(pattern, path):
        assert set(globs.bucket_keys(pattern)) & set(globs.path_keys(path))


# Glob text rich in what each rule treats specially: stars, `?`, escapes, unclosed classes,
# braces, empty and doubled separators, dots, line breaks.
SPEC_GLOB_PARTS = ["a", "b", "ab", ".", "..", "*", "**", "?", "\\*", "\\?", "\\", "[", "]",
                   "{a,b}", "{,a}", "{x}", "/", "//", "-", "_", "\n", "*a*", "a?b", "é"]
spec_globs = st.lists(st.sampled_from(SPEC_GLOB_PARTS), min_size=1, max_size=8).map("".join)
SPEC_PATH_PARTS = ["a", "b", "ab", "ba", "aab", ".", "..", "/", "//", "*", "?", "[", "\\",
                   "{x}", "\n", "é", "x.py", "-", "_"]
spec_paths = st.lists(st.sampled_from(SPEC_PATH_PARTS), max_size=8).map("".join)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(spec_globs, glob_strategy), st.one_of(spec_paths, path_strategy))
def test_hypothesis_match_spec_equals_the_regex(pattern: str, path: str) -> None:
    try:
        expected = ours(pattern, path)
    except globs.GlobError:
        with pytest.raises(globs.GlobError):
            globs.match_spec(pattern)
        return
    assert spec_matches(pattern, path) in (None, expected)


def test_bucket_keys() -> None:
    assert globs.bucket_keys("**/*.{ts,tsx}") == ["ext:ts", "ext:tsx"]
    assert globs.bucket_keys("extensions/vscode/src/commands.ts") == ["name:commands.ts"]
    assert globs.bucket_keys("gui/**/*") == ["any"]
    assert globs.bucket_keys("{Dockerfile,*.yml}") == ["ext:yml", "name:dockerfile"]
    assert "ext:py" in globs.path_keys("src/A.py") and "any" in globs.path_keys("x")


# --- lint -----------------------------------------------------------------------------------

def _severities(pattern: str) -> list[str]:
    return [severity for severity, _ in globs.lint(pattern)]


@pytest.mark.parametrize("pattern", ["/**/*.", "docs/\\*_/_.{md,mdx}", "src/*.", "/src/**"])
def test_never_matching_globs_are_errors(pattern: str) -> None:
    assert "error" in _severities(pattern)


@pytest.mark.parametrize("pattern", ["**", "**/*", "*"])
def test_match_everything_globs_are_warnings(pattern: str) -> None:
    assert _severities(pattern) == ["warning"]


@pytest.mark.parametrize("pattern", ["src/**/*.py", "**/*.{ts,tsx}", "Dockerfile",
                                     "extensions/intellij/**/*Test.kt", "a_b/c.py", "../x"])
def test_ordinary_globs_are_clean(pattern: str) -> None:
    assert "error" not in _severities(pattern)
    if pattern != "../x":
        assert globs.lint(pattern) == []


def test_an_exploding_glob_is_an_error_not_a_crash() -> None:
    assert "error" in _severities("{a,b}" * 12)


def test_data_readme_broken_globs_really_never_match(tmp_path: Path) -> None:
    """The two broken continue globs match nothing in wcmatch either."""
    for pattern in ("/**/*.", "docs/\\*_/_.{md,mdx}"):
        for path in ("docs/a.md", "docs/x/y.mdx", "a.", "core/x.ts"):
            assert not theirs(pattern, path)
            assert not ours(pattern, path)
