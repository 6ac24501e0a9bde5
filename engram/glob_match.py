"""A touched path against the globs of the compiled index, without `re`: importing it (with
the `enum` and `functools` it pulls in) and compiling the regexes of the candidate globs cost a
path event more than the rest of its call. The index holds each glob as a match spec that
`engram.globs.match_spec` builds at compile time, with the meaning of the regex
`engram.globs.translate` gives (tests/test_globs.py checks both against each other and
against wcmatch); a glob the spec cannot express (a `[...]` class) keeps its regex.

A spec is a tuple of alternatives (the brace expansions); an alternative a tuple of segments,
each matching one '/'-separated part of the path:
  - GLOBSTAR (None): `**`, any number of non-empty parts in the middle of a glob, the rest
    of the path (one part or more, no line break: `.*`) at its end;
  - a str: that part exactly;
  - a tuple of fragments: a part made of `*`s between fixed-length fragments, each a str or,
    with `?` in it, a tuple of one-character strs and ANY (None)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

GLOBSTAR: Final = None
ANY: Final = None
# More `**` in one alternative than this, and `engram.globs.match_spec` keeps the regex: each
# one is a point this matcher backtracks to.
MAX_GLOBSTARS: Final = 8


def path_keys(relative_path: str) -> list[str]:
    """The bucket keys a relative path can match: its name, its extension, and `any`."""
    name = relative_path.rsplit("/", 1)[-1].lower()
    keys = ["any", "name:" + name]
    if "." in name:
        keys.append("ext:" + name.rsplit(".", 1)[1])
    return keys


def matches(spec: tuple[Any, ...], path: str) -> bool:
    """Does `path` match the glob `spec` describes? As the anchored regex does: `$` also
    matches before a line break that ends the path."""
    if _matches(spec, path):
        return True
    return path.endswith("\n") and _matches(spec, path[:-1])


def _matches(spec: tuple[Any, ...], path: str) -> bool:
    parts = path.split("/")
    return any(_alternative(alternative, parts, 0, 0) for alternative in spec)


def _alternative(segments: tuple[Any, ...], parts: list[str], at: int, start: int) -> bool:
    """Do `segments[at:]` match `parts[start:]` exactly?"""
    count, total = len(segments), len(parts)
    while at < count:
        segment = segments[at]
        if segment is GLOBSTAR:
            if at == count - 1:
                return start < total and "\n" not in "/".join(parts[start:])
            # `(?:[^/]+/)*`: skip none, one, two... non-empty parts, then the rest must match.
            for after in range(start, total):
                if _alternative(segments, parts, at + 1, after):
                    return True
                if not parts[after]:
                    return False
            return False
        if start >= total:
            return False
        part = parts[start]
        if segment.__class__ is str:
            if part != segment:
                return False
        elif not _part(segment, part):
            return False
        at += 1
        start += 1
    return start == total


def _part(fragments: tuple[Any, ...], part: str) -> bool:
    """One path part against `*`-separated fixed-length fragments: the first at the start,
    the last at the end, each one between at the leftmost place it fits (exact: a fragment
    placed later can only leave less room for the next)."""
    first, last = fragments[0], fragments[-1]
    if len(fragments) == 1:
        return len(part) == len(first) and _at(part, 0, first)
    end = len(part) - len(last)
    if end < len(first) or not _at(part, 0, first) or not _at(part, end, last):
        return False
    position = len(first)
    for fragment in fragments[1:-1]:
        found = _find(part, fragment, position, end)
        if found < 0:
            return False
        position = found + len(fragment)
    return True


def _at(part: str, position: int, fragment: Any) -> bool:
    if fragment.__class__ is str:
        return part.startswith(fragment, position)
    return all(char is ANY or part[position + offset] == char
               for offset, char in enumerate(fragment))


def _find(part: str, fragment: Any, start: int, end: int) -> int:
    """The first position from `start` where `fragment` fits before `end`, or -1."""
    if fragment.__class__ is str:
        return part.find(fragment, start, end)
    for position in range(start, end - len(fragment) + 1):
        if _at(part, position, fragment):
            return position
    return -1
