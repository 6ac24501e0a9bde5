"""The one safe way engram changes a file it does not own.

First the place: the file must lie inside the folder its scope may write (the workspace, or
the host's own folder in the home directory) once every symlink is resolved, and no link on
the way may dangle; a read-only file is refused. Then, under a lock kept in the state dir (so
no lock file litters the user's folders): read the file, compute the new text, and if it
differs back the old bytes up (timestamped, the last few kept), write a temp file beside the
target and os.replace it, keeping the mode. If the file changed under us between read and
write (the host itself saving settings), the change is recomputed.

The pre-engram state of each file (its bytes, or its absence and the folders engram had to
create) is kept for good as an "original", apart from the rotating backups: `unlink` gives it
back byte for byte, and `engram restore --original` restores it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Final

from engram import paths
from engram.fileio import FileTooLarge, NotRegularFile, atomic_write_bytes, exclusive_lock, read_bounded
from engram.installer.merge import ShapeError

BACKUPS_KEPT: Final = 5
# A file unlinked, edited and linked again has a new pre-engram state each time: the first one
# ever is kept for good, and the newest few beside it.
ORIGINALS_KEPT: Final = 9
_ATTEMPTS: Final = 3
ORIGINAL_PREFIX: Final = "original-"
FOLLOW_SETTING: Final = "install.follow_symlinks"


@dataclass(frozen=True)
class Place:
    """The folder a scope may write in: a project's workspace root, or a host's own folder
    under the home directory. `follow_outside`: the user let symlinks lead elsewhere."""

    root: Path
    follow_outside: bool = False
    what: str = "the workspace"


@dataclass(frozen=True)
class Outcome:
    before: str | None  # None: the file did not exist
    after: str | None  # None: the file is (or would be) removed
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True)
class Backup:
    """One saved state of a config file: a rotating backup or a kept original."""

    id: str
    path: Path
    original: bool
    absent: bool  # the state was "no file"

    def data(self) -> bytes | None:
        return None if self.absent else self.path.read_bytes()

    def created_dirs(self) -> list[str]:
        return _folder_list(self.path) if self.absent else []

    def kept_as(self) -> tuple[int, int, int] | None:
        """(mode, uid, gid) the file had when it was saved; None for a backup an older
        engram made (no record) or a record that does not read."""
        try:
            value = json.loads(_meta_of(self.path).read_text(encoding="utf-8"))
            found = (value["mode"], value["uid"], value["gid"])
        except (OSError, ValueError, TypeError, KeyError):
            return None
        return found if all(isinstance(n, int) and not isinstance(n, bool) for n in found) \
            else None


def _meta_of(saved: Path) -> Path:
    return saved.with_name(saved.name + ".meta.json")


def _save_meta(saved: Path, info: os.stat_result | None) -> None:
    """Record the file's mode and owner beside its saved bytes: a restore onto a file that is
    gone gives them back (a 0600 file of API keys must not come back world-readable)."""
    if info is None:
        return
    record = {"mode": stat.S_IMODE(info.st_mode), "uid": info.st_uid, "gid": info.st_gid}
    atomic_write_bytes(_meta_of(saved), json.dumps(record).encode(), mode=0o600)


def _folder_list(file: Path) -> list[str]:
    """A recorded list of folders engram created; unreadable or malformed records nothing."""
    try:
        value = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def target_of(path: Path) -> Path:
    """The file to write: a symlink's final target (relative links resolved), else `path`."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_place(path: Path, place: Place) -> None:
    """Refuse (ShapeError) a path that leaves `place` through a symlink, or that goes through
    a dangling link (writing would create its target, wherever it points)."""
    root = Path(os.path.abspath(place.root))
    full = Path(os.path.abspath(path))
    try:
        parts = full.relative_to(root).parts
    except ValueError:
        parts = full.parts[1:]
        root = Path(full.anchor)
    current = root
    for part in parts:
        current = current / part
        if os.path.islink(current) and not os.path.exists(current):
            raise ShapeError("(file)", f"goes through a symlink whose target does not exist "
                             f"({current} -> {os.readlink(current)}); engram will not create it",
                             f"remove the link {current} or point it at an existing file")
    if place.follow_outside:
        return
    real_root = os.path.realpath(place.root)
    real = os.path.realpath(full)
    if not _inside(real, real_root):
        raise ShapeError("(file)", f"is a symlink (or lies in a symlinked folder) that leads "
                         f"outside {place.what}, to {real}",
                         "replace the link with a real file or folder; or, if you meant it, "
                         f"`engram config set {FOLLOW_SETTING} true --global`")


def _check_writable(target: Path) -> None:
    try:
        info = target.stat()
    except FileNotFoundError:
        return
    mode = info.st_mode
    if not mode & stat.S_IWUSR:
        raise ShapeError("(file)", f"is read-only (mode {stat.S_IMODE(mode):04o}); engram does "
                         "not override that", f"make it writable (chmod u+w {target}) if "
                         "engram may change it, then run the command again")
    if info.st_nlink > 1:  # os.replace would give this name a new file, the others the old one
        raise ShapeError("(file)", f"has {info.st_nlink} hard links; engram replaces a file "
                         "whole, which would leave the other names with the old text",
                         "make the other names symlinks to it (engram edits a symlink's "
                         "target), or make it a plain file, then run the command again")


def _owner(target: Path) -> tuple[int, int] | None:
    try:
        info = target.stat()
    except FileNotFoundError:
        return None
    return info.st_uid, info.st_gid


def _key(path: Path) -> str:
    return hashlib.sha1(str(path).encode("utf-8", "surrogatepass")).hexdigest()[:12]


def backup_root() -> Path:
    return paths.state_dir() / "backups"


def backup_dir(path: Path) -> Path:
    target = target_of(path)
    return backup_root() / f"{_key(target)}-{target.name}"


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


def _folder(target: Path) -> Path:
    folder = backup_dir(target)
    folder.mkdir(parents=True, exist_ok=True)
    # The path's own bytes: a folder name that is not UTF-8 (a Latin-1 `é` from an old disk)
    # is a str with escaped bytes that no text encoding writes.
    (folder / "source.txt").write_bytes(os.fsencode(target) + b"\n")
    return folder


def _stat(target: Path) -> os.stat_result | None:
    try:
        return target.stat()
    except OSError:
        return None


def _backup(target: Path, data: bytes) -> Path:
    folder = _folder(target)
    copy = folder / f"{_stamp()}.bak"
    atomic_write_bytes(copy, data, mode=0o600)
    _save_meta(copy, _stat(target))
    rotating = sorted(p for p in folder.glob("*.bak") if not p.name.startswith(ORIGINAL_PREFIX))
    for old in rotating[:-BACKUPS_KEPT]:
        old.unlink(missing_ok=True)
        _meta_of(old).unlink(missing_ok=True)
    return copy


def backups(path: Path) -> list[Backup]:
    """Every saved state of `path`, oldest first (originals and backups interleaved by time)."""
    folder = backup_dir(path)
    found = []
    for item in folder.glob("*") if folder.is_dir() else ():
        name = item.name
        if not name.endswith((".bak", ".absent")):
            continue
        original = name.startswith(ORIGINAL_PREFIX)
        stem = name.rsplit(".", 1)[0]
        found.append(Backup(id=stem, path=item, original=original,
                            absent=name.endswith(".absent")))
    return sorted(found, key=lambda b: (b.id.removeprefix(ORIGINAL_PREFIX), b.original))


def original(path: Path) -> Backup | None:
    """The newest kept pre-engram state of `path`, if one was recorded."""
    kept = [b for b in backups(path) if b.original]
    return kept[-1] if kept else None


def _record_original(target: Path, data: bytes | None, created: list[str]) -> None:
    newest = original(target)
    if newest is not None and newest.data() == data:
        return
    folder = _folder(target)
    if data is None:
        name, payload = f"{ORIGINAL_PREFIX}{_stamp()}.absent", json.dumps(created).encode()
    else:
        name, payload = f"{ORIGINAL_PREFIX}{_stamp()}.bak", data
    atomic_write_bytes(folder / name, payload, mode=0o600)
    if data is not None:
        _save_meta(folder / name, _stat(target))
    kept = [b for b in backups(target) if b.original]
    for extra in kept[1:-ORIGINALS_KEPT]:  # the very first is kept for good, and the newest
        extra.path.unlink(missing_ok=True)
        _meta_of(extra.path).unlink(missing_ok=True)


def missing_parents(path: Path) -> list[str]:
    """The folders above `path` that do not exist yet, outermost first."""
    missing = []
    parent = Path(os.path.abspath(path)).parent
    while not parent.exists() and parent != parent.parent:
        missing.append(str(parent))
        parent = parent.parent
    return missing[::-1]


def new_owner(path: Path) -> tuple[int, int] | None:
    """The owner a new file or folder at `path` should get: run as root (sudo) inside a folder
    that belongs to someone else (a user's home or project), that folder's owner, so the
    user's own host can still write what engram made; else None (the process's own)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    parent = Path(os.path.abspath(path)).parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    info = parent.stat()
    return None if info.st_uid == 0 else (info.st_uid, info.st_gid)


def state_owner() -> tuple[int, int] | None:
    """Run as root, whom engram's state dir belongs to: the owner of the folder above it
    (`sudo` keeping HOME: the user's ~/.local/state), when that is not root. The user's own
    hooks, which are not root, must be able to write every lock, cache and record there."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    return new_owner(paths.state_dir())


# How many state entries doctor looks at for their owner: a state dir holds a few files per
# workspace and session, and doctor must stay quick on a large one.
STATE_SCAN_MAX: Final = 20000


def state_entries(limit: int = STATE_SCAN_MAX) -> list[tuple[str, int, int]]:
    """(path, uid, gid) of the state dir and what is in it (links not followed), at most
    `limit` of them."""
    root = str(paths.state_dir())
    found: list[tuple[str, int, int]] = []

    def add(path: str) -> None:
        try:
            info = os.lstat(path)
        except OSError:
            return
        found.append((path, info.st_uid, info.st_gid))

    if os.path.lexists(root):
        add(root)
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            add(os.path.join(folder, name))
            if len(found) >= limit:
                return found
    return found


def give_state_back() -> None:
    """After a command run as root: what it made in a user's state dir becomes the user's."""
    owner = state_owner()
    if owner is None:
        return
    for path, uid, _gid in state_entries(limit=10**9):
        if uid == 0:
            try:
                os.lchown(path, *owner)
            except OSError:
                continue


def make_parents(path: Path, owner: tuple[int, int] | None) -> list[str]:
    """Create the folders missing above `path`, outermost first, each given `owner`."""
    made = []
    for folder in missing_parents(path):
        try:
            os.mkdir(folder)
        except FileExistsError:
            continue
        if owner is not None:
            os.chown(folder, *owner)
        made.append(folder)
    return made


def give(paths: list[Path], owner: tuple[int, int] | None) -> None:
    """Give files engram just created `owner` (see new_owner)."""
    if owner is None:
        return
    for path in paths:
        try:
            os.lchown(path, *owner)
        except OSError:
            continue


def note_created(path: Path, folders: list[str]) -> None:
    """Remember the folders engram created for `path` (a folder it generates), for unlink."""
    if folders:
        atomic_write_bytes(_folder(path) / "created-folders.json",
                           json.dumps(folders).encode(), mode=0o600)


def created_for(path: Path) -> list[str]:
    return _folder_list(backup_dir(path) / "created-folders.json")


def prune(folders: list[str]) -> None:
    """Remove the folders engram created, innermost first, when they are empty again (one
    the user made anew at the same place since is theirs: left alone)."""
    for folder in reversed(folders):
        if _made_by_engram(folder) is False or not _remove_folder(folder):
            return


def prune_made(folder: Path) -> None:
    """Remove `folder` and the folders above it, innermost first, while each is one engram
    made (for any file: a project's `.claude/` serves both of its settings files) and is
    empty, whichever of the files engram made there went last."""
    current = str(Path(os.path.abspath(folder)))
    while _made_by_engram(current) and _remove_folder(current):
        current = os.path.dirname(current)


# Every folder engram made, by path, with its (device, inode): a folder the user removed and
# made again at the same place is a different one, and theirs.
def _made_record() -> Path:
    return backup_root() / "made-folders.json"


def _made_lock() -> Path:
    return paths.state_dir() / "locks" / "made-folders.lock"


def _read_made() -> dict[str, list[int]]:
    try:
        value = json.loads(_made_record().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items()
            if isinstance(v, list) and len(v) == 2 and all(isinstance(n, int) for n in v)}


def _identity(folder: str) -> list[int] | None:
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    return [info.st_dev, info.st_ino] if stat.S_ISDIR(info.st_mode) else None


def remember_made(folders: list[str]) -> None:
    """Record folders engram just made, so unlink removes them once they are empty again."""
    if not folders:
        return
    with exclusive_lock(_made_lock(), timeout=15.0):
        made = _read_made()
        for folder in folders:
            identity = _identity(folder)
            if identity is not None:
                made[str(Path(os.path.abspath(folder)))] = identity
        atomic_write_bytes(_made_record(), json.dumps(made, indent=0).encode(), mode=0o600)


def _made_by_engram(folder: str) -> bool | None:
    """True: engram made the folder there now; False: engram made one there once, but this is
    another; None: no record (an older engram's per-file record may still say)."""
    known = _read_made().get(str(Path(os.path.abspath(folder))))
    return None if known is None else known == _identity(folder)


def _remove_folder(folder: str) -> bool:
    try:
        os.rmdir(folder)
    except OSError:
        return False
    key = str(Path(os.path.abspath(folder)))
    if key in _read_made():
        with exclusive_lock(_made_lock(), timeout=15.0):
            made = _read_made()
            made.pop(key, None)
            atomic_write_bytes(_made_record(), json.dumps(made, indent=0).encode(), mode=0o600)
    return True


MAX_CONFIG_BYTES: Final = 16 * 1024 * 1024


def read_config_bytes(target: Path) -> bytes:
    """A host config's bytes: a regular file, read with a bound (a config committed as a link
    to /dev/zero or as a FIFO must not hang `link` or `doctor`)."""
    return read_bounded(target, MAX_CONFIG_BYTES)


_NOT_REGULAR: Final = ("is not a regular file (a FIFO, device or socket)",
                       "replace it with a plain file")


def _read(target: Path) -> bytes | None:
    try:
        return read_config_bytes(target)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ShapeError("(file)", "is a directory", "move the directory aside") from None
    except NotRegularFile:
        if target.is_dir():
            raise ShapeError("(file)", "is a directory", "move the directory aside") from None
        raise ShapeError("(file)", *_NOT_REGULAR) from None
    except FileTooLarge:
        raise ShapeError("(file)", f"is larger than {MAX_CONFIG_BYTES // (1024 * 1024)} MiB",
                         "check what the file holds") from None
    except OSError as exc:
        if exc.errno != errno.ENXIO:  # ENXIO: a socket, which no open can read
            raise
        raise ShapeError("(file)", *_NOT_REGULAR) from None


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


class Changed(Exception):
    """The file no longer holds the bytes engram read: another program saved it meanwhile."""


def unchanged(target: Path, data: bytes | None) -> Callable[[], None]:
    """A check that `target` still holds `data` (None: still absent), run at the last moment
    before engram replaces or removes it. The host saves its settings whenever the user
    changes one; engram's backup and its fsynced new file take long enough for such a save to
    land after the first comparison."""

    def check() -> None:
        try:
            now = _read(target)
        except ShapeError:
            raise Changed() from None
        if now != data:
            raise Changed()

    return check


def _replace(path: Path, target: Path, data: bytes | None, after: bytes | None,
             kept_as: tuple[int, int, int] | None = None,
             unknown_mode: int | None = None) -> Path | None:
    """Back `data` up, then make the file hold `after` (None: remove it). Changed, with the
    file as the other program left it, when it no longer holds `data`. `kept_as`: the mode
    and owner a file restored where there is none had when it was saved; `unknown_mode`: the
    mode such a file gets when that was not recorded (default: a new file's)."""
    saved = _backup(target, data) if data is not None else None
    check = unchanged(target, data)
    if after is None:
        check()
        if path.is_symlink():
            path.unlink()  # the link was the config; its target may be shared
        else:
            target.unlink(missing_ok=True)
        kept = original(target)
        if kept is not None and kept.absent:
            prune(kept.created_dirs())
        prune_made(target.parent)
    else:
        if data is not None:
            mode = None  # the file keeps its own
        elif kept_as is not None:
            mode = kept_as[0]
        else:
            mode = unknown_mode if unknown_mode is not None else _new_file_mode()
        # The file keeps its owner (a new one takes its folder's): run as root (sudo), a file
        # owned by root would be one the user's host can no longer write, or, mode 0600, read.
        owner = _owner(target) if data is not None else new_owner(target)
        if data is None and kept_as is not None and hasattr(os, "geteuid") and os.geteuid() == 0:
            owner = kept_as[1:]  # only root may give a file to another user
        if data is None:
            remember_made(make_parents(target, owner))
        atomic_write_bytes(target, after, mode=mode, owner=owner, check=check,
                           keep_attributes=data is not None)
    return saved


# A temp file of the target older than this is stale whoever made it; a younger one, when the
# process its name carries is gone (POSIX: signal 0 tells; Windows' os.kill would stop it).
_STALE_TEMP_SECONDS: Final = 600.0


def sweep_temps(target: Path) -> None:
    """Remove the temp files a killed engram left beside `target` (`.NAME.PID.RANDOM.tmp`,
    written and never renamed): in the user's folder they are untracked files `git add -A`
    commits, holding the user's whole file. Called under the target's lock, which every
    engram writer of it takes."""
    folder, name = os.path.split(target)
    prefix = f".{name}."
    try:
        entries = os.listdir(folder or ".")
    except OSError:
        return
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(".tmp")):
            continue
        pid, _, random = entry[len(prefix):-len(".tmp")].partition(".")
        if not (pid.isdigit() and len(random) == 12 and all(c in "0123456789abcdef" for c in random)):
            continue  # not a name fileio gives its temp files: not engram's
        candidate = os.path.join(folder, entry)
        try:
            info = os.lstat(candidate)
            if not stat.S_ISREG(info.st_mode):
                continue
            old = info.st_mtime < datetime.now(timezone.utc).timestamp() - _STALE_TEMP_SECONDS
            if old or (int(pid) != os.getpid() and _gone(int(pid))):
                os.unlink(candidate)
        except OSError:
            continue


def _gone(pid: int) -> bool:
    if os.name != "posix":
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def change_file(path: Path, compute: Callable[[str | None], str | None], place: Place,
                dry_run: bool = False,
                is_original: Callable[[str | None], bool] | None = None) -> Outcome:
    """Apply `compute(old text or None) -> new text or None (remove)` to `path` safely.
    ShapeError (or any error from `compute`) leaves the file byte-for-byte untouched.
    `is_original(old text)`: is this the file's pre-engram state, to be kept for good?"""
    check_place(path, place)
    target = target_of(path)
    with exclusive_lock(paths.lock_file_for(target), timeout=15.0):
        if not dry_run:
            sweep_temps(target)
        for _ in range(_ATTEMPTS):
            data = _read(target)
            before = _decode(data)
            after = compute(before)
            if after == before or dry_run:
                return Outcome(before, after)
            _check_writable(target)
            if _read(target) != data:
                continue  # someone else saved the file meanwhile: recompute from theirs
            if is_original is not None and is_original(before):
                _record_original(target, data, missing_parents(target) if data is None else [])
            encoded = None if after is None else after.encode("utf-8")
            try:
                return Outcome(before, after, _replace(path, target, data, encoded))
            except Changed:
                continue
    raise ShapeError("(file)", "kept changing while engram tried to update it",
                     "close the program that is writing it and run the command again")


def restore(path: Path, chosen: Backup, place: Place, dry_run: bool = False) -> Outcome:
    """Put a saved state back (the current file is backed up first)."""
    check_place(path, place)
    target = target_of(path)
    with exclusive_lock(paths.lock_file_for(target), timeout=15.0):
        if not dry_run:
            sweep_temps(target)
        for _ in range(_ATTEMPTS):
            data = _read(target)
            wanted = chosen.data()
            if data == wanted or dry_run:
                return Outcome(_text(data), _text(wanted))
            _check_writable(target)
            try:
                # A backup an older engram made records no mode: the file it brings back
                # where there is none is its owner's alone, as the backup is (settings hold
                # API keys in `env`, and nothing says who could read the file it was).
                return Outcome(_text(data), _text(wanted),
                               _replace(path, target, data, wanted, chosen.kept_as(),
                                        unknown_mode=0o600))
            except Changed:
                continue  # backed up again as the other program left it, then restored
    raise ShapeError("(file)", "kept changing while engram tried to restore it",
                     "close the program that is writing it and run the command again")


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")
