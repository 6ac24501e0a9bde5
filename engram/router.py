"""Prompt + touched paths -> ranked cards, each with named reasons. Pure: it reads only the
compiled index and the values it is given.

Text relevance is BM25F over four fields (title+id, tags, one-line card, body) with positive
IDF only; a prompt term equal to a card's tag always counts, however common the tag. Paths
match `applies_to` globs. A prompt with nothing relevant selects nothing but `always` cards."""

from __future__ import annotations

import math
from engram.record import frozen

from engram import globs as globs_module
from engram import text
from engram.index import C_ALWAYS, C_DEPENDS, C_ID, C_PRIORITY, C_TAGS, CompiledIndex

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
MAX_PATHS: Final = 256
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

    @property
    def is_always_only(self) -> bool:
        return all(reason.kind == "always" for reason in self.reasons)


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


def _text_scores(index: CompiledIndex, prompt: str) -> dict[int, tuple[float, list[Reason], bool]]:
    """slot -> (score, reasons, has a strong-field match)."""
    query_terms = list(dict.fromkeys(text.terms(prompt)))
    if not query_terms:
        return {}
    active = set(index.active)
    count = len(active)
    if count == 0:
        return {}
    lengths = index.field_lengths()
    averages = []
    for position in range(4):
        total = sum(lengths[4 * slot + position] for slot in active)
        averages.append(max(total / count, 1.0))
    scores: dict[int, float] = {}
    matched: dict[int, list[tuple[str, str]]] = {}
    strong: dict[int, bool] = {}
    for term in query_terms:
        values = index.postings(term)
        rows = [(values[i], values[i + 1:i + 5]) for i in range(0, len(values), 5)
                if values[i] in active]
        if not rows:
            continue
        df = len(rows)
        idf = math.log(1.0 + (count - df + 0.5) / (df + 0.5))
        for slot, tfs in rows:
            weighted = 0.0
            best_field = 3
            best_value = -1.0
            for position in range(4):
                tf = tfs[position]
                if not tf:
                    continue
                norm = 1.0 - FIELD_B[position] + FIELD_B[position] * (
                    lengths[4 * slot + position] / averages[position])
                contribution = FIELD_WEIGHTS[position] * tf / norm
                weighted += contribution
                if contribution > best_value:
                    best_value, best_field = contribution, position
            scores[slot] = scores.get(slot, 0.0) + idf * weighted / (K1 + weighted)
            matched.setdefault(slot, []).append((term, FIELD_NAMES[best_field]))
            if best_field < 3 or tfs[0] or tfs[1] or tfs[2]:
                strong[slot] = True
    result: dict[int, tuple[float, list[Reason], bool]] = {}
    query_set = set(query_terms)
    for slot, score in scores.items():
        reasons: list[Reason] = []
        tags = index.row(slot)[C_TAGS]
        bonus = 0.0
        for tag in tags:
            tag_terms = text.terms(tag)
            if tag_terms and all(t in query_set for t in tag_terms):
                bonus += TAG_BONUS
                reasons.append(Reason("tag", tag))
        terms_detail = ", ".join(f"{term} ({field})" for term, field in matched[slot])
        reasons.append(Reason("text", f"matched {terms_detail}"))
        total = score + bonus
        distinct = len(matched[slot])
        result[slot] = (total, reasons, strong.get(slot, False) or bonus > 0 or distinct >= 3)
    return result


def _path_matches(index: CompiledIndex, paths: Iterable[str], source: str) -> dict[int, list[Reason]]:
    found: dict[int, list[Reason]] = {}
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


def route(index: CompiledIndex, query: Query) -> RouteResult:
    warnings: list[str] = []
    paths = list(dict.fromkeys(p for p in query.paths if p))
    if len(paths) > MAX_PATHS:
        warnings.append(f"{len(paths)} touched paths; only the first {MAX_PATHS} were considered")
        paths = paths[:MAX_PATHS]
    path_hits = _path_matches(index, paths, "")
    for slot, reasons in _path_matches(index, query.prompt_paths, "prompt path ").items():
        path_hits.setdefault(slot, []).extend(reasons)
    text_hits = _text_scores(index, query.prompt)

    ranked: dict[int, tuple[float, list[Reason]]] = {}
    for slot, reasons in path_hits.items():
        score, text_reasons, _ = text_hits.get(slot, (0.0, [], False))
        ranked[slot] = (PATH_SCORE + score, reasons + text_reasons)
    eligible = {slot: hit for slot, hit in text_hits.items()
                if hit[2] and hit[0] >= MIN_TEXT_SCORE}
    if eligible:
        best = max(hit[0] for hit in eligible.values())
        for slot, (score, reasons, _) in eligible.items():
            if slot not in ranked and score >= RELATIVE_CUT * best:
                ranked[slot] = (score, reasons)

    def rank_key(item: tuple[int, tuple[float, list[Reason]]]) -> tuple[float, int, str]:
        slot, (score, _) = item
        row = index.row(slot)
        return (-round(score, 6), -row[C_PRIORITY], row[C_ID])

    chosen = sorted(ranked.items(), key=rank_key)[: max(query.limit, 0)]
    selections: list[Selection] = []
    emitted: set[int] = set()

    def emit(slot: int, score: float, reasons: list[Reason], chain: tuple[int, ...] = ()) -> None:
        if slot in emitted:
            return
        for dep_id in index.row(slot)[C_DEPENDS]:
            dep_slot = index.slot_of(dep_id)
            if dep_slot is None or dep_slot in emitted or dep_slot in chain:
                continue
            dep_score, dep_reasons = ranked.get(dep_slot, (0.0, []))
            emit(dep_slot, dep_score,
                 [Reason("dependency", f"required by {index.row(slot)[C_ID]}")] + list(dep_reasons),
                 chain + (slot,))
        emitted.add(slot)
        selections.append(Selection(slot, index.row(slot)[C_ID], round(score, 4), tuple(reasons)))

    if query.include_always:
        for slot in index.data["always"]:
            if slot not in ranked:
                emit(slot, 0.0, [Reason("always", "delivered at session start")])
    for slot, (score, reasons) in chosen:
        if index.row(slot)[C_ALWAYS] and query.include_always:
            reasons = [Reason("always", "delivered at session start")] + reasons
        emit(slot, score, reasons)
    return RouteResult(tuple(selections), tuple(warnings))
