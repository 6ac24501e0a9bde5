"""The host parity table in docs/hosts.md, generated from hosts/*.yaml so it cannot drift.

    python -m engram.installer.docs_table          # print the table
    python -m engram.installer.docs_table --write  # update docs/hosts.md in place
    python -m engram.installer.docs_table --check  # exit 1 when docs/hosts.md is stale (CI)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Final

from engram import host_registry

BEGIN: Final = ("<!-- BEGIN GENERATED parity table: edit hosts/*.yaml, then run "
                "`python -m engram.installer.docs_table --write` -->")
END: Final = "<!-- END GENERATED parity table -->"
_WHEN: Final = {"session_end": "with `--session-end`",
                "path_rules_native": "`hooks.path_rules: native`",
                "path_rules_hook": "`hooks.path_rules: hook` (default) or `--global`"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _events(install: dict[str, Any]) -> str:
    if install.get("format") == "plugin":
        return "plugin file (`chat.message`, `experimental.chat.system.transform`, `event`)"
    parts = []
    for event in install.get("events") or ():
        extras = []
        if event.get("matcher"):
            extras.append(f"`{event['matcher']}`")
        if event.get("when"):
            extras.append(_WHEN.get(event["when"], event["when"]))
        if "timeout_seconds" in event:
            extras.append(f"{event['timeout_seconds']} s")
        parts.append(f"{event['event']}" + (f" ({'; '.join(extras)})" if extras else ""))
    return ", ".join(parts)


def _timeout(install: dict[str, Any]) -> str:
    unit, seconds = install.get("timeout_unit", "none"), install.get("timeout_seconds")
    if unit == "seconds" and seconds is not None:
        return f"`{seconds}` (seconds)"
    if unit == "milliseconds" and seconds is not None:
        return f"`{int(seconds * 1000)}` (milliseconds)"
    return "none written"


def _budget(runtime: dict[str, Any]) -> str:
    budget = runtime.get("budget") or {}
    limit, unit = budget.get("limit"), budget.get("unit")
    if limit is None:
        return "—"
    if limit == "setting":
        return f"`load.max_tokens` {unit or ''}".strip()
    return f"{limit:,} {unit or ''}".strip() if isinstance(limit, int) else f"{limit} {unit}"


def _model_channel(runtime: dict[str, Any]) -> str:
    events = runtime.get("events") or {}
    if events and all(isinstance(e, dict) and e.get("no_model_channel") for e in events.values()):
        return "**no**"
    return "yes" if events else "—"


def table() -> str:
    header = ("| host | project file | global file | events written | timeout | budget "
              "| reaches the model |\n|---|---|---|---|---|---|---|\n")
    rows = []
    for host in host_registry.registry():
        if not host.supported or not host.install:
            rows.append(f"| {host.display_name} (`{host.name}`) | — | — | none: "
                        f"{_cell(host.reason.split('. ')[0].rstrip('.'))}. | — | — | — |")
            continue
        install, runtime = dict(host.install), dict(host.runtime)
        names = f"`{host.name}`" + "".join(f", `{a}`" for a in host.aliases)
        rows.append(" | ".join([
            f"| {host.display_name} ({names})", f"`{install['project_file']}`",
            f"`{install['global_file']}`", _cell(_events(install)), _timeout(install),
            _cell(_budget(runtime)) if _model_channel(runtime) != "**no**" else "—",
            _model_channel(runtime)]) + " |")
    return header + "\n".join(rows) + "\n"


def render(document: str) -> str:
    """`document` with the text between the markers replaced by the current table."""
    start, end = document.index(BEGIN) + len(BEGIN), document.index(END)
    return document[:start] + "\n" + table() + document[end:]


def docs_path() -> Path:
    return Path(__file__).resolve().parents[2] / "docs" / "hosts.md"


def main(argv: list[str]) -> int:
    if not argv:
        sys.stdout.write(table())
        return 0
    path = docs_path()
    current = path.read_text(encoding="utf-8")
    fresh = render(current)
    if argv[0] == "--check":
        if fresh != current:
            sys.stderr.write(f"{path} is stale: run python -m engram.installer.docs_table --write\n")
            return 1
        return 0
    if argv[0] == "--write":
        if fresh != current:
            path.write_text(fresh, encoding="utf-8")
        return 0
    sys.stderr.write(__doc__ or "")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
