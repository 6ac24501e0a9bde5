"""`engram doctor`: per host, what is configured and what was observed firing; the workspace's
memory roots, lint summary, read and proof modes. Exit 1 when something is broken."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engram import config, host_registry, output, workspace
from engram.installer import health
from engram.installer.ops import command_setting, display, project_root

NATIVE_SHOWN = 10


def _lint(ws: workspace.Workspace | None, inspected: list[health.Configured]) -> dict[str, Any]:
    if ws is None:
        return {"available": False, "errors": 0, "warnings": 0, "reason": "no workspace"}
    try:
        from engram.lint import lint_workspace
    except ImportError:
        return {"available": False, "errors": 0, "warnings": 0, "reason": "lint unavailable"}
    try:
        problems = lint_workspace(ws, inspected)
    except Exception as exc:  # a lint bug must not hide the host report
        return {"available": False, "errors": 0, "warnings": 0, "reason": f"lint failed: {exc}"}
    return {"available": True, "reason": "",
            "errors": sum(1 for p in problems if getattr(p, "severity", "") == "error"),
            "warnings": sum(1 for p in problems if getattr(p, "severity", "") == "warning"),
            # Cards blocked from injection: where, never what (the message names the kind).
            "secrets": [{"path": shown.path, "line": shown.line, "message": shown.message}
                        for shown in (p.redacted() for p in problems
                                      if getattr(p, "code", "") == "secret")]}


def _cards(ws: workspace.Workspace | None) -> list[Any]:
    """The workspace's cards, read once for the report's lists; none when there is no store
    or it cannot be read (a store problem is lint's to report)."""
    if ws is None or not ws.roots:
        return []
    from engram.index import load_cards

    try:
        cards, _problems = load_cards(ws)
    except Exception:  # noqa: BLE001 - a store problem is lint's to report, not these lists'
        return []
    return list(cards)


def _native(ws: workspace.Workspace | None, cards: list[Any]) -> list[dict[str, Any]]:
    """Cards a host loads by itself (its rule folders, an imported file still in place): that
    host's hook leaves them out, the others route them."""
    if ws is None:
        return []
    from engram import native_loads

    out = []
    for card in cards:
        note = native_loads.for_workspace(str(ws.root), card.path, card.provenance)
        if note:
            out.append({"id": card.id, "path": card.path, "note": note})
    return out


def _loaded_unseen(ws: workspace.Workspace | None, cards: list[Any],
                   configured: list[health.Configured]) -> list[dict[str, str]]:
    """A linked host that may load a file by itself with no hook told (`loads_unseen` in its
    definition), where none of the files that stop it exists: the cards imported from that
    file, still whole, may reach the host twice. Leaving them to the host would lose them
    wherever it does not load it, so say so, with the ways out that hold on every version."""
    if ws is None or not cards:
        return []
    from engram import native_loads

    root = str(ws.root)
    warnings = []
    for name in dict.fromkeys(row.host for row in configured if row.present):
        definition = host_registry.load_host(name)
        shown = definition.get("display_name") or name
        unseen = definition.get("loads_unseen") or {}
        for source, unless in unseen.items():
            if not native_loads.still_loaded(os.path.join(root, source)) \
                    or any(os.path.exists(os.path.join(root, other)) for other in unless):
                continue
            ids = [card.id for card in cards
                   if source in native_loads.derived_sources(card.provenance)]
            if not ids:
                continue
            warnings.append({
                "warning": f"some versions of {shown} load {source} by themselves where there is "
                           f"no {' or '.join(unless)}, and do not tell the hook: the {len(ids)} "
                           f"card{'s' if len(ids) != 1 else ''} imported from it "
                           f"({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''}) may "
                           f"reach {shown} twice",
                "fix": f"once the cards are reviewed, `engram import {source} --replace` (the "
                       f"host then loads the short pointer); or add a {unless[0]} holding "
                       f"`@{source}` (engram then leaves those cards to the host on every "
                       "version)"})
    return warnings


def collect(cwd: Path) -> dict[str, Any]:
    """The whole report as the versioned JSON envelope `doctor --json` prints."""
    ws = workspace.load(cwd)
    settings = ws.settings if ws else {}
    rules = str(settings.get("hooks.path_rules", config.SETTINGS_BY_KEY["hooks.path_rules"].default))
    hook_setting = command_setting(cwd)
    root = project_root(cwd)
    rows = []
    configured: list[health.Configured] = []
    for host in host_registry.registry():
        item: dict[str, Any] = {"host": host.name, "display_name": host.display_name,
                                "supported": host.supported, "reason": host.reason,
                                "configured": [],
                                # Firing in this workspace only: another project's hooks
                                # firing says nothing about this one's.
                                "observed": health.observed(host, ws.key if ws else "")}
        if host.supported and host.install:
            found = health.host_rows(host, root, rules, hook_setting)
            configured += found
            item["configured"] = [row.to_json() for row in found]
        rows.append(item)
    problems = [{"host": r["host"], "scope": c["scope"], "path": c["path"],
                 "problem": c["problem"], "fix": c["fix"]}
                for r in rows for c in r["configured"] if c["broken"]]
    problems += [{"host": "engram", "scope": "state", **p} for p in health.state_problems()]
    problems += health.rule_folder_problems(root)
    commands = [command for row in configured for command in row.commands]
    cards = _cards(ws)
    warnings = health.command_warnings(commands) + health.layered_links(configured) \
        + _loaded_unseen(ws, cards, configured)
    return output.envelope("doctor", {
        "ok": not problems,
        "workspace": {
            "root": str(ws.root) if ws else None,
            "memory_roots": [{"path": str(r.path), "scope": r.scope} for r in ws.roots] if ws else [],
            "read": settings.get("read", "auto"),
            "proof": settings.get("proof", "off"),
            "path_rules": rules,
            "warnings": list(ws.warnings) if ws else [],
            "loaded_natively": _native(ws, cards),
        },
        "lint": _lint(ws, configured),
        "hosts": rows,
        "problems": problems,
        "warnings": warnings,
    })


def _observed_text(events: dict[str, Any]) -> str:
    if not events:
        return "never observed"
    parts = []
    for name, info in sorted(events.items()):
        rules = info.get("rules") or {}
        which = f", {len(rules)} rule file{'s' if len(rules) != 1 else ''}" if rules else ""
        parts.append(f"{name} x{info.get('count', '?')} (last {info.get('last_fired', '?')}, "
                     f"{info.get('last_bytes', '?')} bytes{which})")
    return "; ".join(parts)


def _configured_text(row: dict[str, Any], cwd: Path) -> str:
    where = display(Path(row["path"]), cwd)
    if row["state"] == "not linked":
        return f"{row['scope']}: not linked ({where}{'' if row['exists'] else ', absent'})"
    text = f"{row['scope']}: {row['state']} {where}"
    if row["present"]:
        text += f"; present: {', '.join(row['present'])}"
    if row["problem"]:
        text += f"; BROKEN: {row['problem']}"
    return text


def run(as_json: bool = False, cwd: Path | None = None) -> int:
    cwd = (cwd or Path.cwd()).resolve()
    report = collect(cwd)
    if as_json:
        output.write_json(report)
        return 0 if report["ok"] else 1
    ws = report["workspace"]
    output.line(f"workspace: {ws['root'] or 'none (no .git, .agents/.engram or .agents/engram.json above)'}")
    for root in ws["memory_roots"]:
        output.line(f"  memory root ({root['scope']}): {display(Path(root['path']), cwd)}")
    if ws["root"] and not ws["memory_roots"]:
        output.line("  no memory roots (create .agents/.engram/)")
    output.line(f"  read: {ws['read']}   proof: {ws['proof']}   path rules: {ws['path_rules']}")
    for warning in ws["warnings"]:
        output.line(f"  warning: {warning}")
    native = ws["loaded_natively"]
    for item in native[:NATIVE_SHOWN]:
        output.line(f"  card {item['id']}: {item['note']}; routed to the other hosts only")
    if len(native) > NATIVE_SHOWN:
        output.line(f"  ... and {len(native) - NATIVE_SHOWN} more cards loaded by a host itself "
                    "(doctor --json lists them)")
    lint = report["lint"]
    output.line(f"lint: {lint['errors']} errors, {lint['warnings']} warnings" if lint["available"]
               else f"lint: {lint['reason']}")
    for secret in lint.get("secrets", []):
        output.line(f"  secret: {display(Path(secret['path']), cwd)}:{secret['line']}: "
                   f"{secret['message']}")
    output.line("")
    for row in report["hosts"]:
        if not row["supported"]:
            output.line(f"{row['host']}: not supported (see `engram link {row['host']}`)")
            continue
        output.line(f"{row['host']} ({row['display_name']})")
        for configured in row["configured"]:
            output.line(f"  configured  {_configured_text(configured, cwd)}")
        output.line(f"  observed    {_observed_text(row['observed'])}")
    if report["warnings"]:
        output.line("")
        for warning in report["warnings"]:
            output.line(f"WARNING {warning['warning']}\n  fix: {warning['fix']}")
    if report["problems"]:
        output.line("")
        for problem in report["problems"]:
            output.line(f"BROKEN {problem['host']} ({problem['scope']}): {problem['problem']}\n"
                       f"  fix: {problem['fix']}")
        return 1
    return 0
