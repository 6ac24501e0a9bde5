"""A --global link goes where the host reads its settings: a user who moved the host's folder
with the host's own variable (Claude Code's CLAUDE_CONFIG_DIR, Codex's CODEX_HOME, OpenCode's
XDG_CONFIG_HOME) has engram's entries there, not in a ~/.claude or ~/.codex the host never
reads. An unset, empty or relative variable leaves the default folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from installer_helpers import engram

MOVED = [("claude", "CLAUDE_CONFIG_DIR", "settings.json", ".claude/settings.json"),
         ("codex", "CODEX_HOME", "hooks.json", ".codex/hooks.json"),
         ("opencode", "XDG_CONFIG_HOME", "opencode/plugins/engram.js",
          ".config/opencode/plugins/engram.js")]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.mark.parametrize(("host", "variable", "under_moved", "under_home"), MOVED)
def test_a_global_link_goes_where_the_user_moved_the_hosts_folder(
        isolated_dirs: Path, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        host: str, variable: str, under_moved: str, under_home: str) -> None:
    moved = tmp_path / "elsewhere"
    monkeypatch.setenv(variable, str(moved))
    assert engram("link", host, "--global", cwd=workspace) == 0
    written = moved / under_moved
    assert written.is_file() and "engram" in written.read_text(encoding="utf-8")
    assert not (isolated_dirs / under_home).exists()
    assert engram("link", host, "--global", cwd=workspace) == 0  # twice = once
    assert engram("unlink", host, "--global", cwd=workspace) == 0
    assert not written.exists()


@pytest.mark.parametrize("value", ["", "relative/dir", "$UNSET_ELSEWHERE"])
@pytest.mark.parametrize(("host", "variable", "under_moved", "under_home"), MOVED)
def test_a_variable_unset_empty_or_relative_leaves_the_default(
        isolated_dirs: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, value: str,
        host: str, variable: str, under_moved: str, under_home: str) -> None:
    monkeypatch.setenv(variable, value)
    monkeypatch.delenv("UNSET_ELSEWHERE", raising=False)
    assert engram("link", host, "--global", cwd=workspace) == 0
    assert (isolated_dirs / under_home).is_file()


def test_a_users_settings_in_the_moved_folder_are_merged_not_replaced(
        isolated_dirs: Path, workspace: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    moved = tmp_path / "claude-work"
    moved.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(moved))
    original = json.dumps({"model": "opus", "hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "notify-send done"}]}]}}, indent=2) + "\n"
    (moved / "settings.json").write_text(original, encoding="utf-8")
    assert engram("link", "claude", "--global", cwd=workspace) == 0
    linked = json.loads((moved / "settings.json").read_text(encoding="utf-8"))
    assert linked["model"] == "opus" and linked["hooks"]["Stop"][0]["hooks"][0]["command"] == "notify-send done"
    assert engram("unlink", "claude", "--global", cwd=workspace) == 0
    assert (moved / "settings.json").read_text(encoding="utf-8") == original


SHARED_FILES = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
                "gemini": ".gemini/settings.json", "cursor": ".cursor/hooks.json"}


@pytest.mark.parametrize("first", ["project", "global"])
@pytest.mark.parametrize("host", sorted(SHARED_FILES))
def test_a_workspace_at_home_links_its_one_file_once_in_either_scope(
        isolated_dirs: Path, host: str, first: str, capsys: pytest.CaptureFixture) -> None:
    """A dotfiles repository at `~`: the project's `.claude/settings.json` is the global
    `~/.claude/settings.json`. `link` and `link --global` rewrote each other's hook command
    (the portable form, then this installation's launcher, and back) on every run, said the
    host ran both files, and doctor called the project's entries stale. Now the second link,
    in either form, and upgrade change nothing, and doctor sees one linked file."""
    from engram.commands import doctor

    home = isolated_dirs
    (home / ".git").mkdir()
    path = home / SHARED_FILES[host]
    path.parent.mkdir()
    path.write_text('{"hooks": {}}\n')
    flags = {"project": [], "global": ["--global"]}
    order = [first, "global" if first == "project" else "project"]
    assert engram("link", host, *flags[order[0]], cwd=home) == 0
    linked = path.read_bytes()
    capsys.readouterr()
    for scope in [*order, *order]:
        assert engram("link", host, *flags[scope], cwd=home) == 0
        assert path.read_bytes() == linked, f"link {scope} rewrote the file"
    assert engram("upgrade", cwd=home) == 0
    assert path.read_bytes() == linked
    out = capsys.readouterr().out
    assert "runs both" not in out and out.count("UNCHANGED") == 5, out
    report = doctor.collect(home)
    rows = {c["scope"]: c for r in report["hosts"] if r["host"] == host for c in r["configured"]}
    for scope in ("project", "global"):
        assert rows[scope]["state"] == "linked" and not rows[scope]["stale"], rows[scope]
    assert not [w for w in report.get("warnings", []) if "once per file" in w["warning"]], report
    assert engram("unlink", host, *flags[order[1]], cwd=home) == 0
    assert path.read_text() == '{"hooks": {}}\n'
