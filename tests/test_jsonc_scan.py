"""The JSONC reader on its own: its tokens cover the text, its values are JSON's, and the texts
it remembers between calls never leak one caller's change into another's value."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.installer import jsonc

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                               max_size=4),
    max_leaves=20)
# Every character the scanner treats apart, and a few it does not.
JSONC_CHARS = st.text(st.sampled_from(list(' \t\r\n\ufeff{}[],:"/\\*ab1-.é\u2028')), max_size=60)


@settings(max_examples=150, deadline=None)
@given(JSONC_CHARS)
def test_tokens_cover_the_text_with_only_blanks_between(text: str) -> None:
    try:
        found = jsonc.tokens(text)
    except jsonc.JsoncError:
        return
    pos = 0
    for token in found:
        assert token.start >= pos and token.end > token.start
        assert all(ch in jsonc._WS for ch in text[pos:token.start])
        pos = token.end
    assert all(ch in jsonc._WS for ch in text[pos:])


@settings(max_examples=150, deadline=None)
@given(JSON_VALUES, st.sampled_from([None, 2]))
def test_parse_reads_strict_json_as_json_does(value: object, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert jsonc.parse(text) == json.loads(text)


def test_a_value_parse_gave_can_be_changed_without_changing_the_next() -> None:
    text = '{"hooks": {"SessionStart": []}, // a comment\n "b": [1, 2,],}'
    first = jsonc.parse(text)
    first["hooks"]["SessionStart"].append("changed")
    first["b"].clear()
    assert jsonc.parse(text) == {"hooks": {"SessionStart": []}, "b": [1, 2]}
    tokens = jsonc.tokens(text)
    tokens.clear()
    assert jsonc.tokens(text)


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": "b', "unterminated string (line 1)"),
    ('{"a": "b\n"}', "unterminated string (line 1)"),
    ('{"a": "b\\', "unterminated string (line 1)"),
    ('{\n/* open', "unterminated comment (line 2)"),
    ('{"a": /b}', "unexpected character '/' (line 1)"),
])
def test_broken_text_names_its_line(text: str, message: str) -> None:
    with pytest.raises(jsonc.JsoncError, match=message.replace("(", r"\(").replace(")", r"\)")):
        jsonc.tokens(text)


def test_a_backslash_escapes_a_line_break_inside_a_string() -> None:
    assert [t.kind for t in jsonc.tokens('"a\\\nb"')] == ["str"]
