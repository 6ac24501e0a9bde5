"""JSON (and JSON with comments) config files, edited in place.

`patch(text, before, after)` turns a change of the parsed value into the smallest text edits:
only members and array elements that differ are inserted, removed or replaced, and every other
byte of the file is kept, so comments, key order and the user's formatting survive, and
link-then-unlink gives back the original bytes. An edit that would delete or rewrite a comment
raises CommentLoss instead of dropping it silently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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
    return [t for t, nxt in zip(code, code[1:], strict=False)
            if text[t.start] == "," and t.kind == "punct" and text[nxt.start] in "}]"
            and nxt.kind == "punct"]


class DuplicateKey(JsoncError):
    """An object names the same key twice: hosts keep one copy, so no edit can be safe."""

    def __init__(self, key: str, line: int) -> None:
        super().__init__(f"the key {key!r} appears twice in one object", line)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen[key] = value
    return seen


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _duplicate_line(text: str, key: str) -> int:
    """The line of the second copy of `key` in the first object that repeats it."""
    def walk(node: "Node") -> int | None:
        if node.kind == "object":
            seen = set()
            for name, start in zip(node.keys, node.key_starts, strict=False):
                if name == key and name in seen:
                    return start
                seen.add(name)
        for child in node.items:
            found = walk(child)
            if found is not None:
                return found
        return None

    try:
        position = walk(tree(text))
    except (IndexError, ValueError):
        position = None
    return _line(text, position) if position is not None else 1


def parse(text: str) -> Any:
    """The JSON value of `text`, allowing // and /* */ comments and trailing commas. An object
    that names a key twice raises DuplicateKey (JSON parsers silently keep one copy)."""
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
        return json.loads(cleaned, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise JsoncError(exc.msg, exc.lineno) from None
    except _Duplicate as dup:
        raise DuplicateKey(dup.key, _duplicate_line(text, dup.key)) from None


def comments(text: str) -> list[str]:
    """The comments of a document, in order (for "did an edit keep them all?")."""
    try:
        return [text[t.start:t.end] for t in tokens(text) if t.kind == "comment"]
    except JsoncError:
        return []


class CommentLoss(ValueError):
    """An edit would delete or rewrite a comment."""

    def __init__(self, line: int) -> None:
        super().__init__(f"a comment near line {line} would be lost")
        self.line = line


class PatchError(ValueError):
    """Two computed edits overlap: the change cannot be written without corrupting the file."""

    def __init__(self, line: int) -> None:
        super().__init__(f"engram could not compute a clean edit near line {line}")
        self.line = line


@dataclass
class Node:
    kind: str  # "object" | "array" | "scalar"
    start: int
    end: int  # one past the closing bracket or the scalar
    items: list["Node"] = field(default_factory=list)  # array elements, or member values
    keys: list[str] = field(default_factory=list)  # object member keys
    key_starts: list[int] = field(default_factory=list)


def _tree(text: str, code: list[Token], k: int) -> tuple[Node, int]:
    tok = code[k]
    ch = text[tok.start]
    if tok.kind != "punct" or ch not in "{[":
        return Node("scalar", tok.start, tok.end), k + 1
    node = Node("object" if ch == "{" else "array", tok.start, tok.start)
    close = "}" if ch == "{" else "]"
    k += 1
    while text[code[k].start] != close or code[k].kind != "punct":
        if text[code[k].start] == "," and code[k].kind == "punct":
            k += 1
            continue
        if node.kind == "object":
            node.keys.append(json.loads(text[code[k].start:code[k].end]))
            node.key_starts.append(code[k].start)
            k += 2  # the key and its colon
        child, k = _tree(text, code, k)
        node.items.append(child)
    node.end = code[k].end
    return node, k + 1


def tree(text: str) -> Node:
    """The span tree of a document that parse() accepted."""
    code = [t for t in tokens(text) if t.kind != "comment"]
    return _tree(text, code, 0)[0]


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
    return prefix[: len(prefix) - len(prefix.lstrip(" \t"))]


def _own_line_start(text: str, pos: int) -> int:
    """Where the line holding `pos` starts, if only blanks precede `pos` on it; else `pos`."""
    start = text.rfind("\n", 0, pos) + 1
    return start if not text[start:pos].strip() else pos


def dumps(value: Any, unit: str = "  ", base: str = "", newline: str = "\n") -> str:
    """`value` as JSON indented by `unit`, continuation lines prefixed by `base`."""
    text = json.dumps(value, indent=unit, ensure_ascii=False)
    return text.replace("\n", newline + base)


def render_fresh(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


class _Patcher:
    def __init__(self, text: str) -> None:
        self.text = text
        self.newline = _newline(text)
        self.unit = _indent_unit(text)
        self.edits: list[tuple[int, int, str]] = []
        toks = tokens(text)
        self.comments = [t for t in toks if t.kind == "comment"]
        self.code = [t for t in toks if t.kind != "comment"]

    def edit(self, start: int, end: int, replacement: str) -> None:
        for comment in self.comments:
            if start < comment.end and comment.start < end:
                raise CommentLoss(_line(self.text, comment.start))
        self.edits.append((start, end, replacement))

    def apply(self) -> str:
        # Applied back to front; at one position a cut goes before an insertion there, so the
        # inserted text lands where the cut began. Overlapping edits mean a bug in the diff:
        # refuse rather than splice at shifted offsets.
        ordered = sorted(self.edits, key=lambda e: (e[0], e[1]), reverse=True)
        for (_, end, _), (next_start, _, _) in zip(ordered[1:], ordered, strict=False):
            if end > next_start:
                raise PatchError(_line(self.text, next_start))
        text = self.text
        for start, end, replacement in ordered:
            text = text[:start] + replacement + text[end:]
        return text

    def render(self, value: Any, base: str, multiline: bool) -> str:
        if multiline:
            return dumps(value, self.unit, base, self.newline)
        return json.dumps(value, ensure_ascii=False)

    def diff(self, node: Node, before: Any, after: Any) -> None:
        if before == after and type(before) is type(after):
            return
        if node.kind == "object" and isinstance(before, dict) and isinstance(after, dict):
            self._diff_object(node, before, after)
        elif node.kind == "array" and isinstance(before, list) and isinstance(after, list):
            self._diff_array(node, before, after)
        else:
            self.replace(node, after)

    def replace(self, node: Node, value: Any) -> None:
        multiline = "\n" in self.text[node.start:node.end] or node.kind == "scalar"
        self.edit(node.start, node.end,
                  self.render(value, _line_indent(self.text, node.start), multiline))

    def _diff_object(self, node: Node, before: dict[str, Any], after: dict[str, Any]) -> None:
        removed = [i for i, key in enumerate(node.keys) if key not in after]
        for i, key in enumerate(node.keys):
            if key in after:
                self.diff(node.items[i], before[key], after[key])
        added: list[tuple[str | None, Any]] = [(json.dumps(k, ensure_ascii=False), after[k])
                                               for k in after if k not in before]
        self._splice(node, removed, added, starts=node.key_starts)

    def _diff_array(self, node: Node, before: list[Any], after: list[Any]) -> None:
        import difflib

        canon = [json.dumps(v, sort_keys=True) for v in before]
        wanted = [json.dumps(v, sort_keys=True) for v in after]
        removed: list[int] = []
        added: list[tuple[str | None, Any]] = []
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, canon, wanted, autojunk=False).get_opcodes():
            if op == "replace":  # edit the pairs in place, then remove or add the rest
                paired = min(i2 - i1, j2 - j1)
                for i, j in zip(range(i1, i1 + paired), range(j1, j1 + paired), strict=True):
                    self.diff(node.items[i], before[i], after[j])
                i1, j1 = i1 + paired, j1 + paired
                if i1 == i2 and j1 == j2:
                    continue
            if op in ("replace", "delete"):
                removed.extend(range(i1, i2))
            if op in ("replace", "insert") and j1 < j2:
                if i2 < len(before):  # an element that stays follows: insert before it
                    self._insert_before(node, i2, after[j1:j2])
                else:
                    added.extend((None, v) for v in after[j1:j2])
        self._splice(node, removed, added, starts=[n.start for n in node.items])

    def _insert_before(self, node: Node, index: int, values: list[Any]) -> None:
        start = node.items[index].start
        multiline = "\n" in self.text[node.start:node.end]
        base = _line_indent(self.text, start)
        sep = "," + (self.newline + base if multiline else " ")
        self.edit(start, start, "".join(self.render(v, base, multiline) + sep for v in values))

    def _separator_end(self, node: Node, index: int) -> int:
        """Where the text that belongs to item `index` ends: past its comma, and past the rest of
        its line when only blanks follow."""
        end = node.items[index].end
        comma = next((t for t in self.code if t.start >= end), None)
        if comma is None or self.text[comma.start] != "," or comma.kind != "punct" \
                or comma.start >= node.end - 1:
            return end
        end = comma.end
        rest = end
        while rest < len(self.text) and self.text[rest] in " \t":
            rest += 1
        if self.text.startswith("\r\n", rest):
            return rest + 2
        if rest < len(self.text) and self.text[rest] == "\n":
            return rest + 1
        return end

    def _splice(self, node: Node, removed: list[int], added: list[tuple[str | None, Any]],
                starts: list[int]) -> None:
        """Remove the members/elements at `removed` and append `added` ((key, value) pairs;
        key None in arrays), keeping the container's own layout. Every edit stays inside the
        span it owns, so the edits never overlap."""
        count = len(node.items)
        kept = [i for i in range(count) if i not in removed]
        if not kept:
            self._replace_all(node, starts, added)
            return
        for run_start, run_end in _runs(removed):
            if run_end < count:  # the next item stays: cut up to where it begins
                cut_end = _own_line_start(self.text, starts[run_end])
                separator_end = self._separator_end(node, run_end - 1)
                if any(separator_end <= c.start < cut_end for c in self.comments):
                    cut_end = separator_end  # a comment above the next item belongs to it
                self.edit(_own_line_start(self.text, starts[run_start]), cut_end, "")
            else:  # the run ends the container: cut from the kept item before it
                self.edit(node.items[run_start - 1].end, node.items[count - 1].end, "")
        if not added:
            return
        last = node.items[kept[-1]]
        multiline = "\n" in self.text[node.start:node.end]
        base = _line_indent(self.text, starts[kept[0]]) if multiline else ""
        lead = self.newline + base if multiline else " "
        parts = [(f"{k}: " if k is not None else "") + self.render(v, base, multiline)
                 for k, v in added]
        # Inserted right after the last kept item: a trailing comma the user had (JSONC) now
        # follows our last item, so the file keeps its style.
        self.edit(last.end, last.end, "".join("," + lead + p for p in parts))

    def _replace_all(self, node: Node, starts: list[int],
                     added: list[tuple[str | None, Any]]) -> None:
        inner_start, inner_end = node.start + 1, node.end - 1
        has_comment = any(inner_start <= c.start < inner_end for c in self.comments)
        if has_comment and node.items:  # keep the comments: cut only the items and separators
            self.edit(_own_line_start(self.text, starts[0]),
                      self._separator_end(node, len(node.items) - 1), "")
        if not added:
            if node.items and not has_comment:
                self.edit(inner_start, inner_end, "")
            return
        base = _line_indent(self.text, node.start)
        inner = base + self.unit
        parts = [(f"{k}: " if k is not None else "") + self.render(v, inner, True)
                 for k, v in added]
        body = ("," + self.newline + inner).join(parts)
        # With comments kept the new items go after them; otherwise they replace the inside.
        self.edit(inner_end if has_comment else inner_start, inner_end,
                  self.newline + inner + body + self.newline + base)


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for i in sorted(indices):
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def patch(text: str, before: Any, after: Any) -> str:
    """`text` (whose value is `before`) edited so that its value is `after`."""
    patcher = _Patcher(text)
    patcher.diff(tree(text), before, after)
    return patcher.apply()
