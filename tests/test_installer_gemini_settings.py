"""Gemini CLI skips `enabled`, `disabled` and `notifications` inside `hooks` when it reads
the hooks (HOOKS_CONFIG_FIELDS in 0.61.0: those settings' older place, before `hooksConfig`),
so a settings file with them is valid to Gemini. engram takes them for no event: link, dry
run, upgrade and unlink keep them byte for byte, and doctor reads the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from installer_helpers import PINNED, engram

from engram.commands import doctor
from engram.installer import jsonc


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


LEGACY = ['"enabled": true', '"disabled": ["audit"]', '"notifications": false',
          '"enabled": false, "disabled": [], "notifications": {"x": 1}']


def _doctor_row(workspace: Path) -> dict:
    row = next(r for r in doctor.collect(workspace)["hosts"] if r["host"] == "gemini")
    return next(c for c in row["configured"] if c["scope"] == "project")


@pytest.mark.parametrize("legacy", LEGACY)
def test_settings_inside_hooks_are_kept_and_linked(legacy: str, workspace: Path) -> None:
    start = '{\n  "hooks": {\n    ' + legacy + ',\n    "BeforeTool": []\n  }\n}\n'
    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(start)
    kept = {k: v for k, v in jsonc.parse(start)["hooks"].items() if k != "BeforeTool"}
    assert engram("link", "gemini", "--dry-run", cwd=workspace) == 0
    assert engram("link", "gemini", cwd=workspace) == 0
    linked = jsonc.parse(path.read_text())
    assert "BeforeAgent" in linked["hooks"]
    assert {k: linked["hooks"][k] for k in kept} == kept
    for key in kept:  # the user's text, not a re-rendering
        assert legacy.split(f'"{key}": ', 1)[1].split(", \"")[0] in path.read_text()
    row = _doctor_row(workspace)
    assert row["state"] == "linked" and not [k for k in kept if k in row["present"] + row["stale"]]
    assert engram("upgrade", cwd=workspace) == 0
    assert jsonc.parse(path.read_text()) == linked
    assert engram("unlink", "gemini", cwd=workspace) == 0
    assert path.read_text() == start


def test_a_users_own_entry_beside_the_settings_is_still_found(workspace: Path) -> None:
    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    start = json.dumps({"hooks": {"disabled": ["x"], "BeforeAgent": [{"hooks": [
        {"type": "command", "command": "uvx engram hook gemini"}]}]}}, indent=2) + "\n"
    path.write_text(start)
    assert engram("link", "gemini", cwd=workspace) == 0
    linked = json.loads(path.read_text())
    assert linked["hooks"]["BeforeAgent"] == json.loads(start)["hooks"]["BeforeAgent"]
    assert linked["hooks"]["disabled"] == ["x"] and "SessionStart" in linked["hooks"]
    assert _doctor_row(workspace)["own_entries"] == ["BeforeAgent"]
    assert engram("unlink", "gemini", cwd=workspace) == 0
    assert path.read_text() == start


def test_other_hosts_still_refuse_such_a_key(workspace: Path) -> None:
    """Claude Code has no such settings inside `hooks`: there a non-list is still refused."""
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    start = '{\n  "hooks": {\n    "enabled": true\n  }\n}\n'
    path.write_text(start)
    assert engram("link", "claude", cwd=workspace) != 0
    assert path.read_text() == start
