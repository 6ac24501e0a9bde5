"""Target paths of a Codex apply_patch: `*** Add File:`, `*** Update File:`,
`*** Delete File:` and `*** Move to:` lines. Bounded: a huge patch is scanned line by line
and yields at most MAX_PATHS paths."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

MAX_PATHS: Final = 256
_HEADER: Final = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): ?(.+?)\s*$")


def targets(patch: str) -> list[str]:
    found: list[str] = []
    if not isinstance(patch, str):
        return found
    for line in patch.splitlines():
        if not line.startswith("*** "):
            continue
        match = _HEADER.match(line)
        if match:
            path = match.group(1).strip().strip("'\"")
            if path and "\x00" not in path and path not in found:
                found.append(path)
                if len(found) >= MAX_PATHS:
                    break
    return found
