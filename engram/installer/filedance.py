"""The one safe way engram changes a file it does not own.

Under a lock (kept in the state dir, so no lock file litters the user's folders): read the
file, compute the new text, and if it differs back the old bytes up (timestamped, the last few
kept), write a temp file beside the target and os.replace it, keeping the mode. A symlinked
config is followed and its target written, so the link survives. If the file changed under us
between read and write (the host itself saving settings), the change is recomputed.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Final

from engram import paths
from engram.fileio import atomic_write_bytes, exclusive_lock
from engram.installer.formats import ShapeError

BACKUPS_KEPT: Final = 5
_ATTEMPTS: Final = 3


@dataclass(frozen=True)
class Outcome:
    before: str | None  # None: the file did not exist
    after: str | None  # None: the file is (or would be) removed
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after


def target_of(path: Path) -> Path:
    """The file to write: a symlink's final target (relative links resolved), else `path`."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _key(path: Path) -> str:
    return hashlib.sha1(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:12]


def backup_root() -> Path:
    return paths.state_dir() / "backups"


def backup_dir(path: Path) -> Path:
    return backup_root() / f"{_key(target_of(path))}-{path.name}"


def _backup(target: Path, data: bytes) -> Path:
    folder = backup_dir(target)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "source.txt").write_text(str(target) + "\n", encoding="utf-8")
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    copy = folder / f"{stamp}.bak"
    atomic_write_bytes(copy, data, mode=0o600)
    for old in sorted(folder.glob("*.bak"))[:-BACKUPS_KEPT]:
        old.unlink(missing_ok=True)
    return copy


def _read(target: Path) -> bytes | None:
    try:
        return target.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ShapeError("(file)", "is a directory", "move the directory aside") from None


def _decode(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ShapeError("(file)", "is not UTF-8 text", "save the file as UTF-8") from None


def _new_file_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def change_file(path: Path, compute: Callable[[str | None], str | None],
                dry_run: bool = False) -> Outcome:
    """Apply `compute(old text or None) -> new text or None (remove)` to `path` safely.
    ShapeError (or any error from `compute`) leaves the file byte-for-byte untouched."""
    target = target_of(path)
    lock = paths.state_dir() / "locks" / f"{_key(target)}.lock"
    with exclusive_lock(lock, timeout=15.0):
        for _ in range(_ATTEMPTS):
            data = _read(target)
            before = _decode(data)
            after = compute(before)
            if after == before or dry_run:
                return Outcome(before, after)
            if _read(target) != data:
                continue  # someone else saved the file meanwhile: recompute from theirs
            saved = _backup(target, data) if data is not None else None
            if after is None:
                if path.is_symlink():
                    path.unlink()  # the link was the config; its target may be shared
                else:
                    target.unlink(missing_ok=True)
            else:
                mode = None if data is not None else _new_file_mode()
                atomic_write_bytes(target, after.encode("utf-8"), mode=mode)
            return Outcome(before, after, saved)
    raise ShapeError("(file)", "kept changing while engram tried to update it",
                     "close the program that is writing it and run the command again")
