"""Lenient frontmatter: YAML when it is YAML, line by line when it is not, and a note saying
which parser was used and what was guessed."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram import frontmatter


def test_valid_yaml_is_read_as_yaml() -> None:
    parsed = frontmatter.parse("---\ntitle: Hello\ntags: [a, b]\npriority: 70\n---\nBody text.\n")
    assert parsed.parser == "yaml"
    assert parsed.data == {"title": "Hello", "tags": ["a", "b"], "priority": 70}
    assert parsed.body == "Body text.\n"
    assert parsed.body_line == 6
    assert parsed.notes == ()
    assert parsed.error is None


def test_no_frontmatter_is_all_body() -> None:
    parsed = frontmatter.parse("# Title\n\nJust text.\n")
    assert parsed.parser == "none"
    assert parsed.data == {}
    assert parsed.body.startswith("# Title")
    assert parsed.body_line == 1


def test_frontmatter_must_open_the_file_but_may_follow_blank_lines_and_a_bom() -> None:
    parsed = frontmatter.parse("\ufeff\n\n---\ntitle: T\n---\nbody\n")
    assert parsed.data == {"title": "T"}
    assert parsed.body == "body\n"
    assert parsed.body_line == 6
    late = frontmatter.parse("text first\n---\ntitle: T\n---\n")
    assert late.parser == "none" and late.data == {}


def test_unclosed_frontmatter_is_read_as_body_with_a_note() -> None:
    parsed = frontmatter.parse("---\ntitle: T\nno closing fence\n")
    assert parsed.parser == "none"
    assert parsed.data == {}
    assert "title: T" in parsed.body
    assert any("never closed" in note for note in parsed.notes)


def test_unquoted_star_glob_falls_back_to_the_lenient_parser_with_a_note() -> None:
    # `**/*` starts with `*`, which YAML reads as an alias: invalid YAML that Cursor accepts.
    text = "---\ndescription: Go rules\nglobs: **/*.go\nalwaysApply: false\n---\nUse gofmt.\n"
    parsed = frontmatter.parse(text)
    assert parsed.parser == "lenient"
    assert parsed.data == {"description": "Go rules", "globs": "**/*.go", "alwaysApply": False}
    assert parsed.raw_values["globs"] == "**/*.go"
    assert parsed.error is None
    assert any("not valid YAML" in note and "line by line" in note for note in parsed.notes)
    assert parsed.body == "Use gofmt.\n"


def test_lenient_keeps_brace_groups_and_comma_lists_as_written() -> None:
    text = "---\nglobs: **/*.{ts,tsx}, src/**/*.js\n---\nbody\n"
    parsed = frontmatter.parse(text)
    assert parsed.parser == "lenient"
    assert parsed.data["globs"] == "**/*.{ts,tsx}, src/**/*.js"


def test_lenient_flow_lists_block_lists_and_folded_lines() -> None:
    block = [
        "globs: [**/*.{ts,tsx},",
        "  'src/**/*.js']",
        "paths:",
        "  - **/*.py",
        "  - \"docs/**\"",
        "description: first line",
        "  continues here",
        "alwaysApply: true",
        "priority: 7",
        "empty:",
        "# a comment: ignored",
    ]
    data, raw = frontmatter.lenient(block)
    assert data["globs"] == ["**/*.{ts,tsx}", "src/**/*.js"]
    assert data["paths"] == ["**/*.py", "docs/**"]
    assert data["description"] == "first line continues here"
    assert data["alwaysApply"] is True
    assert data["priority"] == 7
    assert data["empty"] is None
    assert "#" not in "".join(data)


def test_lenient_unterminated_flow_list_is_closed_at_the_block_end() -> None:
    data, _ = frontmatter.lenient(["globs: [a/**, b/**"])
    assert data["globs"] == ["a/**", "b/**"]


@pytest.mark.parametrize("block", [
    "base: &anchor\n  title: x\nother: *anchor",  # alias bomb material
    "title: &a hello",  # an anchor alone
])
def test_yaml_anchors_and_aliases_are_refused(block: str) -> None:
    parsed = frontmatter.parse(f"---\n{block}\n---\nbody\n")
    assert parsed.parser == "lenient"
    assert any("not allowed" in note for note in parsed.notes)


def test_a_billion_laughs_block_does_not_expand() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for n in range(1, 9):
        prev = chr(ord("a") + n - 1)
        cur = chr(ord("a") + n)
        lines.append(f"{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
    parsed = frontmatter.parse("---\n" + "\n".join(lines) + "\n---\nbody\n")
    assert parsed.parser == "lenient"
    assert len(repr(parsed.data)) < 10_000


def test_two_frontmatter_blocks_are_merged_first_wins_and_the_merge_is_noted() -> None:
    text = "---\ntitle: First\n---\n\n---\nglobs: src/**\ntitle: Second\n---\nThe body.\n"
    parsed = frontmatter.parse(text)
    assert parsed.data == {"title": "First", "globs": "src/**"}
    assert parsed.body == "The body.\n"
    assert parsed.body_line == 9
    assert any("second frontmatter block at line 5" in note for note in parsed.notes)


def test_a_horizontal_rule_after_frontmatter_is_not_a_second_block() -> None:
    text = "---\ntitle: T\n---\n---\nJust prose, no keys here.\n---\nmore\n"
    parsed = frontmatter.parse(text)
    assert parsed.data == {"title": "T"}
    assert "Just prose" in parsed.body
    assert not any("second" in note for note in parsed.notes)


def test_unreadable_frontmatter_is_an_error_with_its_line() -> None:
    parsed = frontmatter.parse("\n---\n- just\n- a list: [\n---\nbody\n")
    assert parsed.error == "frontmatter could not be read"
    assert parsed.error_line == 3


def test_a_yaml_scalar_instead_of_a_mapping_is_not_silently_accepted() -> None:
    parsed = frontmatter.parse("---\njust a sentence\n---\nbody\n")
    assert parsed.error == "frontmatter could not be read"
    assert parsed.error_line == 2


def test_oversized_frontmatter_is_an_error() -> None:
    big = "x: " + "a" * (frontmatter.MAX_FRONTMATTER_CHARS + 10)
    parsed = frontmatter.parse(f"---\n{big}\n---\nbody\n")
    assert parsed.error is not None and "larger" in parsed.error
    assert parsed.error_line == 2


def test_yaml_error_note_names_the_line_in_the_file() -> None:
    parsed = frontmatter.parse("---\ntitle: ok\nglobs: **/*\n---\nbody\n")
    assert any("(line 3)" in note for note in parsed.notes), parsed.notes


def test_quoted_true_stays_a_string_in_the_lenient_parser() -> None:
    data, _ = frontmatter.lenient(['alwaysApply: "true"', "globs: **"])
    assert data["alwaysApply"] == "true"


def test_libyaml_and_the_pure_python_loader_read_the_same(monkeypatch) -> None:
    """Blocks without an anchor or alias are read by libyaml when it is there (a cold compile
    is several times faster); the data must be what the pure-Python loader gives."""
    from engram import frontmatter as fm

    root = Path(__file__).resolve().parent.parent
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.glob("memories/**/*.md"))]
    texts += [
        "---\ntitle: x\npriority: 070\nalways: yes\ntags: [a, 'b', \"c\"]\n---\nbody\n",
        "---\nglobs: **/*.ts\n---\nbody\n",  # an alias to YAML: refused, read line-wise
        "---\na: &x 1\nb: *x\n---\nbody\n",
        "---\ndescription: >\n  folded\n  text\nwhen: 2024-01-02\n---\nbody\n",
        "---\ntitle: a * b & c\n---\nbody\n",
    ]
    fast = [fm.parse(text) for text in texts]
    monkeypatch.setattr(fm, "_fast_loader", lambda: None)
    slow = [fm.parse(text) for text in texts]
    assert [(p.data, p.parser, p.notes, p.error) for p in fast] == \
        [(p.data, p.parser, p.notes, p.error) for p in slow]
    assert len(texts) > 8
