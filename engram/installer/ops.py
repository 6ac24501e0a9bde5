"""What `link`, `unlink` and `upgrade` do for one host in one scope, and how it is reported."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from engram import config, hosts, native_rules, workspace
from engram.errors import EngramError
from engram.host_adapter import Host
from engram.installer.filedance import backup_root
from engram.installer.plan import Change, Options, apply, config_path, installed, ours_for

ENVELOPE_VERSION = 1
_VERBS = {"created": "CREATED", "updated": "UPDATED", "deleted": "DELETED",
          "unchanged": "UNCHANGED", "absent": "ABSENT", "skipped": "SKIPPED",
          "refused": "REFUSED"}


def resolve(host_arg: str) -> list[Host]:
    """The hosts a `HOST|all` argument names (every known host for `all`)."""
    if host_arg.strip().lower() == "all":
        return list(hosts.registry())
    try:
        return [hosts.get(host_arg)]
    except hosts.UnknownHost:
        names = ", ".join(h.name for h in hosts.registry())
        raise EngramError(f"unknown host {host_arg!r}",
                          f"hosts: {names}, all (aliases: cascade, antigravity)") from None


def project_root(cwd: Path) -> Path:
    return workspace.find_root(cwd) or cwd


def path_rules(cwd: Path) -> str:
    ws = workspace.load(cwd)
    return str(ws.settings["hooks.path_rules"]) if ws else \
        str(config.SETTINGS_BY_KEY["hooks.path_rules"].default)


def skipped(host: Host, scope: str) -> Change:
    return Change(host=host.name, scope=scope, path=Path(), action="skipped", message=host.reason)


def _rules_dir(host: Host, root: Path) -> Path | None:
    folder = host.install.get("native_rules")
    return root / folder if folder else None


def sync_native_rules(host: Host, cwd: Path, dry_run: bool) -> Change | None:
    """Claude with hooks.path_rules=native, project scope: write the rule files now, so they
    exist before the first session (the SessionStart hook keeps them current afterwards)."""
    root = project_root(cwd)
    folder = _rules_dir(host, root)
    ws = workspace.load(cwd)
    if folder is None or ws is None:
        return None
    try:
        from engram.store import load_cards
    except ImportError:
        return Change(host=host.name, scope="project", path=folder, action="skipped",
                      message="card store unavailable; the rules follow at the next session start",
                      kind="rules")
    cards, _problems = load_cards(ws)
    count = sum(1 for c in cards if c.applies_to and native_rules.is_safe_id(c.id))
    if not count and not folder.exists():
        return None
    had = folder.exists()
    changed = native_rules.sync_rules(folder, cards, dry_run=dry_run)
    action = "unchanged" if not changed else ("updated" if had else "created")
    return Change(host=host.name, scope="project", path=folder, action=action, entries=count,
                  kind="rules", dry_run=dry_run, events=tuple(f"~{p.stem}" for p in changed))


def remove_native_rules(host: Host, cwd: Path, dry_run: bool) -> Change | None:
    folder = _rules_dir(host, project_root(cwd))
    if folder is None or not folder.exists():
        return None
    removed = native_rules.remove_rules(folder, dry_run=dry_run)
    gone = not folder.exists() or dry_run
    return Change(host=host.name, scope="project", path=folder,
                  action="deleted" if removed and gone else ("updated" if removed else "unchanged"),
                  entries=len(removed), dry_run=dry_run, kind="rules")


def link_one(host: Host, cwd: Path, global_scope: bool, session_end: bool,
             dry_run: bool) -> list[Change]:
    scope = "global" if global_scope else "project"
    if not host.supported or not host.install:
        return [skipped(host, scope)]
    rules = path_rules(cwd)
    path = config_path(host, global_scope, project_root(cwd))
    # An opt-in SessionEnd stays on when link runs again without --session-end.
    session_end = session_end or any(f.event == "SessionEnd" for f in installed(host, path) or ())
    options = Options(session_end=session_end, path_rules=rules, global_scope=global_scope)
    changes = [apply(host, path, scope, ours_for(host, options), remove=False, dry_run=dry_run)]
    if changes[0].action != "refused" and not global_scope and _rules_dir(host, cwd):
        extra = (sync_native_rules(host, cwd, dry_run) if rules == "native"
                 else remove_native_rules(host, cwd, dry_run))
        if extra:
            changes.append(extra)
    return changes


def unlink_one(host: Host, cwd: Path, global_scope: bool, dry_run: bool) -> list[Change]:
    scope = "global" if global_scope else "project"
    if not host.supported or not host.install:
        return [skipped(host, scope)]
    path = config_path(host, global_scope, project_root(cwd))
    changes = [apply(host, path, scope, ours_for(host, Options(global_scope=global_scope)),
                     remove=True, dry_run=dry_run)]
    if not global_scope:
        extra = remove_native_rules(host, cwd, dry_run)
        if extra:
            changes.append(extra)
    return changes


def upgrade_one(host: Host, cwd: Path, global_scope: bool, dry_run: bool) -> list[Change]:
    """Re-link a host where engram entries already are; SessionEnd kept, never added."""
    if not host.supported or not host.install:
        return []
    path = config_path(host, global_scope, project_root(cwd))
    found = installed(host, path)
    if not found:
        return []
    scope = "global" if global_scope else "project"
    options = Options(session_end=any(f.event == "SessionEnd" for f in found),
                      path_rules=path_rules(cwd), global_scope=global_scope)
    changes = [apply(host, path, scope, ours_for(host, options), remove=False, dry_run=dry_run)]
    if not global_scope and _rules_dir(host, cwd) and options.path_rules == "native":
        extra = sync_native_rules(host, cwd, dry_run)
        if extra:
            changes.append(extra)
    return changes


def display(path: Path, cwd: Path) -> str:
    """A path as the user would type it: relative to cwd, else from ~, else absolute."""
    for base, prefix in ((cwd, ""), (Path(os.path.expanduser("~")), "~/")):
        try:
            return prefix + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


def _count(change: Change) -> str:
    noun = ("rule", "rules") if change.kind == "rules" else ("entry", "entries")
    if change.action == "deleted":
        return "only engram's files were in it" if change.kind == "rules" \
            else "only engram's entries were in it"
    removed = sum(1 for e in change.events if e.startswith("-"))
    if removed and not change.entries:
        return f"removed {removed} {noun[removed != 1]}"
    return f"{change.entries} {noun[change.entries != 1]}"


def _line(change: Change, cwd: Path, quiet_absent: bool) -> str | None:
    if change.action == "skipped" and change.path == Path():
        return f"SKIPPED {change.host}: {change.message}"
    where = display(change.path, cwd)
    if change.action == "refused" or (change.action == "absent" and quiet_absent):
        return None
    if change.action == "absent":
        return f"ABSENT {where} (no engram entries to remove)"
    if change.action == "skipped":
        return f"SKIPPED {where}: {change.message}"
    if change.dry_run and change.action != "unchanged":
        return f"WOULD {_VERBS[change.action][:-1]} {where} ({' '.join(change.events) or _count(change)})"
    return f"{_VERBS[change.action]} {where} ({_count(change)})"


def report(command: str, changes: Iterable[Change], cwd: Path, as_json: bool,
           dry_run: bool = False, quiet_absent: bool = False) -> int:
    """Print the changes (one line each, or a versioned JSON envelope); exit 1 if any refused."""
    import typer

    changes = list(changes)
    refused = [c for c in changes if c.action == "refused"]
    if as_json:
        payload: dict[str, Any] = {"version": ENVELOPE_VERSION, "command": command,
                                   "dry_run": dry_run, "ok": not refused,
                                   "changes": [c.to_json() for c in changes]}
        typer.echo(json.dumps(payload, indent=2))
        return 1 if refused else 0
    notes: list[str] = []
    for change in changes:
        line = _line(change, cwd, quiet_absent)
        if line:
            typer.echo(line)
        if change.action in ("created", "updated") and not change.dry_run:
            note = hosts.get(change.host).install.get("note")
            if note and note not in notes:
                notes.append(note)
    for change in refused:
        typer.echo(f"REFUSED {display(change.path, cwd)}: {change.message}; the file was not "
                   f"changed\n  fix: {change.fix}", err=True)
    if any(c.backup for c in changes):
        notes.append(f"previous versions backed up under {display(backup_root(), cwd)}")
    for note in notes:
        typer.echo(f"note: {note}")
    return 1 if refused else 0
