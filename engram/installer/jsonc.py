"""JSON (and JSON with comments) config files, edited in place.

engram changes only the top-level members it owns (`hooks`, Cursor's `version`): their text is
replaced, inserted or removed and every other byte of the file is kept, so comments, key order
and the user's formatting elsewhere survive. A comment *inside* a member engram must rewrite
would be lost, so that case is refused (the caller says so) rather than silently dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

_WS = " \t\r\n\ufeff"


class JsoncError(ValueError):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"{message} (line {line})")
        self.line = line


@dataclass(frozen=True)
class Token:
    kind: str  # "str" | "punct" | "lit" | "comment"
    start: int
    end: int


@dataclass(frozen=True)
class Member:
    key: str
    key_start: int
    value_start: int
    value_end: int


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def tokens(text: str) -> list[Token]:
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _WS:
            i += 1
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break
                j += 1
            if j >= n or text[j] != '"':
                raise JsoncError("unterminated string", _line(text, i))
            out.append(Token("str", i, j + 1))
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(Token("comment", i, j))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise JsoncError("unterminated comment", _line(text, i))
            out.append(Token("comment", i, j + 2))
            i = j + 2
        elif ch in "{}[],:":
            out.append(Token("punct", i, i + 1))
            i += 1
        else:
            j = i
            while j < n and text[j] not in _WS and text[j] not in '{}[],:"/':
                j += 1
            if j == i:
                raise JsoncError(f"unexpected character {ch!r}", _line(text, i))
            out.append(Token("lit", i, j))
            i = j
    return out


def _trailing_commas(text: str, toks: list[Token]) -> list[Token]:
    code = [t for t in toks if t.kind != "comment"]
    return [t for t, nxt in zip(code, code[1:])
            if text[t.start] == "," and t.kind == "punct" and text[nxt.start] in "}]"
            and nxt.kind == "punct"]


def has_comments(text: str, start: int = 0, end: int | None = None) -> bool:
    end = len(text) if end is None else end
    return any(t.kind == "comment" and t.start >= start and t.end <= end for t in tokens(text))


def parse(text: str) -> Any:
    """The JSON value of `text`, allowing // and /* */ comments and trailing commas."""
    toks = tokens(text)
    blank = {id(t) for t in toks if t.kind == "comment"} | {id(t) for t in _trailing_commas(text, toks)}
    chars = list(text)
    for t in toks:
        if id(t) in blank:
            for k in range(t.start, t.end):
                if chars[k] != "\n":
                    chars[k] = " "
    cleaned = "".join(chars).lstrip("\ufeff")
    if not cleaned.strip():
        return None
    try:
        return json.loads(cleaned)
    except json.JSONDecodeError as exc:
        raise JsoncError(exc.msg, exc.lineno) from None


def _skip_value(text: str, code: list[Token], k: int) -> int:
    """Index of the last token of the value starting at code[k]."""
    depth = 0
    while k < len(code):
        ch = text[code[k].start]
        if code[k].kind == "punct" and ch in "{[":
            depth += 1
        elif code[k].kind == "punct" and ch in "}]":
            depth -= 1
        if depth == 0:
            return k
        k += 1
    raise JsoncError("unexpected end of file", _line(text, len(text)))


def members(text: str) -> tuple[int, int, list[Member]]:
    """(open brace, close brace, members) of the top-level object. Call after parse()."""
    code = [t for t in tokens(text) if t.kind != "comment"]
    if not code or text[code[0].start] != "{":
        raise JsoncError("the file does not hold a JSON object", 1)
    found: list[Member] = []
    k = 1
    while text[code[k].start] != "}":
        key_tok = code[k]
        if key_tok.kind == "punct" and text[key_tok.start] == ",":  # trailing comma
            k += 1
            continue
        last = _skip_value(text, code, k + 2)
        found.append(Member(json.loads(text[key_tok.start:key_tok.end]), key_tok.start,
                            code[k + 2].start, code[last].end))
        k = last + 1
    return code[0].start, code[k].start, found


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _indent_unit(text: str) -> str:
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            return line[: len(line) - len(stripped)]
    return "  "


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    prefix = text[start:pos]
    return prefix if not prefix.strip() else prefix[: len(prefix) - len(prefix.lstrip())]


def dumps(value: Any, unit: str = "  ", base: str = "", newline: str = "\n") -> str:
    """`value` as JSON indented by `unit`, continuation lines prefixed by `base`."""
    text = json.dumps(value, indent=unit, ensure_ascii=False)
    return text.replace("\n", newline + base)


def render_fresh(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def set_member(text: str, key: str, value: Any) -> str:
    """`text` with top-level `key` set to `value`; every other byte kept."""
    _, close, found = members(text)
    newline, unit = _newline(text), _indent_unit(text)
    for member in found:
        if member.key == key:
            base = _line_indent(text, member.key_start)
            return (text[: member.value_start] + dumps(value, unit, base, newline)
                    + text[member.value_end:])
    entry_indent = _line_indent(text, found[0].key_start) if found else unit
    rendered = f'{json.dumps(key)}: {dumps(value, unit, entry_indent, newline)}'
    if not found:
        return text[:close].rstrip(_WS) + f"{newline}{entry_indent}{rendered}{newline}" + text[close:]
    last = found[-1]
    after_last = text[last.value_end:close]
    has_trailing_comma = after_last.lstrip(_WS).startswith(",")
    head = text[: last.value_end] + ("" if has_trailing_comma else ",")
    middle = text[last.value_end:close].rstrip(_WS)
    # Keep the file's own style: a file that ends its members with a comma gets one after ours.
    tail_comma = "," if has_trailing_comma else ""
    return (head + middle + f"{newline}{entry_indent}{rendered}{tail_comma}{newline}"
            + text[close:].lstrip(" \t"))


def remove_member(text: str, key: str) -> str:
    """`text` without top-level `key` (and the comma that went with it)."""
    _, _, found = members(text)
    index = next((i for i, m in enumerate(found) if m.key == key), None)
    if index is None:
        return text
    member = found[index]
    line_start = text.rfind("\n", 0, member.key_start) + 1
    start = line_start if not text[line_start:member.key_start].strip() else member.key_start
    code = [t for t in tokens(text) if t.kind != "comment"]
    after = next(t for t in code if t.start >= member.value_end)
    comma_before: int | None = None
    end = member.value_end
    if text[after.start] == ",":  # not the last member, or a trailing comma: take it along
        end = after.end
    elif index > 0:  # the last member: the comma after the previous value goes instead
        comma_before = next(t.start for t in code if t.start >= found[index - 1].value_end)
    tail = text[end:]
    tail_stripped = tail.lstrip(" \t")
    if start == line_start and tail_stripped.startswith(("\r\n", "\n")):
        end += len(tail) - len(tail_stripped) + (2 if tail_stripped.startswith("\r\n") else 1)
    result = text[:start] + text[end:]
    if comma_before is not None:
        result = result[:comma_before] + result[comma_before + 1:]
    return result
