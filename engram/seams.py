"""A secret cut between two cards of one hook answer.

The index judges each card alone, so a token cut in two, its first half ending one card and
the rest opening another (`... ghp_aB3dE5` / `fG7hJ...`), passes the gate twice; a hook answer
that holds both shows the model the halves one after the other, with only engram's header
line between them, and a reader joins them as it joins a wrapped line. What the model reads
at each seam (the end of one card's part, then the id and the title or card line and first
lines of the next) is read here as the gate reads one card (its fields one a line), and a
secret that runs across the seam keeps the later card out of the answer.

Only the seams are read, never whole bodies again: each was judged when its card was compiled.
Most seams are let through by a look at the two words that meet there (a sentence's end, a
title's first word), so the detector (whose import alone costs a hook more than the rest of
its work) is loaded only for a seam where a value may go on."""

from __future__ import annotations

from engram import render
from engram.render import Item

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Sequence

# Lines of the earlier part read before the seam (a secret's name may be a few lines above
# its value: `- name: DB_PASSWORD` / `value: ...`), and of the later part's body after it.
_BEFORE_LINES: Final = 4
_AFTER_LINES: Final = 12
_WINDOW: Final = 1200  # characters of a body's end (twice that of its start) read for its lines
_MARKS: Final = "\"'`*()[]{}<>,;!?"
_JOINING: Final = "_-+/=.:%"
# Words that name what follows as a secret (the detector's own for a value cut over lines).
_NAMING: Final = ("key", "token", "secret", "pass", "pwd", "auth", "bearer", "basic", "://",
                  "sig=", " -p", " -u", " -a", "--value", "securestring")


def _ending(item: Item, folded: bool, lines: int) -> str:
    """The last `lines` lines of a part as the answer shows them (a folded one shows its card
    line alone); only that end of a body is rendered."""
    if folded:
        return render.one_line(item.card)
    body = item.body.strip()
    if not body:
        return render.one_line(item.title)
    ending = body[body.rfind("\n", 0, len(body) - _WINDOW) + 1:].rsplit("\n", lines)[-lines:]
    return "\n".join(render.neutralize("\n".join(ending)).split("\n")[-lines:])


def _opening(item: Item, folded: bool, lines: int) -> str:
    """The first line a part shows after its id (its title or card line), then the first
    `lines` lines of its body."""
    head = render.one_line(item.card if folded else item.title)
    if folded or lines == 0:
        return head
    opening = item.body.strip()[:_WINDOW * 2].split("\n", lines)[:lines]
    return "\n".join([head, *render.neutralize("\n".join(opening)).split("\n")[:lines]])


def _may_go_on(before: str, after: str) -> bool:
    """Could a value run from the end of `before` into the start of `after`? Not when the
    later part opens with words (a title's `Deploy`, `PowerShell`, `Step-by-step`) or the
    earlier one ends a sentence, a quote or a code span, or a word with nothing on its line
    naming a secret; a word inside a quote left open (a passphrase) always may."""
    last_line = before[before.rfind("\n") + 1:]
    words_before, words_after = last_line.rsplit(None, 1), after.split(None, 1)
    if not words_before or not words_after:
        return False
    last, first = words_before[-1].rstrip("*~"), words_after[0].strip(_MARKS)
    if not any(c.isalnum() for c in last):
        return False
    if last_line.count('"') % 2:
        return True
    if last[-1] in ".!?)]}`'\"。…" or len(last) + len(first) < 8 or _is_words(first.rstrip(":")):
        return False
    if _is_word(last.lstrip(_MARKS)) and not any(word in last_line.lower() for word in _NAMING):
        return False  # a word ends the part, and nothing on its line names a secret
    if any(c.isdigit() for c in first):
        return True
    return len(first) >= 4 and any(c.isupper() or c in _JOINING for c in first)


def _is_word(text: str) -> bool:
    """A word of prose: letters, in lowercase, title case or a short acronym."""
    letters = text.replace("_", "")
    return letters.isalpha() and (letters.islower() or letters.isupper() and len(letters) <= 5
                                  or letters[0].isupper() and letters[1:].islower())


def _is_words(text: str) -> bool:
    """Words joined (`Step-by-step`, `snake_case`, `PowerShell`, `TaskSync`, `iPhone`):
    each piece between separators a word, or words run together in camel case, each of three
    letters or more after the first (a generated `RsTuVwXyZ` changes case every letter or two)."""
    pieces = text.replace("-", " ").replace("_", " ").replace(".", " ").replace("/", " ").split()
    if not pieces:
        return False
    for piece in pieces:
        if _is_word(piece):
            continue
        if not piece.isalpha() or not piece.isascii():
            return False
        starts = [0] + [i for i, c in enumerate(piece) if c.isupper() and i > 0]
        humps = [piece[a:b] for a, b in zip(starts, starts[1:] + [len(piece)], strict=True)]
        if any(len(hump) < 3 or not hump[1:].islower() for hump in humps[1:]):
            return False
    return True


def cut_between(parts: Sequence[tuple[Item, bool]]) -> int | None:
    """The position in `parts` (each an item and whether it is shown folded, in the order the
    answer shows them) of the first part that, read after the one before it, completes a
    secret neither holds alone; None when there is none."""
    for position in range(1, len(parts)):
        earlier, later = parts[position - 1], parts[position]
        last_line = _ending(*earlier, 1)
        # An id is a slug of lowercase words: it goes on with a token only in a piece of
        # generated characters, digits among them.
        later_id = later[0].id
        views = [later_id] if any(c.isdigit() for c in later_id.split("-", 1)[0]) else []
        views.append(_opening(*later, 0))
        for after in views:
            if not _may_go_on(last_line, after):
                continue
            from engram import secrets

            before = _ending(*earlier, _BEFORE_LINES)
            if after is not later_id:
                after = _opening(*later, _AFTER_LINES)
            if any(hit.start < len(before) < hit.end
                   for hit in secrets.find_secrets(before + "\n" + after)):
                return position
    return None
