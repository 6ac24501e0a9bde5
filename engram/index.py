"""The compiled index: every card file parsed once, term statistics, glob regexes and
dependency order, in one SQLite database per workspace in the state dir.

A hook reads only what it needs, whatever the store size: the file stats for the freshness
check, the postings of the prompt's terms, the rows of candidate cards, the globs when paths
were touched. No YAML is parsed and no glob compiled when nothing changed. A changed file is
re-parsed alone (stat first, then xxhash of the content) and only its own terms' postings are
rewritten. SQLite gives atomic, concurrent-safe updates and survives a killed process; a
database that does not open is set aside and rebuilt.

One *slot* per card file. This module opens, reads and freshness-checks the index;
`engram.index_compile` parses changed files into it and `engram.postings` keeps the
impact-ordered postings (both loaded only when something changed)."""

from __future__ import annotations

import marshal
import os

from engram import index_rows, paths
from engram.index_rows import (  # noqa: F401 - the layout, re-exported for readers
    C_ALWAYS,
    C_APPLIES,
    C_BODY_LINE,
    C_BODY_SPAN,
    C_CARD,
    C_DEPENDS,
    C_FORMAT,
    C_HASH,
    C_ID,
    C_PATH,
    C_PRIORITY,
    C_PROVENANCE,
    C_ROOT,
    C_TAGS,
    C_TITLE,
    C_TYPE,
    INDEX_FORMAT,
    K_ALWAYS,
    K_APPLIES,
    K_BODY,
    K_BODY_LINE,
    K_CARD,
    K_DEPENDS,
    K_FORMAT,
    K_HASH,
    K_ID,
    K_PATH,
    K_PRIORITY,
    K_PROVENANCE,
    K_ROOT,
    K_TAGS,
    K_TITLE,
    K_TYPE,
    PY_TAG,
    Row,
    card_from_tuple,
    problem_from_tuple,
    problem_tuple,
    read_meta,
    read_text,
    roots_signature,
    stat_signature,
    write_meta,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final, Iterable, Iterator, Literal

    from engram.card import Card
    from engram.problems import Problem
    from engram.workspace import Workspace

BUSY_TIMEOUT_MS: Final = 5000
HOOK_WRITE_WAIT: Final = 2.0  # seconds a hook waits for the index's write lock
_MAX_READ: Final = 256 * 1024 + 1  # store.MAX_CARD_BYTES + 1, without importing store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB);
CREATE TABLE IF NOT EXISTS cards (
    slot INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, root TEXT, mtime INTEGER, size INTEGER,
    hash TEXT, card BLOB, row BLOB, terms BLOB, problems BLOB, secret INTEGER DEFAULT 0,
    len0 INTEGER DEFAULT 0, len1 INTEGER DEFAULT 0, len2 INTEGER DEFAULT 0,
    len3 INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS heads (slot INTEGER PRIMARY KEY, size INTEGER);
CREATE TABLE IF NOT EXISTS postings (term TEXT PRIMARY KEY, slots BLOB, keys BLOB,
    heads INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS tags (term TEXT, slot INTEGER, tag TEXT, terms TEXT);
CREATE INDEX IF NOT EXISTS tags_term ON tags(term);
CREATE INDEX IF NOT EXISTS tags_slot ON tags(slot);
"""


class CompiledIndex:
    """An open index. Reads go to SQLite on demand and are memoized for this process."""

    def __init__(self, db: Any, meta: dict[str, Any]) -> None:
        self.db = db
        self._meta = meta
        self._rows: dict[int, Row | None] = {}
        self._secret: set[int] = set()  # slots whose row was read with its secret verdict set
        self._cards: dict[int, Card] = {}
        self._regex: dict[int, Any] = {}
        self._active: set[int] | None = None
        self._heads: dict[str, int] = {}
        self._postings: dict[str, tuple[memoryview[int], memoryview[int]]] = {}
        self._positions: dict[str, list[int]] = {}
        self.data = _MetaView(self)
        # True for the empty stand-in a hook answers from while a detached child builds the
        # whole index (a first build, another Python, other memory folders): it knows no card,
        # so nothing may be concluded from its silence (no rule file removed, no session's
        # start counted as done).
        self.building = False
        # True when answering before the per-file freshness check (a large store's deferred
        # check, a stored index answering while a child rebuilds): a row's key may name
        # content its file no longer holds.
        self.unchecked = False

    def meta(self, key: str) -> Any:
        if key not in self._meta:
            found = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            self._meta[key] = marshal.loads(found[0]) if found else None
        return self._meta[key]

    # --- what the router and the hook read ---------------------------------------------
    @property
    def active(self) -> list[int]:
        """Slots holding a routable card, in dependency order."""
        return self.meta("order") or []

    def active_set(self) -> set[int]:
        if self._active is None:
            self._active = set(self.active)
        return self._active

    def row(self, slot: int) -> Row:
        """The light row of a card (fields by name; KeyError for an empty slot)."""
        if slot not in self._rows:
            found = self.db.execute("SELECT row, secret FROM cards WHERE slot = ?",
                                    (slot,)).fetchone()
            self._keep(slot, *(found or (None, 0)))
        row = self._rows[slot]
        if row is None:
            raise KeyError(slot)
        return row

    def rows(self, slots: Iterable[int]) -> None:
        """Fetch many rows at once (one query) into the memo."""
        wanted = [s for s in slots if s not in self._rows]
        for slot, blob, secret in self._where_in(
                "SELECT slot, row, secret FROM cards WHERE slot IN ({})", wanted):
            self._keep(slot, blob, secret)

    def _where_in(self, query: str, keys: list[Any]) -> Iterator[Any]:
        """The rows `query` gives for all of `keys`, its `{}` the IN list's placeholders: 500
        keys a statement, under SQLite's cap on the variables of one."""
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            yield from self.db.execute(query.format(",".join("?" * len(chunk))), chunk)

    def _keep(self, slot: int, blob: bytes | None, secret: int) -> None:
        self._rows[slot] = Row(marshal.loads(blob)) if blob else None
        if secret:
            self._secret.add(slot)

    def holds_secret(self, slot: int) -> bool:
        """Did the compiler find a secret in the content the card's row names? Asked of the
        row itself, read in one statement with its content hash: the meta's `secret_slots`
        may be from an earlier snapshot than a row a concurrent refresh wrote since (each
        statement reads the latest commit), and the body check trusts the row's hash."""
        self.row(slot)
        return slot in self._secret

    def slot_of(self, card_id: str) -> int | None:
        return (self.meta("ids") or {}).get(card_id)

    def body(self, slot: int) -> str:
        """The body of the content this index holds for the card: read from its file by offset
        while the file still holds that content, else the stored copy (never text from other
        content at the old offsets). The hook sends bodies through `current_body`."""
        body, _raw = self.current_body(slot)
        return body if body is not None else self._stored_body(slot)

    def _stored_body(self, slot: int) -> str:
        found = self.db.execute("SELECT card FROM cards WHERE slot = ?", (slot,)).fetchone()
        stored: str = marshal.loads(found[0])[K_BODY]
        return stored

    def unchanged(self, slot: int) -> bool:
        """Whether the card's file still holds the content its row describes."""
        try:
            with open(self.row(slot).path, "rb") as handle:
                raw = handle.read(_MAX_READ)
        except OSError:
            return False
        import xxhash

        return xxhash.xxh64_hexdigest(raw) == self.row(slot).hash

    def current_body(self, slot: int) -> tuple[str | None, bytes | None]:
        """(body, None) when the card's file still holds the content its key names (the
        xxhash recorded at compile time), else (None, the file's bytes now; None when it
        cannot be read). The offsets and the secret verdict are only valid for that content:
        a store answered from a deferred or backgrounded check, or edited in a race, may hold
        other text at those offsets by now."""
        row = self.row(slot)
        try:
            with open(row.path, "rb") as handle:
                raw = handle.read(_MAX_READ)
        except OSError:
            return None, None
        import xxhash

        if xxhash.xxh64_hexdigest(raw) != row.hash:
            return None, raw
        start, end = row.body_span
        if start >= 0:
            try:
                body = raw.decode("utf-8").replace("\r\n", "\n")[start:end]
            except UnicodeDecodeError:
                body = ""
            if len(body) == end - start:
                return body, None
        return self._stored_body(slot), None

    def postings(self, term: str) -> tuple[memoryview[int], memoryview[int]]:
        """(slots, keys) for a term, most relevant first: impact and field code are
        `65535 - key` split as `impact << 2 | field` (see `_posting_key`). Read-only views
        over the stored bytes, cast like `array("I")`/`array("H")` (native unsigned int and
        short, the layout `engram.postings` writes): importing `array` would import
        `collections` on every hook call."""
        cached = self._postings.get(term)
        if cached is not None:
            return cached
        found = self.db.execute("SELECT slots, keys, heads FROM postings WHERE term = ?",
                                (term,)).fetchone()
        if found:
            slots, keys = _unsigned(found[0], "I"), _unsigned(found[1], "H")
            self._heads[term] = found[2] or 0
        else:
            slots, keys = _unsigned(b"", "I"), _unsigned(b"", "H")
        # Explaining the selected cards reads the same postings again.
        self._postings[term] = (slots, keys)
        return slots, keys

    def field_of(self, term: str, slot: int) -> int:
        """The field code (0-3, see `_posting_key`) of `slot`'s posting for `term`, which it
        must hold. A memoryview has no `index`: the slots are listed once per term, not once
        per card explained."""
        listed = self._positions.get(term)
        if listed is None:
            listed = self._positions[term] = self.postings(term)[0].tolist()
        return (65535 - self.postings(term)[1][listed.index(slot)]) & 3

    def term_slots(self, terms: list[str]) -> dict[str, memoryview[int]]:
        """term -> the slots of its postings, for the terms the index knows (one query for all
        of them): a prompt's head phrases, a touched file's code names (engram.code_names)."""
        return {term: _unsigned(blob, "I") for term, blob in self._where_in(
            "SELECT term, slots FROM postings WHERE term IN ({})", terms)}

    def head_count(self, term: str) -> int:
        """How many cards hold `term` in their head (title, tags, card line); read with the
        term's postings."""
        return self._heads.get(term, 0)

    def head_sizes(self, slots: Iterable[int]) -> dict[int, int]:
        """slot -> how many distinct terms its head (title and id, tags, card line) holds."""
        return dict(self._where_in("SELECT slot, size FROM heads WHERE slot IN ({})",
                                   list(slots)))

    def tags_for(self, term: str) -> list[tuple[int, str, tuple[str, ...]]]:
        """(slot, tag, tag terms) of the tags whose first term is `term`."""
        return [(slot, tag, tuple(terms.split(" "))) for slot, tag, terms in self.db.execute(
            "SELECT slot, tag, terms FROM tags WHERE term = ?", (term,))]

    def compiled_glob(self, glob_index: int) -> Any:
        """The compiled regex of a glob stored as one (a `[...]` class: engram.glob_match)."""
        pattern = self._regex.get(glob_index)
        if pattern is None:
            import re

            pattern = self._regex[glob_index] = re.compile(self.meta("globs")[glob_index][1])
        return pattern

    # --- whole cards and problems -------------------------------------------------------
    @property
    def problems(self) -> list[Problem]:
        return [problem_from_tuple(p) for p in self.meta("problems") or []]

    @property
    def error_count(self) -> int:
        return int(self.meta("errors") or 0)

    def card(self, slot: int) -> Card:
        cached = self._cards.get(slot)
        if cached is None:
            row = self.row(slot)
            cached = self._cards[slot] = _card_of(row, self.body(slot))
        return cached

    def judged_cards(self, slots: Iterable[int]) -> list[tuple[Card, bool]]:
        """(card, whether the compiler found a secret in it) per slot, each pair from one read
        of its row: the stored copy of the content the compiler judged, with that verdict. No
        file is read and no other statement is trusted: the meta's `secret_slots`, a row read
        earlier or a stored body read later may each come from another commit (each statement
        reads the latest), and a verdict holds only for the content it was given for."""
        wanted = list(slots)
        found: dict[int, tuple[Card, bool]] = {}
        for slot, blob, stored, secret in self._where_in(
                "SELECT slot, row, card, secret FROM cards WHERE slot IN ({})", wanted):
            if blob and stored:
                found[slot] = (_card_of(Row(marshal.loads(blob)), marshal.loads(stored)[K_BODY]),
                               bool(secret))
        return [found[slot] for slot in wanted if slot in found]

    def all_cards(self) -> list[Card]:
        self.rows(self.active)
        return [self.card(slot) for slot in self.active]


class _MetaView:
    """`index.data[key]`: the stored derived values, read on first use."""

    def __init__(self, index: CompiledIndex) -> None:
        self._index = index

    def __getitem__(self, key: str) -> Any:
        value = self._index.meta(key)
        if value is None and key in ("always", "secret_slots", "order", "globs"):
            return []
        if value is None and key in ("buckets", "ids"):
            return {}
        return value

    def get(self, key: str, default: Any = None) -> Any:
        value = self._index.meta(key)
        return default if value is None else value


def index_path(workspace_key: str) -> str:
    return os.path.join(paths.state_dir_str(), "index", f"{workspace_key}.sqlite")


def _set_aside(path: str, reason: str) -> None:
    from engram import log

    for suffix in ("", "-wal", "-shm"):
        try:
            os.replace(path + suffix, path + ".corrupt" + suffix)
            # It holds every card's text: one an older engram left readable by all (set aside
            # at an upgrade, before a refresh made it private) must not stay so.
            os.chmod(path + ".corrupt" + suffix, 0o600)
        except OSError:
            pass
    log.note(f"index {os.path.basename(path)} set aside and rebuilt: {reason}")


_connections: list[Any] = []
# A connection `_load_deferred` opened and found the deferral not to apply, for `_load`.
_opened: dict[str, Any] = {}


def close_connections() -> None:
    """Close every database this process opened: SQLite connections must not cross a fork
    (the child would share the parent's lock bookkeeping), and a hook process ends without
    the interpreter's teardown (engram.hook_entry.leave)."""
    _opened.clear()
    while _connections:
        try:
            _connections.pop().close()
        except Exception:  # noqa: BLE001
            pass


def _connect(path: str) -> Any:
    sqlite3 = _driver()

    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                         check_same_thread=False)
    _connections.append(db)
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    # The index holds card text, a blocked card's secret too: a row deleted or rewritten must
    # not leave its bytes in the file's free pages once the user took the secret out of the
    # card. Debian's SQLite zeroes them by default; python.org's and most other builds do not.
    db.execute("PRAGMA secure_delete = ON")
    return db


_SQLITE_MAGIC: Final = b"SQLite format 3\x00"


def _has_foreign_header(path: str) -> bool:
    """A file that is not an SQLite database at all (overwritten, truncated to garbage): caught
    with one 16-byte read, before SQLite would serve pages from a stale write-ahead log."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
    except OSError:
        return False
    return bool(head) and head != _SQLITE_MAGIC


def _card_of(row: Row, body: str) -> Card:
    """The card of a light row (its body span blanked) with its body."""
    return card_from_tuple(row[:C_BODY_SPAN] + ("",) + row[C_BODY_SPAN + 1:], body)


def _unsigned(blob: bytes, code: Literal["I", "H"]) -> memoryview[int]:
    """A stored packed array as a read-only sequence of ints (`code` as in `array`)."""
    return memoryview(blob).cast(code)


def _driver() -> Any:
    """The SQLite driver: its C module alone where it exists. The `sqlite3` package around it
    imports `datetime` (about 1 ms of every hook process) for date adapters engram never uses;
    the connection, cursor and exception classes are the same objects."""
    try:
        return _import_sqlite_c_module()
    except ImportError:  # an interpreter that ships the driver differently
        import sqlite3

        return sqlite3


def _import_sqlite_c_module() -> Any:
    """`_sqlite3`, without `functools` when nothing has imported it yet. The C module (3.10 to
    3.13) imports `functools` only to wrap its statement cache in `lru_cache`, and `functools`
    imports `collections`: together a quarter of a bare interpreter's start, paid by every hook
    call for one decorator. `_functools._lru_cache_wrapper` is the C function `lru_cache`
    returns, so the module gets the same cache from a stand-in holding just that; the stand-in
    leaves `sys.modules` at once, and a later `import functools` loads the real module."""
    import sys

    if "_sqlite3" in sys.modules or "functools" in sys.modules:
        import _sqlite3

        return _sqlite3
    try:
        from _functools import _lru_cache_wrapper  # type: ignore[import-not-found]
    except ImportError:
        import _sqlite3

        return _sqlite3

    def lru_cache(maxsize: int | None = 128, typed: bool = False) -> Any:
        def wrap(function: Any) -> Any:
            return _lru_cache_wrapper(function, maxsize, typed, tuple)
        return wrap

    stand_in = type(sys)("functools")
    stand_in.lru_cache = lru_cache  # type: ignore[attr-defined]
    sys.modules["functools"] = stand_in
    try:
        import _sqlite3
    except Exception:  # noqa: BLE001 - a driver that wants more of functools gets all of it
        sys.modules.pop("_sqlite3", None)
        if sys.modules.get("functools") is stand_in:
            del sys.modules["functools"]
        import _sqlite3
    finally:
        if sys.modules.get("functools") is stand_in:
            del sys.modules["functools"]
    return _sqlite3


def _create_private(path: str) -> None:
    """Create the database file readable by its owner alone: it holds every card's text,
    the ones a secret keeps from delivery too, and a card file its owner keeps private must
    not become readable by everyone here (SQLite gives its -wal and -shm files the
    database's mode)."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError:
        pass  # connect() reports what is wrong with the folder


def _make_private(path: str) -> None:
    """An index an older engram created readable by all: made owner-only when it is next
    refreshed (not on every call: the hook's path costs one stat less)."""
    for name in (path, path + "-wal", path + "-shm"):
        try:
            if os.stat(name).st_mode & 0o077:
                os.chmod(name, 0o600)
        except OSError:
            pass


def _open(path: str) -> Any:
    """An open database with engram's schema; a file that is not one is set aside."""
    sqlite3 = _driver()

    if _has_foreign_header(path):
        _set_aside(path, "not an SQLite database")
    try:
        existed = os.path.exists(path)
        if not existed:
            _create_private(path)
        db = _connect(path)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != INDEX_FORMAT:
            db.close()
            if existed:  # not the empty database connect() just created
                _set_aside(path, f"format {version} is not {INDEX_FORMAT}")
            db = _connect(path)
            db.execute("PRAGMA journal_mode = WAL")
            db.executescript(_SCHEMA)
            db.execute(f"PRAGMA user_version = {INDEX_FORMAT}")
        return db
    except sqlite3.DatabaseError as exc:
        _set_aside(path, f"{type(exc).__name__}")
        db = _connect(path)
        db.execute("PRAGMA journal_mode = WAL")
        db.executescript(_SCHEMA)
        db.execute(f"PRAGMA user_version = {INDEX_FORMAT}")
        return db


def _memory_db() -> Any:
    """A throw-away index when the state dir cannot hold one: slower, never wrong."""
    sqlite3 = _driver()

    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    db.executescript(_SCHEMA)
    db.execute(f"PRAGMA user_version = {INDEX_FORMAT}")
    return db


def _is_fresh(meta: dict[str, Any], roots_sig: list[Any], found: list[Any],
              scan_problems: list[Problem]) -> bool:
    if meta.get("py") != PY_TAG or meta.get("roots") != roots_sig:
        return False
    # Path, root, mtime and size of every file, in scan order, as the compiler stored them.
    paths, roots, mtimes, sizes = zip(*found, strict=True) if found else ((), (), (), ())
    racy = meta.get("racy")
    if racy:
        stored = _racy_mtimes(racy, paths, mtimes, sizes)
        if stored is None:
            return False
        mtimes = stored
    if meta.get("stat_sig") != stat_signature(paths, roots, mtimes, sizes):
        return False
    if any(os.access(path, os.R_OK) for path in meta.get("stat_retry") or ()):
        return False  # unreadable when compiled, readable now
    return [problem_tuple(p) for p in scan_problems] == meta.get("scan_problems")


def _racy_mtimes(racy: dict[str, tuple[int, int, str]], paths: tuple[str, ...],
                 mtimes: tuple[int, ...], sizes: tuple[int, ...]) -> tuple[int, ...] | None:
    """The mtimes as the compiler stored them: SMUDGED for each file it read within its
    stamp's tick (`index_rows.RACY_NS`) that still has the stat and the bytes it read then;
    any other stat or content stays as found, and so fails the comparison. None when more than
    RACY_SETTLE of them are old enough by now to be stored with their stamps (a refresh does)."""
    import time

    import xxhash

    now = time.time_ns()
    stored = list(mtimes)
    settled = 0
    for position, path in enumerate(paths):
        known = racy.get(path)
        if known is None or known[0] != mtimes[position] or known[1] != sizes[position]:
            continue
        try:
            with open(path, "rb") as handle:
                raw = handle.read(_MAX_READ)
        except OSError:
            continue
        if xxhash.xxh64_hexdigest(raw) == known[2]:
            stored[position] = index_rows.SMUDGED
            settled += abs(known[0] - now) > index_rows.RACY_NS
    return None if settled > index_rows.RACY_SETTLE else tuple(stored)


def _scan(roots: list[tuple[str, str]], follow: bool, allowed_parents: tuple[str, ...],
          folders: dict[str, int] | None = None) -> tuple[list[Any], list[Problem]]:
    """store.scan for an index. `allowed_parents` is the workspace folder when the roots are a
    workspace's (load_or_build) and empty for explicit roots (`--root`), whose workspace the
    scan finds upward itself."""
    from engram import store

    return store.scan(roots, follow, allowed_parents, folders,
                      workspace=allowed_parents[0] if allowed_parents else None)


def check(db_or_path: Any, roots: list[tuple[str, str]], follow_symlinks: bool = False,
          allowed_parents: tuple[str, ...] = ()) -> bool:
    """The freshness check alone: True when the stored index still describes every card file
    under `roots` (stat only; nothing is read or parsed)."""
    db = _open(db_or_path) if isinstance(db_or_path, str) else db_or_path
    meta = read_meta(db, ("py", "roots", "stat_sig", "stat_retry", "racy", "scan_problems"))
    found, scan_problems = _scan(roots, follow_symlinks, allowed_parents)
    return _is_fresh(meta, roots_signature(roots, follow_symlinks), found, scan_problems)


def roots_of(workspace: "Workspace") -> list[tuple[str, str]]:
    return [(root.location, root.scope) for root in workspace.roots]


# Stores this large check freshness after the answer (see load_or_build(defer=True)): listing
# every folder and stating every card file is ~14M instructions at 1,000 cards, half of what
# the rest of a hook call does once it is imported, and grows with the store; from 500 cards
# the detached check costs the host less than waiting for it. What it costs: a card edited
# in place (no folder mtime changes) is routed on its new text from the next call on, while a
# body is never sent stale (its bytes are checked against its key before it is sent), nor
# listed as already loaded once edited (`CompiledIndex.unchecked`: those files are read).
DEFER_MIN_FILES: Final = paths.env_int("ENGRAM_DEFER_MIN_FILES", 500)
_deferred: list[tuple[str, list[tuple[str, str]], bool, tuple[str, ...]]] = []


def _folders_unchanged(folders: dict[str, int] | None) -> bool:
    """Every folder of the store still has its recorded mtime: no card file was added,
    removed or renamed into place (editors' atomic saves rename)."""
    if not folders:
        return False
    stat = os.stat
    try:
        return all(stat(folder).st_mtime_ns == mtime for folder, mtime in folders.items())
    except OSError:
        return False


def _load_deferred(path: str, roots: list[tuple[str, str]], follow: bool,
                   allowed_parents: tuple[str, ...]) -> CompiledIndex | None:
    """The stored index without the per-file freshness check, for a large store whose folders
    are unchanged; the full check is queued for `finish_deferred` after the answer. None when
    the full path must run now."""
    sqlite3 = _driver()

    try:
        db = _open(path)
        meta = read_meta(db, ("py", "roots", "folders", "files", "scan_problems", "order",
                               "always", "secret_slots"))
    except (sqlite3.Error, OSError):
        return None
    if meta.get("py") != PY_TAG or meta.get("roots") != roots_signature(roots, follow) \
            or (meta.get("files") or 0) < DEFER_MIN_FILES or meta.get("scan_problems") \
            or not _folders_unchanged(meta.get("folders")):
        # The full path runs next on this same file: hand it the open connection (opening a
        # WAL database creates its -wal and -shm files; closing the last connection removes them).
        _opened[path] = db
        return None
    _deferred.append((path, roots, follow, allowed_parents))
    stored = CompiledIndex(db, meta)
    stored.unchecked = True
    return stored


def finish_deferred() -> None:
    """Run the freshness checks deferred by this process's hook call (refreshing the index if
    a card changed in place), in a detached child process where fork exists, so the host is
    not kept waiting: the answer is already written."""
    if not _deferred:
        return
    pending = list(_deferred)
    _deferred.clear()
    close_connections()  # the answer is written: this process is done with the index
    fork = getattr(os, "fork", None)
    pid = -1
    if fork is not None:
        try:
            pid = fork()
        except OSError:
            pid = -1
        if pid > 0:
            return  # the parent: done; the child finishes the check
    try:
        if pid == 0:
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
        for path, roots, follow, allowed_parents in pending:
            _load_healing(path, roots, follow, allowed_parents)
    except Exception:  # noqa: BLE001 - a background check never reports into the host
        pass
    finally:
        if pid == 0:
            os._exit(0)


# More changed card files than this are parsed in a detached child when a hook asks
# (`background=True`): at ~5 ms a card, a first build of a large store or a checkout that
# rewrote thousands of cards would outlast the host's hook timeout, be killed, roll back, and
# start over on every call.
BACKGROUND_MIN_CHANGES: Final = paths.env_int("ENGRAM_BACKGROUND_MIN_CHANGES", 300)
# A first build (nothing stored for these roots) of up to this many card files runs within the
# hook call, so the first session on a fresh clone gets its memory (~1-2 s at 2,000 cards).
FIRST_BUILD_MAX: Final = paths.env_int("ENGRAM_FIRST_BUILD_MAX", 2000)


def _changed_count(meta: dict[str, Any], found: list[Any]) -> int:
    stats = meta.get("stat") or {}
    # A file stored with no stamp (read within its tick) and the stat it had then is read
    # again and, the same bytes, not parsed: no change to count (a checkout of many cards
    # built at once is not rebuilt in the background when its stamps are stored).
    racy = meta.get("racy") or {}
    changed = 0
    for entry in found:
        known = stats.get(entry.path)
        if known is None:
            changed += 1
        elif known[1] != entry.mtime_ns or known[2] != entry.size:
            changed += racy.get(entry.path, ())[:2] != (entry.mtime_ns, entry.size)
    return changed + max(len(stats) - len(found), 0)


def _refresh_in_background(path: str, roots: list[tuple[str, str]], follow: bool,
                           allowed_parents: tuple[str, ...]) -> bool:
    """Fork a detached child that brings the index up to date; False where fork is missing."""
    fork = getattr(os, "fork", None)
    if fork is None:
        return False
    try:
        pid = fork()
    except OSError:
        return False
    if pid > 0:
        return True
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        from engram import fileio

        # One builder at a time: hooks fired during a long build leave it to the first.
        with fileio.exclusive_lock(path + ".build", timeout=0.0):
            _load_healing(path, roots, follow, allowed_parents)
    except Exception:  # noqa: BLE001 - nobody to report to; the next call tries again
        pass
    finally:
        os._exit(0)


def _load(path: str, roots: list[tuple[str, str]], follow: bool,
          allowed_parents: tuple[str, ...], background: bool = False) -> CompiledIndex:
    sqlite3 = _driver()

    roots_sig = roots_signature(roots, follow)
    folders: dict[str, int] = {}
    found, scan_problems = _scan(roots, follow, allowed_parents, folders)
    try:
        db = _opened.pop(path, None) or _open(path)
        meta = read_meta(db, ("py", "roots", "stat_sig", "stat_retry", "racy", "scan_problems",
                               "order", "always", "secret_slots", "folders"))
    except (sqlite3.Error, OSError) as exc:
        if is_damage(exc):
            raise  # load_or_build sets the file aside and builds afresh
        from engram import log

        log.note(f"index {os.path.basename(path)} unusable ({type(exc).__name__}); "
                 "routing from memory")
        db, meta = _memory_db(), {}
    if _is_fresh(meta, roots_sig, found, scan_problems):
        if meta.get("folders") != folders:  # a non-card file came or went: keep deferral usable
            try:
                write_meta(db, {"folders": folders, "files": len(found)})
            except sqlite3.Error:
                pass
        return CompiledIndex(db, meta)
    # A whole build: nothing is stored for this Python and these roots (a fresh clone, a
    # Python upgrade, a memory folder added or removed). Every card file then counts as
    # changed, whatever the old stats say, since the build parses them all.
    first = meta.get("py") != PY_TAG or meta.get("roots") != roots_sig
    if background and not first:
        meta.update(read_meta(db, ("stat",)))  # per file, for _changed_count
    if background and _changed_count(meta, found) > (
            FIRST_BUILD_MAX if first else BACKGROUND_MIN_CHANGES):
        close_connections()
        if _refresh_in_background(path, roots, follow, allowed_parents):
            from engram import log

            log.note(f"index {os.path.basename(path)}: {len(found)} card files, "
                     f"{'none indexed for this Python and these memory folders' if first else 'many changed'}; "
                     "refreshing in the background, answering from "
                     f"{'no memory' if first else 'the stored index'} meanwhile")
            if not first:
                stored = CompiledIndex(_open(path), meta)
                stored.unchecked = True
                return stored
            # Nothing usable is stored: answer from nothing until the child is done.
            placeholder = CompiledIndex(_memory_db(), {})
            placeholder.building = True
            return placeholder
        db = _open(path)
    from engram import index_compile

    try:
        _begin_write(db)
        # Another process may have refreshed while this one waited for the write lock.
        meta = read_meta(db, ("py", "roots", "stat", "stat_sig", "stat_retry", "racy",
                               "scan_problems", "avg_used"))
        if not _is_fresh(meta, roots_sig, found, scan_problems):
            _make_private(path)
            index_compile.refresh(db, roots, follow, found, scan_problems, meta)
        write_meta(db, {"folders": folders, "files": len(found)})
        db.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        # A read-only or full state dir costs speed, never correctness: route from memory.
        try:
            db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        from engram import log

        log.note(f"index {os.path.basename(path)} not writable ({type(exc).__name__}); "
                 "routing from memory")
        db = _memory_db()
        db.execute("BEGIN")
        index_compile.refresh(db, roots, follow, found, scan_problems, {})
        db.execute("COMMIT")
    return CompiledIndex(db, {})


def _begin_write(db: Any) -> None:
    """Take the write lock, waiting no longer than the call's lock-wait budget allows (a hook
    shares one budget between this and the delivery cache's lock), and count the wait."""
    import time

    from engram.fileio import is_wait_budgeted, spend_wait, wait_left

    busy = wait_left(BUSY_TIMEOUT_MS / 1000)
    if is_wait_budgeted():
        # A hook: the delivery cache's lock keeps its whole wait (it records what was sent);
        # past this, the index is refreshed in memory for this call instead.
        busy = min(busy, HOOK_WRITE_WAIT)
    db.execute(f"PRAGMA busy_timeout = {int(busy * 1000)}")
    started = time.monotonic()
    try:
        db.execute("BEGIN IMMEDIATE")
    finally:
        spend_wait(time.monotonic() - started)
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def is_damage(exc: BaseException) -> bool:
    """Does `exc` say the index file's contents are damaged (torn pages, a missing table, a
    value that does not unmarshal or has the wrong shape), rather than locked, read-only or
    full? Damage is not transient: the file is set aside and rebuilt, or every later call
    would fail the same way."""
    sqlite3 = _driver()

    if isinstance(exc, sqlite3.OperationalError):
        return str(exc).startswith(("no such table", "no such column"))
    return isinstance(exc, (sqlite3.DatabaseError, ValueError, EOFError, TypeError, KeyError,
                            IndexError, AttributeError))


def _load_healing(path: str, roots: list[tuple[str, str]], follow: bool,
                  allowed_parents: tuple[str, ...], background: bool = False) -> CompiledIndex:
    try:
        return _load(path, roots, follow, allowed_parents, background)
    except Exception as exc:  # noqa: BLE001 - only damage is retried
        if not is_damage(exc):
            raise
        _set_aside(path, f"damaged ({type(exc).__name__})")
        return _load(path, roots, follow, allowed_parents)


def workspace_index_path(workspace: "Workspace") -> str:
    roots = roots_of(workspace)
    explicit = any(root.scope == "explicit" for root in workspace.roots)
    return index_path(workspace.key + ("-" + _roots_hash(roots) if explicit else ""))


def set_aside(workspace: "Workspace", reason: str) -> None:
    """Set the workspace's index aside (damage found while reading it); the next load builds
    a new one."""
    _set_aside(workspace_index_path(workspace), reason)


def load_or_build(workspace: "Workspace", defer: bool = False) -> CompiledIndex:
    """The workspace's index, refreshed against the files on disk and saved when it changed.

    `defer=True` (the hook process): for a store of DEFER_MIN_FILES cards or more whose
    folders are unchanged, use the stored index now and check every file after the answer
    (`finish_deferred`); an edit made in place, which changes no folder, then reaches the next
    hook call. With `defer=True`, more than BACKGROUND_MIN_CHANGES changed card files are
    parsed in a detached child while this call answers from what is stored (or with nothing,
    the first time), so a long build never outlasts the host's hook timeout."""
    follow = bool(workspace.settings.get("security.follow_symlinks"))
    path, roots = workspace_index_path(workspace), roots_of(workspace)
    if defer:
        loaded = _load_deferred(path, roots, follow, (workspace.location,))
        if loaded is not None:
            return loaded
    return _load_healing(path, roots, follow, (workspace.location,), background=defer)


def load_roots(roots: "list[Path]", follow_symlinks: bool = False) -> CompiledIndex:
    """An index over explicit roots (`--root`), cached under a name derived from them."""
    pairs = [(os.path.realpath(os.fspath(p)), "explicit") for p in roots]
    return _load_healing(index_path("roots-" + _roots_hash(pairs)), pairs, follow_symlinks, ())


def _roots_hash(roots: list[tuple[str, str]]) -> str:
    import xxhash

    return xxhash.xxh64_hexdigest(repr(roots).encode("utf-8", "surrogatepass"))[:12]


def load_cards(workspace: "Workspace") -> tuple[list[Card], list[Problem]]:
    """The workspace's routable cards and every problem found, via the compiled index."""
    compiled = load_or_build(workspace)
    return compiled.all_cards(), list(compiled.problems)
