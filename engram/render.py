"""The text a hook injects, from plain values: bodies under a header naming their id, folded
one-line cards, the `already loaded:` line and the proof line. Deterministic: the same inputs
give the same bytes."""

from __future__ import annotations

from engram.record import Record, frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Iterable

HEADER_PREFIX: Final = "### engram memory: "
FOLDED_HEADER: Final = "### engram memory, folded to one line each (over the size limit):"
ALREADY_PREFIX: Final = "already loaded: "
PROOF_PREFIX: Final = "Engram proof: "
# Every line break a host or a model may honour, not only `\n`: a card must not start a line
# of its own after `\r`, U+2028 or U+0085 that the guard below never saw as one. `\r\n`
# is one break.
_BREAKS: Final = str.maketrans(dict.fromkeys("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", "\n"))
# Host wrapper tags: a body holding `</hook_context>` would close Gemini's wrapper and read as
# the user's own words; `<system-reminder>` would pose as the host. Shown, but inert.
# Compiled only for text where `_may_hold_wrapper_tag` finds a candidate: `re` costs a hook
# process more to import than the rest of its work on a plain prompt.
_WRAPPER_TAG: Final = (
    r"<(\s{0,3}/?\s{0,3}(?:system(?:[-_ ]?(?:reminder|prompt|message|instructions?))?|hook[-_]context"
    r"|user[-_]prompt[-_]submit[-_]hook|command[-_](?:name|message|args)|local[-_]command[-_]std(?:out|err)"
    r"|function[-_]results?|function[-_]calls|\|?im[-_](?:start|end|sep)\|?|developer[-_]?(?:message|instructions)?"
    r"|antml:[a-z_]{1,40})(?=[\s/>|])[^<>\n]{0,200})>")
# The names `_WRAPPER_TAG` starts with, lowercased: a `<` followed (after spaces and `/`) by
# none of these cannot begin a wrapper tag.
_WRAPPER_STARTS: Final = ("system", "hook-", "hook_", "user-", "user_", "command-", "command_",
                          "local-", "local_", "function-", "function_", "|im-", "|im_", "im-",
                          "im_", "developer", "antml:")
# Invisible characters (soft hyphen, zero-width and bidi controls, Hangul fillers, variation
# selectors, tag characters), deleted before a line is compared.
_INVISIBLE: Final = dict.fromkeys(
    [0x00ad, 0x034f, 0x061c, 0x115f, 0x1160, 0x180e, *range(0x200b, 0x2010),
     *range(0x202a, 0x202f), *range(0x2060, 0x2065), *range(0x2066, 0x2070), 0x3164,
     *range(0xfe00, 0xfe10), 0xfeff, 0xffa0, *range(0xe0000, 0xe01f0)])
# Letters that look Latin but are not (NFKC keeps them apart): Cyrillic and Greek.
_LOOKALIKES: Final = str.maketrans("аеорсухкмтнвіјѕԁԛԝɡοαερνκτιυ", "aeopcyxkmthbijsdqwgoaepvktiu")
_GUARDED: Final = ("already loaded:", "engram proof:")


def _skeleton(line: str) -> str:
    """A line as a reader would take it: invisible characters gone, compatibility forms
    (fullwidth, mathematical letters) folded, case folded, look-alike letters read as Latin,
    runs of spaces as one, quoting and list marks at the start dropped."""
    if not line.isascii():
        import unicodedata

        line = unicodedata.normalize("NFKC", line.translate(_INVISIBLE)).casefold()
        line = line.translate(_LOOKALIKES)
    else:
        line = line.lower()
    line = " ".join(line.replace(" :", ":").split())
    return line.lstrip(" >*-+|`_~")


def break_lines(text: str) -> list[str]:
    """`text` split at every line break `neutralize` honours."""
    return _unify_breaks(text).split("\n")


def _unify_breaks(text: str) -> str:
    return text.replace("\r\n", "\n").translate(_BREAKS)


def _may_hold_wrapper_tag(text: str) -> bool:
    """Could `_WRAPPER_TAG` match anywhere in `text`? False only when no `<` is followed,
    after whitespace and a `/`, by the start of a wrapper name (ASCII, any case)."""
    at = text.find("<")
    while at >= 0:
        name = text[at + 1:at + 24].lstrip().lstrip("/").lstrip()[:10]
        if not name.isascii() or name.lower().startswith(_WRAPPER_STARTS):
            return True  # a non-ASCII letter may match a name under IGNORECASE: let re decide
        at = text.find("<", at + 1)
    return False


def is_forged(line: str) -> bool:
    """Does this line imitate engram's framing: `already loaded:`, the proof line, or a
    memory header at any heading level?"""
    key = _skeleton(line)
    if key.startswith(_GUARDED):
        return True
    if key.startswith("#"):
        return key.lstrip("#").lstrip().replace(" ", "").startswith("engrammemory")
    return False


@frozen
class Item(Record):
    id: str
    title: str
    card: str
    body: str
    priority: int
    rank: int  # routing order: 0 is the most relevant


def neutralize(text: str) -> str:
    """Card text made safe to emit: every line break a plain `\n`, host wrapper tags shown
    as `‹tag›`, and lines that imitate engram's framing quoted (`> already loaded: ...`)."""
    text = _unify_breaks(text)
    if _may_hold_wrapper_tag(text):
        import re

        text = re.compile(_WRAPPER_TAG, re.IGNORECASE).sub(lambda m: f"‹{m.group(1)}›", text)
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if is_forged(line):
            stripped = line.lstrip(" \t")
            lines[index] = line[: len(line) - len(stripped)] + "> " + stripped
    return "\n".join(lines)


def one_line(text: str) -> str:
    return neutralize(" ".join(text.translate(_INVISIBLE).split()) if not text.isascii()
                      else " ".join(text.split()))


def body_block(item: Item) -> str:
    return f"{HEADER_PREFIX}{item.id} — {one_line(item.title)}\n{neutralize(item.body.strip())}"


def folded_line(item: Item) -> str:
    return f"- {item.id}: {one_line(item.card)}"


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
    return join([body_block(item) for item in full], [folded_line(i) for i in folded],
                already, proof)


def join(blocks: list[str], lines: list[str], already: str, proof: str) -> str:
    """`compose` from body blocks and folded lines already rendered."""
    parts = list(blocks)
    if lines:
        parts.append(FOLDED_HEADER + "\n" + "\n".join(lines))
    tail = "\n".join(line for line in (already, proof) if line)
    if tail:
        parts.append(tail)
    return "\n\n".join(parts)
