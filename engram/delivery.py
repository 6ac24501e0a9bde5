"""The delivery cache: per (host, workspace root, session[#agent:<id>]) which memory keys
(id@hash) were delivered, and what the session's last prompt routed. It never holds prompt
text or bodies.

Pure functions over the cache document, one transaction that holds the lock while a hook
reads, decides and writes (steps 5-8 of a hook call), and the two small per-session files
that tie a session's records in several workspaces together: its reset marker and its list
of workspaces."""

from __future__ import annotations

import os
import time

from engram import fileio, json_accel, log, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

CACHE_VERSION: Final = 1
TTL_SECONDS: Final = 7 * 24 * 3600
MAX_SESSIONS: Final = 200
MAX_SUBAGENTS: Final = 100
MAX_CACHE_BYTES: Final = 32 * 1024 * 1024
LOCK_TIMEOUT: Final = 4.0  # well under every host's 10 s hook timeout
# ENGRAM_LOCK_TIMEOUT (seconds) shortens or lengthens the wait: tests that hold the lock on
# purpose need not sit out 4 s, and a slow shared machine can wait longer. Clamped to
# (0, MAX_LOCK_TIMEOUT] so a typo cannot outlast the host's own timeout.
MAX_LOCK_TIMEOUT: Final = 9.0
# A record the TTL or the cap takes out of a workspace's cache (read on every call, so kept
# small) is set aside in `delivery/evicted/`, one small file per record, and brought back
# when that session calls again: a session resumed weeks later (Claude Code `--resume`,
# Codex `resume`, Gemini CLI `--resume`) holds every body it was sent in its history. Kept
# for EVICTED_MAX_AGE after the record's last use (Claude Code deletes a session's transcript
# after 30 days by default, and with it the way to resume it), at most MAX_EVICTED of them
# (the least recently used go first: a lost record costs a second copy, never a loss).
EVICTED_MAX_AGE: Final = 30 * 24 * 3600
MAX_EVICTED: Final = 2000
MAX_EVICTED_BYTES: Final = 1024 * 1024
# Reset markers outlive every record they may speak for: a record is trusted up to
# EVICTED_MAX_AGE after its last use, and a reset after that use is stamped later still.
# The extra day covers a reset stamped while a call that had read the old stamp was
# recording.
MARKER_MAX_AGE: Final = EVICTED_MAX_AGE + 24 * 3600


def lock_timeout() -> float:
    """The delivery lock's wait: ENGRAM_LOCK_TIMEOUT when it is a positive number, else
    LOCK_TIMEOUT; never more than MAX_LOCK_TIMEOUT."""
    raw = os.environ.get("ENGRAM_LOCK_TIMEOUT")
    if raw:
        try:
            value = float(raw)
        except ValueError:
            return LOCK_TIMEOUT
        if value > 0:
            return min(value, MAX_LOCK_TIMEOUT)
    return LOCK_TIMEOUT


def empty_document() -> dict[str, Any]:
    return {"version": CACHE_VERSION, "entries": {}}


def new_entry(host: str, cwd: str, session: str, agent: str, now: float) -> dict[str, Any]:
    return {"host": host, "cwd": cwd, "session": session, "agent": agent, "delivered": [],
            "last_routed": [], "start_done": False, "created": now, "updated": now,
            "view_keys": True}


def entry_for(document: dict[str, Any], key: str, host: str, cwd: str, session: str,
              agent: str, now: float) -> dict[str, Any]:
    """The session's record here: the cache's, else the one its eviction set aside, else a
    new one."""
    entries = document["entries"]
    entry: dict[str, Any] | None = entries.get(key)
    if entry is None or not trusted(entry, now):
        entry = entries[key] = restore(key, now) or new_entry(host, cwd, session, agent, now)
    return entry


# The time records are dated, aged and swept by is the wall clock, never earlier than the
# latest time a call has read from it: the mtime of `delivery/clock`, moved forward at most
# once a TOUCH_SECONDS. A clock set ahead and then right, or set back, would otherwise make
# a record used before a sweep look young again when the marker of a reset it had not
# applied was swept by the later clock (a loss), or stamp a reset earlier than the one a
# record last applied, whose marker is swept (so the new reset is not applied: a loss).
# With it, time stands still while the wall clock is behind: records keep their age, and
# a record used before a sweep by a clock that ran ahead is as old as that clock made it.
def clock() -> float:
    """Now, as delivery records are dated: the wall clock, or the latest time seen if that
    is later. A call reads it once (one stat; a write at most once a minute)."""
    path = _clock_path()
    wall = time.time()
    try:
        seen = os.stat(path).st_mtime
    except OSError:
        seen = 0.0
    if wall - seen > TOUCH_SECONDS:
        _advance_clock(path, wall)
        return wall
    return max(wall, seen)


def _clock_path() -> str:
    return os.path.join(paths.state_dir_str(), "delivery", "clock")


def _advance_clock(path: str, now: float) -> None:
    try:
        if os.stat(path).st_mtime >= now:
            return
    except OSError:
        pass
    try:
        _stamp(path, int(now * 1e9))
    except OSError:
        pass  # not kept: the wall clock is all there is, as before


def _stamp(path: str, ns: int) -> None:
    """Create the empty file `path` if need be and set its mtime to `ns`."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.utime(fd if os.utime in os.supports_fd else path, ns=(ns, ns))
    finally:
        os.close(fd)


def _clock_ns() -> int:
    """The latest time seen (ns), 0 when none."""
    try:
        return os.stat(_clock_path()).st_mtime_ns
    except OSError:
        return 0


def trusted(entry: dict[str, Any], now: float) -> bool:
    """Whether the record can still speak for its session's context: used within
    EVICTED_MAX_AGE, so every reset since then still has its marker."""
    return now - float(entry.get("updated", 0)) <= EVICTED_MAX_AGE


def _evicted_path(key: str) -> str:
    return os.path.join(paths.state_dir_str(), "delivery", "evicted", paths.workspace_key(key))


def set_aside(evicted: dict[str, dict[str, Any]]) -> None:
    """Keep the records `prune` evicted, each under its cache key, dated by its last use.
    A record that cannot be kept is a second copy later, not an error now."""
    for key, entry in evicted.items():
        path = _evicted_path(key)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fileio.atomic_write_text(path, _serialize({"key": key, "entry": entry}),
                                     mode=0o600, durable=False)
            updated = float(entry.get("updated", 0))
            os.utime(path, (updated, updated))
        except (OSError, ValueError, OverflowError):
            continue


def restore(key: str, now: float) -> dict[str, Any] | None:
    """The record evicted under `key`, used now, or None when there is none, or it is
    damaged or too old to trust. The file stays until the record is evicted again (which
    rewrites it) or swept: a call that fails after this loses nothing."""
    path = _evicted_path(key)
    try:
        raw = fileio.read_bounded(path, MAX_EVICTED_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, fileio.NotRegularFile, fileio.FileTooLarge):
        return None
    try:
        kept = json_accel.loads(raw)
    except (ValueError, RecursionError):
        kept = None
    if not isinstance(kept, dict) or kept.get("key") != key:
        return None
    entry = kept.get("entry")
    if not isinstance(entry, dict) \
            or not is_valid({"version": CACHE_VERSION, "entries": {key: entry}}) \
            or not trusted(entry, now):
        return None
    valid: dict[str, Any] = entry
    valid["updated"] = now  # used now: the least recently used go first, not this one
    return valid


TOUCH_SECONDS: Final = 60.0


def touch(entry: dict[str, Any], now: float) -> None:
    """Refresh the entry's age for the TTL, coarsely, so an unchanged entry is not rewritten
    on every call."""
    if now - float(entry.get("updated", 0)) > TOUCH_SECONDS:
        entry["updated"] = now


def reset(entry: dict[str, Any], now: float) -> None:
    entry["delivered"] = []
    entry["start_done"] = False
    entry.pop("start_always", None)
    # What a resumed history would drop was sent before the reset, and is gone with it: a
    # body sent again after the reset stays in a resumed history and must stay recorded.
    entry.pop("resume_drops", None)
    entry.pop("unconfirmed", None)
    entry.pop("unconfirmed_tools", None)
    entry["updated"] = now


# A session's context is one, but its records are many: one per workspace cache the session
# reached (the agent moved into a nested repository, or out of any workspace). A reset
# (compaction, /clear) reported from one folder stamps the session's marker; each record
# resets at its next call when the marker is newer than the last reset it applied.
def reset_marker(host: str, context_id: str) -> str:
    name = paths.workspace_key(f"{host}|{context_id}")
    return os.path.join(paths.state_dir_str(), "delivery", "resets", name)


def last_reset(host: str, context_id: str) -> int:
    """When the session was last reset, from any folder (ns; 0 when never)."""
    try:
        return os.stat(reset_marker(host, context_id)).st_mtime_ns
    except OSError:
        return 0


def announce_reset(host: str, context_id: str) -> int:
    """Stamp the session's reset marker; returns the stamp (ns), later than any before it."""
    # Later than every reset a record may have applied, even one whose marker was swept:
    # the marker is swept only once it is older than MARKER_MAX_AGE by the latest clock.
    stamp = max(time.time_ns(), last_reset(host, context_id) + 1, _clock_ns())
    _stamp(reset_marker(host, context_id), stamp)
    return stamp


def apply_reset(entry: dict[str, Any], stamp: int, now: float) -> bool:
    """Reset `entry` when the session's last reset (`stamp`) is newer than the one it has
    applied. True when it did."""
    if stamp <= int(entry.get("reset_at") or 0):
        return False
    if entry.get("delivered") or entry.get("start_done") or entry.get("resume_drops"):
        reset(entry, now)
    entry["reset_at"] = stamp
    return True


# The workspaces a session has records in, NUL-separated, appended as it reaches each: a
# card it was sent in one (a card of the user's global memory, or the same card vendored
# twice) is in its context in every other.
MAX_SESSION_BYTES: Final = 64 * 1024


def _session_file(host: str, context_id: str) -> str:
    name = paths.workspace_key(f"{host}|{context_id}")
    return os.path.join(paths.state_dir_str(), "delivery", "sessions", name)


def workspaces_of(host: str, context_id: str) -> list[str] | None:
    """The workspace roots where the session has records, in the order it reached them;
    None when the list is past its bound or not a file (then it is neither read nor grown)."""
    try:
        raw = fileio.read_bounded(_session_file(host, context_id), MAX_SESSION_BYTES)
    except FileNotFoundError:
        return []
    except (OSError, fileio.NotRegularFile, fileio.FileTooLarge):
        return None
    return list(dict.fromkeys(p for p in raw.decode("utf-8", "surrogateescape").split("\0") if p))


def join_workspace(host: str, context_id: str, location: str) -> None:
    path = _session_file(host, context_id)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
                 0o600)
    try:  # one short append: concurrent writers never interleave inside it
        os.write(fd, (location + "\0").encode("utf-8", "surrogateescape"))
    finally:
        os.close(fd)


def session_used(host: str, context_id: str, now: float) -> None:
    """Date the session's list of workspaces by its last use (the sweep keeps it while any
    record it ties together may be trusted), coarsely: at most once a TOUCH_SECONDS."""
    path = _session_file(host, context_id)
    try:
        if now - os.stat(path).st_mtime > TOUCH_SECONDS:
            os.utime(path, (now, now))
    except OSError:
        pass  # no list (a damaged one is left alone): nothing to keep


def peek_document(path: str) -> dict[str, Any]:
    """Another workspace's cache, read without its lock (it is only ever replaced whole);
    empty when missing or damaged (its own next call sets a damaged one aside)."""
    try:
        document = json_accel.loads(fileio.read_bounded(path, MAX_CACHE_BYTES))
    except (OSError, ValueError, RecursionError, fileio.NotRegularFile, fileio.FileTooLarge):
        return empty_document()
    return document if is_valid(document) else empty_document()


def sweep_reset_markers(now: float) -> None:
    """Drop reset markers and session lists older than any record they could speak for
    (a list lost costs second copies of a card met in two workspaces, a marker lost would
    lose what a reset took), and set-aside records past their age or count, oldest first.
    The clock is first moved to `now`: no record used before this sweep is trusted once the
    clock is older than what it swept."""
    _advance_clock(_clock_path(), now)
    for kind, max_age, cap in (("resets", MARKER_MAX_AGE, None), ("sessions", MARKER_MAX_AGE, None),
                               ("evicted", EVICTED_MAX_AGE, MAX_EVICTED)):
        folder = os.path.join(paths.state_dir_str(), "delivery", kind)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        kept: list[tuple[float, str]] = []
        for name in names:
            path = os.path.join(folder, name)
            try:
                mtime = os.stat(path).st_mtime
                if now - mtime > max_age:
                    os.unlink(path)
                else:
                    kept.append((mtime, path))
            except OSError:
                continue
        if cap is not None and len(kept) > cap:
            for _mtime, path in sorted(kept)[: len(kept) - cap]:
                try:
                    os.unlink(path)
                except OSError:
                    continue


def mark_delivered(entry: dict[str, Any], keys: list[str], now: float) -> None:
    """Record delivered keys; an older key of the same id (an edited card) is replaced."""
    if not keys:
        touch(entry, now)
        return
    new_ids = {key.split("@", 1)[0] for key in keys}
    kept = [k for k in entry["delivered"] if k.split("@", 1)[0] not in new_ids]
    entry["delivered"] = sorted(set(kept) | set(keys))
    entry["updated"] = now


def prune(document: dict[str, Any], now: float, ttl: float | None = None,
          max_sessions: int | None = None,
          max_subagents: int | None = None) -> dict[str, dict[str, Any]]:
    """Drop entries idle for longer than `ttl`, then the oldest past the caps; return what
    was dropped (to be set aside). Sessions and subagents have separate caps, so subagents
    never evict parents."""
    ttl = TTL_SECONDS if ttl is None else ttl
    entries = document["entries"]
    evicted = {k: entries.pop(k) for k in [k for k, e in entries.items()
                                           if now - float(e.get("updated", 0)) > ttl]}
    for is_agent, cap in ((False, MAX_SESSIONS if max_sessions is None else max_sessions),
                          (True, MAX_SUBAGENTS if max_subagents is None else max_subagents)):
        group = sorted((k for k, e in entries.items() if bool(e.get("agent")) == is_agent),
                       key=lambda k: (float(entries[k].get("updated", 0)), k))
        for key in group[: max(len(group) - cap, 0)]:
            evicted[key] = entries.pop(key)
    return evicted


_TEXT_FIELDS: Final = ("host", "cwd", "session", "agent")
_KEY_LISTS: Final = ("delivered", "last_routed")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_key_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(key, str) for key in value)


def _is_held_answer(value: Any) -> bool:
    return isinstance(value, dict) and _is_key_list(value.get("keys")) \
        and isinstance(value.get("path"), str) and isinstance(value.get("prompt"), str) \
        and isinstance(value.get("offset"), int) \
        and not isinstance(value.get("offset"), bool) and value["offset"] >= 0 \
        and ("at" not in value or (isinstance(value["at"], int) and not isinstance(value["at"], bool))) \
        and ("event" not in value or isinstance(value["event"], str))


def _are_held_tool_answers(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(held, dict) and _is_key_list(held.get("keys"))
        and isinstance(held.get("path"), str) and isinstance(held.get("offset"), int)
        and not isinstance(held.get("offset"), bool) and held["offset"] >= 0 for held in value)


def is_valid(document: Any) -> bool:
    """The shape the hook relies on (schemas/delivery-cache.schema.json without the string
    patterns): a cache that parses but holds, say, a string where a time belongs would
    otherwise fail every later call, so it is set aside like a torn one."""
    if not isinstance(document, dict) or document.get("version") != CACHE_VERSION:
        return False
    entries = document.get("entries")
    if not isinstance(entries, dict):
        return False
    for entry in entries.values():
        if not isinstance(entry, dict) \
                or not all(isinstance(entry.get(name), str) for name in _TEXT_FIELDS) \
                or not all(_is_key_list(entry.get(name)) for name in _KEY_LISTS) \
                or not isinstance(entry.get("start_done"), bool) \
                or not _is_number(entry.get("created")) or not _is_number(entry.get("updated")) \
                or any(name in entry and not _is_key_list(entry[name])
                       for name in ("slot", "resume_drops", "start_always")) \
                or ("reset_at" in entry and not _is_number(entry["reset_at"])) \
                or ("reset_by" in entry and not isinstance(entry["reset_by"], str)) \
                or ("view_keys" in entry and not isinstance(entry["view_keys"], bool)) \
                or ("unconfirmed" in entry and not _is_held_answer(entry["unconfirmed"])) \
                or ("unconfirmed_tools" in entry and not _are_held_tool_answers(entry["unconfirmed_tools"])):
            return False
    return True


def cache_path(workspace_key: str) -> str:
    return os.path.join(paths.state_dir_str(), "delivery", f"{workspace_key}.json")


def read_document(path: str) -> dict[str, Any]:
    """The cache at `path`; a corrupt or unreadable one is set aside and replaced by an empty
    one (logged), never fatal."""
    try:
        raw = fileio.read_bounded(path, MAX_CACHE_BYTES)
    except FileNotFoundError:
        return empty_document()
    except (fileio.NotRegularFile, fileio.FileTooLarge):
        raw = b""
    try:
        document = json_accel.loads(raw)
    except (ValueError, RecursionError):  # nested past the recursion limit: corrupt too
        document = None
    if is_valid(document):
        valid: dict[str, Any] = document
        return valid
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    try:
        os.replace(path, f"{path}.corrupt-{stamp}")
    except OSError:
        pass
    log.note(f"delivery cache {os.path.basename(path)} was corrupt or of another version; "
             "set aside and rebuilt")
    return empty_document()


class transaction:  # noqa: N801 - used as `with transaction(path) as document:`
    """Lock, read, hand out the document for changes, then prune, write atomically and
    unlock. An exception inside the block writes nothing."""

    def __init__(self, path: str, timeout: float | None = None) -> None:
        self.path = path
        self.lock = fileio.exclusive_lock(path + ".lock",
                                          lock_timeout() if timeout is None else timeout)
        self.document: dict[str, Any] = {}
        self.now = 0.0

    def __enter__(self) -> dict[str, Any]:
        self.lock.__enter__()
        try:
            self.now = clock()
            self.document = read_document(self.path)
            self.before = _serialize(self.document)
        except BaseException:
            self.lock.__exit__(None, None, None)
            raise
        return self.document

    def __exit__(self, exc_type: object, *rest: object) -> None:
        try:
            if exc_type is None:
                now = max(self.now, time.time())
                evicted = prune(self.document, now)
                # Set aside before the cache forgets them: killed in between, a record is
                # in both places, and the cache's copy wins.
                set_aside({k: e for k, e in evicted.items() if trusted(e, now)})
                after = _serialize(self.document)
                if after != self.before:  # most repeat prompts change nothing: no write
                    fileio.atomic_write_text(self.path, after, durable=False)
                    if os.urandom(1)[0] < 8:  # about 1 write in 32: sweep killed writers' temps
                        fileio.sweep_stale_temps(self.path)
                        sweep_reset_markers(now)
        finally:
            self.lock.__exit__(None, None, None)


def _serialize(document: dict[str, Any]) -> str:
    return json_accel.dumps(document, sort_keys=True, separators=(",", ":"))
