"""`engram restore HOST`: put back a saved version of a host config file: the latest backup
(the file as it was before engram last changed it), a chosen one, or the pre-engram original.
The current file is itself backed up first, so a restore can be undone the same way."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from engram import output
from engram.errors import EngramError
from engram.installer import filedance, ops
from engram.installer.filedance import Backup
from engram.installer.merge import ShapeError
from engram.installer.plan import scope_flag


def _when(backup: Backup) -> str:
    stamp = backup.id.removeprefix(filedance.ORIGINAL_PREFIX)
    try:
        return datetime.strptime(stamp, "%Y%m%dT%H%M%S%fZ").strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return stamp


def _describe(backup: Backup) -> str:
    kind = "original (before engram)" if backup.original else "backup"
    size = "no file" if backup.absent else f"{backup.path.stat().st_size} bytes"
    return f"{backup.id}  {_when(backup)}  {kind}, {size}"


def _choose(saved: list[Backup], backup: str | None, original: bool, command: str) -> Backup:
    if original:
        kept = [b for b in saved if b.original]
        if not kept:
            raise EngramError("no pre-engram original is recorded for this file",
                              f"see `{command} --list`")
        return kept[-1]
    if backup:
        for item in saved:
            if item.id == backup:
                return item
        raise EngramError(f"no saved version {backup!r}", f"see `{command} --list`")
    rotating = [b for b in saved if not b.original]
    if not rotating:
        raise EngramError("engram has not changed this file yet, so there is no backup",
                          f"`{command} --original` restores the pre-engram state if one is kept")
    return rotating[-1]


def run(host: str, global_scope: bool = False, local: bool = False, list_only: bool = False,
        backup: str | None = None, original: bool = False, dry_run: bool = False,
        cwd: Path | None = None) -> int:
    cwd = (cwd or Path.cwd()).resolve()
    ops.check_scopes(global_scope, local)
    if backup and original:
        raise EngramError("--backup and --original choose different versions", "use one")
    targets = ops.resolve(host)
    if len(targets) != 1:
        raise EngramError("restore works on one host at a time", "name the host")
    target = targets[0]
    if not target.supported or not target.install:
        raise EngramError(f"engram writes no config for {target.display_name}")
    ops.require_local(targets, local)
    where = ops.target(target, cwd, global_scope, local)
    assert where is not None
    path, place = where
    command = f"engram restore {target.name}{scope_flag(global_scope, local)}"
    saved = filedance.backups(path)
    shown = ops.display(path, cwd)
    if list_only:
        if not saved:
            output.line(f"no saved versions of {shown}")
            return 0
        output.line(f"saved versions of {shown} (oldest first):")
        for item in saved:
            output.line(f"  {_describe(item)}")
        return 0
    chosen = _choose(saved, backup, original, command)
    try:
        outcome = filedance.restore(path, chosen, place, dry_run=dry_run)
    except ShapeError as exc:
        output.message(f"REFUSED {shown}: {exc.problem}; the file was not changed\n  fix: {exc.fix}")
        return 1
    except OSError as exc:  # a read-only file system, a full disk, no permission
        output.message(f"REFUSED {shown}: cannot be written ({exc.strerror or exc}); the file "
                       "was not changed\n  fix: check the permissions of the file and its folder "
                       "and the free space, then run the command again")
        return 1
    what = "the pre-engram original" if chosen.original else f"backup {chosen.id}"
    if not outcome.changed:
        output.line(f"UNCHANGED {shown} (it already holds {what})")
    elif dry_run:
        output.line(f"WOULD RESTORE {shown} from {what}")
    else:
        gone = " (removed: there was no file)" if outcome.after is None else ""
        output.line(f"RESTORED {shown} from {what}{gone}")
        if outcome.backup:
            output.line(f"note: the file it replaced is backup {outcome.backup.stem} "
                       f"(`{command} --backup {outcome.backup.stem}` puts it back)")
    return 0
