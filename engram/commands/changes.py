"""What link, unlink and upgrade print about the config files they changed: one line per
file (`UPDATED .claude/settings.json (3 entries)`), refusals with their fix on stderr, the
hosts' notes, or the JSON envelope."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from engram import host_registry, output
from engram.installer import ops
from engram.installer.filedance import backup_root
from engram.installer.plan import Change


def report(command: str, changes: Iterable[Change], cwd: Path, as_json: bool,
           dry_run: bool = False, quiet_absent: bool = False) -> int:
    """Print the changes (one line each, or the JSON envelope); exit 1 if any refused."""
    changes = list(changes)
    refused = [c for c in changes if c.action == "refused"]
    if as_json:
        output.emit_json(command, {"command": command, "dry_run": dry_run, "ok": not refused,
                                   "changes": [c.to_json() for c in changes]})
        return 1 if refused else 0
    notes: list[str] = []
    for change in changes:
        line = ops.change_line(change, cwd, quiet_absent)
        if line:
            output.line(line)
        if change.action in ("created", "updated") and not change.dry_run:
            note = host_registry.get(change.host).install.get("note")
            if note and note not in notes:
                notes.append(note)
    for change in refused:
        untouched = "nothing was written there" if change.kind == "rules" \
            else "the file was not changed"
        output.message(f"REFUSED {ops.display(change.path, cwd)}: {change.message}; {untouched}\n"
                       f"  fix: {change.fix}")
    if any(c.backup for c in changes):
        notes.append(f"previous versions backed up under {ops.display(backup_root(), cwd)}")
    for note in notes:
        output.line(f"note: {note}")
    return 1 if refused else 0
