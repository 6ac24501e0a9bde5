"""The candidate card `observe` drafts from a session: what the user told the agent to do or
not to do ("no, we always use pnpm, never npm", "remember ...", "don't ..."), in the user's own
words, never the agent's answer. Lines holding a redacted secret are left out and counted.
`related` finds existing cards on the same subject, so a reviewer can merge instead of adding
a near-duplicate. Pure: transcript turns and cards in, values out."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Iterable

from engram.secrets import MARKER_PREFIX

# A sentence that instructs or corrects: the memory a user wants kept.
_INSTRUCTION: Final = re.compile(
    r"^(no|nope|wrong|actually|remember|note|fyi|important|please)\b[,:]?|"
    r"\b(always|never|don'?t|do not|must|mustn'?t|should(?:n'?t)? always|make sure|"
    r"instead of|rather than|we use|we prefer|prefer|from now on|stop using|avoid|"
    r"the rule is|our convention|in this (?:repo|repository|project|codebase))\b",
    re.IGNORECASE)
_QUESTION: Final = re.compile(r"\?\s*$")
_SENTENCE: Final = re.compile(r"(?<=[.!;])\s+(?=[A-Z\"'`])|\n+")
_LEAD: Final = re.compile(r"^(?:(?:no|nope|wrong|actually|ok|okay|fyi|please|also|and)\b[,:!.]?\s*)+"
                          r"|^remember(?:\s+that)?[,:]?\s*|^note[,:]\s*", re.IGNORECASE)
_WORD: Final = re.compile(r"[a-z][a-z0-9+#.-]{2,}")
_DULL: Final = frozenset(
    "this that with from have what when your please would could should there their them then "
    "than into about just like make also always never dont don't must remember note instead "
    "rather prefer avoid stop using use uses used sure from now here project repo repository "
    "codebase our the and for not are was were will can any all only every each which".split())
MAX_INSTRUCTIONS: Final = 12
MAX_SENTENCE: Final = 300


@dataclass(frozen=True)
class Drafted:
    title: str
    card: str
    body: str
    tags: tuple[str, ...]
    instructions: tuple[str, ...]  # the user's sentences the body holds
    left_out: int  # instruction sentences dropped because they held a redacted secret


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for block in text.split("\n"):
        block = block.strip().lstrip(">-*• ").strip()
        if not block or block.startswith(("```", "<", "$ ")):
            continue
        out.extend(part.strip() for part in _SENTENCE.split(block) if part.strip())
    return out


def is_instruction(sentence: str) -> bool:
    """Does the user tell the agent what to do or not to do (not ask a question)?"""
    if _QUESTION.search(sentence) and not sentence.lower().startswith(("no", "remember")):
        return False
    return bool(_INSTRUCTION.search(sentence))


def _clean(sentence: str) -> str:
    cleaned = _LEAD.sub("", sentence).strip()
    cleaned = cleaned[:1].upper() + cleaned[1:] if cleaned else cleaned
    if len(cleaned) > MAX_SENTENCE:
        cleaned = cleaned[: MAX_SENTENCE - 1].rsplit(" ", 1)[0] + "…"
    return cleaned


def instructions(user_texts: Iterable[str]) -> tuple[list[str], int]:
    """(the user's instructions and corrections in order, lines left out for secrets)."""
    found: list[str] = []
    left_out = 0
    for text in user_texts:
        for sentence in _sentences(text):
            if not is_instruction(sentence):
                continue
            if MARKER_PREFIX in sentence:
                left_out += 1
                continue
            cleaned = _clean(sentence)
            if cleaned and cleaned not in found:
                found.append(cleaned)
    return found[:MAX_INSTRUCTIONS], left_out


def tags_of(text: str, limit: int = 4) -> tuple[str, ...]:
    words = [w.strip(".-") for w in _WORD.findall(text.lower())]
    return tuple(dict.fromkeys(w for w in words if w and w not in _DULL))[:limit]


def draft(user_texts: list[str]) -> Drafted | None:
    """A candidate from the user's instructions, or None when the session holds none."""
    said, left_out = instructions(user_texts)
    if not said:
        return None
    first = said[0].rstrip(".!;")
    title = first if len(first) <= 80 else first[:79].rsplit(" ", 1)[0] + "…"
    body = "".join(f"- {line}\n" for line in said)
    return Drafted(title, said[0], body, tags_of(" ".join(said)), tuple(said), left_out)


def related(tags: Iterable[str], text: str, cards: Iterable[object],
            limit: int = 3) -> list[tuple[object, list[str]]]:
    """Existing cards sharing a tag or at least two distinctive words with the draft: (card,
    what they share), most shared first."""
    want_tags = {t.lower() for t in tags}
    want_words = set(tags_of(text, limit=40))
    scored = []
    for card in cards:
        card_tags = {t.lower() for t in getattr(card, "tags", ())}
        shared_tags = sorted(want_tags & card_tags)
        card_words = set(tags_of(" ".join([getattr(card, "title", ""), getattr(card, "card", ""),
                                           getattr(card, "body", "")[:2000]]), limit=200))
        shared_words = sorted((want_words & card_words) - set(shared_tags))
        if shared_tags or len(shared_words) >= 2:
            shared = [f"tag {t}" for t in shared_tags] + shared_words[:5]
            scored.append((len(shared_tags) * 3 + len(shared_words), card, shared))
    scored.sort(key=lambda item: -item[0])
    return [(card, shared) for _score, card, shared in scored[:limit]]
