"""The hook path finds words, paths, line breaks, wrapper tags and injected blocks without
`re` (importing it costs a hook process more than the rest of its work on a plain prompt).
Each rewrite is checked against the regex it replaced, kept here, on generated Unicode text
rich in the characters each pattern treats specially."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import anchors, code_names, event, render, text

SETTINGS = settings(max_examples=700, deadline=None)

# Characters the patterns treat specially: word characters that are not ASCII letters
# (digits and numerals of other scripts, superscripts, titlecase, combining marks, which \w
# does not match), spaces of every kind, line breaks, invisible characters, lone surrogates.
UNICODE_EDGES = ("_", "é", "ß", "ǅ", "É", "ſ", "K", "ı", "İ", "\u0301", "\u00b2", "\u2160", "٣",
                 "日", "\u00aa", "\xa0", "\u3000", "\u2028", "\u2029", "\x85", "\x1c", "\x1f",
                 "\x0b", "\x0c", "\r", "\n", "\t", "\r\n", "\u200b", "\u00ad", "\ufeff",
                 "\U000e0041", "\ufe0f", "\ud800", "\udfff", "\U0001d400", "ａ")
ASCII_EDGES = tuple("aZz09AB_-.@+/~`'\"()<>[],:;!? ")
edge = st.sampled_from(UNICODE_EDGES + ASCII_EDGES)
texts = st.one_of(st.text(max_size=40),
                  st.lists(st.one_of(edge, st.text(max_size=3)), max_size=30).map("".join))
ascii_texts = st.lists(st.sampled_from(ASCII_EDGES + ("Ab", "aB", "1C", "x_Y")),
                       max_size=30).map("".join)

# --- text.py: `\w+` tokens and the camelCase split ---------------------------------------

WORD = re.compile(r"\w+", re.UNICODE)
CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@SETTINGS
@given(st.one_of(texts, ascii_texts))
def test_tokens_equal_the_word_regex(sample: str) -> None:
    expected = WORD.findall(sample)
    assert text.tokens(sample) == expected
    assert text._table_tokens(sample) == expected  # the path taken when `re` is not loaded


def test_no_word_character_is_whitespace() -> None:
    """What lets `split()` cut the translated text exactly where `\\w+` stops."""
    both = [code for code in range(sys.maxunicode + 1)
            if chr(code).isspace() and (chr(code).isalnum() or chr(code) == "_")]
    assert both == []


@SETTINGS
@given(st.one_of(texts, ascii_texts))
def test_camel_split_equals_the_lookaround_regex(sample: str) -> None:
    assert text._camel_spaced(sample) == CAMEL.sub(" ", sample)


@SETTINGS
@given(st.one_of(texts, ascii_texts))
def test_words_and_term_words_follow_the_word_regex(sample: str) -> None:
    """Both depend on the text only through its `\\w+` tokens."""
    found = WORD.findall(sample)
    assert text.words(sample) == [word for token in found for word in text._split_token(token)]
    assert text.term_words(sample) == text.term_words(" ".join(found))


# --- anchors.py: path-like tokens in a prompt --------------------------------------------

PATHLIKE = re.compile(r"[`'\"(<\[]?((?:~|\.{1,2})?/?[\w.@+-]+(?:/[\w.@+-]+)*/?)[`'\")>\].,:;!?]*")
path_texts = st.one_of(texts, st.lists(st.sampled_from(
    ASCII_EDGES + ("/", "/", "~", "..", "./", "~/", "src", "a.py", "é", "日", "\u0301", "\t")),
    max_size=25).map("".join))


@SETTINGS
@given(path_texts)
def test_pathlike_equals_the_path_regex(sample: str) -> None:
    assert list(anchors.pathlike(sample)) == [m.group(1) for m in PATHLIKE.finditer(sample)]


def test_pathlike_passes_over_closers_like_the_regex() -> None:
    """The closers after a path are consumed: a dot among them never starts the next one."""
    for sample in ("see src/app.py). next", "x)...y", "`a/b`,'c.d'", "~/x ~ ~/ /a//b ../c"):
        assert list(anchors.pathlike(sample)) == [m.group(1) for m in PATHLIKE.finditer(sample)]
    assert list(anchors.pathlike("a/).b")) == ["a/", "b"]


@SETTINGS
@given(path_texts)
def test_named_in_prompt_as_with_the_regex(sample: str) -> None:
    def old(prompt: str) -> list[str]:
        found: list[str] = []
        for match in PATHLIKE.finditer(prompt):
            token = match.group(1).rstrip("/")
            if "/" not in token and "." not in token.strip("."):
                continue
            relative = anchors.relative_to_root(token, "/ws/sub", "/ws")
            if relative is None or relative in found:
                continue
            found.append(relative)
        return found

    assert anchors.named_in_prompt(sample, "/ws/sub", "/ws", lambda _: True) == old(sample)


# --- render.py: line breaks, invisible characters, wrapper tags --------------------------

BREAKS = re.compile("\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
INVISIBLE = ("[\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
             "\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e01ef]")
WRAPPER = re.compile(render._WRAPPER_TAG, re.IGNORECASE)
tag_texts = st.one_of(texts, st.lists(st.one_of(edge, st.sampled_from((
    "<", ">", "/", " ", "  ", "\t", "<system", "<SYSTEM-reminder", "system_prompt", "-", "_",
    "hook-context", "<hook_", "user-prompt-submit-hook", "command_args", "<local_command_stdout",
    "function-result", "function_calls", "|im_start|", "im-sep", "<im", "<|", "developer",
    "developer_instructions", "antml:x", "antml:", "<img", "<div>", "ſystem", "<ſ", "<K",
    "İm_end", "already loaded:", "Engram proof:", "### engram memory:", "> ", "\u200b"))),
    max_size=20).map("".join))


def old_skeleton(line: str) -> str:
    if not line.isascii():
        import unicodedata

        line = unicodedata.normalize("NFKC", re.sub(INVISIBLE, "", line)).casefold()
        line = line.translate(render._LOOKALIKES)
    else:
        line = line.lower()
    line = " ".join(line.replace(" :", ":").split())
    return line.lstrip(" >*-+|`_~")


def old_is_forged(line: str) -> bool:
    key = old_skeleton(line)
    if key.startswith(render._GUARDED):
        return True
    if key.startswith("#"):
        return key.lstrip("#").lstrip().replace(" ", "").startswith("engrammemory")
    return False


def old_neutralize(sample: str) -> str:
    sample = BREAKS.sub("\n", sample)
    if "<" in sample:
        sample = WRAPPER.sub(lambda m: f"‹{m.group(1)}›", sample)
    lines = sample.split("\n")
    for index, line in enumerate(lines):
        if old_is_forged(line):
            stripped = line.lstrip(" \t")
            lines[index] = line[: len(line) - len(stripped)] + "> " + stripped
    return "\n".join(lines)


@SETTINGS
@given(tag_texts)
def test_neutralize_equals_the_regex_version(sample: str) -> None:
    assert render.neutralize(sample) == old_neutralize(sample)
    assert render.break_lines(sample) == BREAKS.sub("\n", sample).split("\n")
    assert render.one_line(sample) == old_neutralize(
        " ".join(re.sub(INVISIBLE, "", sample).split()) if not sample.isascii()
        else " ".join(sample.split()))
    for line in sample.split("\n"):
        assert render.is_forged(line) == old_is_forged(line)


@SETTINGS
@given(tag_texts)
def test_wrapper_prefilter_never_misses_a_tag(sample: str) -> None:
    if WRAPPER.search(sample):
        assert render._may_hold_wrapper_tag(sample)


def test_wrapper_prefilter_lets_common_markup_through_without_re() -> None:
    for plain in ("a < b", "<div>x</div>", "List<String>", "<img src=x>", "<br/>", "<user>",
                  "< /hooks>", "<imports>"):
        assert not render._may_hold_wrapper_tag(plain), plain
    for tag in ("<system-reminder>", "< / SYSTEM_prompt x>", "<|im_start|>", "<hook_context>",
                "<ſystem>"):
        assert WRAPPER.search(tag) and render._may_hold_wrapper_tag(tag), tag


def test_every_invisible_character_is_deleted() -> None:
    invisible = [chr(c) for c in range(sys.maxunicode + 1) if re.fullmatch(INVISIBLE, chr(c))]
    assert sorted(chr(c) for c in render._INVISIBLE) == invisible


# --- event.py: blocks an earlier hook injected -------------------------------------------

block_texts = st.lists(st.sampled_from(("<a>", "</a>", "<x-y>", "</x-y>", "<a.b>", "</a.b>",
                                        "<>", "</>", "a", " ", "\n", "<", ">", "/", "é", "<a",
                                        "</a")), max_size=20).map("".join)
tags = st.lists(st.sampled_from(("a", "x-y", "a.b", "", "a*", "(", "\\")), max_size=3)


@SETTINGS
@given(st.one_of(block_texts, texts), tags)
def test_strip_blocks_equals_the_regex_version(prompt: str, names: list[str]) -> None:
    expected = prompt
    for name in names:
        escaped = re.escape(name)
        expected = re.sub(rf"<{escaped}>.*?</{escaped}>", " ", expected, flags=re.DOTALL)
    assert event.strip_blocks(prompt, names) == expected.strip()


# --- code_names.py: what code a path event writes uses and imports ------------------------

IDENTIFIER = re.compile(r"[$A-Za-z_][$\w]*")
INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]")
HYPHENATED = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])")
JS_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])([^"'\n]{1,200})\1""")
PY_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import\b|import[ \t]+([\w.]+))",
                       re.MULTILINE)
CODE_PIECES = ("from", "import", "require", "from ", "import ", " import ", "require(", "(",
               ")", "'", '"', "`", "$", "_", "-", "--", ".", "..", "./x", "@s/p", "a-b", "a-",
               "-b", "Ab", "aB", "x1Y", "9z", "é", "İ", "ǅ", "٣", "\u00b2", " ", "  ", "\t",
               "\n", "\r\n", "\r", "\x0b", "\x1c", "\u2028", "\xa0", "\u3000", "x" * 199, "y" * 201,
               "from  import", "import a.b", "from .m import", "fromage", "importer", "required")
# Pieces that make matches likely: a keyword, blanks, an opening quote, a few characters.
IMPORT_PIECES = ("import '", 'from "', "require ( '", "import(`", "ximport 'a'", "a--b",
                 "a-b-c", "-a-b", "a-b-", "x-1", "1-x", "'", '"', " + ", "y" * 200)
code_texts = st.one_of(
    texts, st.lists(st.one_of(edge, st.sampled_from(CODE_PIECES)), max_size=30).map("".join),
    st.lists(st.sampled_from(CODE_PIECES + IMPORT_PIECES), max_size=12).map("".join))


@SETTINGS
@given(code_texts)
def test_identifiers_and_hyphenated_equal_the_regexes(sample: str) -> None:
    assert code_names.identifiers(sample) == IDENTIFIER.findall(sample)
    assert code_names.hyphenated(sample) == HYPHENATED.findall(sample)
    assert code_names.hyphenated(sample.lower()) == HYPHENATED.findall(sample.lower())
    for token in IDENTIFIER.findall(sample):
        assert code_names.code_shaped(token) == (
            len(token) >= code_names.MIN_IDENTIFIER and (
                any(c.isalpha() for c in token) if "$" in token or "_" in token.strip("_")
                else not (token.islower() or token.isupper())
                and INNER_CAPITAL.search(token) is not None))


@SETTINGS
@given(code_texts)
def test_imports_equal_the_regexes(sample: str) -> None:
    lines = "\n".join(line for line in sample.splitlines()
                      if "import" in line or "from" in line or "require" in line)
    found = [(match.group(2), False) for match in JS_IMPORT.finditer(lines)]
    # Group 1 is '' for `from  import` (two blanks, no module): that line names no module.
    found += [(match.group(1) if match.group(1) is not None else match.group(2), True)
              for match in PY_IMPORT.finditer(lines)]
    assert code_names.imports(sample) == list(dict.fromkeys(found))[:code_names.MAX_IMPORTS]


def test_a_python_import_naming_no_module_is_read_as_nothing() -> None:
    """`from  import x` (two blanks): the regex's group 1 is empty and group 2 unset, which the
    hook read as no specifier at all and failed open on (`None.strip()`)."""
    for code in ("from  import x\n", "from \timport x\n", "from   import\n"):
        assert code_names.imports(code) == [("", True)]
        assert code_names.file_evidence(code, "pkg/a.py") == ([], [])


@pytest.mark.parametrize("sample, expected", [
    ("import 'from' + 'b'", ["from"]),  # the regex goes on after a match, not inside it
    ("ximport 'a' import 'b'", ["b"]),  # `\b` before the keyword
    ("import '" + "y" * 201 + "'", []),  # at most 200 characters between the quotes
    ("import '" + "y" * 200 + "'", ["y" * 200]),
    ("require 'a' require('b') from'c' import (\"d\")", ["b", "c", "d"]),
])
def test_js_imports_examples(sample: str, expected: list[str]) -> None:
    assert [m.group(2) for m in JS_IMPORT.finditer(sample)] == expected
    assert code_names._js_imports(sample) == expected


def test_hyphenated_examples() -> None:
    sample = "a--b a-b-c -a-b a-b- x-1 1-x é-a a-é a_b-c ok-go"
    assert HYPHENATED.findall(sample) == ["a-b-c", "x-1", "ok-go"]
    assert code_names.hyphenated(sample) == ["a-b-c", "x-1", "ok-go"]
