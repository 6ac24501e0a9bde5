"""The compiled index: every card file parsed once, term statistics, glob regexes and
dependency order, stored in the state dir with marshal (the fastest load Python has for plain
data). A hook loads it without importing YAML or compiling a single glob; a changed file is
re-parsed alone (stat first, then xxhash of the content).

Layout: one *slot* per card file. Postings refer to slots, so one changed file only touches
its own terms; removed files leave empty slots until the next compaction."""

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

INDEX_FORMAT: Final = 4
# Field order in postings and lengths: id/title, tags, one-line card, body.
FIELDS: Final = ("title", "tags", "card", "body")
_PY: Final = f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"
_COMPACT_RATIO: Final = 0.25

# Slot tuple positions.
S_PATH, S_ROOT, S_MTIME, S_SIZE, S_HASH, S_CARD, S_PROBLEMS, S_TERMS, S_SECRET = range(9)
# Card tuple positions.
(C_ID, C_TITLE, C_CARD, C_TYPE, C_TAGS, C_APPLIES, C_ALWAYS, C_PRIORITY, C_DEPENDS, C_FORMAT,
 C_BODY_LINE, C_PROVENANCE, C_BODY, C_HASH, C_PATH, C_ROOT) = range(16)


def _card_tuple(card: Card) -> tuple[Any, ...]:
    return (card.id, card.title, card.card, card.type, card.tags, card.applies_to, card.always,
            card.priority, card.depends_on, card.format, card.body_line, card.provenance,
            card.body, card.content_hash, card.path, card.root)


def card_from_tuple(row: tuple[Any, ...]) -> Card:
    return Card(id=row[C_ID], title=row[C_TITLE], card=row[C_CARD], type=row[C_TYPE],
                tags=tuple(row[C_TAGS]), applies_to=tuple(row[C_APPLIES]), always=row[C_ALWAYS],
                priority=row[C_PRIORITY], depends_on=tuple(row[C_DEPENDS]), format=row[C_FORMAT],
                body_line=row[C_BODY_LINE], provenance=row[C_PROVENANCE], body=row[C_BODY],
                content_hash=row[C_HASH], path=row[C_PATH], root=row[C_ROOT])


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
    """The loaded index. Plain data in `self.data`; Card objects are built on demand."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self._cards: dict[int, Card] = {}
        self._regex: dict[int, Any] = {}

    # --- what the router reads -------------------------------------------------------
    @property
    def slots(self) -> list[Any]:
        return self.data["slots"]

    @property
    def active(self) -> list[int]:
        """Slots holding a routable card, in dependency order."""
        return self.data["order"]

    @property
    def problems(self) -> list[Problem]:
        return [_problem(p) for p in self.data["problems"]]

    def card(self, slot: int) -> Card:
        cached = self._cards.get(slot)
        if cached is None:
            cached = self._cards[slot] = card_from_tuple(self.slots[slot][S_CARD])
        return cached

    def row(self, slot: int) -> tuple[Any, ...]:
        return self.slots[slot][S_CARD]

    def slot_of(self, card_id: str) -> int | None:
        return self.data["ids"].get(card_id)

    def all_cards(self) -> list[Card]:
        return [self.card(slot) for slot in self.active]

    def postings(self, term: str) -> array:
        packed = self.data["postings"].get(term)
        values = array("I")
        if packed:
            values.frombytes(packed)
        return values

    def field_lengths(self) -> array:
        values = array("I")
        values.frombytes(self.data["lengths"])
        return values

    def compiled_glob(self, glob_index: int) -> Any:
        pattern = self._regex.get(glob_index)
        if pattern is None:
            import re

            pattern = self._regex[glob_index] = re.compile(self.data["globs"][glob_index][1])
        return pattern


def index_path(workspace_key: str) -> str:
    return os.path.join(paths.state_dir_str(), "index", f"{workspace_key}.idx")


def _roots_signature(roots: list[tuple[str, str]], follow: bool) -> list[Any]:
    return [list(r) for r in roots] + [["follow", str(follow)]]


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        # loads(read()) rather than load(handle): marshal.load reads a file in tiny pieces.
        data = marshal.loads(raw)
    except FileNotFoundError:
        return None
    except (OSError, EOFError, ValueError, TypeError) as exc:
        _set_aside(path, f"unreadable index: {exc}")
        return None
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT or data.get("py") != _PY:
        return None
    return data


def _set_aside(path: str, reason: str) -> None:
    from engram import log

    try:
        os.replace(path, path[: -len(".idx")] + ".corrupt")
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


def _empty(roots_sig: list[Any]) -> dict[str, Any]:
    return {"format": INDEX_FORMAT, "py": _PY, "roots": roots_sig, "slots": [], "files": {},
            "postings": {}, "lengths": b"", "problems": [], "order": [], "ids": {},
            "always": [], "globs": [], "buckets": {}, "scan_problems": [], "free": []}


def build(roots: list[tuple[str, str]], follow_symlinks: bool = False,
          allowed_parents: tuple[str, ...] = (), previous: dict[str, Any] | None = None,
          ) -> tuple[dict[str, Any], bool]:
    """Bring `previous` (or an empty index) up to date with the files under `roots`.
    Returns (data, changed)."""
    from engram import store

    roots_sig = _roots_signature(roots, follow_symlinks)
    if previous is None or previous.get("roots") != roots_sig:
        previous = _empty(roots_sig)
    data = previous
    found, scan_problems = store.scan(roots, follow_symlinks, allowed_parents)
    files: dict[str, int] = data["files"]
    slots: list[Any] = data["slots"]
    seen: set[str] = set()
    changed = False
    touched_slots: list[int] = []
    for entry in found:
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
    _add_postings(data, [(slot, slots[slot][S_TERMS]) for slot in touched_slots])
    scan_rows = [_problem_tuple(p) for p in scan_problems]
    if scan_rows != data["scan_problems"]:
        data["scan_problems"] = scan_rows
        changed = True
    if changed:
        _derive(data)
    return data, changed


def _remove_postings(data: dict[str, Any], slot: int, terms: dict[str, list[int]]) -> None:
    postings = data["postings"]
    for term in terms:
        packed = postings.get(term)
        if not packed:
            continue
        values = array("I")
        values.frombytes(packed)
        kept = array("I")
        for start in range(0, len(values), 5):
            if values[start] != slot:
                kept.extend(values[start:start + 5])
        if kept:
            postings[term] = kept.tobytes()
        else:
            del postings[term]


def _add_postings(data: dict[str, Any], slots: list[tuple[int, dict[str, list[int]]]]) -> None:
    """Add many slots' terms at once: each term's packed postings are rebuilt once."""
    additions: dict[str, array] = {}
    for slot, terms in slots:
        for term, counts in terms.items():
            values = additions.get(term)
            if values is None:
                values = additions[term] = array("I")
            values.extend((slot, *(min(c, 0xFFFF) for c in counts)))
    postings = data["postings"]
    for term, values in additions.items():
        packed = postings.get(term)
        postings[term] = (packed + values.tobytes()) if packed else values.tobytes()


def _derive(data: dict[str, Any]) -> None:
    """Everything that depends on all cards at once: resolution, order, lengths, globs."""
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
            cards.append(card_from_tuple(entry[S_CARD]))
            slot_of_path[entry[S_PATH]] = slot
    root_rank = {root[0]: rank for rank, root in enumerate(data["roots"])}
    cards.sort(key=lambda c: (root_rank.get(c.root, len(root_rank)), c.path))
    kept, resolve_problems = store.resolve(cards)
    problems.extend(_problem_tuple(p) for p in resolve_problems)
    order = store.dependency_order(kept)
    by_id = {card.id: card for card in kept}
    data["ids"] = {card_id: slot_of_path[by_id[card_id].path] for card_id in order}
    data["order"] = [data["ids"][card_id] for card_id in order]
    data["always"] = [data["ids"][c] for c in order if by_id[c].always]
    data["secret_slots"] = [data["ids"][c] for c in order if slots[data["ids"][c]][S_SECRET]]
    lengths = array("I", [0] * (4 * len(slots)))
    for slot, entry in enumerate(slots):
        if entry is None or entry[S_CARD] is None:
            continue
        for counts in entry[S_TERMS].values():
            for position in range(4):
                lengths[4 * slot + position] += counts[position]
    data["lengths"] = lengths.tobytes()
    glob_rows: list[tuple[int, str, str]] = []
    buckets: dict[str, list[int]] = {}
    for card_id in order:
        card = by_id[card_id]
        slot = data["ids"][card_id]
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
    data["globs"] = glob_rows
    data["buckets"] = buckets
    data["problems"] = sorted(set(problems), key=lambda p: (p[0], p[1] or 0, p[3]))
    live = sum(1 for entry in slots if entry is not None)
    if slots and len(data["free"]) > _COMPACT_RATIO * max(live, 1) and len(data["free"]) > 64:
        _compact(data)


def _compact(data: dict[str, Any]) -> None:
    """Renumber slots once many are empty, so postings stay short."""
    old_slots = data["slots"]
    mapping: dict[int, int] = {}
    new_slots: list[Any] = []
    for slot, entry in enumerate(old_slots):
        if entry is not None:
            mapping[slot] = len(new_slots)
            new_slots.append(entry)
    data["slots"] = new_slots
    data["free"] = []
    data["files"] = {entry[S_PATH]: index for index, entry in enumerate(new_slots)}
    data["postings"] = {}
    _add_postings(data, [(slot, entry[S_TERMS]) for slot, entry in enumerate(new_slots)])
    _derive(data)


def roots_of(workspace: "Workspace") -> list[tuple[str, str]]:
    return [(root.location, root.scope) for root in workspace.roots]


def load_or_build(workspace: "Workspace") -> CompiledIndex:
    """The workspace's index, refreshed against the files on disk and saved when it changed."""
    roots = roots_of(workspace)
    follow = bool(workspace.settings.get("security.follow_symlinks"))
    path = index_path(workspace.key + ("-" + _roots_hash(roots) if _explicit(workspace) else ""))
    previous = _read(path)
    data, changed = build(roots, follow, (workspace.location,), previous)
    if changed or previous is None:
        _write(path, data)
    return CompiledIndex(data)


def load_roots(roots: "list[Path]", follow_symlinks: bool = False) -> CompiledIndex:
    """An index over explicit roots (`--root`), cached under a name derived from them."""
    pairs = [(os.path.realpath(os.fspath(p)), "explicit") for p in roots]
    path = index_path("roots-" + _roots_hash(pairs))
    previous = _read(path)
    data, changed = build(pairs, follow_symlinks, (), previous)
    if changed or previous is None:
        _write(path, data)
    return CompiledIndex(data)


def _explicit(workspace: "Workspace") -> bool:
    return any(root.scope == "explicit" for root in workspace.roots)


def _roots_hash(roots: list[tuple[str, str]]) -> str:
    import hashlib

    return hashlib.sha1(repr(roots).encode("utf-8", "surrogatepass")).hexdigest()[:12]
