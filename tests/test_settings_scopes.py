"""Personal settings stay personal: set-read and set-proof write the user's config unless
--project; `config view --global` shows only the user scope; the words for each mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.cli import run


def engram(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def user_config(home: Path) -> dict:
    path = home / ".config" / "engram" / "config.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def test_set_read_and_proof_write_the_user_scope_by_default(
        workspace: Path, isolated_dirs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "set-read", "startup", "--cwd", str(workspace))
    assert code == 0 and "(user scope)" in out
    code, out = engram(capsys, "set-proof", "compact", "--cwd", str(workspace))
    assert code == 0
    assert user_config(isolated_dirs) == {"read": "startup", "proof": "compact"}
    assert not (workspace / ".agents" / "engram.json").exists()


def test_project_shares_the_setting_and_wins_over_the_user_scope(
        workspace: Path, isolated_dirs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "set-read", "always", "--project", "--cwd", str(workspace))
    assert code == 0 and "(workspace scope)" in out
    assert json.loads((workspace / ".agents" / "engram.json").read_text()) == {"read": "always"}
    code, out = engram(capsys, "set-read", "startup", "--cwd", str(workspace))
    assert "which wins here" in out and "engram config unset read" in out
    code, out = engram(capsys, "set-read", "status", "--cwd", str(workspace))
    assert out.startswith("read: always (workspace)")


def test_the_words_for_each_mode(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "set-proof", "off", "--cwd", str(workspace))
    assert "memory is still injected" in out and "no proof line" in out
    code, out = engram(capsys, "set-read", "manual", "--cwd", str(workspace))
    assert "hooks inject nothing" in out and "engram route" in out
    code, out = engram(capsys, "set-read", "--help")
    assert "manual" in out and "--project" in out


def test_config_view_global_shows_only_the_user_scope(
        workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert engram(capsys, "config", "set", "load.limit", "4", "--cwd", str(workspace))[0] == 0
    code, out = engram(capsys, "config", "view", "--global", "--cwd", str(workspace))
    assert code == 0 and "nothing set" in out and "load.limit" not in out
    engram(capsys, "set-proof", "compact", "--cwd", str(workspace))
    code, out = engram(capsys, "config", "view", "--global", "--cwd", str(workspace))
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    assert len(lines) == 1 and lines[0].startswith('proof  "compact"')
    code, out = engram(capsys, "config", "view", "--cwd", str(workspace))
    assert "load.limit" in out and "(workspace)" in out
