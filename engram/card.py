"""The memory card: one Markdown file with frontmatter, as the router and renderer see it."""

from __future__ import annotations

from engram.record import Record, frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_PRIORITY = 50
CARD_TYPES = ("rule", "workflow", "reference")


@frozen
class Card(Record):
    id: str
    title: str
    card: str  # the one-line fold used when the body does not fit
    body: str
    path: str  # absolute path of the source file
    root: str  # absolute path of the memory root it came from
    content_hash: str  # xxhash of the file's bytes: an edited card is delivered again
    type: str = "rule"
    tags: tuple[str, ...] = ()
    applies_to: tuple[str, ...] = ()
    always: bool = False
    priority: int = DEFAULT_PRIORITY
    depends_on: tuple[str, ...] = ()
    format: str = "engram"  # engram | long-ride | cursor | claude | copilot | continue
    body_line: int = 1  # 1-based line where the body starts, for reports
    provenance: tuple[tuple[str, Any], ...] = ()

    @property
    def key(self) -> str:
        """The delivery key: id plus content hash."""
        return f"{self.id}@{self.content_hash}"
