"""Prompt + touched paths -> ranked cards, each with named reasons. Pure: it reads only the
compiled index and the values it is given.

Text relevance is BM25F over four fields (title+id, tags, one-line card, body) with positive
IDF only; it orders the cards. Which cards a prompt selects is decided by what each card says
it is about, its *head* (title, tags, one-line card/description):
  - a card is selected when the prompt names enough of its head: the head words the prompt
    matched, each weighted by how rare it is among heads (a word in more than half of all
    cards weighs nothing), times the share of the head matched
    (so "Prisma Usage" is well covered by a Prisma question, a long description that shares
    one generic word is not), at least HEAD_MIN and at least HEAD_RELATIVE of the best card's;
  - a prompt word equal to one of a card's tags selects it, however common the tag, when few
    cards share the tag (TAG_SHARED) or the prompt names nothing but the tag; a tag many cards
    share otherwise counts as headline evidence like a title word;
  - evidence only in bodies (generic words summed over long texts) selects at most one card,
    the best text hit, and only on enough evidence (see `body_best_ok`);
  - a card whose headline names only a subset of the words a better-matching card's headline
    names is dropped (see `_undominated`).
Abbreviations and synonyms (engram.synonyms) are concept terms: the index holds them in the
title and tag fields that name them (a tag's synonyms count as the tag), the prompt gets the
ones its words name. Paths match `applies_to` globs. A prompt with nothing relevant selects nothing but `always`
cards."""

from __future__ import annotations

import math

from engram import text
from engram.index import CompiledIndex
from engram.postings import IMPACT_LEVELS
from engram.record import Record, frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Iterable

FIELD_NAMES: Final = ("title", "tags", "card", "body")
# How a card author calls each field (`route --explain`): the card line is Cursor's and
# Copilot's `description`.
FIELD_WORDS: Final = ("title", "tags", "description", "body")
TAG_BONUS: Final = 1.5
# A tag held by more cards than this is a category (`api`, `testing`): naming it selects all
# its cards only when the prompt names nothing else.
TAG_SHARED: Final = 3
PATH_SCORE: Final = 10.0
# A name the written code uses counts for the cards that give it as code when at most this
# many cards give it: a name more cards share (`prisma` in a Prisma project) says nothing about
# any one of them. Below a glob's score: a card claiming the file itself comes first.
CODE_SHARED: Final = 2
CODE_SCORE: Final = 5.0
# Distinct pieces of code evidence a card needs (names used, a module imported): one shared
# name is often incidental (a `createdAt` column in any file); two are the convention in use.
CODE_MIN: Final = 2
# Head evidence needed to select a card on text, at REFERENCE_CARDS cards (scaled like
# MIN_TEXT_SCORE), and the share of the best card's head evidence a card must reach.
HEAD_MIN: Final = 1.0
HEAD_RELATIVE: Final = 0.5
# A prompt phrase found in a card's head adds this share of its head IDF.
PHRASE_WEIGHT: Final = 0.5
# The best text hit with evidence only in its body needs this much text score and three
# distinct prompt words, or a head match on a word that is not generic (found in at most
# GENERIC_SHARE of the cards) ...
MIN_TEXT_SCORE: Final = 2.2
BODY_TERMS: Final = 3
GENERIC_SHARE: Final = 0.5
# ... or a prompt word no other card holds ("use structlog"), weighty in its body (impact, 0-1)
# and most of the prompt's words matched, so one rare word in a long text (small talk that
# happens to name it) does not select it.
UNIQUE_IMPACT: Final = 0.4
UNIQUE_QUERY_SHARE: Final = 0.75
# The store size MIN_TEXT_SCORE and HEAD_MIN were set at (the smallest labelled set); smaller
# stores get a proportionally lower bar (see size_factor).
REFERENCE_CARDS: Final = 24
MAX_PATHS: Final = 256
# Bounded work per query: the most relevant postings of each term, the first query terms.
MAX_POSTINGS_PER_TERM: Final = 256
MAX_QUERY_TERMS: Final = 32
DEFAULT_LIMIT: Final = 8


@frozen
class Reason:
    """Why a card was selected (or, from `explain_card`, not). `kind` is path | import | code | text | tag |
    always | dependency | cut; `detail` is a sentence for a card author; `words` the prompt
    words behind a text reason as (word, field) pairs, field one of FIELD_WORDS."""
    kind: str
    detail: str
    words: tuple[tuple[str, str], ...] = ()


@frozen
class Selection(Record):
    slot: int
    id: str
    score: float
    reasons: tuple[Reason, ...]


@frozen
class Query(Record):
    prompt: str = ""
    paths: tuple[str, ...] = ()  # relative to the workspace root, '/'-separated
    prompt_paths: tuple[str, ...] = ()  # files named in the prompt that exist
    # What the code written into a touched file says (engram.code_names): the names it uses,
    # as index keys, and the workspace modules its relative imports name, each with that file.
    code_names: tuple[str, ...] = ()
    imported: tuple[tuple[str, str], ...] = ()
    include_always: bool = True
    limit: int = DEFAULT_LIMIT


@frozen
class RouteResult(Record):
    selected: tuple[Selection, ...]
    warnings: tuple[str, ...] = ()
    limit: int = DEFAULT_LIMIT
    # The cards that took the `limit` places; the rest of `selected` came on top of the limit:
    # always cards and the dependencies the ranked cards need.
    ranked: tuple[str, ...] = ()
    # Cards (slots) that qualified but fell below the limit.
    over_limit: tuple[int, ...] = ()
    # `_evidence` (set by `route`, not a field: it takes no part in equality): the text
    # evidence and cut of this prompt, for `why`.

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self.selected]

    @property
    def beyond_limit(self) -> list[str]:
        ranked = set(self.ranked)
        return [s.id for s in self.selected if s.id not in ranked]

    def with_warnings(self, warnings: tuple[str, ...]) -> RouteResult:
        changed = self.replace(warnings=warnings + self.warnings)
        object.__setattr__(changed, "_evidence", getattr(self, "_evidence", None))
        return changed

    def near_misses(self, index: CompiledIndex, count: int = 3) -> list[str]:
        """The best-scoring cards that matched prompt words but were not selected."""
        evidence = getattr(self, "_evidence", None)
        if evidence is None:
            return []
        scores = evidence[0].scores
        shown = set(self.ids)
        slots = sorted((slot for slot in scores), key=lambda slot: (-scores[slot], slot))
        out: list[str] = []
        for slot in slots:
            card_id = index.row(slot).id
            if card_id not in shown:
                out.append(card_id)
                if len(out) >= count:
                    break
        return out

    def why(self, index: CompiledIndex, card_id: str) -> list[Reason]:
        """The text verdict on any card of the index, selected or not: which prompt words it
        matched where, and how it stood against the cut. Empty for an unknown id."""
        slot = index.slot_of(card_id)
        evidence = getattr(self, "_evidence", None)
        if slot is None or evidence is None:
            return []
        text_hits, cut = evidence
        verdict = text_verdict(text_hits, cut, slot)
        words = text_hits.matched_words(slot) if slot in text_hits.scores else []
        out = [Reason(verdict.kind, verdict.detail, tuple(words))]
        if words:
            out.append(Reason("text", "matched " + describe_words(words), tuple(words)))
        if slot in self.over_limit:
            out.append(Reason("cut", f"qualified, but {self.limit} cards ranked above it (the limit)"))
        return out


class _TextHits:
    """Text evidence for one prompt. Reasons are built only for the cards that get selected:
    scoring touches hundreds of postings, explaining touches a handful of cards."""

    def __init__(self, index: CompiledIndex, prompt: str) -> None:
        self.index = index
        self.words = text.term_words(prompt)
        self.terms = list(self.words)[:MAX_QUERY_TERMS]
        self.sequence = text.terms(prompt)
        # The prompt's own words come first (bits 0 .. plain-1), then the concepts they name,
        # which count as head evidence but not as words the prompt typed.
        self.plain = len(self.terms)
        self._add_concepts()
        self.phrases: dict[int, list[str]] = {}  # slot -> prompt phrases its head holds
        self.scores: dict[int, float] = {}
        self.hits: dict[int, int] = {}  # slot -> bitmask of the query terms it matched
        self.head_hits: dict[int, int] = {}  # ... of those matched in its head
        self.head_weight: dict[int, float] = {}  # slot -> sum of head IDF of head matches
        self.unique: dict[int, float] = {}  # slot -> impact of a query term no other card has
        self.df: list[int] = [0] * len(self.terms)
        self.tags: dict[int, list[str]] = {}
        self.count = 0
        if self.terms and index.active:
            self._score()

    def _add_concepts(self) -> None:
        """Add the synonym concepts the prompt's terms and phrases name ("PR" names
        ~pull-request), each shown as the prompt word that named it."""
        table = self.index.meta("synonyms")
        if table is None:  # an index written without it (never by this version)
            from engram import synonyms

            table = synonyms.lookup()
        for key in self.terms[:self.plain] + text.phrases(self.sequence):
            for concept in table.get(key, ()):
                if concept not in self.words:
                    self.words[concept] = " ".join(self.words.get(part, part) for part in key.split(" "))
                    self.terms.append(concept)

    def _score(self) -> None:
        active = self.index.active_set()
        count = self.count = len(active)
        scores, hits, head_hits, head_weight = self.scores, self.hits, self.head_hits, self.head_weight
        scores_get, hits_get, head_get = scores.get, hits.get, head_hits.get
        for number, term in enumerate(self.terms):
            slots, keys = self.index.postings(term)
            df = self.df[number] = len(slots)
            if not df:
                continue
            idf = math.log(1.0 + max(count - df + 0.5, 0.5) / (df + 0.5))
            heads = self.index.head_count(term)
            head_idf = math.log(1.0 + max(count - heads + 0.5, 0.5) / (heads + 0.5))
            # A word found in more than half the cards says nothing about any one of them.
            if df > GENERIC_SHARE * count:
                head_idf = 0.0
            weight = idf / IMPACT_LEVELS
            bit = 1 << number
            weight_get = head_weight.get
            for position in range(min(df, MAX_POSTINGS_PER_TERM)):
                slot = slots[position]
                if slot not in active:
                    continue
                packed = 65535 - keys[position]
                scores[slot] = scores_get(slot, 0.0) + weight * (packed >> 2)
                hits[slot] = hits_get(slot, 0) | bit
                if packed & 3 != 3:
                    head_hits[slot] = head_get(slot, 0) | bit
                    if head_idf:
                        head_weight[slot] = weight_get(slot, 0.0) + head_idf
            if df == 1 and number < self.plain and slots[0] in active:
                self.unique[slots[0]] = ((65535 - keys[0]) >> 2) / IMPACT_LEVELS
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
        # A prompt phrase a card's head holds ("server action") adds its rarity among heads,
        # for the cards already matched in their heads.
        prompt_phrases = [p for p in dict.fromkeys(text.phrases(self.sequence))
                          if p not in self.terms][:MAX_QUERY_TERMS]
        if prompt_phrases and head_hits:
            for phrase, slots in self.index.term_slots(prompt_phrases).items():
                heads = len(slots)
                weight = PHRASE_WEIGHT * math.log(1.0 + max(count - heads + 0.5, 0.5) / (heads + 0.5))
                for slot in slots:
                    if slot in head_hits and slot in active:
                        head_weight[slot] = head_weight.get(slot, 0.0) + weight
                        self.phrases.setdefault(slot, []).append(phrase)
        self.head_size: dict[int, int] = {}

    def tag_selected(self) -> list[int]:
        """The cards a named tag selects outright: a tag few cards share (TAG_SHARED or
        fewer) always; a tag many share is a category, so only when the prompt names nothing
        else (their headlines, tags included, compete on the rest)."""
        holders: dict[str, int] = {}
        for tags in self.tags.values():
            for tag in tags:
                holders[tag] = holders.get(tag, 0) + 1
        chosen = []
        # A tag's terms once per tag, not once per card: a category tag a prompt names (`api`)
        # is carried by hundreds of cards in a large store.
        tag_terms: dict[str, list[str]] = {}
        for slot, tags in self.tags.items():
            if any(holders[tag] <= TAG_SHARED for tag in tags):
                chosen.append(slot)
                continue
            named: set[str] = set()
            for tag in tags:
                terms = tag_terms.get(tag)
                if terms is None:
                    terms = tag_terms[tag] = text.terms(tag)
                named.update(terms)
            if all(term in named for term in self.terms[:self.plain]):
                chosen.append(slot)
        return chosen

    def head_evidence(self, slot: int) -> float:
        """Head IDF of the prompt words in the card's head, times the share of its head they
        cover."""
        mask = self.head_hits.get(slot, 0)
        if not mask:
            return 0.0
        if slot not in self.head_size:
            self.head_size.update(self.index.head_sizes([slot]))
        matched = bin(mask).count("1")
        return self.head_weight.get(slot, 0.0) * matched / max(self.head_size.get(slot, 0), matched)

    def fetch_head_sizes(self, floor: float) -> list[int]:
        """The cards whose head evidence can reach `floor` (it is at most their head weight),
        with their head sizes read in one query."""
        slots = [slot for slot, weight in self.head_weight.items() if weight >= floor]
        if slots:
            self.head_size.update(self.index.head_sizes(slots))
        return slots

    def body_best_ok(self, slot: int, threshold: float) -> bool:
        """Enough evidence for the best text hit to be selected whatever its fields."""
        mask = self.hits.get(slot, 0) & ((1 << self.plain) - 1)
        matched = bin(mask).count("1")
        score = self.scores.get(slot, 0.0)
        if score >= threshold:
            if matched >= BODY_TERMS:
                return True
            head = self.head_hits.get(slot, 0)
            if any(head & (1 << n) and self.df[n] <= GENERIC_SHARE * self.count
                   for n in range(self.plain)):
                return True
        return (self.unique.get(slot, 0.0) >= UNIQUE_IMPACT
                and matched >= UNIQUE_QUERY_SHARE * self.plain)

    def matched_words(self, slot: int) -> list[tuple[str, str]]:
        """(prompt word, field) for each prompt word the card matched; field is the strongest
        head field holding it, else the body."""
        mask = self.hits.get(slot, 0)
        found = []
        for number, term in enumerate(self.terms):
            if not mask & (1 << number):
                continue
            field = self.index.field_of(term, slot)
            found.append((self.words[term], FIELD_WORDS[field]))
        return found

    def reasons(self, slot: int) -> list[Reason]:
        reasons = [Reason("tag", tag, ((tag, "tags"),)) for tag in self.tags.get(slot, ())]
        words = self.matched_words(slot)
        if words:
            reasons.append(Reason("text", "matched " + describe_words(words), tuple(words)))
        return reasons


CUT_RULE: Final = (
    "a card is selected on text when the prompt names enough of what its title, tags and "
    f"description say (at least {HEAD_RELATIVE:.0%} of the best card's match, and a minimum "
    "that rare words meet easily); words found only in a card's body select only the single "
    "best match; a card is dropped when a better-matching card's headline names the same "
    f"prompt words and more; a tag the prompt names selects its card (a tag more than {TAG_SHARED} cards "
    "share only when the prompt names nothing else); a touched file matching `applies_to` "
    "always selects its card; code written into a touched file (a path event, `--written`) "
    f"selects a card on {CODE_MIN} pieces of evidence: names it gives as code that at most "
    f"{CODE_SHARED} cards give, and one import of a module its `applies_to` claims")


def describe_words(words: list[tuple[str, str]]) -> str:
    """'"server", "action" in the title; "delete" in the body'."""
    by_field: dict[str, list[str]] = {}
    for word, field in words:
        by_field.setdefault(field, []).append(f'"{word}"')
    order = [f for f in FIELD_WORDS if f in by_field]
    return "; ".join(f"{', '.join(by_field[f])} in the {f}" for f in order)


def _path_matches(index: CompiledIndex, paths: Iterable[str], source: str,
                  imported_by: dict[str, str] | None = None) -> dict[int, list[Reason]]:
    """The cards whose globs match the paths; with `imported_by` (path -> the touched file
    importing it), reasons of kind "import"."""
    found: dict[int, list[Reason]] = {}
    paths = list(paths)
    if not paths:
        return found
    from engram import glob_match  # only when paths were touched or named

    buckets = index.data["buckets"]
    glob_rows = index.data["globs"]
    for path in paths:
        candidates: set[int] = set()
        for key in glob_match.path_keys(path):
            candidates.update(buckets.get(key, ()))
        for glob_index in sorted(candidates):
            slot, spec, pattern = glob_rows[glob_index]
            if slot in found and (imported_by or any(r.detail.endswith(f"{path}")
                                                     for r in found[slot])):
                continue
            if glob_match.matches(spec, path) if spec.__class__ is tuple \
                    else index.compiled_glob(glob_index).match(path):
                found.setdefault(slot, []).append(
                    Reason("import", f"{pattern} matches {path}, imported by {imported_by[path]}")
                    if imported_by else Reason("path", f"{pattern} matches {source}{path}"))
    return found


def _code_matches(index: CompiledIndex, names: tuple[str, ...]) -> dict[int, set[str]]:
    """slot -> the names it gives as code that the touched files use, counting only names
    few cards give."""
    found: dict[int, set[str]] = {}
    active = index.active_set()
    for key, slots in index.term_slots(list(names)).items():
        if len(slots) > CODE_SHARED:
            continue
        for slot in slots:
            if slot in active:
                found.setdefault(slot, set()).add(key.lstrip("`!"))
    return found


def _code_hits(index: CompiledIndex, query: Query) -> dict[int, tuple[int, list[Reason]]]:
    """slot -> (how many distinct pieces of code evidence, the reasons) for the cards with at
    least CODE_MIN: the names the touched files use that it gives as code, and a module they
    import that its `applies_to` claims."""
    evidence: dict[int, list[Reason]] = {}
    if query.imported:
        evidence = _path_matches(index, [path for path, _ in query.imported], "",
                                 dict(reversed(query.imported)))
    counts = {slot: len(reasons) for slot, reasons in evidence.items()}
    for slot, used in (_code_matches(index, query.code_names) if query.code_names else {}).items():
        evidence.setdefault(slot, []).append(Reason("code", "the touched files use " + ", ".join(
            f"`{name}`" for name in sorted(used)) + ", which it names"))
        counts[slot] = counts.get(slot, 0) + len(used)
    return {slot: (counts[slot], reasons) for slot, reasons in evidence.items()
            if counts[slot] >= CODE_MIN}


def size_factor(cards: int) -> float:
    """1.0 from REFERENCE_CARDS cards up, lower below: IDF, and with it every text score,
    grows with the store, so a fixed bar would keep a new user's first few cards from
    routing by text at all."""
    def best_idf(count: int) -> float:
        return math.log(1.0 + max(count - 0.5, 0.5) / 1.5)

    return min(1.0, best_idf(max(cards, 1)) / best_idf(REFERENCE_CARDS))


@frozen
class TextCut:
    """The text selection of one prompt, kept so that any card's verdict can be explained."""
    head_min: float
    head_bar: float  # max(head_min, HEAD_RELATIVE * best head evidence)
    best_head: float
    best_slot: int | None  # the best text hit
    best_ok: bool  # ... and whether it had enough evidence to be selected
    threshold: float
    dominated: dict[int, int] = {}  # slot -> the better card whose headline names a superset


def _undominated(text_hits: _TextHits, evidence: dict[int, float], slots: list[int]) -> set[int]:
    """Drop a card whose headline names only some of the prompt words that a better-matching
    card's headline names (the Java "MCP server" card next to the "Rust MCP server" card for a
    Rust prompt): it says nothing about the prompt that the better card does not. Cards whose
    headlines match the same words are all kept."""
    kept: list[int] = []
    masks = text_hits.head_hits
    for slot in sorted(slots, key=lambda s: (-evidence[s], s)):
        mask = masks.get(slot, 0)
        if any(mask != masks.get(other, 0) and mask | masks.get(other, 0) == masks.get(other, 0)
               for other in kept):
            continue
        kept.append(slot)
    return set(kept)


def _text_cut(text_hits: _TextHits, cards: int) -> tuple[set[int], TextCut]:
    factor = size_factor(cards)
    head_min = HEAD_MIN * factor
    evidence = {slot: text_hits.head_evidence(slot)
                for slot in text_hits.fetch_head_sizes(head_min)}
    tagged = text_hits.tag_selected()
    # A card the prompt names by a tag is about the prompt: its head weight counts in full
    # for the relative bar, undiluted by the length of its headline.
    best_head = max([*evidence.values(), *(text_hits.head_weight.get(slot, 0.0) for slot in tagged)],
                    default=0.0)
    bar = max(head_min, HEAD_RELATIVE * best_head)
    passing = [slot for slot, value in evidence.items() if value >= bar]
    chosen = _undominated(text_hits, evidence, passing)
    masks = text_hits.head_hits
    by_evidence = sorted(chosen, key=lambda s: (-evidence[s], s))
    dominated = {slot: next(o for o in by_evidence
                            if masks[slot] | masks[o] == masks[o] and masks[slot] != masks[o])
                 for slot in passing if slot not in chosen}
    chosen.update(tagged)
    scores = text_hits.scores
    best_slot = max(scores, key=lambda slot: (scores[slot], -slot), default=None)
    threshold = MIN_TEXT_SCORE * factor
    best_ok = best_slot is not None and text_hits.body_best_ok(best_slot, threshold)
    if best_ok and best_slot is not None:
        chosen.add(best_slot)
    return chosen, TextCut(head_min, bar, best_head, best_slot, best_ok, threshold, dominated)


def text_verdict(text_hits: _TextHits, cut: TextCut, slot: int) -> Reason:
    """Why the text evidence selected a card or not, in a card author's words: kind
    "selected" or "cut"."""
    if slot not in text_hits.scores:
        return Reason("cut", "no word of the prompt appears in this card")
    if slot in text_hits.tags and slot in set(text_hits.tag_selected()):
        return Reason("selected", "the prompt names one of its tags")
    head = text_hits.head_evidence(slot)
    mask = text_hits.head_hits.get(slot, 0)
    matched = bin(mask).count("1")
    size = max(text_hits.head_size.get(slot, 0), matched)
    share = f"{matched} of the {size} words of its title, tags and description"
    relative = f"{head / cut.best_head:.0%} of the best card's headline match" if cut.best_head \
        else "no headline match"
    phrases = text_hits.phrases.get(slot)
    if phrases:
        typed = [" ".join(text_hits.words.get(t, t) for t in p.split(" ")) for p in phrases]
        share += " (with the phrase" + ("s " if len(typed) > 1 else " ") + \
            ", ".join(f'"{p}"' for p in typed) + ")"
    if mask and head >= cut.head_bar:
        if slot in cut.dominated:
            better = text_hits.index.row(cut.dominated[slot]).id
            return Reason("cut", f"not selected: the prompt names {share}, but {better} names "
                                 "those words and more of the prompt in its headline")
        return Reason("selected", f"the prompt names {share}; {relative}, at least "
                                  f"{HEAD_RELATIVE:.0%} is needed")
    if slot == cut.best_slot and cut.best_ok:
        return Reason("selected", "the best text match of all cards, with enough evidence "
                                  "although it is mostly in the body")
    if not mask:
        why = "the prompt's words appear only in its body"
    elif head < cut.head_min:
        why = (f"the prompt names {share}, too little: those words are common among the "
               "cards' headlines, or a small part of a long one")
    else:
        why = f"the prompt names {share}; {relative}, under the {HEAD_RELATIVE:.0%} needed"
    if slot == cut.best_slot:
        why += (f"; it is the best text match, but with too little evidence (fewer than "
                f"{BODY_TERMS} prompt words and no rare word in its headline)")
    else:
        why += "; on body words only the single best text match is selected"
    return Reason("cut", "not selected: " + why)


def route(index: CompiledIndex, query: Query) -> RouteResult:
    warnings: list[str] = []
    paths = list(dict.fromkeys(p for p in query.paths if p))
    if len(paths) > MAX_PATHS:
        warnings.append(f"{len(paths)} touched paths; only the first {MAX_PATHS} were considered")
        paths = paths[:MAX_PATHS]
    path_hits = _path_matches(index, paths, "")
    for slot, reasons in _path_matches(index, query.prompt_paths, "prompt path ").items():
        path_hits.setdefault(slot, []).extend(reasons)
    code_hits = _code_hits(index, query) if query.imported or query.code_names else {}
    text_hits = _TextHits(index, query.prompt)

    # slot -> (score, reasons or None: built on demand from text_hits)
    ranked: dict[int, tuple[float, list[Reason] | None]] = {}
    for slot, reasons in path_hits.items():
        score = text_hits.scores.get(slot, 0.0)
        ranked[slot] = (PATH_SCORE + score, reasons + (text_hits.reasons(slot) if score else []))
    for slot, (count, reasons) in code_hits.items():
        if slot not in ranked:
            score = text_hits.scores.get(slot, 0.0)
            ranked[slot] = (CODE_SCORE + count + score,
                            reasons + (text_hits.reasons(slot) if score else []))
    chosen_text, cut = _text_cut(text_hits, len(index.active))
    for slot in chosen_text:
        if slot not in ranked:
            ranked[slot] = (text_hits.scores[slot], None)

    def rank_key(item: tuple[int, tuple[float, list[Reason] | None]]) -> tuple[float, int, str]:
        slot, (score, _) = item
        row = index.row(slot)
        return (-round(score, 6), -row.priority, row.id)

    # Rows (for the priority and id tie-breaks) only for the cards that can make the cut: the
    # best `limit` by score and any that tie with the last of them.
    by_score = sorted(ranked.items(), key=lambda item: -item[1][0])
    limit = max(query.limit, 0)
    if len(by_score) > limit:
        floor = round(by_score[limit - 1][1][0], 6) if limit else float("inf")
        by_score = [item for item in by_score if round(item[1][0], 6) >= floor]
    index.rows(slot for slot, _ in by_score)  # one query for the candidates' rows
    ordered = sorted(by_score, key=rank_key)
    chosen = ordered[:limit]
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
            deps = index.row(current).depends_on
            while position < len(deps):
                dep_slot = index.slot_of(deps[position])
                position += 1
                if dep_slot is None or dep_slot in emitted or dep_slot in on_path:
                    continue
                stack[-1] = (current, current_score, current_reasons, position)
                dep_score, dep_reasons = ranked.get(dep_slot, (0.0, []))
                stack.append((dep_slot, dep_score,
                              [Reason("dependency", f"required by {index.row(current).id}")]
                              + explain(dep_slot, dep_reasons), 0))
                on_path.add(dep_slot)
                break
            else:
                stack.pop()
                on_path.discard(current)
                emitted.add(current)
                selections.append(Selection(current, index.row(current).id,
                                            round(current_score, 4), tuple(current_reasons)))

    if query.include_always:
        chosen_slots = {slot for slot, _ in chosen}
        for slot in index.data["always"]:
            if slot not in chosen_slots:  # an always card is never cut by the limit
                score, known = ranked.get(slot, (0.0, []))
                emit(slot, score, [Reason("always", "delivered at session start")]
                     + explain(slot, known))
    for slot, (score, found) in chosen:
        reasons = explain(slot, found)
        if index.row(slot).always and query.include_always:
            reasons = [Reason("always", "delivered at session start")] + reasons
        emit(slot, score, reasons)
    over = sorted((slot for slot in ranked if slot not in emitted),
                  key=lambda slot: -ranked[slot][0])
    result = RouteResult(tuple(selections), tuple(warnings), limit,
                         tuple(index.row(slot).id for slot, _ in chosen), tuple(over))
    object.__setattr__(result, "_evidence", (text_hits, cut))
    return result
