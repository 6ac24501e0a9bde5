"""`engram show ID`: one card whole: file, key, fields, body, and its size against each host's
budget."""

from __future__ import annotations

import difflib
from pathlib import Path

from engram import card_size, output
from engram import workspace as workspace_module
from engram.commands.route import open_index, shown_card
from engram.errors import EngramError


def run(*, card_id: str, roots: list[Path], cwd: Path, as_json: bool) -> int:
    compiled, root, settings = open_index(cwd, roots)
    slot = compiled.slot_of(card_id)
    if slot is None:
        skipped = [p for p in compiled.problems if p.severity == "error"
                   and Path(p.path).stem == card_id]
        if skipped:
            raise EngramError(f"{card_id} is skipped: {skipped[0].render()}", "run `engram lint`")
        ids = [card.id for card in compiled.all_cards()]
        close = difflib.get_close_matches(card_id, ids, n=3)
        raise EngramError(f"no card with the id {card_id!r}",
                          f"did you mean {', '.join(close)}?" if close else "engram route "
                          "\"PROMPT\" lists cards; engram new ID writes one")
    card = compiled.card(slot)
    holds_secret = compiled.holds_secret(slot)
    if holds_secret:
        card = shown_card(card)
    fits = card_size.fits(card, settings)
    ws = workspace_module.load(cwd)
    linked = set(card_size.linked_hosts(ws.root)) if ws is not None and not roots else set()
    if as_json:
        output.emit_json("show", {
            "id": card.id, "path": card.path, "line": 1,
            "key": card.key, "title": card.title, "card": card.card, "type": card.type,
            "tags": list(card.tags), "applies_to": list(card.applies_to), "always": card.always,
            "priority": card.priority, "depends_on": list(card.depends_on),
            "format": card.format, "body": card.body,
            "holds_secret": holds_secret,
            "sizes": [{"host": f.host, "unit": f.unit, "limit": f.limit, "size": f.size,
                       "fits": f.fits, "linked": f.host in linked} for f in fits],
        })
        return 0
    try:
        shown = str(Path(card.path).relative_to(cwd))
    except ValueError:
        shown = card.path
    out = [f"{card.id}: {card.title}",
           f"  file      {shown} ({card.format} format)",
           f"  key       {card.key}",
           f"  card      {card.card}"]
    for label, values in (("tags", card.tags), ("applies_to", card.applies_to),
                          ("depends_on", card.depends_on)):
        if values:
            out.append(f"  {label:<9} {', '.join(values)}")
    out.append(f"  priority  {card.priority}" + ("   always: sent at session start"
                                                  if card.always else ""))
    if holds_secret:
        out.append("  secret    it holds a value-shaped secret, so no hook injects it; shown "
                   "redacted (`engram lint` names the lines)")
    out.append("  size      " + "; ".join(
        f"{f.host}{' (linked)' if f.host in linked else ''} {f.describe()}" for f in fits))
    if any(not f.fits for f in fits):
        out.append("  hint      split it into smaller cards so every host gets it whole")
    out += ["", card.body.rstrip("\n")]
    output.write("\n".join(out) + "\n")
    return 0
