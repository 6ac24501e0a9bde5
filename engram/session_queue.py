"""The opt-in session transcript queue: `<memory dir>/session-queue.json`, a JSON array of
`{transcript_path, host, session, at}`, newest last.

`enqueue` runs inside the SessionEnd hook, which hosts give a few seconds: stdlib and
`engram.fileio` only, one lock, one atomic write, and it never raises. The queue holds paths
and ids, never prompt text (no file engram writes does). Because a repository could commit a
queue file, readers treat every entry as untrusted (see `engram.observe`).
"""

from __future__ import annotations

import os

from engram import fileio, json_accel

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Final

    Folder = str | os.PathLike[str]

QUEUE_NAME: Final = "session-queue.json"
LOCK_NAME: Final = ".session-queue.lock"  # where releases before the state-dir lock kept it
MAX_ENTRIES: Final = 50
LOCK_TIMEOUT: Final = 2.0  # well under the 3 s Codex / 5 s Claude SessionEnd timeouts
FIELDS: Final = ("transcript_path", "host", "session", "at")
MAX_FIELD_CHARS: Final = 4096
# Kept out of Git: the queue (machine paths), review material and evidence (sanitized, but a
# heuristic sanitizer is no reason to publish by default), lock and temp files.
IGNORED: Final = ("/session-queue.json", "/.session-queue.lock", "/.session-queue.json.*.tmp",
                  "/inbox/", "/traces/")
_IGNORE_HEADER: Final = "# engram: local transcript queue, review inbox and evidence traces"


# SessionEnd runs `enqueue` in the hook process: the queue is handled as os.path strings and
# JSON through engram.json_accel, so it imports neither pathlib nor the json package (each
# pulls in `re`); the functions that return paths give `Path`s to the CLI's callers.


def queue_path(memory_dir: Folder) -> Path:
    from pathlib import Path

    return Path(_queue_file(memory_dir))


def _queue_file(memory_dir: Folder) -> str:
    return os.path.join(memory_dir, QUEUE_NAME)


def lock_path(memory_dir: Folder) -> Path:
    """The queue's lock: in the state dir, keyed by the queue file, so no lock file of
    engram's is left in the repository."""
    from pathlib import Path

    return Path(_lock_file(memory_dir))


def _lock_file(memory_dir: Folder) -> str:
    from engram import paths

    return paths.lock_file_for(_queue_file(memory_dir))


def symlinked(memory_dir: Folder) -> list[str]:
    """Names among engram's queue files and folders that are symlinks. A repository could
    commit `.session-queue.lock` or `inbox` as a link to somewhere else; engram then writes
    nothing rather than follow it."""
    names = (QUEUE_NAME, LOCK_NAME, ".gitignore", "inbox", "traces")
    return [name for name in names if os.path.islink(os.path.join(memory_dir, name))]


def is_entry(value: Any) -> bool:
    """A well-formed entry: the four fields, all non-empty strings of sane length."""
    return isinstance(value, dict) and all(
        isinstance(value.get(k), str) and 0 < len(value[k]) <= MAX_FIELD_CHARS for k in FIELDS
    )


def read_entries(memory_dir: Folder) -> list[Any]:
    """The queue as stored (entries unvalidated); [] when absent or not a JSON array.
    Callers hold the lock when they mean to write back."""
    from engram.fileio import read_bounded

    try:  # a queue of 50 short entries is a few KiB
        data = read_bounded(_queue_file(memory_dir), 4 * 1024 * 1024)
    except OSError:  # absent, a FIFO or device planted in its place, too large
        return []
    try:
        value = json_accel.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []
    return value if isinstance(value, list) else []


def write_entries(memory_dir: Folder, entries: list[Any]) -> None:
    """Replace the queue atomically (the caller holds the lock)."""
    data = json_accel.dumps(entries, indent=1, ensure_ascii=False) + "\n"
    fileio.atomic_write_text(_queue_file(memory_dir), data)


def add(entries: list[Any], entry: dict[str, str]) -> list[Any]:
    """`entries` with `entry` appended: an earlier entry for the same (host, session) and any
    malformed entry dropped, only the newest MAX_ENTRIES kept."""
    key = (entry["host"], entry["session"])
    kept = [e for e in entries if is_entry(e) and (e["host"], e["session"]) != key]
    kept.append(entry)
    return kept[-MAX_ENTRIES:]


def ensure_ignored(memory_dir: Folder) -> None:
    """Make sure `<memory dir>/.gitignore` ignores the queue, inbox and traces; keeps any
    lines already there."""
    path = os.path.join(memory_dir, ".gitignore")
    from engram.fileio import NotRegularFile, read_bounded

    try:
        existing = read_bounded(path, 1024 * 1024).decode("utf-8", "replace")
    except FileNotFoundError:
        existing = ""
    except NotRegularFile:
        return  # something planted in its place: leave it, and write nothing through it
    present = {line.strip() for line in existing.splitlines()}
    missing = [line for line in IGNORED if line not in present]
    if not missing:
        return
    text = existing
    if text and not text.endswith("\n"):
        text += "\n"
    if _IGNORE_HEADER not in present:
        text += _IGNORE_HEADER + "\n"
    text += "\n".join(missing) + "\n"
    fileio.atomic_write_text(path, text)


def enqueue(memory_dir: Folder, *, transcript_path: str, host: str, session: str, at: str) -> None:
    """Append one SessionEnd capture to the queue under the lock. Never raises: a failure
    only loses this capture, and the host must not notice."""
    try:
        entry = {"transcript_path": str(transcript_path), "host": str(host),
                 "session": str(session), "at": str(at)}
        if not is_entry(entry):
            return
        os.makedirs(memory_dir, exist_ok=True)
        if symlinked(memory_dir):
            return
        with fileio.exclusive_lock(_lock_file(memory_dir), timeout=LOCK_TIMEOUT):
            write_entries(memory_dir, add(read_entries(memory_dir), entry))
            ensure_ignored(memory_dir)
    except Exception:  # noqa: BLE001 - the hook path fails open by design
        return

