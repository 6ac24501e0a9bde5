"""Prompt + touched paths -> ranked cards, each with named reasons. Pure: it reads only the
compiled index and the values it is given.

Text relevance is BM25F over four fields (title+id, tags, one-line card, body) with positive
IDF only; a prompt term equal to a card's tag always counts, however common the tag. Paths
match `applies_to` globs. A prompt with nothing relevant selects nothing but `always` cards."""

from __future__ import annotations

import math
from engram.record import frozen

from engram import text
from engram.index import C_ALWAYS, C_DEPENDS, C_ID, C_PRIORITY, CompiledIndex
from engram.postings import IMPACT_LEVELS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Iterable

FIELD_WEIGHTS: Final = (3.0, 4.0, 2.0, 1.0)
FIELD_B: Final = (0.3, 0.0, 0.3, 0.75)
FIELD_NAMES: Final = ("title", "tags", "card", "body")
K1: Final = 1.2
TAG_BONUS: Final = 1.5
PATH_SCORE: Final = 10.0
# Abstention: a card needs this much text evidence to be selected by text alone.
MIN_TEXT_SCORE: Final = 2.2
# ... and must reach this share of the best text score in the same query (0.5: less than half
# the best evidence is a tail match; tuned on a dev set, see docs/performance.md).
RELATIVE_CUT: Final = 0.5
# The store size MIN_TEXT_SCORE was tuned at (the smallest labelled set); smaller stores get a
# proportionally lower bar (see min_text_score).
REFERENCE_CARDS: Final = 24
MAX_PATHS: Final = 256
# Bounded work per query: the most relevant postings of each term, the first query terms.
MAX_POSTINGS_PER_TERM: Final = 256
MAX_QUERY_TERMS: Final = 32
DEFAULT_LIMIT: Final = 8


@frozen
class Reason:
    kind: str  # path | text | tag | always | dependency
    detail: str


@frozen
class Selection:
    slot: int
    id: str
    score: float
    reasons: tuple[Reason, ...]


@frozen
class Query:
    prompt: str = ""
    paths: tuple[str, ...] = ()  # relative to the workspace root, '/'-separated
    prompt_paths: tuple[str, ...] = ()  # files named in the prompt that exist
    include_always: bool = True
    limit: int = DEFAULT_LIMIT


@frozen
class RouteResult:
    selected: tuple[Selection, ...]
    warnings: tuple[str, ...] = ()

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self.selected]


class _TextHits:
    """Text scores for one prompt. Reasons are built only for the cards that get selected:
    scoring touches hundreds of postings, explaining touches a handful of cards."""

    def __init__(self, index: CompiledIndex, prompt: str) -> None:
        self.index = index
        self.terms = list(dict.fromkeys(text.terms(prompt)))[:MAX_QUERY_TERMS]
        self.scores: dict[int, float] = {}
        self.hits: dict[int, int] = {}  # slot -> bitmask of the query terms it matched
        self.strong: set[int] = set()
        self.tags: dict[int, list[str]] = {}
        if self.terms and index.active:
            self._score()

    def _score(self) -> None:
        active = self.index.active_set()
        count = len(active)
        scores, hits, strong = self.scores, self.hits, self.strong
        scores_get, hits_get = scores.get, hits.get
        for number, term in enumerate(self.terms):
            slots, keys = self.index.postings(term)
            df = len(slots)
            if not df:
                continue
            idf = math.log(1.0 + max(count - df + 0.5, 0.5) / (df + 0.5))
            weight = idf / IMPACT_LEVELS
            bit = 1 << number
            for position in range(min(df, MAX_POSTINGS_PER_TERM)):
                slot = slots[position]
                if slot not in active:
                    continue
                packed = 65535 - keys[position]
                scores[slot] = scores_get(slot, 0.0) + weight * (packed >> 2)
                hits[slot] = hits_get(slot, 0) | bit
                if packed & 3 != 3:
                    strong.add(slot)
        query_set = set(self.terms)
        for term in self.terms:
            for slot, tag, tag_terms in self.index.tags_for(term):
                if slot in active and (len(tag_terms) == 1
                                        or all(t in query_set for t in tag_terms)):
                    found = self.tags.setdefault(slot, [])
                    if tag not in found:
                        found.append(tag)
        for slot, tags in self.tags.items():
            scores[slot] = scores_get(slot, 0.0) + TAG_BONUS * len(tags)

    def is_eligible(self, slot: int) -> bool:
        """Enough evidence to select a card on text alone: a match in a strong field (title,
        tags, card line), an exact tag, or three distinct terms."""
        return slot in self.strong or slot in self.tags or bin(self.hits.get(slot, 0)).count("1") >= 3

    def reasons(self, slot: int) -> list[Reason]:
        reasons = [Reason("tag", tag) for tag in self.tags.get(slot, ())]
        mask = self.hits.get(slot, 0)
        details = []
        for number, term in enumerate(self.terms):
            if not mask & (1 << number):
                continue
            slots, keys = self.index.postings(term)
            field = (65535 - keys[slots.index(slot)]) & 3
            details.append(f"{term} ({FIELD_NAMES[field]})")
        if details:
            reasons.append(Reason("text", "matched " + ", ".join(details)))
        return reasons


def _path_matches(index: CompiledIndex, paths: Iterable[str], source: str) -> dict[int, list[Reason]]:
    found: dict[int, list[Reason]] = {}
    paths = list(paths)
    if not paths:
        return found
    from engram import globs as globs_module  # only when paths were touched or named

    buckets = index.data["buckets"]
    glob_rows = index.data["globs"]
    for path in paths:
        candidates: set[int] = set()
        for key in globs_module.path_keys(path):
            candidates.update(buckets.get(key, ()))
        for glob_index in sorted(candidates):
            slot, _regex, pattern = glob_rows[glob_index]
            if slot in found and any(r.detail.endswith(f"{path}") for r in found[slot]):
                continue
            if index.compiled_glob(glob_index).match(path):
                found.setdefault(slot, []).append(
                    Reason("path", f"{pattern} matches {source}{path}"))
    return found


def min_text_score(cards: int) -> float:
    """MIN_TEXT_SCORE, scaled down for stores smaller than REFERENCE_CARDS: IDF, and with it
    every text score, grows with the store, so a fixed bar would keep a new user's first few
    cards from routing by text at all."""
    def best_idf(count: int) -> float:
        return math.log(1.0 + max(count - 0.5, 0.5) / 1.5)

    return MIN_TEXT_SCORE * min(1.0, best_idf(max(cards, 1)) / best_idf(REFERENCE_CARDS))


def route(index: CompiledIndex, query: Query) -> RouteResult:
    warnings: list[str] = []
    paths = list(dict.fromkeys(p for p in query.paths if p))
    if len(paths) > MAX_PATHS:
        warnings.append(f"{len(paths)} touched paths; only the first {MAX_PATHS} were considered")
        paths = paths[:MAX_PATHS]
    path_hits = _path_matches(index, paths, "")
    for slot, reasons in _path_matches(index, query.prompt_paths, "prompt path ").items():
        path_hits.setdefault(slot, []).extend(reasons)
    text_hits = _TextHits(index, query.prompt)

    # slot -> (score, reasons or None: built on demand from text_hits)
    ranked: dict[int, tuple[float, list[Reason] | None]] = {}
    for slot, reasons in path_hits.items():
        score = text_hits.scores.get(slot, 0.0)
        ranked[slot] = (PATH_SCORE + score, reasons + (text_hits.reasons(slot) if score else []))
    threshold = min_text_score(len(index.active))
    eligible = {slot: score for slot, score in text_hits.scores.items()
                if score >= threshold and text_hits.is_eligible(slot)}
    best = max(eligible.values(), default=0.0)
    for slot, score in text_hits.scores.items():
        if slot in ranked:
            continue
        # An exact tag match always counts, however many cards share the tag.
        if slot in text_hits.tags or (slot in eligible and score >= RELATIVE_CUT * best):
            ranked[slot] = (score, None)

    def rank_key(item: tuple[int, tuple[float, list[Reason] | None]]) -> tuple[float, int, str]:
        slot, (score, _) = item
        row = index.row(slot)
        return (-round(score, 6), -row[C_PRIORITY], row[C_ID])

    # Rows (for the priority and id tie-breaks) only for the cards that can make the cut: the
    # best `limit` by score and any that tie with the last of them.
    by_score = sorted(ranked.items(), key=lambda item: -item[1][0])
    limit = max(query.limit, 0)
    if len(by_score) > limit:
        floor = round(by_score[limit - 1][1][0], 6) if limit else float("inf")
        by_score = [item for item in by_score if round(item[1][0], 6) >= floor]
    index.rows(slot for slot, _ in by_score)  # one query for the candidates' rows
    chosen = sorted(by_score, key=rank_key)[:limit]
    selections: list[Selection] = []
    emitted: set[int] = set()

    def explain(slot: int, reasons: list[Reason] | None) -> list[Reason]:
        return text_hits.reasons(slot) if reasons is None else reasons

    def emit(slot: int, score: float, reasons: list[Reason]) -> None:
        """The card after its depends_on closure, prerequisites first. An explicit stack: a
        chain of thousands of cards must not reach the recursion limit."""
        if slot in emitted:
            return
        stack: list[tuple[int, float, list[Reason], int]] = [(slot, score, reasons, 0)]
        on_path = {slot}
        while stack:
            current, current_score, current_reasons, position = stack[-1]
            deps = index.row(current)[C_DEPENDS]
            while position < len(deps):
                dep_slot = index.slot_of(deps[position])
                position += 1
                if dep_slot is None or dep_slot in emitted or dep_slot in on_path:
                    continue
                stack[-1] = (current, current_score, current_reasons, position)
                dep_score, dep_reasons = ranked.get(dep_slot, (0.0, []))
                stack.append((dep_slot, dep_score,
                              [Reason("dependency", f"required by {index.row(current)[C_ID]}")]
                              + explain(dep_slot, dep_reasons), 0))
                on_path.add(dep_slot)
                break
            else:
                stack.pop()
                on_path.discard(current)
                emitted.add(current)
                selections.append(Selection(current, index.row(current)[C_ID],
                                            round(current_score, 4), tuple(current_reasons)))

    if query.include_always:
        chosen_slots = {slot for slot, _ in chosen}
        for slot in index.data["always"]:
            if slot not in chosen_slots:  # an always card is never cut by the limit
                score, reasons = ranked.get(slot, (0.0, []))
                emit(slot, score, [Reason("always", "delivered at session start")]
                     + explain(slot, reasons))
    for slot, (score, reasons) in chosen:
        reasons = explain(slot, reasons)
        if index.row(slot)[C_ALWAYS] and query.include_always:
            reasons = [Reason("always", "delivered at session start")] + reasons
        emit(slot, score, reasons)
    return RouteResult(tuple(selections), tuple(warnings))
