"""Small file primitives shared by every writer: an exclusive lock with a bounded wait and an
atomic replace. Imported on the hook path, so it uses fcntl/msvcrt directly: portalocker costs
~70 ms of import time (its package metadata lookup)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import IO, Iterator

try:  # POSIX
    import fcntl

    def _try_lock(handle: IO[bytes]) -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(handle: IO[bytes]) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(handle: IO[bytes]) -> bool:
        try:
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(handle: IO[bytes]) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)


class LockTimeout(Exception):
    """The lock stayed taken for longer than the caller was willing to wait."""


@contextlib.contextmanager
def exclusive_lock(lock_path: Path, timeout: float = 5.0) -> Iterator[None]:
    """Hold an exclusive lock on `lock_path` (created if missing), waiting at most `timeout`
    seconds. The lock is released by the OS if the process dies, so a stale lock file left
    by a killed process never blocks anyone."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(lock_path, "a+b")
    try:
        deadline = time.monotonic() + timeout
        delay = 0.001
        while not _try_lock(handle):
            if time.monotonic() >= deadline:
                raise LockTimeout(str(lock_path))
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
        try:
            yield
        finally:
            _unlock(handle)
    finally:
        handle.close()


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to a unique temp file beside `path`, fsync it, then os.replace it over
    `path`: readers see the old file or the new one, never a torn one. Keeps `path`'s mode
    when it exists (or uses `mode`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = None
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        if mode is not None:
            os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode)
