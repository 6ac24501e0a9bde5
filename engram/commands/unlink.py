"""`engram unlink HOST|all`: remove engram's entries, and only those, from host configs."""

from __future__ import annotations

from pathlib import Path

from engram.commands.changes import report as changes_report
from engram.installer import ops


def run(host: str, global_scope: bool = False, dry_run: bool = False, as_json: bool = False,
        cwd: Path | None = None, local: bool = False, force: bool = False) -> int:
    cwd = (cwd or Path.cwd()).resolve()
    ops.check_scopes(global_scope, local)
    targets = ops.resolve(host)
    ops.require_local(targets, local)
    changes = []
    for target in targets:
        changes += ops.unlink_one(target, cwd, global_scope, dry_run, local=local, force=force)
    return changes_report("unlink", changes, cwd, as_json, dry_run=dry_run,
                      quiet_absent=len(targets) > 1)
