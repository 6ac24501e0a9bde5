"""Target paths of a Codex apply_patch: `*** Add File:`, `*** Update File:`,
`*** Delete File:` and `*** Move to:` lines; and the lines it adds to each file. Bounded: a
huge patch is scanned line by line and yields at most MAX_PATHS paths."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

MAX_PATHS: Final = 256
_HEADER: Final = re.compile(r"^\*\*\* (Add File|Update File|Delete File|Move to): ?(.+?)\s*$")


def targets(patch: str) -> list[str]:
    found: list[str] = []
    if not isinstance(patch, str):
        return found
    for line in patch.splitlines():
        if not line.startswith("*** "):
            continue
        match = _HEADER.match(line)
        if match:
            path = _path(match)
            if path and "\x00" not in path and path not in found:
                found.append(path)
                if len(found) >= MAX_PATHS:
                    break
    return found


def _path(match: "re.Match[str]") -> str:
    return match.group(2).strip().strip("'\"")


def added(patch: str) -> list[tuple[str, str]]:
    """(target path, the lines the patch adds to it, joined) for each file it adds or updates,
    in patch order: a moved file's lines belong to its new path, a deleted file has none."""
    sections: list[tuple[str, list[str]]] = []
    if not isinstance(patch, str):
        return []
    lines: list[str] | None = None
    for line in patch.splitlines():
        if line.startswith("+"):
            if lines is not None:
                lines.append(line[1:])
            continue
        if not line.startswith("*** "):
            continue
        match = _HEADER.match(line)
        if match is None:
            if line.startswith(("*** End Patch", "*** Begin Patch")):
                lines = None
            continue
        kind, path = match.group(1), _path(match)
        if kind == "Move to" and sections and lines is sections[-1][1]:
            sections[-1] = (path, lines)
        elif kind in ("Add File", "Update File") and len(sections) < MAX_PATHS:
            lines = []
            sections.append((path, lines))
        else:
            lines = None
    return [(path, "\n".join(text)) for path, text in sections if path and "\x00" not in path]
