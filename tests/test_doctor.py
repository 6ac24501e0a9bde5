"""doctor: configured and observed reported apart; the JSON envelope pinned; exit 1 + fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from installer_helpers import engram

VENV_ENGRAM = str(Path(sys.executable).parent / "engram")


@pytest.fixture(autouse=True)
def resolvable(monkeypatch: pytest.MonkeyPatch) -> None:
    # A command that resolves on this machine, so only what a test breaks is broken.
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", VENV_ENGRAM if Path(VENV_ENGRAM).exists()
                       else "/bin/sh")


def doctor(workspace: Path, capsys: pytest.CaptureFixture) -> tuple[int, dict]:
    capsys.readouterr()
    code = engram("doctor", "--json", cwd=workspace)
    return code, json.loads(capsys.readouterr().out)


def host(report: dict, name: str) -> dict:
    return next(h for h in report["hosts"] if h["host"] == name)


def test_envelope_keys_are_pinned(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    code, report = doctor(workspace, capsys)
    assert code == 0
    assert set(report) == {"engram", "version", "ok", "workspace", "lint", "hosts", "problems",
                           "warnings"}
    assert report["version"] == 1
    assert set(report["workspace"]) == {"root", "memory_roots", "read", "proof", "path_rules",
                                        "warnings", "loaded_natively"}
    assert set(report["lint"]) >= {"available", "errors", "warnings"}
    claude = host(report, "claude")
    assert set(claude) == {"host", "display_name", "supported", "reason", "configured", "observed"}
    assert set(claude["configured"][0]) == {
        "scope", "path", "exists", "state", "present", "stale", "missing", "command_resolvable",
        "timeout_unit_ok", "own_entries", "twice", "broken", "problem", "fix"}
    assert [c["scope"] for c in claude["configured"]] == ["project", "local", "global"]
    assert [c["scope"] for c in host(report, "codex")["configured"]] == ["project", "global"]
    assert host(report, "copilot")["configured"] == []
    assert report["workspace"]["read"] == "auto" and report["workspace"]["proof"] == "off"


def test_linked_host_is_configured_but_never_observed(workspace: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    assert engram("link", "codex", cwd=workspace) == 0
    code, report = doctor(workspace, capsys)
    codex = host(report, "codex")
    project = codex["configured"][0]
    assert code == 0 and project["state"] == "linked" and not project["broken"]
    assert project["present"] == ["SessionStart", "UserPromptSubmit", "PreToolUse", "PreCompact",
                                  "SubagentStart"]
    assert project["command_resolvable"] is True and project["timeout_unit_ok"] is True
    assert codex["observed"] == {}


def test_observed_comes_from_the_state_dir(workspace: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture) -> None:
    from engram import paths

    (tmp_path / "state").mkdir(exist_ok=True)
    key = paths.workspace_key(str(workspace.resolve()))
    lines = [{"host": "gemini", "event": "BeforeAgent", "at": f"2026-11-30T10:00:0{i}Z",
              "bytes": 800 + i, "ms": 20.5, "ws": key} for i in range(3)]
    lines.append({**lines[0], "ws": "another-workspace"})
    (tmp_path / "state" / "observed.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines) + '{"torn": ')
    code, report = doctor(workspace, capsys)
    assert host(report, "gemini")["observed"] == {"BeforeAgent": {
        "count": 3, "last_fired": "2026-11-30T10:00:02Z", "last_bytes": 802, "last_ms": 20.5}}
    assert host(report, "gemini")["configured"][0]["state"] == "not linked"  # kept apart
    assert engram("doctor", cwd=workspace) == 0
    assert "BeforeAgent x3" in capsys.readouterr().out


def test_corrupt_observed_file_means_never_observed(workspace: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "state").mkdir(exist_ok=True)
    (tmp_path / "state" / "observed.jsonl").write_text("{broken\n\x00garbage")
    code, report = doctor(workspace, capsys)
    assert code == 0 and all(h["observed"] == {} for h in report["hosts"])


def test_wrong_unit_stale_entry_and_missing_event_are_broken_with_the_fix(
        workspace: Path, capsys: pytest.CaptureFixture) -> None:
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir()
    command = f"{VENV_ENGRAM} hook claude"
    path.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": command, "timeout": 10000}]}]}}))
    code, report = doctor(workspace, capsys)
    row = host(report, "claude")["configured"][0]
    assert code == 1 and row["broken"]
    assert row["timeout_unit_ok"] is False
    assert row["stale"] == ["SessionStart"]
    assert "UserPromptSubmit" in row["missing"] and "SessionStart" not in row["missing"]
    assert row["fix"] == "engram upgrade"
    assert report["problems"][0]["host"] == "claude" and not report["ok"]
    assert engram("doctor", cwd=workspace) == 1
    assert "fix: engram upgrade" in capsys.readouterr().out
    assert engram("upgrade", cwd=workspace) == 0
    assert doctor(workspace, capsys)[0] == 0


def test_a_command_that_no_longer_resolves_is_flagged(workspace: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", "/gone/venv/bin/engram")
    assert engram("link", "windsurf", cwd=workspace) == 0
    code, report = doctor(workspace, capsys)
    row = host(report, "windsurf")["configured"][0]
    assert code == 1 and row["command_resolvable"] is False
    assert "no longer resolves" in row["problem"]


def test_unparseable_config_is_reported_not_crashed(workspace: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    path = workspace / ".cursor" / "hooks.json"
    path.parent.mkdir()
    path.write_text("{oops")
    code, report = doctor(workspace, capsys)
    row = host(report, "cursor")["configured"][0]
    assert code == 1 and row["state"] == "unreadable" and row["fix"]


def test_lint_unavailable_is_shown_not_fatal(workspace: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "engram.lint", None)  # makes the import fail
    code, report = doctor(workspace, capsys)
    assert code == 0 and report["lint"]["available"] is False
    assert report["lint"]["reason"] == "lint unavailable"


def test_memory_roots_and_modes(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    (workspace / ".agents" / "engram.json").write_text('{"read": "startup", "proof": "compact"}')
    code, report = doctor(workspace, capsys)
    assert report["workspace"]["memory_roots"] == [
        {"path": str(workspace / ".agents" / ".engram"), "scope": "workspace"}]
    assert (report["workspace"]["read"], report["workspace"]["proof"]) == ("startup", "compact")


def test_observed_firing_is_per_workspace_and_per_rule_file(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    """Two linked projects under one HOME: hooks that fired in one are not reported for the
    other (hooks untrusted there never ran), and CLAUDE.md loads do not pass for engram rule
    loads."""
    from hookkit import make_workspace, payload

    from engram import hook

    first = make_workspace(tmp_path / "first")
    second = make_workspace(tmp_path / "second")
    for ws in (first, second):
        assert engram("link", "codex", cwd=ws) == 0
    for _ in range(2):
        hook.handle("codex", json.dumps(payload("codex", "SessionStart.json", first)).encode())
    claude_md = payload("claude", "InstructionsLoaded.json", first,
                        file_path=str(first / "CLAUDE.md"))
    hook.handle("claude", json.dumps(claude_md).encode())

    _, report = doctor(second, capsys)
    assert host(report, "codex")["observed"] == {} and host(report, "claude")["observed"] == {}
    assert engram("doctor", cwd=second) == 0
    assert capsys.readouterr().out.count("never observed") >= 2

    _, report = doctor(first, capsys)
    assert host(report, "codex")["observed"]["SessionStart"]["count"] == 2
    claude = host(report, "claude")["observed"]
    assert set(claude) == {"InstructionsLoaded (other files)"}  # not a rule load

    rule = payload("claude", "InstructionsLoaded.json", first,
                   file_path=str(first / ".claude" / "rules" / "engram" / "release.md"))
    hook.handle("claude", json.dumps(rule).encode())
    _, report = doctor(first, capsys)
    loaded = host(report, "claude")["observed"]["InstructionsLoaded"]
    assert loaded["count"] == 1 and loaded["rules"] == {".claude/rules/engram/release.md": 1}
    _, report = doctor(second, capsys)
    assert host(report, "claude")["observed"] == {}


def test_doctor_reads_each_config_file_once(workspace: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture) -> None:
    """The command warnings take the hook commands from the rows already inspected: a linked
    config file is read and parsed once per run, not a second time for its commands."""
    from engram.installer import filedance, health, plan

    assert engram("link", "claude", cwd=workspace) == 0
    assert engram("link", "codex", "--global", cwd=workspace) == 0
    # Too big for a linked host's budget: lint (inside doctor) warns only for linked hosts.
    (workspace / ".agents" / ".engram" / "big.md").write_text(
        "---\nid: big\ntags: [big]\n---\n" + "A long rule line about the build.\n" * 600)
    from engram import lint
    from engram import workspace as workspace_module

    expected = lint.lint_workspace(workspace_module.load(workspace))
    assert any("big" in p.path for p in expected if p.severity == "warning")
    reads: dict[str, int] = {}
    real = filedance.read_config_bytes

    def counting(path: Path) -> bytes:
        reads[str(path)] = reads.get(str(path), 0) + 1
        return real(path)

    for module in (health, plan):
        monkeypatch.setattr(module, "read_config_bytes", counting)
    code, report = doctor(workspace, capsys)
    assert report["lint"]["warnings"] == sum(1 for p in expected if p.severity == "warning")
    assert report["lint"]["errors"] == sum(1 for p in expected if p.severity == "error")
    linked = [c["path"] for h in report["hosts"] for c in h["configured"] if c["state"] == "linked"]
    assert len(linked) == 2 and all(reads[path] == 1 for path in linked), reads


AGENTS_CARD = """---
id: {id}
title: "{id}"
card: "A habit from AGENTS.md."
derived_from: "AGENTS.md#{id}"
---
Follow the {id} habit.
"""


@pytest.mark.parametrize("case", ["no CLAUDE.md", "a CLAUDE.md", ".claude/CLAUDE.md",
                                  "AGENTS.md replaced", "claude not linked", "not imported"])
def test_cards_from_an_agents_md_newer_claude_loads_itself_are_named(
        workspace: Path, capsys: pytest.CaptureFixture, case: str) -> None:
    """Claude Code 2.1.332 loads AGENTS.md by itself in a project without a CLAUDE.md (its
    agents_md plugin, gated, on by default; seen against the fake model) and fires no
    InstructionsLoaded for it, so the hook cannot leave the imported cards to it: doctor says
    they may reach Claude twice, with the two ways out that hold on every version."""
    (workspace / "AGENTS.md").write_text("# Agents\n\n" + "Use uv for Python.\n" * 40)
    if case != "not imported":
        for card_id in ("python-tooling", "testing"):
            (workspace / ".agents" / ".engram" / f"{card_id}.md").write_text(
                AGENTS_CARD.format(id=card_id))
    if case == "a CLAUDE.md":
        (workspace / "CLAUDE.md").write_text("@AGENTS.md\n")
    if case == ".claude/CLAUDE.md":
        (workspace / ".claude").mkdir()
        (workspace / ".claude" / "CLAUDE.md").write_text("Be brief.\n")
    if case == "AGENTS.md replaced":
        from engram import native_loads

        (workspace / "AGENTS.md").write_text(f"# Agents\n\n{native_loads.POINTER_MARK}\n")
        assert not native_loads.still_loaded(str(workspace / "AGENTS.md"))
    if case != "claude not linked":
        assert engram("link", "claude", cwd=workspace) == 0
    _code, report = doctor(workspace, capsys)
    named = [w for w in report["warnings"] if "AGENTS.md" in w["warning"]]
    if case == "no CLAUDE.md":
        assert len(named) == 1
        assert "python-tooling, testing" in named[0]["warning"]
        assert "engram import AGENTS.md --replace" in named[0]["fix"]
        assert "@AGENTS.md" in named[0]["fix"]
        capsys.readouterr()
        engram("doctor", cwd=workspace)
        assert "may reach Claude Code twice" in capsys.readouterr().out
    else:
        assert named == []
