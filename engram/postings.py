"""Postings: for each term, the cards that hold it, impact-ordered. Two packed arrays per term
in the index database: the slots (uint32) and their keys (uint16, ascending), key = 65535 -
(quantized BM25F impact << 2 | field code), so the most relevant cards come first and a query
can stop early on a common term. Impacts use the field-length averages of the last full build
(`avg_used`) and are recomputed when the averages drift."""

from __future__ import annotations

import marshal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from array import array
    from typing import Any, Final

IMPACT_LEVELS: Final = 16383
# BM25F field weights and length normalisation (title+id, tags, one-line card, body): the
# impacts stored here and the router's scores use the same numbers.
FIELD_WEIGHTS: Final = (3.0, 4.0, 2.0, 1.0)
FIELD_B: Final = (0.3, 0.0, 0.3, 0.75)
K1: Final = 1.2
AVG_DRIFT: Final = 0.25
_SLOT_MASK: Final = 0xFFFFFFFF


def slot_lengths(terms: dict[str, list[int]]) -> list[int]:
    """Field lengths in terms (head phrases, keys with a space, and code names, keys after a
    backtick, are not words of a field)."""
    words = [counts for term, counts in terms.items() if " " not in term and term[:1] != "`"]
    return [sum(column) for column in zip(*words, strict=False)] if words else [0, 0, 0, 0]


def head_size(terms: dict[str, list[int]]) -> int:
    """Distinct terms in a card's head (title and id, tags, card line)."""
    return sum(1 for term, counts in terms.items()
               if " " not in term and (counts[0] or counts[1] or counts[2]))


def head_count(keys: array[int] | memoryview[int]) -> int:
    """How many of a term's postings are in a head field (field code 0-2: key & 3 != 0)."""
    return sum(1 for key in keys if key & 3)


def posting_key(counts: list[int], lengths: list[int], averages: list[float]) -> int:
    key: int = _slot_scorer(lengths, averages)(counts)
    return key


def _slot_scorer(lengths: list[int], averages: list[float]) -> Any:
    """`posting_key` for one card: the length norms depend on the card alone, so they are
    computed once per card, not once per term (a cold compile scores ~260 terms a card)."""
    norms = [1.0 - FIELD_B[p] + FIELD_B[p] * (lengths[p] / averages[p]) for p in range(4)]
    levels = IMPACT_LEVELS

    def key(counts: list[int]) -> int:
        weighted = 0.0
        best_field, best_value = 3, -1.0
        for position in (0, 1, 2, 3):
            tf = counts[position]
            if tf:
                contribution = FIELD_WEIGHTS[position] * tf / norms[position]
                weighted += contribution
                if contribution > best_value:
                    best_value, best_field = contribution, position
        # The field code says whether the term is in a strong field (title, tags, card line):
        # the router's eligibility test needs that even when the body holds most of the weight.
        if best_field == 3 and (counts[0] or counts[1] or counts[2]):
            best_field = max((p for p in (0, 1, 2) if counts[p]),
                             key=lambda p: FIELD_WEIGHTS[p] * counts[p])
        impact = weighted / (K1 + weighted)
        return 65535 - ((int(impact * levels) << 2) | best_field)

    return key


def averages(db: Any) -> list[float]:
    found = db.execute("SELECT AVG(len0), AVG(len1), AVG(len2), AVG(len3) FROM cards "
                       "WHERE card IS NOT NULL").fetchone()
    return [max(float(value or 0.0), 1.0) for value in found]


def update_postings(db: Any, removed: dict[int, dict[str, list[int]]],
                     added: dict[int, dict[str, list[int]]], averages: list[float],
                     lengths: dict[int, list[int]] | None = None, empty: bool = False) -> None:
    """Remove `removed` slots' terms and add `added` slots' terms; each touched term's postings
    are read and rewritten once (not read at all when the caller has just `empty`-ied the
    table: one SELECT per term is ~190,000 of them at 10,000 cards)."""
    # A posting is one int, key << 32 | slot: sorting ints is much cheaper than sorting
    # (key, slot) tuples, in the same order.
    changes: dict[str, list[int]] = {}
    dropped: dict[str, set[int]] = {}
    for slot, terms in removed.items():
        for term in terms:
            dropped.setdefault(term, set()).add(slot)
    for slot, terms in added.items():
        key = _slot_scorer((lengths or {}).get(slot) or slot_lengths(terms), averages)
        known: dict[tuple[int, ...], int] = {}  # most terms of a card share a few count shapes
        for term, counts in terms.items():
            shape = tuple(counts)
            posting = known.get(shape)
            if posting is None:
                posting = known[shape] = key(counts) << 32 | slot
            entry = changes.get(term)
            if entry is None:
                changes[term] = [posting]
            else:
                entry.append(posting)
    writes: list[tuple[str, bytes, bytes, int]] = []
    deletes: list[tuple[str]] = []
    # Imported here: the hook reads postings as memoryviews (`CompiledIndex.postings`), and
    # `array` imports `collections` (the router imports this module for IMPACT_LEVELS).
    from array import array
    from bisect import bisect_right

    for term in set(changes) | set(dropped):
        added_here = sorted(changes.get(term, ()))
        found = None if empty else \
            db.execute("SELECT slots, keys FROM postings WHERE term = ?", (term,)).fetchone()
        if not found:
            if added_here:
                new_keys = array("H", [p >> 32 for p in added_here])
                writes.append((term, array("I", [p & _SLOT_MASK for p in added_here]).tobytes(),
                               new_keys.tobytes(), head_count(new_keys)))
            continue
        # A common term has a posting for most cards: edit the packed arrays in place (index,
        # delete, bisect and insert all run in C) rather than rebuilding them in Python.
        slots, keys = array("I"), array("H")
        slots.frombytes(found[0])
        keys.frombytes(found[1])
        for slot in dropped.get(term, ()):
            try:
                position = slots.index(slot)
            except ValueError:
                continue
            del slots[position]
            del keys[position]
        for posting in added_here:
            key, slot = posting >> 32, posting & _SLOT_MASK
            position = bisect_right(keys, key)
            keys.insert(position, key)
            slots.insert(position, slot)
        if not slots:
            deletes.append((term,))
            continue
        writes.append((term, slots.tobytes(), keys.tobytes(), head_count(keys)))
    db.executemany("DELETE FROM postings WHERE term = ?", deletes)
    db.executemany("INSERT OR REPLACE INTO postings (term, slots, keys, heads) VALUES (?, ?, ?, ?)",
                   writes)


def rebuild_postings(db: Any, averages: list[float],
                     every: dict[int, dict[str, list[int]]] | None = None,
                     lengths: dict[int, list[int]] | None = None) -> None:
    """All postings afresh; `every` (slot -> terms of every card) spares reading the terms
    back when the caller holds them all (a first build)."""
    db.execute("DELETE FROM postings")
    if every is None:
        every = {slot: marshal.loads(blob) for slot, blob in
                 db.execute("SELECT slot, terms FROM cards WHERE card IS NOT NULL")}
    update_postings(db, {}, every, averages, lengths, empty=True)
