"""The compiled index: every card file parsed once, term statistics, glob regexes and
dependency order, stored in the state dir with marshal (the fastest load Python has for plain
data). A hook loads it without importing YAML or compiling a single glob; a changed file is
re-parsed alone (stat first, then xxhash of the content).

Two files per index, so a hook reads only what routing needs:
- `<key>.idx`, the hot part: file stats for the freshness check, one light row per card (no
  body: a body is read from its card file, by offset, only when it is sent), postings packed
  as bytes per term, field lengths, dependency order, always cards and glob regexes;
- `<key>.full`, the cold part: each file's parsed card with body, term counts and problems,
  loaded only to refresh after a change, or for lint and the installer.

One *slot* per card file. Postings refer to slots, so one changed file only touches its own
terms; removed files leave empty slots until the next compaction."""

from __future__ import annotations

import marshal
import os
import sys
from array import array

from engram import paths
from engram.card import Card
from engram.problems import Problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final

    from engram.workspace import Workspace

INDEX_FORMAT: Final = 7
# Field order in postings and lengths: id/title, tags, one-line card, body.
FIELDS: Final = ("title", "tags", "card", "body")
_PY: Final = f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"
_COMPACT_RATIO: Final = 0.25

# Cold slot tuple positions.
S_PATH, S_ROOT, S_MTIME, S_SIZE, S_HASH, S_CARD, S_PROBLEMS, S_TERMS, S_SECRET = range(9)
# Card tuple positions (cold: the whole card, body included).
(K_ID, K_TITLE, K_CARD, K_TYPE, K_TAGS, K_APPLIES, K_ALWAYS, K_PRIORITY, K_DEPENDS, K_FORMAT,
 K_BODY_LINE, K_PROVENANCE, K_BODY, K_HASH, K_PATH, K_ROOT) = range(16)
# Light row positions (hot): the card without its body, plus where the body lies in the file.
(C_ID, C_TITLE, C_CARD, C_TYPE, C_TAGS, C_APPLIES, C_ALWAYS, C_PRIORITY, C_DEPENDS, C_FORMAT,
 C_BODY_LINE, C_PROVENANCE, C_BODY_SPAN, C_HASH, C_PATH, C_ROOT) = range(16)


def _card_tuple(card: Card) -> tuple[Any, ...]:
    return (card.id, card.title, card.card, card.type, card.tags, card.applies_to, card.always,
            card.priority, card.depends_on, card.format, card.body_line, card.provenance,
            card.body, card.content_hash, card.path, card.root)


def card_from_tuple(row: tuple[Any, ...], body: str) -> Card:
    return Card(id=row[K_ID], title=row[K_TITLE], card=row[K_CARD], type=row[K_TYPE],
                tags=tuple(row[K_TAGS]), applies_to=tuple(row[K_APPLIES]), always=row[K_ALWAYS],
                priority=row[K_PRIORITY], depends_on=tuple(row[K_DEPENDS]), format=row[K_FORMAT],
                body_line=row[K_BODY_LINE], provenance=row[K_PROVENANCE], body=body,
                content_hash=row[K_HASH], path=row[K_PATH], root=row[K_ROOT])


def read_text(path: str) -> str:
    """A card file's text as the parser saw it (UTF-8, CRLF folded to LF)."""
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8").replace("\r\n", "\n")


def _light_row(card_row: tuple[Any, ...], span: tuple[int, int]) -> tuple[Any, ...]:
    return card_row[:K_BODY] + (span,) + card_row[K_BODY + 1:]


def _body_span(card: Card) -> tuple[int, int]:
    """Where the body lies in the file's text, so a hook can read just that; (-1, -1) when it
    cannot be found verbatim (the cold index then serves it)."""
    try:
        text = read_text(card.path)
    except (OSError, UnicodeDecodeError):
        return (-1, -1)
    start = text.find(card.body)
    return (start, start + len(card.body)) if start >= 0 else (-1, -1)


def _field_terms(card: Card) -> dict[str, list[int]]:
    """term -> [tf in title(+id), tags, card, body]."""
    from engram import text

    counts: dict[str, list[int]] = {}
    sources = (
        card.title + " " + card.id.replace("-", " ").replace("_", " "),
        " ".join(card.tags),
        card.card,
        card.body,
    )
    for position, source in enumerate(sources):
        for term in text.terms(source):
            counts.setdefault(term, [0, 0, 0, 0])[position] += 1
    return counts


def _holds_secret(card: Card | None) -> bool:
    """Checked once per changed file, so the hook never scans bodies: a card whose body holds
    a value-shaped secret is never injected (lint and doctor report it)."""
    if card is None:
        return False
    from engram import secrets

    return bool(secrets.find_secrets(card.title + "\n" + card.card + "\n" + card.body))


def _problem_tuple(problem: Problem) -> tuple[Any, ...]:
    return (problem.path, problem.line, problem.severity, problem.message, problem.code)


def _problem(row: tuple[Any, ...]) -> Problem:
    return Problem(row[0], row[1], row[2], row[3], row[4])


class CompiledIndex:
    """The loaded index: the hot part in `self.data`; the cold part loaded on demand."""

    def __init__(self, data: dict[str, Any], cold: dict[str, Any] | None = None,
                 cold_path: str | None = None) -> None:
        self.data = data
        self._cold = cold
        self._cold_path = cold_path
        self._cards: dict[int, Card] = {}
        self._regex: dict[int, Any] = {}

    # --- what the router and the hook read (hot) -------------------------------------
    @property
    def active(self) -> list[int]:
        """Slots holding a routable card, in dependency order."""
        return self.data["order"]

    def row(self, slot: int) -> tuple[Any, ...]:
        return self.data["rows"][slot]

    def slot_of(self, card_id: str) -> int | None:
        return self.data["ids"].get(card_id)

    def body(self, slot: int) -> str:
        """A card's body: read from its file by offset (the hot path), else from the cold
        index."""
        row = self.row(slot)
        start, end = row[C_BODY_SPAN]
        if start >= 0:
            try:
                body = read_text(row[C_PATH])[start:end]
                if len(body) == end - start:
                    return body
            except (OSError, UnicodeDecodeError):
                pass
        return self.cold()["slots"][slot][S_CARD][K_BODY]

    def postings(self, term: str) -> tuple[array, array]:
        """(slots, keys) for a term, most relevant first (see `decode_key`)."""
        slots, keys = array("I"), array("H")
        packed = self.data["postings"].get(term)
        if packed:
            slots.frombytes(packed[0])
            keys.frombytes(packed[1])
        return slots, keys

    def compiled_glob(self, glob_index: int) -> Any:
        pattern = self._regex.get(glob_index)
        if pattern is None:
            import re

            pattern = self._regex[glob_index] = re.compile(self.data["globs"][glob_index][1])
        return pattern

    # --- whole cards and problems (cold) ---------------------------------------------
    def cold(self) -> dict[str, Any]:
        if self._cold is None:
            loaded = _read(self._cold_path) if self._cold_path else None
            if loaded is None or loaded.get("roots") != self.data["roots"]:
                raise RuntimeError("the cold index is missing; rebuild with load_or_build")
            self._cold = loaded
        return self._cold

    @property
    def problems(self) -> list[Problem]:
        return [_problem(p) for p in self.cold()["problems"]]

    @property
    def error_count(self) -> int:
        return int(self.data.get("errors", 0))

    def card(self, slot: int) -> Card:
        cached = self._cards.get(slot)
        if cached is None:
            row = self.row(slot)
            cached = self._cards[slot] = card_from_tuple(
                row[:C_BODY_SPAN] + ("",) + row[C_BODY_SPAN + 1:], self.body(slot))
        return cached

    def all_cards(self) -> list[Card]:
        return [self.card(slot) for slot in self.active]


def index_path(workspace_key: str) -> str:
    return os.path.join(paths.state_dir_str(), "index", f"{workspace_key}.idx")


def _cold_path(hot_path: str) -> str:
    return hot_path[: -len(".idx")] + ".full"


def _roots_signature(roots: list[tuple[str, str]], follow: bool) -> list[Any]:
    return [list(r) for r in roots] + [["follow", str(follow)]]


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    except OSError:
        return None
    try:
        # loads(read()) rather than load(handle): marshal.load reads a file in tiny pieces.
        data = marshal.loads(raw)
    except (EOFError, ValueError, TypeError) as exc:
        _set_aside(path, f"unreadable index: {type(exc).__name__}")
        return None
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT or data.get("py") != _PY:
        return None
    return data


def _set_aside(path: str, reason: str) -> None:
    from engram import log

    try:
        os.replace(path, path + ".corrupt")
    except OSError:
        pass
    log.note(f"index {os.path.basename(path)} set aside and rebuilt: {reason}")


def _write(path: str, data: dict[str, Any]) -> None:
    from engram import fileio

    try:
        fileio.atomic_write_bytes(path, marshal.dumps(data), durable=False)
    except OSError:
        # A read-only or full state dir costs speed, never correctness: route from memory.
        pass


def _empty_cold(roots_sig: list[Any]) -> dict[str, Any]:
    return {"format": INDEX_FORMAT, "py": _PY, "roots": roots_sig, "slots": [], "files": {},
            "free": [], "scan_problems": [], "problems": [], "postings": {},
            "avg_used": [1.0, 1.0, 1.0, 1.0]}


def _is_fresh(hot: dict[str, Any], found: list[Any], scan_problems: list[Problem]) -> bool:
    stats = hot["stat"]
    if len(found) != len(stats):
        return False
    for entry in found:
        known = stats.get(entry.path)
        if known is None or known[1] != entry.mtime_ns or known[2] != entry.size \
                or known[3] != entry.root:
            return False
    return [_problem_tuple(p) for p in scan_problems] == hot["scan_problems"]


def check(hot: dict[str, Any] | None, roots: list[tuple[str, str]], follow_symlinks: bool = False,
          allowed_parents: tuple[str, ...] = ()) -> bool:
    """The freshness check alone: True when `hot` (a loaded `.idx`) still describes every card
    file under `roots` (stat only; nothing is read or parsed)."""
    from engram import store

    if hot is None or hot.get("roots") != _roots_signature(roots, follow_symlinks):
        return False
    return _is_fresh(hot, *store.scan(roots, follow_symlinks, allowed_parents))


def build(roots: list[tuple[str, str]], follow_symlinks: bool = False,
          allowed_parents: tuple[str, ...] = (), previous: dict[str, Any] | None = None,
          found: Any = None) -> tuple[dict[str, Any], bool]:
    """Bring the cold index `previous` (or an empty one) up to date with the files under
    `roots`. Returns (cold data, changed)."""
    from engram import store

    roots_sig = _roots_signature(roots, follow_symlinks)
    if previous is None or previous.get("roots") != roots_sig:
        previous = _empty_cold(roots_sig)
    data = previous
    if found is None:
        found = store.scan(roots, follow_symlinks, allowed_parents)
    files_found, scan_problems = found
    files: dict[str, int] = data["files"]
    slots: list[Any] = data["slots"]
    seen: set[str] = set()
    changed = False
    touched_slots: list[int] = []
    for entry in files_found:
        seen.add(entry.path)
        slot = files.get(entry.path)
        old = slots[slot] if slot is not None else None
        if old is not None and old[S_MTIME] == entry.mtime_ns and old[S_SIZE] == entry.size \
                and old[S_ROOT] == entry.root:
            continue
        raw: bytes | None = None
        if old is not None and entry.size <= store.MAX_CARD_BYTES:
            try:
                with open(entry.path, "rb") as handle:
                    raw = handle.read(store.MAX_CARD_BYTES + 1)
            except OSError:
                raw = None
            if raw is not None and store.content_hash(raw) == old[S_HASH] and old[S_ROOT] == entry.root:
                slots[slot] = (old[S_PATH], old[S_ROOT], entry.mtime_ns, entry.size, old[S_HASH],
                               old[S_CARD], old[S_PROBLEMS], old[S_TERMS], old[S_SECRET])
                changed = True
                continue
        card, problems, digest = store.load_file(entry, raw)
        terms = _field_terms(card) if card is not None else {}
        new_slot = (entry.path, entry.root, entry.mtime_ns, entry.size, digest,
                    _card_tuple(card) if card is not None else None,
                    [_problem_tuple(p) for p in problems], terms, _holds_secret(card))
        if slot is None:
            slot = data["free"].pop() if data["free"] else len(slots)
            if slot == len(slots):
                slots.append(None)
            files[entry.path] = slot
        else:
            _remove_postings(data, slot, slots[slot][S_TERMS])
        slots[slot] = new_slot
        touched_slots.append(slot)
        changed = True
    for path in [p for p in files if p not in seen]:
        slot = files.pop(path)
        _remove_postings(data, slot, slots[slot][S_TERMS])
        slots[slot] = None
        data["free"].append(slot)
        changed = True
    if "avg_used" not in data or not data["postings"]:
        data["avg_used"] = _averages(slots)
    _add_postings(data, [(slot, slots[slot][S_TERMS]) for slot in touched_slots])
    current = _averages(slots)
    if any(abs(c - u) > AVG_DRIFT * u for c, u in zip(current, data["avg_used"])):
        _rebuild_postings(data)
    scan_rows = [_problem_tuple(p) for p in scan_problems]
    if scan_rows != data["scan_problems"]:
        data["scan_problems"] = scan_rows
        changed = True
    if changed or "hot" not in data:
        _derive(data)
    return data, changed


# Postings are impact-ordered: for each term, two packed arrays of equal length, the slots
# (uint32) and their keys (uint16, ascending). key = 65535 - (quantized BM25F impact << 2 | best
# field), so the most relevant cards come first and a query can stop after the top few hundred
# postings of a common term. Impacts use the field-length averages of the last full build
# (`avg_used`); they are recomputed when the averages drift.
IMPACT_LEVELS: Final = 16383
AVG_DRIFT: Final = 0.25


def _slot_lengths(terms: dict[str, list[int]]) -> list[int]:
    lengths = [0, 0, 0, 0]
    for counts in terms.values():
        for position in range(4):
            lengths[position] += counts[position]
    return lengths


def _posting_key(counts: list[int], lengths: list[int], averages: list[float]) -> int:
    from engram import router

    weighted = 0.0
    best_field, best_value = 3, -1.0
    for position in range(4):
        tf = counts[position]
        if not tf:
            continue
        b = router.FIELD_B[position]
        norm = 1.0 - b + b * (lengths[position] / averages[position])
        contribution = router.FIELD_WEIGHTS[position] * tf / norm
        weighted += contribution
        if contribution > best_value:
            best_value, best_field = contribution, position
    impact = weighted / (router.K1 + weighted)
    # The field code says whether the term is in a strong field (title, tags, card line): the
    # router's eligibility test needs that even when the body holds most of the weight.
    strong_fields = [p for p in range(3) if counts[p]]
    if strong_fields and best_field == 3:
        best_field = max(strong_fields, key=lambda p: router.FIELD_WEIGHTS[p] * counts[p])
    return 65535 - ((int(impact * IMPACT_LEVELS) << 2) | best_field)


def decode_key(key: int) -> tuple[float, int]:
    """(impact in [0, 1), best field index) of a posting key."""
    packed = 65535 - key
    return (packed >> 2) / IMPACT_LEVELS, packed & 3


def _remove_postings(data: dict[str, Any], slot: int, terms: dict[str, list[int]]) -> None:
    postings = data["postings"]
    for term in terms:
        packed = postings.get(term)
        if not packed:
            continue
        slots, keys = array("I"), array("H")
        slots.frombytes(packed[0])
        keys.frombytes(packed[1])
        try:
            position = slots.index(slot)
        except ValueError:
            continue
        del slots[position]
        del keys[position]
        if slots:
            postings[term] = (slots.tobytes(), keys.tobytes())
        else:
            del postings[term]


def _add_postings(data: dict[str, Any], slots: list[tuple[int, dict[str, list[int]]]]) -> None:
    """Add many slots' terms at once: each term's postings are re-sorted once."""
    averages = data["avg_used"]
    additions: dict[str, list[tuple[int, int]]] = {}
    for slot, terms in slots:
        lengths = _slot_lengths(terms)
        for term, counts in terms.items():
            additions.setdefault(term, []).append((_posting_key(counts, lengths, averages), slot))
    postings = data["postings"]
    for term, added in additions.items():
        packed = postings.get(term)
        if packed:
            old_slots, old_keys = array("I"), array("H")
            old_slots.frombytes(packed[0])
            old_keys.frombytes(packed[1])
            added.extend(zip(old_keys, old_slots))
        added.sort()
        postings[term] = (array("I", [s for _, s in added]).tobytes(),
                          array("H", [k for k, _ in added]).tobytes())


def _averages(slots: list[Any]) -> list[float]:
    totals = [0, 0, 0, 0]
    live = 0
    for entry in slots:
        if entry is None or entry[S_CARD] is None:
            continue
        live += 1
        for position, value in enumerate(_slot_lengths(entry[S_TERMS])):
            totals[position] += value
    return [max(total / max(live, 1), 1.0) for total in totals]


def _rebuild_postings(data: dict[str, Any]) -> None:
    data["avg_used"] = _averages(data["slots"])
    data["postings"] = {}
    _add_postings(data, [(slot, entry[S_TERMS]) for slot, entry in enumerate(data["slots"])
                         if entry is not None])


def _derive(data: dict[str, Any]) -> None:
    """Everything that depends on all cards at once: resolution, order, lengths, globs; and
    the hot part a hook loads."""
    from engram import globs, store

    slots = data["slots"]
    cards: list[Card] = []
    slot_of_path: dict[str, int] = {}
    problems: list[tuple[Any, ...]] = list(data["scan_problems"])
    for slot, entry in enumerate(slots):
        if entry is None:
            continue
        problems.extend(entry[S_PROBLEMS])
        if entry[S_CARD] is not None:
            cards.append(card_from_tuple(entry[S_CARD], entry[S_CARD][K_BODY]))
            slot_of_path[entry[S_PATH]] = slot
    root_rank = {root[0]: rank for rank, root in enumerate(data["roots"])}
    cards.sort(key=lambda c: (root_rank.get(c.root, len(root_rank)), c.path))
    kept, resolve_problems = store.resolve(cards)
    problems.extend(_problem_tuple(p) for p in resolve_problems)
    order = store.dependency_order(kept)
    by_id = {card.id: card for card in kept}
    ids = {card_id: slot_of_path[by_id[card_id].path] for card_id in order}
    rows: list[Any] = [None] * len(slots)
    spans = data.setdefault("spans", {})
    tag_index: dict[str, list[tuple[int, str, tuple[str, ...]]]] = {}
    from engram import text

    for card_id in order:
        for tag in by_id[card_id].tags:
            tag_terms = tuple(text.terms(tag))
            if tag_terms:
                tag_index.setdefault(tag_terms[0], []).append((ids[card_id], tag, tag_terms))
    for card_id in order:
        slot = ids[card_id]
        entry = slots[slot]
        span_key = (entry[S_PATH], entry[S_HASH])
        span = spans.get(span_key)
        if span is None:
            span = spans[span_key] = _body_span(by_id[card_id])
        rows[slot] = _light_row(entry[S_CARD], span)
    live_keys = {(e[S_PATH], e[S_HASH]) for e in slots if e is not None}
    for key in [k for k in spans if k not in live_keys]:
        del spans[key]
    glob_rows: list[tuple[int, str, str]] = []
    buckets: dict[str, list[int]] = {}
    for card_id in order:
        card = by_id[card_id]
        slot = ids[card_id]
        for pattern in card.applies_to:
            try:
                regex = globs.translate(pattern)
                keys = globs.bucket_keys(pattern)
            except (globs.GlobError, ValueError):
                continue  # reported by lint; an uncompilable glob matches nothing
            glob_index = len(glob_rows)
            glob_rows.append((slot, regex, pattern))
            for key in keys:
                buckets.setdefault(key, []).append(glob_index)
    data["problems"] = sorted(set(problems), key=lambda p: (p[0], p[1] or 0, p[3]))
    data["hot"] = {
        "format": INDEX_FORMAT, "py": _PY, "roots": data["roots"],
        "stat": {e[S_PATH]: (slot, e[S_MTIME], e[S_SIZE], e[S_ROOT])
                 for slot, e in enumerate(slots) if e is not None},
        "scan_problems": data["scan_problems"],
        "rows": rows,
        "ids": ids,
        "order": [ids[card_id] for card_id in order],
        "always": [ids[c] for c in order if by_id[c].always],
        "secret_slots": [ids[c] for c in order if slots[ids[c]][S_SECRET]],
        "postings": data["postings"],
        "tags": tag_index,
        "globs": glob_rows,
        "buckets": buckets,
        "errors": sum(1 for p in data["problems"] if p[2] == "error"),
    }
    live = sum(1 for entry in slots if entry is not None)
    if slots and len(data["free"]) > _COMPACT_RATIO * max(live, 1) and len(data["free"]) > 64:
        _compact(data)


def _compact(data: dict[str, Any]) -> None:
    """Renumber slots once many are empty, so postings stay short."""
    new_slots = [entry for entry in data["slots"] if entry is not None]
    data["slots"] = new_slots
    data["free"] = []
    data["files"] = {entry[S_PATH]: index for index, entry in enumerate(new_slots)}
    _rebuild_postings(data)
    _derive(data)


def roots_of(workspace: "Workspace") -> list[tuple[str, str]]:
    return [(root.location, root.scope) for root in workspace.roots]


def _load(path: str, roots: list[tuple[str, str]], follow: bool,
          allowed_parents: tuple[str, ...]) -> CompiledIndex:
    from engram import store

    roots_sig = _roots_signature(roots, follow)
    cold_path = _cold_path(path)
    hot = _read(path)
    found = store.scan(roots, follow, allowed_parents)
    if hot is not None and hot.get("roots") == roots_sig and _is_fresh(hot, *found):
        return CompiledIndex(hot, cold_path=cold_path)
    previous = _read(cold_path)
    cold, changed = build(roots, follow, allowed_parents, previous, found)
    if changed or previous is None or hot is None or hot.get("roots") != roots_sig:
        _write(cold_path, {k: v for k, v in cold.items() if k != "hot"})
        _write(path, cold["hot"])
    return CompiledIndex(cold["hot"], cold={k: v for k, v in cold.items() if k != "hot"},
                         cold_path=cold_path)


def load_or_build(workspace: "Workspace") -> CompiledIndex:
    """The workspace's index, refreshed against the files on disk and saved when it changed."""
    roots = roots_of(workspace)
    follow = bool(workspace.settings.get("security.follow_symlinks"))
    explicit = any(root.scope == "explicit" for root in workspace.roots)
    path = index_path(workspace.key + ("-" + _roots_hash(roots) if explicit else ""))
    return _load(path, roots, follow, (workspace.location,))


def load_roots(roots: "list[Path]", follow_symlinks: bool = False) -> CompiledIndex:
    """An index over explicit roots (`--root`), cached under a name derived from them."""
    pairs = [(os.path.realpath(os.fspath(p)), "explicit") for p in roots]
    return _load(index_path("roots-" + _roots_hash(pairs)), pairs, follow_symlinks, ())


def _roots_hash(roots: list[tuple[str, str]]) -> str:
    import xxhash

    return xxhash.xxh64_hexdigest(repr(roots).encode("utf-8", "surrogatepass"))[:12]
