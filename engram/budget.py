"""Fit rendered memory into a host's limit, in the host's unit. Whole bodies first; over the
limit, fold the lowest-priority bodies to one-line cards, then drop the lowest-priority cards.
A body is never cut, and the result never exceeds the limit."""

from __future__ import annotations

import math

from engram.record import Record, frozen
from engram.render import (
    ALREADY_PREFIX,
    FOLDED_HEADER,
    HEADER_PREFIX,
    Item,
    body_block,
    folded_line,
    join,
)

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


def _least(item: Item, unit: str) -> int:
    """A lower bound of `_base(body_block(item), unit)` without rendering the body: the
    header without its title, and the body's characters (neutralizing folds a CRLF to one
    character and otherwise never shortens text; both units count a character as at least
    one)."""
    body = item.body.strip()
    return len(HEADER_PREFIX) + len(item.id) + 4 + len(body) - body.count("\r\n")


def fit(items: list[Item], already_ids: list[str], proof: "Callable[[int, int, int], str] | None",
        unit: str, limit: int) -> Fit:
    """Choose full / folded / dropped for `items` (in routing order) so the composed text
    fits `limit`. `proof(loaded, reused, skipped)` renders the proof line (or None).

    Sizes are kept per part in an additive base unit (UTF-16 units or UTF-8 bytes), so each
    fold or drop costs O(1) rather than a re-render: a session start with a hundred always
    cards stays linear. A body is rendered only when its exact size decides something: while
    the bodies still in full, counted at a lower bound until rendered, exceed the budget, the
    weakest folds unrendered (a first prompt routes a score of bodies and sends one or two),
    and each text is rendered once, for both its size and the answer."""
    budget = _base_limit(limit, unit)
    separator = _base("\n\n", unit)
    newline = _base("\n", unit)
    reused = len(set(already_ids))
    already = ALREADY_PREFIX + ", ".join(sorted(set(already_ids))) if already_ids else ""
    header = _base(FOLDED_HEADER, unit)
    count = len(items)
    # Fold (then drop) order: lowest priority first, later routing rank first among equals.
    weakest = sorted(range(count), key=lambda i: (items[i].priority, -items[i].rank))
    blocks: list[str | None] = [None] * count  # rendered body blocks, by position
    sizes = [_least(item, unit) for item in items]  # exact once rendered
    lines: dict[int, str] = {}  # rendered folded lines, by position
    is_full = [True] * count
    folded: list[int] = []  # positions, in fold order
    dropped: list[int] = []
    full_count = count
    body_total = sum(sizes)
    folded_total = 0

    def total() -> int:
        parts = full_count + (1 if folded else 0)
        size = body_total
        if folded:
            size += header + newline * len(folded) + folded_total
        proof_text = proof(full_count, reused, len(folded) + len(dropped)) if proof else ""
        tail = [line for line in (already, proof_text) if line]
        if tail:
            parts += 1
            size += sum(_base(line, unit) for line in tail) + newline * (len(tail) - 1)
        return size + separator * max(parts - 1, 0)

    while True:
        if total() <= budget:
            # Counted at least this large: only the exact sizes of what stays can settle it.
            unrendered = [i for i in range(count) if is_full[i] and blocks[i] is None]
            if not unrendered:
                break
            for i in unrendered:
                block = blocks[i] = body_block(items[i])
                exact = _base(block, unit)
                body_total += exact - sizes[i]
                sizes[i] = exact
            continue
        if full_count:
            victim = weakest[len(folded) + len(dropped)]
            is_full[victim] = False
            full_count -= 1
            body_total -= sizes[victim]
            line = lines[victim] = folded_line(items[victim])
            folded.append(victim)
            folded_total += _base(line, unit)
        elif folded:
            victim = folded.pop(0)
            folded_total -= _base(lines[victim], unit)
            dropped.append(victim)
        elif already and not already.endswith(" cards"):
            already = f"{ALREADY_PREFIX}{reused} cards"
        elif already:
            already = ""
        elif proof is not None:
            proof = None
        else:
            return Fit((), (), tuple(items), "", 0)
    folded.sort(key=lambda i: items[i].rank)
    proof_text = proof(full_count, reused, len(folded) + len(dropped)) if proof else ""
    full = [i for i in range(count) if is_full[i]]
    text = join([blocks[i] or "" for i in full], [lines[i] for i in folded], already, proof_text)
    return Fit(tuple(items[i] for i in full), tuple(items[i] for i in folded),
               tuple(items[i] for i in dropped), text, measure(text, unit))
