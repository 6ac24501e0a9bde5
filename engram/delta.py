"""What a hook sends, from plain values: which routed cards are new for this session, which
were already delivered, and the budgeted text. Pure."""

from __future__ import annotations

from engram import budget, render
from engram.record import Record, frozen
from engram.render import Item

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final



@frozen
class Routed(Record):
    id: str
    key: str  # id@hash of what the model reads of the card (card.view_hash)
    item: Item
    always: bool = False
    slot: int = -1  # where the card lives in the index, to read its body when it is sent
    # id@hash of the card file's bytes: the key a record written before keys named what the
    # model reads holds for this very content (still delivered after an upgrade).
    file_key: str = ""


def is_delivered(routed: Routed, delivered: set[str]) -> bool:
    return routed.key in delivered or (bool(routed.file_key) and routed.file_key in delivered)


@frozen
class Answer(Record):
    text: str
    sent_keys: tuple[str, ...]  # bodies sent in full: the only ones marked delivered
    size: int
    new: int = 0
    folded: int = 0
    dropped: int = 0
    reused: int = 0
    action: str = "replace"  # for single-slot hosts (OpenCode): replace | retain | clear
    slot: str = ""  # single-slot hosts: the token naming what `text` fills the slot with
    # Cards kept out because a secret runs into them from the card shown before them
    # ("later after earlier"), for the hook's log.
    withheld: tuple[str, ...] = ()


EMPTY: Final = Answer("", (), 0)


def slot_token(keys: list[str], unit: str, limit: int, proof: bool) -> str:
    """Names a single-slot host's slot content: the same cards under the same budget and proof
    setting render the same text. Card keys only, never prompt text."""
    return f"{unit}:{limit}:{int(proof)}:" + " ".join(sorted(keys))


def split(routed: list[Routed], delivered: set[str], mode: str) -> tuple[list[Routed], list[Routed]]:
    """(new, already delivered). In `always` mode everything routed is new again."""
    if mode == "always":
        return list(routed), []
    new = [r for r in routed if not is_delivered(r, delivered)]
    already = [r for r in routed if is_delivered(r, delivered)]
    return new, already


def answer(new: list[Routed], already: list[Routed], routed_keys: list[str], proof: bool,
           unit: str, limit: int, note: str = "", list_already: bool = True) -> Answer:
    """Budget and render. Nothing routed (and no proof) gives the empty answer: no headers
    without memory."""
    if not routed_keys and not proof:
        return EMPTY
    already_ids = [r.id for r in already] if list_already else []
    if not new and not already_ids and not proof:
        return EMPTY

    def proof_line(loaded: int, reused: int, skipped: int) -> str:
        return render.proof_line(routed_keys, loaded, reused, skipped, note)

    withheld: list[str] = []
    while True:
        fitted = budget.fit([r.item for r in new], already_ids, proof_line if proof else None,
                            unit, limit)
        shown = [(item, False) for item in fitted.full] + [(item, True) for item in fitted.folded]
        if len(shown) < 2:
            break
        from engram import seams  # only an answer of two parts or more has a seam

        cut = seams.cut_between(shown)
        if cut is None:
            break
        # A secret runs from one card into the next: the later one stays out of this answer
        # (not sent, not recorded), so the two halves never meet in it.
        withheld.append(f"{shown[cut][0].id} after {shown[cut - 1][0].id}")
        new = [r for r in new if r.id != shown[cut][0].id]
    sent_ids = {item.id for item in fitted.full}
    sent = tuple(r.key for r in new if r.id in sent_ids)
    return Answer(fitted.text, sent, fitted.size, len(fitted.full), len(fitted.folded),
                  len(fitted.dropped) + len(withheld), len(set(already_ids)),
                  withheld=tuple(withheld))


def silence_note(mode: str, kind: str) -> str:
    """Why nothing was injected, for the proof line; empty when the mode allows this event."""
    if mode in ("off", "manual"):
        return f"read mode {mode}: nothing injected"
    if mode == "startup" and kind != "start":
        return "read mode startup: memory is injected at session start only"
    return ""
