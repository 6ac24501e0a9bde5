"""What the hook runtime observed: per host and event, when it last fired, how often, and how
many bytes it answered. `engram doctor` reads it to say a hook really fires.

The hook appends one short JSON line per call (O_APPEND: no lock, no rewrite, cheap on the
hot path); readers fold the lines into per-host, per-event records. The file is rotated once
it grows past MAX_BYTES, so it stays bounded."""

from __future__ import annotations

import os
import time

from engram import json_accel, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES = 512 * 1024


def observed_log_path() -> str:
    return os.path.join(paths.state_dir_str(), "observed.jsonl")


def record(host: str, event: str, answered_bytes: int, duration_ms: float | None = None,
           workspace: str = "", rule: str = "", engram_rule: bool = False) -> None:
    """Append one firing, with the key of the workspace it served (doctor reports firing per
    workspace: a hook that fires in one project says nothing of another) and, for a rule-load
    event, the rule file (relative to the workspace) and whether it is one of engram's. Best
    effort: never raises."""
    path = observed_log_path()
    row: dict[str, Any] = {"host": host, "event": event,
                 "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "bytes": int(answered_bytes)}
    if duration_ms is not None:
        row["ms"] = round(duration_ms, 1)
    if workspace:
        row["ws"] = workspace
    if rule:
        row["rule"] = rule
        row["engram_rule"] = bool(engram_rule)
    line = (json_accel.dumps(row, separators=(",", ":")) + "\n").encode("utf-8")
    try:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > MAX_BYTES:
            os.replace(path, path + ".1")
    except OSError:
        pass


OTHER_FILES = " (other files)"
# What a rule-load row holds for a file that is not one of engram's: its name is not kept.
OTHER_RULE = "(other)"


def read(workspace: str | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """{host: {event: {"last_fired", "count", "last_bytes", "last_ms"?}}} from the log (and
    its rotated predecessor); only the firings in `workspace` (a workspace key) when given.
    A rule-load event counts under its name only for engram's rule files (with "rules":
    {file: count}); loads of other files (CLAUDE.md, a user's own rules) count under
    "<event> (other files)", so they never pass for engram rule loads."""
    folded: dict[str, dict[str, dict[str, Any]]] = {}
    path = observed_log_path()
    for name in (path + ".1", path):
        try:
            with open(name, encoding="utf-8", errors="replace") as handle:
                lines = handle.readlines()
        except OSError:
            continue
        for line in lines:
            try:
                row = json_accel.loads(line)
                host, event = str(row["host"]), str(row["event"])
            except (ValueError, KeyError, TypeError):
                continue  # a torn line from a killed process
            if workspace is not None and row.get("ws") != workspace:
                continue
            rule = row.get("rule")
            if rule and not row.get("engram_rule"):
                event += OTHER_FILES
            entry = folded.setdefault(host, {}).setdefault(event, {"count": 0})
            entry["count"] += 1
            if rule and row.get("engram_rule"):
                rules = entry.setdefault("rules", {})
                rules[str(rule)] = rules.get(str(rule), 0) + 1
            entry["last_fired"] = row.get("at")
            entry["last_bytes"] = row.get("bytes", 0)
            if "ms" in row:
                entry["last_ms"] = row["ms"]
    return folded
