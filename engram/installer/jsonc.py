"""JSON (and JSON with comments) config files, edited in place.

`patch(text, before, after)` turns a change of the parsed value into the smallest text edits:
only members and array elements that differ are inserted, removed or replaced, and every other
byte of the file is kept, so comments, key order and the user's formatting survive, and
link-then-unlink gives back the original bytes. An edit that would delete or rewrite a comment
raises CommentLoss instead of dropping it silently.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

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
    return list(_tokens_of(text))


# One link parses, checks, diffs and checks again the same text many times over (18 scans of
# a settings file per `link`; a 1 MB file took about a second a scan): the last few texts'
# tokens, and their JSON with comments and trailing commas blanked, are kept for the command.
@lru_cache(maxsize=4)
def _tokens_of(text: str) -> tuple[Token, ...]:
    return tuple(_scan(text))


def _scan(text: str) -> list[Token]:
    """The tokens of `text`, by one regular expression a token (a character at a time in
    Python took a second a megabyte)."""
    out: list[Token] = []
    append = out.append
    match = _TOKEN.match
    i, n = 0, len(text)
    while i < n:
        found = match(text, i)
        if found is None:
            if text[i] == '"':
                raise JsoncError("unterminated string", _line(text, i))
            if text.startswith("/*", i):
                raise JsoncError("unterminated comment", _line(text, i))
            raise JsoncError(f"unexpected character {text[i]!r}", _line(text, i))
        j = found.end()
        kind = found.lastgroup
        if kind != "ws":
            append(Token(kind or "", i, j))
        i = j
    return out


# A string ends at its unescaped quote, never at a raw line break (a backslash escapes any
# character, a line break too); a literal is everything up to the next blank, punctuation,
# quote or slash.
_TOKEN: Final = re.compile(
    f'(?P<ws>[{re.escape(_WS)}]+)'
    r'|(?P<str>"(?:[^"\\\n]|\\[\s\S])*")'
    r'|(?P<comment>//[^\n]*|/\*[\s\S]*?\*/)'
    r'|(?P<punct>[{}\[\],:])'
    f'|(?P<lit>[^{re.escape(_WS)}{{}}\\[\\],:"/]+)')


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


# How deep a config may nest for engram to edit it: the edit walks the document recursively
# (parse, copy, diff, compare), and past a few hundred levels Python's own recursion limit
# would end the command with a crash. No host's settings come near this.
MAX_DEPTH = 200


class TooDeep(JsoncError):
    """Objects and arrays nest deeper than MAX_DEPTH."""

    def __init__(self, line: int) -> None:
        super().__init__(f"nests deeper than {MAX_DEPTH} levels", line)


def _check_depth(text: str, toks: list[Token]) -> None:
    depth = 0
    for t in toks:
        if t.kind != "punct":
            continue
        ch = text[t.start]
        if ch in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                raise TooDeep(_line(text, t.start))
        elif ch in "}]":
            depth -= 1


class _NotJson(Exception):
    def __init__(self, literal: str) -> None:
        super().__init__(literal)
        self.literal = literal


def _not_json(literal: str) -> Any:
    raise _NotJson(literal)


def parse(text: str) -> Any:
    """The JSON value of `text`, allowing // and /* */ comments and trailing commas (and one
    byte order mark at the start). An object that names a key twice raises DuplicateKey (JSON
    parsers silently keep one copy); one that nests deeper than MAX_DEPTH raises TooDeep.
    `NaN`, `Infinity` and `-Infinity`, which Python's json module reads, are JsoncError: JSON
    has no such values, and every host's parser (JSON.parse, serde_json) rejects the file."""
    cleaned = _cleaned(text)
    if not cleaned.strip():
        return None
    try:
        return json.loads(cleaned, object_pairs_hook=_no_duplicates, parse_constant=_not_json)
    except json.JSONDecodeError as exc:
        raise JsoncError(exc.msg, exc.lineno) from None
    except _Duplicate as dup:
        raise DuplicateKey(dup.key, _duplicate_line(text, dup.key)) from None
    except _NotJson as bad:
        where = next((t.start for t in tokens(text)
                      if t.kind == "lit" and text[t.start:t.end] == bad.literal), 0)
        raise JsoncError(f"JSON has no value {bad.literal}", _line(text, where)) from None


@lru_cache(maxsize=4)
def _cleaned(text: str) -> str:
    """`text` with its comments and trailing commas blanked (line breaks kept): JSON, which
    json.loads turns into a fresh value each call (a caller may change what it gets)."""
    toks = tokens(text)
    _check_depth(text, toks)
    blank = {id(t) for t in toks if t.kind == "comment"} | \
        {id(t) for t in _trailing_commas(text, toks)}
    chars = list(text)
    for t in toks:
        if id(t) in blank:
            for k in range(t.start, t.end):
                if chars[k] != "\n":
                    chars[k] = " "
    return "".join(chars).removeprefix("\ufeff")


class NotStrict(JsoncError):
    """What parse() accepts and the host's own parser rejects, with the whole file: a comment
    or a trailing comma in strict JSON; a trailing comma or a byte order mark in JSON with
    comments (Gemini CLI's strip-json-comments, then JSON.parse)."""


# What each host's parser reads beyond strict JSON (`install.syntax` in hosts/*.yaml):
# "json": one byte order mark at the start skipped (Claude Code's JSON.parse after its own
# strip; Cursor and Windsurf taken to do the same); "jsonc": comments too, no byte order mark
# (Gemini CLI: strip-json-comments, then JSON.parse); "serde_json": nothing more, and no
# escape of half a surrogate pair either (Codex 0.171.0 runs no hook of a hooks.json holding
# a BOM or a `\udc00`).
SYNTAXES: Final = ("json", "jsonc", "serde_json")


def check_syntax(text: str, syntax: str = "json") -> None:
    """Raise NotStrict at the first thing in `text` (which parse() accepts) that the host's
    parser (`syntax`, one of SYNTAXES) rejects: a trailing comma in any case; a comment
    unless "jsonc"; a byte order mark unless "json"; an escape of half a surrogate pair
    for "serde_json"."""
    toks = tokens(text)
    found = [(t.start, "a trailing comma") for t in _trailing_commas(text, toks)]
    if syntax != "jsonc":
        found += [(t.start, "a comment") for t in toks if t.kind == "comment"]
    if syntax != "json" and text.startswith("\ufeff"):
        found.append((0, "a byte order mark"))
    if syntax == "serde_json":
        found += [(t.start, "an escape of half a surrogate pair") for t in toks
                  if t.kind == "str" and "\\u" in text[t.start:t.end]
                  and _lone_surrogate(text[t.start:t.end])]
    if found:
        start, what = min(found)
        raise NotStrict(what, _line(text, start))


def _lone_surrogate(literal: str) -> bool:
    """Does a JSON string literal escape half a surrogate pair (`"\\ud800"`)? A pair
    decodes to one character; half of one stays a surrogate."""
    try:
        value = json.loads(literal)
    except ValueError:
        return False
    return any("\ud800" <= ch <= "\udfff" for ch in value)


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


def commented_members(text: str, key: str) -> set[str]:
    """The members of the object under the top-level `key` that a comment sits next to: one
    between the code before the member and the code after its value (above its key, inside
    its value, after it up to the comma or the closing brace), or after that comma on its
    line."""
    root = tree(text)
    if root.kind != "object" or key not in root.keys:
        return set()
    node = root.items[root.keys.index(key)]
    toks = tokens(text)
    notes = [t.start for t in toks if t.kind == "comment" and node.start < t.start < node.end]
    if node.kind != "object" or not notes:
        return set()
    code = [t for t in toks if t.kind != "comment" and node.start <= t.start < node.end]
    starts = [t.start for t in code]
    out = set()
    for name, start, value in zip(node.keys, node.key_starts, node.items, strict=True):
        first = code[bisect.bisect_left(starts, start) - 1].end  # the code before the key
        after = bisect.bisect_left(starts, value.end)
        last = code[after].start if after < len(code) else node.end
        if after < len(code) and text[last] == ",":
            line_end = text.find("\n", last)
            nxt = code[after + 1].start if after + 1 < len(code) else node.end
            last = nxt if line_end < 0 else min(nxt, line_end)
        if any(first <= n < last for n in notes):
            out.add(name)
    return out


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
        overlapping = [c for c in self.comments if start < c.end and c.start < end]
        if overlapping and not replacement and all(c.start >= start for c in overlapping):
            self.cut(start, end)  # a removal keeps the comments it may (see cut)
            return
        if overlapping:
            raise CommentLoss(_line(self.text, overlapping[0].start))
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
        removed: list[int] = []
        added: list[tuple[str | None, Any]] = []
        pending: list[Any] = []  # new elements waiting for the next element that stays
        for i, j in _align(before, after):
            if i is None:
                pending.extend(after[k] for k in (j,) if k is not None)
            elif j is None:
                removed.append(i)
            else:
                if pending:
                    self._insert_before(node, i, pending)
                    pending = []
                self.diff(node.items[i], before[i], after[j])
        added.extend((None, v) for v in pending)
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
                self.cut(_own_line_start(self.text, starts[run_start]), cut_end)
            else:
                self._cut_tail(node, run_start, starts)
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

    def _cut_tail(self, node: Node, first: int, starts: list[int]) -> None:
        """Remove the items from `first` to the end of the container (an item stays before
        them): from the kept item's end; or, when comments on lines of their own lie in that
        stretch, the kept item's comma and then the removed items' lines, so the comments keep
        theirs. (A comment after code there is refused, as every edit over one is.)"""
        kept_end, last = node.items[first - 1].end, len(node.items) - 1
        stretch = [c for c in self.comments if kept_end <= c.start < node.items[last].end]
        if not stretch or not all(self._own_line(c) for c in stretch):
            self.edit(kept_end, node.items[last].end, "")
            return
        comma = next(t for t in self.code if t.start >= kept_end)
        self.edit(comma.start, comma.end, "")
        end = _past_line_break(self.text, self._separator_end(node, last))
        self.cut(_own_line_start(self.text, starts[first]), min(end, node.end - 1))

    def _own_line(self, comment: Token) -> bool:
        line = self.text.rfind("\n", 0, comment.start) + 1
        return not self.text[line:comment.start].strip(" \t")

    def cut(self, start: int, end: int) -> None:
        """Remove the text from `start` to `end` but the comments in it (comments are blanks to
        JSON, so the value is what the whole cut gives): one on a line of its own keeps its
        line; one after code on a line where code stays (a one-line file) stays where it is,
        with the line break that ends a `//` comment. A comment on a line whose code all goes
        is that code's: CommentLoss."""
        pos = start
        for comment in self.comments:
            if not start <= comment.start < end:
                continue
            if self._own_line(comment):
                line = self.text.rfind("\n", 0, comment.start) + 1
                if line > pos:
                    self.edit(pos, line, "")
                pos = max(pos, min(_past_line_break(self.text, comment.end), max(end, comment.end)))
                continue
            if not self._line_keeps_code(comment, start, end):
                raise CommentLoss(_line(self.text, comment.start))
            if comment.start > pos:
                self.edit(pos, comment.start, "")
            line_comment = self.text.startswith("//", comment.start)
            pos = max(pos, _past_line_break(self.text, comment.end) if line_comment
                      else comment.end)
        if end > pos:
            self.edit(pos, end, "")

    def _line_keeps_code(self, comment: Token, start: int, end: int) -> bool:
        """Does code stay on the line of `comment` once `start`..`end` is cut?"""
        first = self.text.rfind("\n", 0, comment.start) + 1
        last = self.text.find("\n", comment.end)
        last = len(self.text) if last < 0 else last
        return any(first <= t.start < last and not start <= t.start < end for t in self.code)

    def _replace_all(self, node: Node, starts: list[int],
                     added: list[tuple[str | None, Any]]) -> None:
        inner_start, inner_end = node.start + 1, node.end - 1
        has_comment = any(inner_start <= c.start < inner_end for c in self.comments)
        if has_comment and node.items:  # keep the comments: cut only the items and separators
            end = self._separator_end(node, len(node.items) - 1)
            self.cut(_own_line_start(self.text, starts[0]),
                     end if added else min(_past_line_break(self.text, end), inner_end))
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


def _past_line_break(text: str, pos: int) -> int:
    """Just past the line break that ends the line of `pos`, when only blanks lie between;
    else `pos`."""
    rest = pos
    while rest < len(text) and text[rest] in " \t":
        rest += 1
    for brk in ("\r\n", "\n"):
        if text.startswith(brk, rest):
            return rest + len(brk)
    return pos


# Beyond this many pairs in one changed stretch of an array, its elements pair by position.
_ALIGN_MAX_PAIRS = 2500
# Each pair's part in an alignment beyond its likeness: enough to prefer a pair where it costs
# no likeness, never enough to outweigh any (likeness differences are far above 1e-9 for the
# at most 2,500 candidate pairs of a stretch).
_PAIR_BONUS = 1e-9


def _align(before: list[Any], after: list[Any]) -> list[tuple[int | None, int | None]]:
    """Which element of `before` becomes which of `after`, in order: (i, j) edits element i
    into element j, (i, None) removes it, (None, j) inserts a new one. Equal elements pair
    first; in a stretch that changed, as many elements pair as can, each with the most alike
    (never merely the one at the same position: a group that goes must not be rewritten into
    the user's next one)."""
    import difflib

    canon = [json.dumps(v, sort_keys=True) for v in before]
    wanted = [json.dumps(v, sort_keys=True) for v in after]
    out: list[tuple[int | None, int | None]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, canon, wanted, autojunk=False).get_opcodes():
        if op == "equal":
            out.extend(zip(range(i1, i2), range(j1, j2), strict=True))
        elif op == "replace" and (i2 - i1) * (j2 - j1) <= _ALIGN_MAX_PAIRS:
            out.extend(_best_pairs(before[i1:i2], after[j1:j2], i1, j1))
        else:
            paired = min(i2 - i1, j2 - j1)
            out.extend(zip(range(i1, i1 + paired), range(j1, j1 + paired), strict=True))
            out.extend((i, None) for i in range(i1 + paired, i2))
            out.extend((None, j) for j in range(j1 + paired, j2))
    return out


def _best_pairs(before: list[Any], after: list[Any], i1: int,
                j1: int) -> list[tuple[int | None, int | None]]:
    """The order-keeping pairing of `before` (from index i1) with `after` (from j1) with the
    most total likeness and, among those, the most pairs (a sequence alignment). Likeness
    comes first: an old engram group followed by the user's group, which keeps their handler
    without engram's entry and is followed by engram's new group, pairs the user's two, and
    the old group goes; pairing by position, for one more pair, rewrote the old group into the
    user's (their handler re-serialised, a comment of engram's entry left in it). Elements with
    nothing alike still pair when that costs no likeness (an old engram handler edited into the
    new one, in the file's own layout)."""
    n, m = len(before), len(after)
    score = [[_likeness(before[a], after[b]) + _PAIR_BONUS for b in range(m)] for a in range(n)]
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for a in range(1, n + 1):
        for b in range(1, m + 1):
            best[a][b] = max(best[a - 1][b], best[a][b - 1], best[a - 1][b - 1] + score[a - 1][b - 1])
    out: list[tuple[int | None, int | None]] = []
    a, b = n, m
    while a or b:  # back from the end; on a tie a later element goes, an earlier one pairs
        if a and (not b or best[a][b] == best[a - 1][b]):
            out.append((i1 + a - 1, None))
            a -= 1
        elif a and b and best[a][b] == best[a - 1][b - 1] + score[a - 1][b - 1]:
            out.append((i1 + a - 1, j1 + b - 1))
            a, b = a - 1, b - 1
        else:
            out.append((None, j1 + b - 1))
            b -= 1
    return out[::-1]


def _likeness(a: Any, b: Any) -> float:
    """How much of two JSON values is the same, from 0 to 1: the share of an object's keys
    whose values are alike, of an array's elements that are equal and in order, a scalar
    equal or not. (A group keeping the user's matcher and handlers is more alike the user's
    group than engram's new one, however much text engram's handlers share with it.)"""
    import difflib

    if isinstance(a, dict) and isinstance(b, dict):
        keys = a.keys() | b.keys()
        if not keys:
            return 1.0
        return sum(_likeness(a[k], b[k]) for k in keys if k in a and k in b) / len(keys)
    if isinstance(a, list) and isinstance(b, list):
        if not a and not b:
            return 1.0
        matcher = difflib.SequenceMatcher(None, [json.dumps(v, sort_keys=True) for v in a],
                                          [json.dumps(v, sort_keys=True) for v in b],
                                          autojunk=False)
        same = sum(block.size for block in matcher.get_matching_blocks())
        return 2 * same / (len(a) + len(b))
    return 1.0 if type(a) is type(b) and a == b else 0.0


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
    result = patcher.apply()
    # Every comment is kept, unchanged and in order: the edits cut around them, and a wrong
    # span must not cost one silently (the value is checked apart, by the caller).
    if comments(result) != [text[c.start:c.end] for c in patcher.comments]:
        raise CommentLoss(_line(text, patcher.comments[0].start) if patcher.comments else 1)
    return result
