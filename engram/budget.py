"""Fit rendered memory into a host's limit, in the host's unit. Whole bodies first; over the
limit, fold the lowest-priority bodies to one-line cards, then drop the lowest-priority cards.
A body is never cut, and the result never exceeds the limit."""

from __future__ import annotations

import math
from engram.record import frozen

from engram.render import ALREADY_PREFIX, Item, compose

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Final

UNITS: Final = ("chars", "tokens")


def measure(text: str, unit: str) -> int:
    """Claude counts characters as JavaScript does (UTF-16 units); token hosts are estimated
    as ceil(UTF-8 bytes / 4)."""
    if unit == "tokens":
        return math.ceil(len(text.encode("utf-8")) / 4)
    return len(text.encode("utf-16-le")) // 2


@frozen
class Fit:
    full: tuple[Item, ...]
    folded: tuple[Item, ...]
    dropped: tuple[Item, ...]
    text: str
    size: int




def fit(items: list[Item], already_ids: list[str], proof: "Callable[[int, int, int], str] | None", unit: str,
        limit: int) -> Fit:
    """Choose full / folded / dropped for `items` (in routing order) so the composed text
    fits `limit`. `proof(loaded, reused, skipped)` renders the proof line (or None)."""
    full = list(items)
    folded: list[Item] = []
    dropped: list[Item] = []
    reused = len(set(already_ids))
    already = ALREADY_PREFIX + ", ".join(sorted(set(already_ids))) if already_ids else ""

    def render() -> str:
        proof_text = proof(len(full), reused, len(folded) + len(dropped)) if proof else ""
        return compose(full, folded, already, proof_text)

    def weakest(pool: list[Item]) -> Item:
        return min(pool, key=lambda item: (item.priority, -item.rank))

    text = render()
    while measure(text, unit) > limit:
        if full:
            victim = weakest(full)
            full.remove(victim)
            folded.append(victim)
            folded.sort(key=lambda item: item.rank)
        elif folded:
            victim = weakest(folded)
            folded.remove(victim)
            dropped.append(victim)
        elif already and not already.endswith(" cards"):
            already = f"{ALREADY_PREFIX}{reused} cards"
        elif already:
            already = ""
        elif proof is not None:
            proof = None
        else:
            return Fit((), (), tuple(items), "", 0)
        text = render()
    return Fit(tuple(full), tuple(folded), tuple(dropped), text, measure(text, unit))
