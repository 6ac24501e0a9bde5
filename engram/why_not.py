"""`engram route PROMPT --why-not ID`: why one card was or was not selected, in words. Built on
the router's own evidence and verdict (the same `_TextHits` and cut, `RouteResult.why`), so
the explanation cannot drift from the decision: which prompt words the card contains and where,
the evidence a card needs, the cut relative to the best card, the limit, and the paths."""

from __future__ import annotations

from pathlib import Path

from engram import router
from engram.index import CompiledIndex
from engram.router import RouteResult


def _quoted(words: list[str]) -> str:
    items = [f"'{w}'" for w in words]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def explain(index: CompiledIndex, result: RouteResult, prompt: str, paths: list[str],
            card_id: str, limit: int) -> list[str]:
    """Sentences saying why `card_id` was (not) selected for `prompt` and `paths`."""
    import difflib

    slot = index.slot_of(card_id)
    if slot is None:
        skipped = [p for p in index.problems if p.severity == "error"
                   and Path(p.path).stem == card_id]
        if skipped:
            return [f"{card_id} is not routable: {skipped[0].path} has errors "
                    f"({skipped[0].message}); run `engram lint`."]
        ids = [index.row(s).id for s in index.active]
        close = difflib.get_close_matches(card_id, ids, n=3)
        return [f"There is no card with the id {card_id!r}."
                + (f" Did you mean {', '.join(close)}?" if close else "")]
    row = index.row(slot)
    lines: list[str] = []
    if slot in set(index.data.get("secret_slots") or ()):
        lines.append(f"{card_id} holds a value-shaped secret, so no hook ever injects it "
                     "(`engram lint` shows the line).")
    hits = router._TextHits(index, prompt)
    words = hits.words
    mask = hits.hits.get(slot, 0)
    matched = [term for n, term in enumerate(hits.terms) if mask & (1 << n)]
    missing = [words.get(term, term) for term in hits.terms if term not in matched]
    places = [f"the prompt names its tag '{tag}'" for tag in hits.tags.get(slot, ())]
    for field, terms in _fields(index, slot, matched).items():
        places.append(f"{_quoted([words.get(t, t) for t in terms])} in its {field}")

    selected = {s.slot: (rank, s) for rank, s in enumerate(result.selected, 1)}
    if slot in selected:
        rank, selection = selected[slot]
        why = list(places)
        for reason in selection.reasons:
            if reason.kind == "path":
                why.append(f"its applies_to glob {reason.detail}")
            elif reason.kind == "always":
                why.append("it is an always card (sent at session start)")
            elif reason.kind == "dependency":
                why.append(f"it is {reason.detail} (depends_on)")
        lines.append(f"{card_id} IS selected for this request (number {rank} of "
                     f"{len(result.selected)}): " + "; ".join(why) + ".")
        return lines

    if not hits.terms:
        lines.append("The prompt has no words engram routes on (only common words), so no card "
                     "is selected by text.")
    elif not matched:
        lines.append(f"None of the prompt's words ({_quoted([words.get(t, t) for t in hits.terms])})"
                     f" appear in {card_id}'s title, tags, one-line card or body.")
    else:
        lines.append(f"The prompt matched {card_id} on " + "; ".join(places) + ".")
        if missing:
            lines.append(f"It does not contain {_quoted(missing)}.")
        # The router's own verdict on this card: the same evidence and cut it applied.
        verdict = result.why(index, card_id)
        for reason in verdict:
            if reason.kind == "cut":
                detail = reason.detail.removeprefix("not selected: ")
                lines.append(detail[0].upper() + detail[1:] + ".")
            elif reason.kind == "selected":
                lines.append(f"It made the text cut ({reason.detail}), but only {limit} cards "
                             "are selected for one prompt (load.limit or --limit).")
    globs = list(row.applies_to)
    if globs:
        if paths:
            lines.append(f"Its applies_to ({', '.join(globs)}) matches none of the touched "
                         f"paths ({', '.join(paths)}).")
        else:
            lines.append(f"It is also selected when a touched path matches its applies_to "
                         f"({', '.join(globs)}); this request touched no path.")
    tags = list(row.tags)
    if tags and slot not in hits.tags:
        lines.append(f"A prompt naming one of its tags ({', '.join(tags)}) always selects it.")
    if row.always:
        lines.append("It is an always card: sent at session start, not per prompt.")
    return lines


def _fields(index: CompiledIndex, slot: int, matched: list[str]) -> dict[str, list[str]]:
    """Matched terms grouped by the strongest field they were found in."""
    fields: dict[str, list[str]] = {}
    for term in matched:
        field = index.field_of(term, slot)
        name = {"title": "title or id", "card": "one-line card"}.get(router.FIELD_NAMES[field],
                                                                      router.FIELD_NAMES[field])
        fields.setdefault(name, []).append(term)
    return fields
