"""Compiling card files into the index database: parse what changed, update its postings and
rows, then re-derive what depends on all cards at once (resolution of ids and `depends_on`,
dependency order, globs, tags, stats). Only a refresh imports this module: a hook whose index
is fresh never does."""

from __future__ import annotations

import marshal
import os
import time

from engram import index_rows, paths, postings
from engram.fileio import read_bounded
from engram.index_rows import (
    C_ALWAYS,
    C_APPLIES,
    C_DEPENDS,
    C_ID,
    C_TAGS,
    K_BODY,
    PY_TAG,
    problem_tuple,
    read_meta,
    roots_signature,
    stat_signature,
    write_meta,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from engram.card import Card
    from engram.problems import Problem


def _stored_mtime(entry: Any, digest: str, read_at: int,
                  racy: dict[str, tuple[int, int, str]]) -> int:
    """The mtime to store for `entry`, read at `read_at` (ns) or later: SMUDGED, noted in
    `racy` with the file's real stat and the hash of the bytes read, when a save in the same
    tick could still leave its stat unchanged (`index_rows.RACY_NS`)."""
    if digest and abs(entry.mtime_ns - read_at) <= index_rows.RACY_NS:
        racy[entry.path] = (entry.mtime_ns, entry.size, digest)
        return index_rows.SMUDGED
    mtime: int = entry.mtime_ns
    return mtime


# A first build of at least this many card files is parsed by a child process per core.
PARALLEL_MIN_FILES = paths.env_int("ENGRAM_PARALLEL_MIN_FILES", 500)
PARALLEL_MAX_WORKERS = 8


class _Light:
    """What resolution and ordering read of a card: cheaper than a Card at 10,000 cards."""

    __slots__ = ("id", "depends_on", "root", "path", "slot")

    def __init__(self, card_id: str, depends_on: tuple[str, ...], root: str, path: str,
                 slot: int) -> None:
        self.id, self.depends_on, self.root, self.path, self.slot = card_id, depends_on, root, path, slot


def _card_tuple(card: Card) -> tuple[Any, ...]:
    return (card.id, card.title, card.card, card.type, card.tags, card.applies_to, card.always,
            card.priority, card.depends_on, card.format, card.body_line, card.provenance,
            card.body, card.content_hash, card.path, card.root, card.view_hash)


def _body_span(text: str, body: str) -> tuple[int, int]:
    start = text.find(body)
    return (start, start + len(body)) if start >= 0 else (-1, -1)


def _field_terms(card: Card) -> tuple[dict[str, list[int]], list[int]]:
    """(term -> [tf in title(+id), tags, card, body], the four field lengths in terms)."""
    from collections import Counter

    from engram import synonyms, text

    counts: dict[str, list[int]] = {}
    lengths = [0, 0, 0, 0]
    sources = (card.title + " " + card.id.replace("-", " ").replace("_", " "),
               " ".join(card.tags), card.card)
    for position, source in enumerate(sources):
        found_terms = text.terms(source)
        lengths[position] = len(found_terms)
        for term, tf in Counter(found_terms).items():  # counted in C
            entry = counts.get(term)
            if entry is None:
                entry = counts[term] = [0, 0, 0, 0]
            entry[position] = tf
        # Head phrases: "server action" in a title is more than "server" and "action".
        head_phrases = text.phrases(found_terms)
        for phrase in head_phrases:
            counts.setdefault(phrase, [0, 0, 0, 0])[position] += 1
        # Concepts the title or tags name ("PR" and "pull request" both name ~pull-request),
        # once per field: a prompt naming the concept in other words matches here. Not the
        # description: a word in passing there ("auth endpoints") is not what the card is about.
        for concept in synonyms.concepts(found_terms + head_phrases) if position < 2 else ():
            entry = counts.setdefault(concept, [0, 0, 0, 0])
            entry[position] = 1
            lengths[position] += 1
    body_terms = text.terms(card.body)
    lengths[3] = len(body_terms)  # what postings.slot_lengths counts: words, not phrases
    body = Counter(body_terms)  # counted in C
    # Most terms are in the body alone: built by a comprehension, not one lookup per term.
    for term in body.keys() & counts.keys():
        counts[term][3] = body[term]
    counts.update({term: [0, 0, 0, tf] for term, tf in body.items() if term not in counts})
    # The names the card gives as code (`useTranslation`, `date-fns`), under keys no prompt
    # word reaches: a touched file that uses them finds the card (see engram.code_names).
    from engram import code_names

    for name in code_names.card_names(card.title, card.card, card.body, card.tags):
        counts.setdefault(name, [0, 0, 0, 1])
    return counts, lengths


def _holds_secret(card: Card | None) -> bool:
    """Checked once per changed file, so the hook never scans bodies: a card whose title, card
    line, tags, globs, depends_on or body holds a value-shaped secret is never injected (lint
    and doctor report it); one whose id or file name does never becomes a card at all."""
    if card is None:
        return False
    from engram import secrets

    return secrets.has_secrets(secrets.card_text(card))


def _holds_secret_as_written(card: Card | None, raw: bytes | None) -> bool:
    """`_holds_secret`, or the card's frontmatter holds one as the file writes it (a token
    wrapped over two lines of a YAML value, which every parsed field shows as two words), or
    an edge of the card is a piece of a token another card's answer could complete
    (`secrets.edge_fragments`)."""
    if card is None or _holds_secret(card):
        return card is not None
    from engram import secrets

    if secrets.edge_fragments(card):
        return True
    if raw is None:
        return False
    return secrets.has_secrets(secrets.frontmatter(card, raw.decode("utf-8", "replace")))


def reparse(path: str, root: str, raw: bytes) -> tuple[Card | None, bool]:
    """One card file parsed alone from `raw`, its bytes now: (the card or None when it no
    longer parses, whether it holds a secret). For a hook that found a file changed since the
    index was compiled."""
    from engram import store

    card, _problems, _digest = store.load_file(store.FoundFile(path, root, 0, len(raw)), raw)
    return card, _holds_secret_as_written(card, raw)


def _prepare(entry: Any, raw: bytes | None) -> tuple[Any, ...]:
    """What the index stores of one card file from its bytes, in values marshal can carry:
    (whether it is a card, whether it was unreadable, hash, field terms, field lengths,
    whether it holds a secret, then the card, row, terms and problems blobs)."""
    from engram import store

    card, problems, digest = store.load_file(entry, raw)
    problem_blob = marshal.dumps([problem_tuple(p) for p in problems])
    if card is None:
        # A file engram could not read is retried once it becomes readable (chmod changes no
        # mtime), see _is_fresh.
        unreadable = any(p.code == "unreadable" for p in problems)
        return False, unreadable, digest, {}, [0, 0, 0, 0], False, None, None, marshal.dumps({}), \
            problem_blob
    terms, lengths = _field_terms(card)
    try:
        span = _body_span(raw.decode("utf-8").replace("\r\n", "\n"), card.body) \
            if raw is not None else (-1, -1)
    except UnicodeDecodeError:
        span = (-1, -1)
    # Serialised here, where the card was made: marshal's output depends on which objects
    # are shared (its reference flags), and a card that crossed a process boundary shares
    # none. The tuples are temporaries, as they always were, for the same reason.
    row = marshal.dumps(_card_tuple(card)[:K_BODY] + (span,) + _card_tuple(card)[K_BODY + 1:])
    return True, False, digest, terms, lengths, _holds_secret_as_written(card, raw), \
        marshal.dumps(_card_tuple(card)), row, marshal.dumps(terms), problem_blob


def _read(entry: Any) -> bytes | None:
    """A card file's bytes, or None when it is too large or unreadable (`load_file` then
    says which)."""
    from engram import store

    if entry.size > store.MAX_CARD_BYTES:
        return None
    try:
        return read_bounded(entry.path, store.MAX_CARD_BYTES)
    except OSError:
        return None


def _read_and_prepare(entry: Any) -> tuple[Any, ...]:
    return _prepare(entry, _read(entry))


def _prepare_parallel(found: list[Any]) -> list[tuple[Any, ...]] | None:
    """`_read_and_prepare` of every file, spread over one forked child per extra core, or
    None (the caller parses serially) for a small store, one core, or any failure.

    Plain `fork` and a pipe per child, not a process pool: a child has a fixed share of
    work and exits when done (or when its parent is gone and the pipe breaks), so a hook
    killed at its host's timeout leaves no worker waiting for tasks; nothing is imported;
    and results come back marshalled, made where they were computed (see `_prepare`)."""
    workers = min(os.cpu_count() or 1, PARALLEL_MAX_WORKERS)
    if workers < 2 or len(found) < PARALLEL_MIN_FILES or not hasattr(os, "fork"):
        return None
    shares = [found[k::workers] for k in range(workers)]  # interleaved: similar sizes
    children: list[tuple[int, int]] = []
    try:
        for share in shares[1:]:
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child's exit status tells the parent
                status = 1
                try:
                    os.close(read_end)
                    data = marshal.dumps([_read_and_prepare(e) for e in share])
                    with os.fdopen(write_end, "wb") as pipe:
                        pipe.write(data)
                    status = 0
                finally:
                    os._exit(status)
            os.close(write_end)
            children.append((pid, read_end))
        results = [[_read_and_prepare(e) for e in shares[0]]]
    finally:
        received = []
        for pid, read_end in children:
            try:
                with os.fdopen(read_end, "rb") as pipe:
                    data = pipe.read()
            except OSError:
                data = b""
            _pid, status = os.waitpid(pid, 0)
            received.append(data if status == 0 else b"")
    if len(received) != workers - 1 or not all(received):
        return None
    results.extend(marshal.loads(data) for data in received)
    merged: list[tuple[Any, ...]] = [()] * len(found)
    for k, share_results in enumerate(results):
        merged[k::workers] = share_results
    return merged


def refresh(db: Any, roots: list[tuple[str, str]], follow: bool, found: list[Any],
             scan_problems: list[Problem], meta: dict[str, Any]) -> None:
    """Bring the database up to date with `found`, inside one write transaction."""
    import gc

    from engram import store

    gc.enable()  # parsing many cards is no short-lived hook's work (engram.hook_entry)
    read_at = time.time_ns()  # before any file is read: a save after the read is later still
    racy: dict[str, tuple[int, int, str]] = {}

    known = {path: (slot, mtime, size, root, retry) for path, (slot, mtime, size, root, retry)
             in (meta.get("stat") or {}).items()}
    if meta.get("roots") != roots_signature(roots, follow) or meta.get("py") != PY_TAG:
        db.execute("DELETE FROM cards")
        db.execute("DELETE FROM heads")
        db.execute("DELETE FROM postings")
        db.execute("DELETE FROM tags")
        db.execute("DELETE FROM meta")
        known = {}
    averages = meta.get("avg_used") if known else None
    removed: dict[int, dict[str, list[int]]] = {}
    added: dict[int, dict[str, list[int]]] = {}
    added_lengths: dict[int, list[int]] = {}
    seen: set[str] = set()
    next_slot = (db.execute("SELECT MAX(slot) FROM cards").fetchone()[0] or 0) + 1
    pending: list[tuple[Any, ...]] = []
    # A first build (nothing known) parses every file: a large one is spread over processes.
    prepared = None if known else _prepare_parallel(found)
    for position, entry in enumerate(found):
        seen.add(entry.path)
        old = known.get(entry.path)
        if old is not None and old[1] == entry.mtime_ns and old[2] == entry.size \
                and old[3] == entry.root and not (old[4] and os.access(entry.path, os.R_OK)):
            continue
        if prepared is not None:
            is_card, unreadable, digest, terms, lengths, secret, *blobs = prepared[position]
        else:
            # One read serves the hash, the parse and the body's offsets: two reads could see
            # two versions of a file edited meanwhile, and the offsets would not fit the hash.
            raw = _read(entry)
            if raw is not None and old is not None and not old[4]:
                stored = db.execute("SELECT hash FROM cards WHERE slot = ?", (old[0],)).fetchone()
                if stored and stored[0] == store.content_hash(raw):
                    db.execute("UPDATE cards SET mtime = ?, size = ? WHERE slot = ?",
                               (_stored_mtime(entry, stored[0], read_at, racy), entry.size,
                                old[0]))
                    continue
            is_card, unreadable, digest, terms, lengths, secret, *blobs = _prepare(entry, raw)
        slot = old[0] if old is not None else next_slot
        if old is None:
            next_slot += 1
        else:
            previous = db.execute("SELECT terms FROM cards WHERE slot = ?", (slot,)).fetchone()
            if previous and previous[0]:
                removed[slot] = marshal.loads(previous[0])
        if is_card:
            added[slot] = terms
            added_lengths[slot] = lengths
        pending.append((slot, entry.path, entry.root,
                        _stored_mtime(entry, digest, read_at, racy), entry.size, digest,
                        *blobs, int(secret), *lengths, postings.head_size(terms),
                        int(unreadable)))
    db.executemany("INSERT OR REPLACE INTO cards (slot, path, root, mtime, size, hash, card, row, "
                   "terms, problems, secret, len0, len1, len2, len3) "
                   "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", [p[:15] for p in pending])
    # Head sizes in a table of their own: the router reads them for hundreds of cards, and a
    # column after the card blobs would make SQLite walk their overflow pages for each.
    db.executemany("INSERT OR REPLACE INTO heads (slot, size) VALUES (?, ?)",
                   [(p[0], p[15]) for p in pending])
    retry = {p[1] for p in pending if p[16]}
    for path in [p for p in known if p not in seen]:
        slot = known[path][0]
        previous = db.execute("SELECT terms FROM cards WHERE slot = ?", (slot,)).fetchone()
        if previous and previous[0]:
            removed[slot] = marshal.loads(previous[0])
        db.execute("DELETE FROM cards WHERE slot = ?", (slot,))
        db.execute("DELETE FROM heads WHERE slot = ?", (slot,))
    if averages is None:
        averages = postings.averages(db)
        every = db.execute("SELECT COUNT(*) FROM cards WHERE card IS NOT NULL").fetchone()[0]
        postings.rebuild_postings(db, averages, added if every == len(added) else None,
                                 added_lengths)
    else:
        postings.update_postings(db, removed, added, averages, added_lengths)
        current = postings.averages(db) if (removed or added) else averages
        if any(abs(c - u) > postings.AVG_DRIFT * u for c, u in zip(current, averages, strict=False)):
            averages = current
            postings.rebuild_postings(db, averages)
    derive(db, roots, follow, scan_problems, averages, retry, set(removed) | set(added), racy)


def derive(db: Any, roots: list[tuple[str, str]], follow: bool, scan_problems: list[Problem],
            averages: list[float], retry: set[str], changed_slots: set[int],
            racy: dict[str, tuple[int, int, str]] | None = None) -> None:
    """Everything that depends on all cards at once: resolution, order, globs, tags, stats."""
    from engram import globs, store, synonyms, text

    lights: list[_Light] = []
    problems: list[tuple[Any, ...]] = [problem_tuple(p) for p in scan_problems]
    stat: dict[str, tuple[Any, ...]] = {}
    catalog: dict[int, tuple[Any, ...]] = {}
    for slot, path, root, mtime, size, row_blob, problem_blob, secret in db.execute(
            "SELECT slot, path, root, mtime, size, row, problems, secret FROM cards"):
        stat[path] = (slot, mtime, size, root, int(path in retry))
        problems.extend(tuple(p) for p in marshal.loads(problem_blob))
        if row_blob is not None:
            row = marshal.loads(row_blob)
            catalog[slot] = (row, secret)
            lights.append(_Light(row[C_ID], tuple(row[C_DEPENDS]), root, path, slot))
    root_rank = {root: rank for rank, (root, _scope) in enumerate(roots)}
    lights.sort(key=lambda c: (root_rank.get(c.root, len(root_rank)), c.path))
    kept, resolve_problems = store.resolve(lights)  # type: ignore[arg-type]
    problems.extend(problem_tuple(p) for p in resolve_problems)
    order_ids = store.dependency_order(kept)
    by_id: dict[str, Any] = {light.id: light for light in kept}  # _Light rows in, out
    ids = {card_id: by_id[card_id].slot for card_id in order_ids}
    order = [ids[card_id] for card_id in order_ids]
    glob_rows: list[tuple[int, Any, str]] = []
    buckets: dict[str, list[int]] = {}
    # Translations are kept between refreshes: one changed card must not re-translate every
    # glob of the store.
    known_globs: dict[str, Any] = read_meta(db, ("glob_cache",)).get("glob_cache") or {}
    glob_cache: dict[str, Any] = {}
    for slot in order:
        for pattern in catalog[slot][0][C_APPLIES]:
            if pattern in glob_cache:
                compiled = glob_cache[pattern]
            elif pattern in known_globs:
                compiled = glob_cache[pattern] = known_globs[pattern]
            else:
                try:
                    # A path event matches the spec without `re`; the regex only where the
                    # spec cannot say it (engram.glob_match).
                    regex = globs.translate(pattern)
                    spec = globs.match_spec(pattern)
                    compiled = (regex if spec is None else spec, globs.bucket_keys(pattern))
                except (globs.GlobError, ValueError):
                    compiled = None  # reported by lint; an uncompilable glob matches nothing
                glob_cache[pattern] = compiled
            if compiled is None:
                continue
            match, keys = compiled
            for key in keys:
                buckets.setdefault(key, []).append(len(glob_rows))
            glob_rows.append((slot, match, pattern))
    stale = [(slot,) for slot in changed_slots] + [
        (slot,) for (slot,) in db.execute("SELECT DISTINCT slot FROM tags")
        if slot not in catalog]
    db.executemany("DELETE FROM tags WHERE slot = ?", stale)
    fresh_tags = []
    tagged = {slot for (slot,) in db.execute("SELECT DISTINCT slot FROM tags")}
    for slot, (row, _secret) in catalog.items():
        if slot in tagged:
            continue
        named: set[str] = set()
        for tag in row[C_TAGS]:
            tag_terms = tuple(text.terms(tag))
            if tag_terms:
                fresh_tags.append((tag_terms[0], slot, tag, " ".join(tag_terms)))
            # A prompt naming a tag in other words ("screen reader" for `a11y`) names the tag.
            for concept in synonyms.concepts(list(tag_terms) + text.phrases(list(tag_terms))):
                if concept not in named:  # one tag row per concept: `a11y` and `aria` name one
                    named.add(concept)
                    fresh_tags.append((concept, slot, tag, concept))
    db.executemany("INSERT INTO tags (term, slot, tag, terms) VALUES (?, ?, ?, ?)", fresh_tags)
    problems = sorted(set(problems), key=lambda p: (p[0], p[1] or 0, p[3]))
    # The order store.scan lists files in: roots in order, then paths sorted.
    scanned = sorted(stat.items(), key=lambda item: (root_rank.get(item[1][3], len(root_rank)),
                                                     item[0]))
    write_meta(db, {
        "py": PY_TAG, "roots": roots_signature(roots, follow), "stat": stat,
        "stat_sig": stat_signature([path for path, _ in scanned],
                                   [known[3] for _, known in scanned],
                                   [known[1] for _, known in scanned],
                                   [known[2] for _, known in scanned]),
        "stat_retry": sorted(path for path, known in stat.items() if known[4]),
        "racy": racy or {},
        "scan_problems": [problem_tuple(p) for p in scan_problems], "avg_used": averages,
        "order": order, "ids": ids,
        "always": [slot for slot in order if catalog[slot][0][C_ALWAYS]],
        "secret_slots": [slot for slot in order if catalog[slot][1]],
        "globs": glob_rows, "buckets": buckets, "problems": problems, "glob_cache": glob_cache,
        "errors": sum(1 for p in problems if p[2] == "error"),
        # Stemmed once here: a hook is a fresh process, and stemming the table costs ~0.5 ms.
        "synonyms": synonyms.lookup(),
    })
