"""`engram link HOST|all`: merge engram's hook entries into host configs."""

from __future__ import annotations

from pathlib import Path

from engram.installer import ops


def run(host: str, global_scope: bool = False, session_end: bool = False, dry_run: bool = False,
        as_json: bool = False, cwd: Path | None = None) -> int:
    cwd = (cwd or Path.cwd()).resolve()
    changes = []
    for target in ops.resolve(host):
        changes += ops.link_one(target, cwd, global_scope, session_end, dry_run)
    return ops.report("link", changes, cwd, as_json, dry_run=dry_run)
