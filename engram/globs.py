"""Glob handling without wcmatch on the hook path: brace-aware splitting, bounded brace
expansion and translation to regular expressions with the semantics of wcmatch
`GLOBSTAR | BRACE | DOTGLOB` (checked against wcmatch in the tests), plus a bucket key so a
touched path is only tested against globs that could match it.

Why not wcmatch's own translation at compile time: compiling runs inside the hook whenever a
card file changed (the index refreshes synchronously below a few hundred changed files), and
importing wcmatch costs ~20 ms there; the bucket keys, the lint messages and the bounds on
hostile patterns (brace and length caps, an atomic rewrite of many-star segments) would still
be ours. wcmatch stays the reference: tests/test_globs.py compares both on every corpus pattern
and on generated ones."""

from __future__ import annotations

import re

from engram import glob_match
from engram.glob_match import path_keys  # noqa: F401 - where the router found it before

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, Iterable

MAX_EXPANSIONS: Final = 1000  # Claude's own budget for expanded `paths:` patterns
MAX_GLOB_CHARS: Final = 4096
MAX_EXPANSION_WORK: Final = 1_000_000  # characters scanned while expanding one glob
_WILDCARDS: Final = set("*?[")


class GlobError(ValueError):
    """A glob engram refuses to compile (too long, too many expansions, unbalanced)."""


def split_top_level(text: str) -> list[str]:
    """Split at commas outside {...} and [...]: `**/*.{ts,tsx}, a` -> [`**/*.{ts,tsx}`, `a`]."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    quote = ""
    for char in text:
        if quote:
            current.append(char)
            if char == quote:
                quote = ""
            continue
        if char in "'\"" and not "".join(current).strip():
            quote = char
            current.append(char)
            continue
        if char in "{[":
            depth += 1
        elif char in "}]" and depth:
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts]


def _strip_quotes(value: str) -> str:
    value = value.strip()
    while len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1].strip()
    return value


def normalize(value: Any) -> list[str]:
    """Every shape a glob key takes (string, comma list, flow list text, list, null) as a list
    of glob strings. Empty means "no globs", not "match nothing"."""
    if value is None or value is False:
        return []
    items: Iterable[Any] = value if isinstance(value, (list, tuple)) else [value]
    globs: list[str] = []
    for item in items:
        if item is None:
            continue
        text = _strip_quotes(str(item))
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        for part in split_top_level(text):
            part = _strip_quotes(part)
            if part and part not in globs:
                globs.append(part)
    return globs


def expand_braces(pattern: str, limit: int = MAX_EXPANSIONS) -> list[str]:
    """`a/{b,c}/*.{x,y}` -> four patterns; nested braces work; unbalanced braces are literal.
    Raises GlobError past `limit` expansions (a glob with thousands of braces)."""
    results = [pattern]
    done: list[str] = []
    work = 0
    while results:
        current = results.pop()
        work += len(current)
        if work > MAX_EXPANSION_WORK:
            # Thousands of nested or one-option groups: each step rescans the pattern.
            raise GlobError("glob has too many brace groups to expand")
        start = _first_brace_group(current)
        if start is None:
            done.append(current)
            if len(done) > limit:
                raise GlobError(f"glob expands to more than {limit} patterns")
            continue
        open_at, close_at = start
        inner = current[open_at + 1:close_at]
        options = _split_brace_options(inner)
        if len(options) < 2:
            # `{x}` is a literal in wcmatch; keep the braces by escaping them.
            results.append(current[:open_at] + "\\{" + inner + "\\}" + current[close_at + 1:])
            continue
        for option in reversed(options):
            results.append(current[:open_at] + option + current[close_at + 1:])
        if len(results) + len(done) > limit:
            raise GlobError(f"glob expands to more than {limit} patterns")
    return list(reversed(done)) if len(done) > 1 else done


def _first_brace_group(text: str) -> tuple[int, int] | None:
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth = 0
            for probe in range(index, len(text)):
                if text[probe] == "\\":
                    continue
                if text[probe] == "{" and (probe == 0 or text[probe - 1] != "\\"):
                    depth += 1
                elif text[probe] == "}" and text[probe - 1] != "\\":
                    depth -= 1
                    if depth == 0:
                        return index, probe
            return None
        index += 1
    return None


def _split_brace_options(inner: str) -> list[str]:
    options: list[str] = []
    depth = 0
    current: list[str] = []
    escaped = False
    for char in inner:
        if escaped:
            current.append(char)
            escaped = False
            continue
        if char == "\\":
            current.append(char)
            escaped = True
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if char == "," and depth == 0:
            options.append("".join(current))
            current = []
        else:
            current.append(char)
    options.append("".join(current))
    return options


_STAR: Final = "[^/]*"
_ATOMIC_OPEN: Final = "(?=(?P<a0>[^/]*?"
_ATOMIC_CLOSE: Final = "))(?P=a0)"


def _atomic_stars(out: list[str]) -> str:
    """A segment with two or more `*` as a regex that cannot backtrack catastrophically:
    `*a*a*a*b` read naively costs O(n^k) on a long name without `b`. Every `*` but the last
    is taken to the earliest place where the fragment after it matches (the classic greedy
    glob match, exact because each fragment is fixed-length), made atomic with a lookahead
    and a backreference; `translate` numbers the groups."""
    fragments: list[list[str]] = [[]]
    for piece in out:
        if piece is _STAR:
            fragments.append([])
        else:
            fragments[-1].append(piece)
    middle = "".join(_ATOMIC_OPEN + "".join(f) + _ATOMIC_CLOSE for f in fragments[1:-1])
    return "".join(fragments[0]) + middle + _STAR + "".join(fragments[-1])


def _translate_segment(segment: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "\\" and index + 1 < len(segment):
            out.append(re.escape(segment[index + 1]))
            index += 2
            continue
        if char == "*":
            while index + 1 < len(segment) and segment[index + 1] == "*":
                index += 1
            out.append(_STAR)
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            parsed = _bracket(segment, index)
            if parsed is None:
                out.append(re.escape(char))
            else:
                regex, index = parsed
                out.append(regex)
        else:
            out.append(re.escape(char))
        index += 1
    if sum(1 for piece in out if piece is _STAR) >= 2:
        return _atomic_stars(out)
    return "".join(out)


_POSIX: Final = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f",
                 "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9",
                 "graph": "\\x21-\\x7e", "lower": "a-z", "print": "\\x20-\\x7e",
                 "punct": "!-/:-@\\[-`{-~", "space": "\\t-\\r ", "upper": "A-Z",
                 "word": "0-9A-Z_a-z", "xdigit": "0-9A-Fa-f"}
_POSIX_CLASS: Final = re.compile(r"\[:(" + "|".join(_POSIX) + r"):\]")


def _bracket(segment: str, start: int) -> tuple[str, int] | None:
    """A `[...]` class at `start` as (regex, index of its closing `]`), or None when it never
    closes (then the `[` is a literal). wcmatch's rules: `!` or `^` negates, a leading `]` or
    `-` is literal, `\\x` escapes, `[:alpha:]` style classes, a reversed range matches
    nothing."""
    index = start + 1
    if segment.find("]", index + 1) < 0:
        return None  # no `]` can close it (a `]` right after `[` is literal): skip the scan
    negate = segment[index:index + 1] in ("!", "^")
    if negate:
        index += 1
    items: list[str] = []  # regex pieces, each one character, range or posix class
    first = True
    while index < len(segment):
        char = segment[index]
        if char == "]" and not first:
            break
        first = False
        posix = _POSIX_CLASS.match(segment, index) if char == "[" else None
        if posix:
            items.append(_POSIX[posix.group(1)])
            index = posix.end()
            continue
        if char == "\\" and index + 1 < len(segment):
            index += 1
            char = segment[index]
        low = char
        index += 1
        if segment[index:index + 1] == "-" and index + 1 < len(segment) \
                and segment[index + 1] != "]":
            high = segment[index + 1]
            index += 2
            if high == "\\" and index < len(segment):
                high = segment[index]
                index += 1
            if ord(high) >= ord(low):
                items.append(re.escape(low) + "-" + re.escape(high))
            continue
        items.append(re.escape(low))
    else:
        return None
    if not items:
        # Only reversed ranges (`[z-a]`): nothing matches, or (negated) any one character.
        return ("[^/]" if negate else "(?!)"), index
    return f"[{'^/' if negate else ''}{''.join(items)}]", index


def _segments(pattern: str) -> list[str]:
    """A brace-free glob's '/'-separated segments, as wcmatch reads them: `a//b` is `a/b`, a
    lone trailing backslash escapes nothing, and `**/**` is `**` (two in a row only add
    backtracking)."""
    pattern = re.sub(r"(?<=.)/{2,}", "/", pattern)
    if pattern.endswith("\\") and (len(pattern) - len(pattern.rstrip("\\"))) % 2:
        pattern = pattern[:-1]
    segments = pattern.split("/")
    return [segment for position, segment in enumerate(segments)
            if segment != "**" or position == len(segments) - 1 or segments[position + 1] != "**"]


def translate_one(pattern: str) -> str:
    """One brace-free glob as a regex source matching a whole relative path."""
    segments = _segments(pattern)
    parts: list[str] = []
    last = len(segments) - 1
    for position, segment in enumerate(segments):
        if segment == "**":
            if position == last:
                parts.append(".*")
            else:
                parts.append("(?:[^/]+/)*")
            continue
        parts.append(_translate_segment(segment) + ("" if position == last else "/"))
    return _number_groups("".join(parts))


def translate(glob: str) -> str:
    """A glob (braces allowed) as one anchored regex source."""
    if len(glob) > MAX_GLOB_CHARS:
        raise GlobError(f"glob is longer than {MAX_GLOB_CHARS} characters")
    alternatives = sorted({translate_one(p) for p in expand_braces(glob)})
    if len(alternatives) == 1:
        return _number_groups(f"^(?:{alternatives[0]})$")
    return _number_groups("^(?:" + "|".join(f"(?:{a})" for a in alternatives) + ")$")


def match_spec(glob: str) -> tuple[Any, ...] | None:
    """The glob as `engram.glob_match` matches it without `re` (that module's docstring
    describes the shape), with the meaning of `translate`'s regex; None when only the regex
    can say it (a `[...]` class, or more than glob_match.MAX_GLOBSTARS `**`). Raises as
    `translate` does."""
    if len(glob) > MAX_GLOB_CHARS:
        raise GlobError(f"glob is longer than {MAX_GLOB_CHARS} characters")
    alternatives: list[tuple[Any, ...]] = []
    for pattern in expand_braces(glob):
        segments = _spec_one(pattern)
        if segments is None:
            return None
        if segments not in alternatives:
            alternatives.append(segments)
    return tuple(alternatives)


def _spec_one(pattern: str) -> tuple[Any, ...] | None:
    """One brace-free glob as glob_match segments, as `translate_one` reads it."""
    out: list[Any] = []
    for segment in _segments(pattern):
        if segment == "**":
            out.append(glob_match.GLOBSTAR)
            continue
        spec = _segment_spec(segment)
        if spec is None:
            return None
        out.append(spec)
    if sum(1 for segment in out if segment is glob_match.GLOBSTAR) > glob_match.MAX_GLOBSTARS:
        return None
    return tuple(out)


def _segment_spec(segment: str) -> Any:
    """A segment as `_translate_segment` reads it: its literal text, or its `*`-separated
    fragments; None for a `[...]` class."""
    fragments: list[list[Any]] = [[]]
    wild = False
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "\\" and index + 1 < len(segment):
            fragments[-1].append(segment[index + 1])
            index += 2
            continue
        if char == "*":
            while index + 1 < len(segment) and segment[index + 1] == "*":
                index += 1
            fragments.append([])
            wild = True
        elif char == "?":
            fragments[-1].append(glob_match.ANY)
            wild = True
        elif char == "[" and _bracket(segment, index) is not None:
            return None
        else:
            fragments[-1].append(char)
        index += 1
    if not wild:
        return "".join(fragments[0])
    return tuple("".join(f) if glob_match.ANY not in f else tuple(f) for f in fragments)


_ATOMIC_NAMES: Final = re.compile(r"\(\?P<a\d+>|\(\?P=a\d+\)")


def _number_groups(regex: str) -> str:
    """Give each atomic group of `_atomic_stars` its own name (a name may occur once in a
    regex). Glob text never yields these sequences: `(` and `?` in a glob come out escaped."""
    count = 0

    def name(match: "re.Match[str]") -> str:
        nonlocal count
        if match.group(0).startswith("(?P<"):
            count += 1
            return f"(?P<a{count}>"
        return f"(?P=a{count})"

    return _ATOMIC_NAMES.sub(name, regex)


def bucket_keys(glob: str) -> list[str]:
    """Where a glob is filed: `name:<basename>` for a literal last segment, `ext:<ext>` when
    its last segment ends in a literal extension, else `any`."""
    keys: list[str] = []
    for pattern in expand_braces(glob):
        last = pattern.rsplit("/", 1)[-1]
        if last and not (_WILDCARDS & set(last)) and "\\" not in last and last != "**":
            keys.append("name:" + last.lower())
            continue
        tail = re.split(r"[*?\]]", last)[-1]
        if "." in tail and "\\" not in tail and tail.rsplit(".", 1)[1]:
            keys.append("ext:" + tail.rsplit(".", 1)[1].lower())
        else:
            return ["any"]
    return sorted(set(keys))


MATCH_EVERYTHING: Final = frozenset({"**", "**/*", "*", "**/**", "**/*.*"})


def lint(glob: str) -> list[tuple[str, str]]:
    """(severity, message) pairs for globs that can never match or match everything."""
    found: list[tuple[str, str]] = []
    if glob.startswith("/"):
        found.append(("error", f"glob {glob!r} starts with '/': paths are relative to the "
                               "workspace root, so it never matches; drop the leading '/'"))
    if "\\" in glob:
        found.append(("error", f"glob {glob!r} contains a backslash escape (Markdown-escaped "
                               "'\\*'?); write '**/*' style globs without backslashes"))
    if glob.endswith(".") and not glob.endswith(".."):
        found.append(("error", f"glob {glob!r} ends with '.', so it matches no file extension"))
    # Markdown turns `**/*` into `\*_/_` (emphasis): a segment that is `_`, ends in `*_` or
    # starts with `_.`; real folder names such as `__tests__` are left alone.
    if any(seg == "_" or seg.endswith("*_") or seg.startswith("_.") for seg in glob.split("/")):
        found.append(("warning", f"glob {glob!r} has '_' next to '/', which looks like a "
                                 "Markdown-mangled '**'"))
    if glob in MATCH_EVERYTHING:
        found.append(("warning", f"glob {glob!r} matches every file; use `always: true` or a "
                                 "narrower glob"))
    try:
        translate(glob)
    except GlobError as exc:
        found.append(("error", f"glob {glob!r}: {exc}"))
    except re.error as exc:
        found.append(("error", f"glob {glob!r} is not a valid pattern: {exc}"))
    return found
