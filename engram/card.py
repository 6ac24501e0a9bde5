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
    content_hash: str  # xxhash of the file's bytes: the stored offsets are valid for these
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
    def file_key(self) -> str:
        """The id and the hash of the file's bytes: what a verdict on the whole file (the
        secret check) is valid for."""
        return f"{self.id}@{self.content_hash}"

    @property
    def view_hash(self) -> str:
        return view_hash(self.title, self.body)

    @property
    def key(self) -> str:
        """The delivery key: the id and the hash of what the model reads of the card."""
        return f"{self.id}@{self.view_hash}"


def view_hash(title: str, body: str) -> str:
    """xxh64 of what the model reads of a card besides its id: the title and the body, as a
    body block shows them (`render.body_block`). An edit of anything else (tags, globs,
    priority, `depends_on`, `always`, the one-line fold, blank lines around the body, the
    file's place) leaves it, so a card the model holds is not sent to it again."""
    import xxhash  # loaded already on the hook path (the state dir's keys)

    return xxhash.xxh64_hexdigest(f"{title}\n{body.strip()}".encode("utf-8", "surrogatepass"))
