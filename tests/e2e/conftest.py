"""The end-to-end suite runs only when asked: `pytest -m e2e tests/e2e` (or ENGRAM_E2E=1).
The plain `pytest` of the README deselects it, so the unit tests stay fast and offline.

Each client module builds its conversations (module-scoped fixtures, once per client version
of the matrix) and its tests check one event each in what the fake model received; the summary
at the end lists, per client, the
events verified and every hook call's duration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from . import clients, harness

E2E_DIR = Path(__file__).resolve().parent


def _requested(config: pytest.Config) -> bool:
    return "e2e" in (config.getoption("-m") or "") or os.environ.get("ENGRAM_E2E") == "1"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test module names its client (`CLIENT = "claude"`); a test (or fixture) asking for
    `version` runs once per version of that client's matrix (pinned, latest; see
    clients.py), each version's conversations built and torn down together."""
    client = getattr(metafunc.module, "CLIENT", None)
    if "version" in metafunc.fixturenames and client in clients.CLIENTS:
        metafunc.parametrize("version", clients.versions(client), scope="module")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_DIR in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
    if _requested(config):
        return
    keep = [i for i in items if E2E_DIR not in Path(str(i.fspath)).resolve().parents]
    dropped = [i for i in items if i not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


TALLY: dict[str, dict[str, int]] = {}  # "<client> <version>" -> {outcome: count}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count each e2e test's outcome under its client and version (the matrix counts)."""
    if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
        return
    path, _, name = report.nodeid.partition("::")
    if Path(path).parent.name != E2E_DIR.name:  # a unit test of the same session
        return
    client = Path(path).stem.replace("test_e2e_", "")
    version = name.rsplit("[", 1)[1].rstrip("]") if name.endswith("]") else ""
    if client not in clients.CLIENTS:  # the broken-install test is parametrized by client
        client, version = version, ""
    if client not in clients.CLIENTS:
        return
    version = version if version in clients.versions(client) else clients.versions(client)[0]
    outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else \
        "xpassed" if hasattr(report, "wasxfail") else report.outcome
    tally = TALLY.setdefault(f"{client} {version}", {})
    tally[outcome] = tally.get(outcome, 0) + 1


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if not harness.REPORT:
        return
    write = terminalreporter.write_line
    terminalreporter.section("engram end-to-end")
    for label, tally in sorted(TALLY.items()):
        write(f"matrix {label}: " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(tally.items())))
    for client, entry in harness.REPORT.items():
        if entry.get("skipped"):
            write(f"{client}: SKIPPED: {entry['skipped']}")
            continue
        write(f"{client} {entry['version']}")
        for event, result in entry["events"].items():
            write(f"  {event:<34} {result}")
        hooks = entry["hooks"]
        if hooks:
            total = sum(int(v["calls"]) for v in hooks.values())
            worst = max(v["max_ms"] for v in hooks.values())
            write(f"  hook calls: {total}, slowest {worst:.1f} ms (limit {harness.HOOK_TIMEOUT_MS} ms)")
            client_side = entry.get("client_hooks") or {}
            for event, item in sorted(hooks.items()):
                seen = client_side.get(event)
                extra = (f"   client-side: mean {seen['mean_ms']:>6.1f} ms  max {seen['max_ms']:>6.1f} ms"
                         if seen else "")
                write(f"    {event:<20} {int(item['calls']):>3} calls  engram: mean {item['mean_ms']:>6.1f} ms"
                      f"  max {item['max_ms']:>6.1f} ms{extra}")
        if entry.get("calls"):
            write("  every call (engram ms), per client run:")
            for line in entry["calls"]:
                write(f"    {line}")
        for note in entry["notes"]:
            write(f"  note: {note}")
        if entry["stray"]:
            write(f"  refused (never left the machine): {', '.join(entry['stray'])}")
