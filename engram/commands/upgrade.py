"""`engram upgrade`: bring every linked host, project and global, to the current definitions.
Entries written by earlier versions are recognised and replaced; missing events are added; an
existing SessionEnd entry is kept and a missing one is never added (it is opt-in)."""

from __future__ import annotations

from pathlib import Path

from engram import host_registry, output
from engram.commands.changes import report as changes_report
from engram.installer import ops


def run(dry_run: bool = False, cwd: Path | None = None, as_json: bool = False,
        force: bool = False) -> int:
    cwd = (cwd or Path.cwd()).resolve()
    changes = []
    for host in host_registry.registry():
        for global_scope, local in ops.SCOPES:
            changes += ops.upgrade_one(host, cwd, global_scope, dry_run, local=local, force=force)
    if not changes and not as_json:
        output.line("nothing to upgrade: no host is linked here or globally "
                   "(run `engram link HOST` first)")
        return 0
    return changes_report("upgrade", changes, cwd, as_json, dry_run=dry_run)
