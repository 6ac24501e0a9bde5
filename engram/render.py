"""The text a hook injects, from plain values: bodies under a header naming their id, folded
one-line cards, the `already loaded:` line and the proof line. Deterministic: the same inputs
give the same bytes."""

from __future__ import annotations

import re
from engram.record import frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Iterable

HEADER_PREFIX: Final = "### engram memory: "
FOLDED_HEADER: Final = "### engram memory, folded to one line each (over the size limit):"
ALREADY_PREFIX: Final = "already loaded: "
PROOF_PREFIX: Final = "Engram proof: "
# Lines in card text that imitate engram's own framing are quoted, so a card can never forge
# an `already loaded:` or proof line, nor a header of its own.
_FORGED: Final = re.compile(r"^(\s*)(already loaded:|engram proof:|### engram memory)",
                            re.IGNORECASE | re.MULTILINE)


@frozen
class Item:
    id: str
    title: str
    card: str
    body: str
    priority: int
    rank: int  # routing order: 0 is the most relevant


def neutralize(text: str) -> str:
    """Quote lines that imitate engram's framing."""
    return _FORGED.sub(lambda m: f"{m.group(1)}> {m.group(2)}", text)


def _one_line(text: str) -> str:
    return neutralize(" ".join(text.split()))


def body_block(item: Item) -> str:
    return f"{HEADER_PREFIX}{item.id} — {_one_line(item.title)}\n{neutralize(item.body.strip())}"


def folded_line(item: Item) -> str:
    return f"- {item.id}: {_one_line(item.card)}"


def already_line(ids: Iterable[str]) -> str:
    ordered = sorted(set(ids))
    return ALREADY_PREFIX + ", ".join(ordered) if ordered else ""


def signature(routed_keys: Iterable[str]) -> str:
    """xxhash64 of the sorted routed keys (id@content-hash), as 16 lowercase hex digits."""
    import xxhash

    return xxhash.xxh64_hexdigest("\n".join(sorted(set(routed_keys))).encode("utf-8"))


def proof_line(routed_keys: Iterable[str], loaded: int, reused: int, skipped: int,
               note: str = "") -> str:
    keys = list(routed_keys)
    suffix = f"; {note}" if note else ""
    return (f"{PROOF_PREFIX}routed {len(set(keys))}, loaded {loaded}, reused {reused}, "
            f"skipped {skipped}{suffix} (sig {signature(keys)})")


def compose(full: Iterable[Item], folded: Iterable[Item], already: str, proof: str) -> str:
    parts = [body_block(item) for item in full]
    folded_items = list(folded)
    if folded_items:
        parts.append(FOLDED_HEADER + "\n" + "\n".join(folded_line(i) for i in folded_items))
    tail = "\n".join(line for line in (already, proof) if line)
    if tail:
        parts.append(tail)
    return "\n\n".join(parts)
