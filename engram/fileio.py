"""Small file primitives shared by every writer: an exclusive lock with a bounded wait and an
atomic replace. Imported on the hook path, so it uses fcntl/msvcrt directly (portalocker costs
~70 ms of import) and neither tempfile nor contextlib nor pathlib (~8 ms together). The
installer and the config commands take the same lock: one implementation, one behaviour (a
bounded wait, released by the OS when the holder dies), so engram does not depend on
portalocker at all."""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Callable

try:  # POSIX
    import fcntl

    def _try_lock(handle: "IO[bytes]") -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(handle: "IO[bytes]") -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(handle: "IO[bytes]") -> bool:
        try:
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined,unused-ignore]
        except OSError:
            return False
        return True

    def _unlock(handle: "IO[bytes]") -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined,unused-ignore]


class NotRegularFile(OSError):
    """A FIFO, device, socket or folder where engram expected a file: reading it could hang
    (a FIFO without a writer) or never end (`/dev/zero`)."""


class FileTooLarge(OSError):
    """A file past the size engram is willing to read for its purpose."""


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
    | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_bounded(path: "str | os.PathLike[str]", limit: int, head: int | None = None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (with `head`, only its first
    `head` bytes). Opened without blocking (a FIFO opens at once), checked with fstat on the
    open descriptor (no race with a swap after a stat), read with a bound (a file that grows
    while read is still cut off). Raises FileNotFoundError, NotRegularFile, FileTooLarge or
    another OSError."""
    import stat

    name = os.fspath(path)
    fd = os.open(name, _READ_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(22, "not a regular file", name)
        if info.st_size > limit:
            raise FileTooLarge(27, f"larger than {limit} bytes", name)
        chunks = []
        remaining = limit + 1 if head is None else min(head, limit + 1)
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise FileTooLarge(27, f"larger than {limit} bytes", name)
    return data


_wait_budget: "list[float]" = []  # seconds of lock waiting left to this process, if bounded


def set_wait_budget(seconds: "float | None") -> None:
    """Bound the total time this process spends waiting for locks (file locks here, SQLite's
    write lock in the index) from now on; None lifts the bound. A hook sets one per call, so
    two stalled holders of two different locks cannot add their timeouts past the host's.
    Only waiting counts: work done on a busy machine does not eat into it."""
    _wait_budget.clear()
    if seconds is not None:
        _wait_budget.append(seconds)


def wait_left(timeout: float) -> float:
    """`timeout`, cut to what is left of the wait budget (never below zero)."""
    if not _wait_budget:
        return timeout
    return max(0.0, min(timeout, _wait_budget[0]))


def is_wait_budgeted() -> bool:
    return bool(_wait_budget)


def spend_wait(seconds: float) -> None:
    """Count `seconds` of waiting against the budget."""
    if _wait_budget:
        _wait_budget[0] -= max(seconds, 0.0)


class LockTimeout(Exception):
    """The lock stayed taken for longer than the caller was willing to wait."""


class exclusive_lock:  # noqa: N801 - used like a function: `with exclusive_lock(path):`
    """Hold an exclusive lock on `lock_path` (created if missing), waiting at most `timeout`
    seconds. The OS releases it if the process dies, so a stale lock file left by a killed
    process never blocks anyone."""

    def __init__(self, lock_path: "str | os.PathLike[str]", timeout: float = 5.0) -> None:
        self.path = os.fspath(lock_path)
        self.timeout = timeout
        self.handle: "IO[bytes] | None" = None

    def __enter__(self) -> None:
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        handle = open(self.path, "a+b")
        started = time.monotonic()
        deadline = started + wait_left(self.timeout)
        delay = 0.001
        try:
            while not _try_lock(handle):
                if time.monotonic() >= deadline:
                    handle.close()
                    raise LockTimeout(self.path)
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
        finally:
            spend_wait(time.monotonic() - started)
        self.handle = handle

    def __exit__(self, *exc_info: object) -> None:
        handle, self.handle = self.handle, None
        if handle is not None:
            try:
                _unlock(handle)
            finally:
                handle.close()


def _temp_name(target: str) -> str:
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")


def atomic_write_bytes(path: "str | os.PathLike[str]", data: bytes, mode: int | None = None,
                       durable: bool = True, owner: tuple[int, int] | None = None,
                       check: "Callable[[], None] | None" = None,
                       keep_attributes: bool = False) -> None:
    """Write `data` to a unique temp file beside `path`, then os.replace it over `path`:
    readers see the old file or the new one, never a torn one. Keeps `path`'s mode when it
    exists (or uses `mode`). `owner` (uid, gid): give the new file that owner before it
    replaces `path`; when that is not permitted, PermissionError and `path` is untouched.
    `durable=False` skips the fsync for files engram can rebuild (caches) on the hook's hot
    path. `check()` runs once the new file is ready, just before it replaces `path`: what it
    raises leaves `path` untouched (a file another program saved meanwhile is not
    overwritten by a text computed from the one before). `keep_attributes`: the new file
    also gets `path`'s extended attributes, its ACL among them (a file of the user's)."""
    target = os.fspath(path)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    if mode is None:
        try:
            mode = os.stat(target).st_mode & 0o7777
        except FileNotFoundError:
            mode = None
    tmp_name = _temp_name(target)
    fd = os.open(tmp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            if owner is not None:
                info = os.fstat(tmp.fileno())
                if (info.st_uid, info.st_gid) != owner:
                    os.fchown(tmp.fileno(), *owner)
            if durable:
                os.fsync(tmp.fileno())
        os.chmod(tmp_name, 0o644 if mode is None else mode)
        if keep_attributes:
            _copy_attributes(target, tmp_name)  # after chmod: an ACL sets the group bits
        if check is not None:
            check()
        os.replace(tmp_name, target)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise


def _copy_attributes(source: str, dest: str) -> None:
    """Give `dest` the extended attributes of `source` (Linux): a tag or label the user set,
    and a POSIX ACL, without which the mode's group bits (the ACL's mask) would become the
    owning group's own access. What the file system or the process's rights do not allow
    (`security.*`, `trusted.*` without the capability) is left, as `cp -a` leaves it."""
    if not hasattr(os, "listxattr"):
        return
    import errno

    try:
        names = os.listxattr(source)
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EPERM):
            return
        raise
    for name in names:
        try:
            os.setxattr(dest, name, os.getxattr(source, name))
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EACCES, errno.ENOTSUP, errno.ENODATA,
                                 errno.EINVAL):  # EACCES: an SELinux label policy refuses
                raise


def sweep_stale_temps(path: "str | os.PathLike[str]", max_age: float = 3600.0) -> int:
    """Remove temp files of `path` older than `max_age` seconds: what a writer killed between
    writing and replacing left behind (harmless, but they pile up). Returns how many."""
    target = os.fspath(path)
    folder, name = os.path.split(target)
    prefix = f".{name}."
    removed = 0
    cutoff = time.time() - max_age
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return 0
    for entry in entries:
        if entry.startswith(prefix) and entry.endswith(".tmp"):
            candidate = os.path.join(folder, entry)
            try:
                if os.stat(candidate).st_mtime < cutoff:
                    os.unlink(candidate)
                    removed += 1
            except OSError:
                continue
    return removed


def atomic_write_text(path: "str | os.PathLike[str]", text: str, mode: int | None = None,
                      durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode, durable)
