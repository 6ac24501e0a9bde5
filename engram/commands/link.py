"""`engram link HOST|all`: merge engram's hook entries into host configs."""

from __future__ import annotations

from pathlib import Path

from engram import output
from engram.commands.changes import report as changes_report
from engram.installer import health, ops, plan


def run(host: str, global_scope: bool = False, session_end: bool = False, dry_run: bool = False,
        as_json: bool = False, cwd: Path | None = None, local: bool = False,
        force: bool = False) -> int:
    cwd = (cwd or Path.cwd()).resolve()
    ops.check_scopes(global_scope, local)
    targets = ops.resolve(host)
    ops.require_local(targets, local)
    changes = []
    for target in targets:
        changes += ops.link_one(target, cwd, global_scope, session_end, dry_run, local=local,
                               force=force)
    code = changes_report("link", changes, cwd, as_json, dry_run=dry_run)
    if not as_json and not dry_run:
        for target in targets:
            where = ops.target(target, cwd, global_scope, local) if target.supported and \
                target.install else None
            for event, (path, command) in (plan.own_entries(target, where[0]) if where
                                           else {}).items():
                output.line(f"note: {ops.display(path, cwd)} already runs engram's hook for "
                            f"{event} through your own entry ({command}): engram added none "
                            "beside it (the host would run the hook twice)")
            scopes = ops.linked_scopes(target, cwd) if target.supported else []
            if {(False, False), (False, True)} <= set(scopes):
                output.line(f"note: {target.name} has engram's entries in both its shared and its "
                           "personal project file, and runs both: keep one with `engram unlink "
                           f"{target.name}` or `engram unlink {target.name} --local`")
            elif len(scopes) > 1:
                unlinks = " or ".join(f"`engram unlink {target.name}{plan.scope_flag(*s)}`"
                                      for s in scopes)
                output.line(f"note: {target.name} has engram's entries in this project and in "
                           f"your global settings, and runs both on every event: keep one with "
                           f"{unlinks}")
            if target.supported and target.install:
                rows = health.host_rows(target, ops.project_root(cwd), ops.path_rules(cwd),
                                        ops.command_setting(cwd))
                for twice in health.twice_across_files(rows):
                    output.line(f"note: {twice['warning']}: {twice['fix']}")
    return code
