"""Fit rendered memory into a host's limit, in the host's unit. Whole bodies first; over the
limit, fold the lowest-priority bodies to one-line cards, then drop the lowest-priority cards.
A body is never cut, and the result never exceeds the limit."""

from __future__ import annotations

import math

from engram.record import Record, frozen
from engram.render import ALREADY_PREFIX, FOLDED_HEADER, Item, body_block, compose, folded_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable



def _utf16_units(text: str) -> int:
    # ASCII text (the usual card) is one unit a character: no UTF-16 encode, whose codec
    # module the hook would otherwise import on every call.
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _base(text: str, unit: str) -> int:
    """The additive measure behind a unit: UTF-16 code units, or UTF-8 bytes for tokens."""
    if unit == "tokens":
        return len(text.encode("utf-8"))
    return _utf16_units(text)


def _base_limit(limit: int, unit: str) -> int:
    return limit * 4 if unit == "tokens" else limit


def measure(text: str, unit: str) -> int:
    """Claude counts characters as JavaScript does (UTF-16 units); token hosts are estimated
    as ceil(UTF-8 bytes / 4)."""
    if unit == "tokens":
        return math.ceil(len(text.encode("utf-8")) / 4)
    return _utf16_units(text)


@frozen
class Fit(Record):
    full: tuple[Item, ...]
    folded: tuple[Item, ...]
    dropped: tuple[Item, ...]
    text: str
    size: int


def fit(items: list[Item], already_ids: list[str], proof: "Callable[[int, int, int], str] | None",
        unit: str, limit: int) -> Fit:
    """Choose full / folded / dropped for `items` (in routing order) so the composed text
    fits `limit`. `proof(loaded, reused, skipped)` renders the proof line (or None).

    Sizes are kept per part in an additive base unit (UTF-16 units or UTF-8 bytes), so each
    fold or drop costs O(1) rather than a re-render: a session start with a hundred always
    cards stays linear."""
    budget = _base_limit(limit, unit)
    separator = _base("\n\n", unit)
    newline = _base("\n", unit)
    reused = len(set(already_ids))
    already = ALREADY_PREFIX + ", ".join(sorted(set(already_ids))) if already_ids else ""
    full_size = {item.id: _base(body_block(item), unit) for item in items}
    line_size = {item.id: _base(folded_line(item), unit) for item in items}
    header = _base(FOLDED_HEADER, unit)
    full = list(items)
    folded: list[Item] = []
    dropped: list[Item] = []
    body_total = sum(full_size.values())
    folded_total = 0

    def tail_lines() -> list[str]:
        proof_text = proof(len(full), reused, len(folded) + len(dropped)) if proof else ""
        return [line for line in (already, proof_text) if line]

    def total() -> int:
        parts = len(full) + (1 if folded else 0)
        size = body_total
        if folded:
            size += header + newline * len(folded) + folded_total
        tail = tail_lines()
        if tail:
            parts += 1
            size += sum(_base(line, unit) for line in tail) + newline * (len(tail) - 1)
        return size + separator * max(parts - 1, 0)

    def take_weakest(pool: list[Item]) -> Item:
        # By position, not equality: comparing records field by field made this quadratic.
        position = min(range(len(pool)), key=lambda i: (pool[i].priority, -pool[i].rank))
        return pool.pop(position)

    while total() > budget:
        if full:
            victim = take_weakest(full)
            body_total -= full_size[victim.id]
            folded.append(victim)
            folded_total += line_size[victim.id]
        elif folded:
            victim = take_weakest(folded)
            folded_total -= line_size[victim.id]
            dropped.append(victim)
        elif already and not already.endswith(" cards"):
            already = f"{ALREADY_PREFIX}{reused} cards"
        elif already:
            already = ""
        elif proof is not None:
            proof = None
        else:
            return Fit((), (), tuple(items), "", 0)
    folded.sort(key=lambda item: item.rank)
    proof_text = proof(len(full), reused, len(folded) + len(dropped)) if proof else ""
    text = compose(full, folded, already, proof_text)
    return Fit(tuple(full), tuple(folded), tuple(dropped), text, measure(text, unit))
