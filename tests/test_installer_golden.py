"""Golden before/after files for every host, project and --global (HOME is a temp dir)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from installer_helpers import GOLDEN, PINNED, check_golden, engram

CONFIG = {
    "claude": (".claude/settings.json", ".claude/settings.json"),
    "codex": (".codex/hooks.json", ".codex/hooks.json"),
    "gemini": (".gemini/settings.json", ".gemini/settings.json"),
    "cursor": (".cursor/hooks.json", ".cursor/hooks.json"),
    "windsurf": (".windsurf/hooks.json", ".codeium/windsurf/hooks.json"),
    "opencode": (".opencode/plugins/engram.js", ".config/opencode/plugins/engram.js"),
}
SCOPES = ("project", "global")


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


def target(host: str, scope: str, workspace: Path, home: Path) -> Path:
    project, user = CONFIG[host]
    return workspace / project if scope == "project" else home / user


def scope_args(scope: str) -> list[str]:
    return ["--global"] if scope == "global" else []


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("host", sorted(CONFIG))
def test_fresh_link_matches_golden_and_unlink_removes_the_file(
        host: str, scope: str, workspace: Path, isolated_dirs: Path) -> None:
    path = target(host, scope, workspace, isolated_dirs)
    assert engram("link", host, *scope_args(scope), cwd=workspace) == 0
    suffix = path.suffix
    check_golden(path.read_text(encoding="utf-8"), f"{host}-{scope}-fresh.after{suffix}")
    assert engram("unlink", host, *scope_args(scope), cwd=workspace) == 0
    assert not path.exists()


FOREIGN = sorted(p.name.split("-")[0] for p in GOLDEN.glob("*-foreign.before.json"))


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("host", FOREIGN)
def test_foreign_config_link_golden_relink_identical_unlink_restores_bytes(
        host: str, scope: str, workspace: Path, isolated_dirs: Path) -> None:
    path = target(host, scope, workspace, isolated_dirs)
    path.parent.mkdir(parents=True, exist_ok=True)
    before = (GOLDEN / f"{host}-foreign.before.json").read_bytes()
    path.write_bytes(before)
    assert engram("link", host, *scope_args(scope), cwd=workspace) == 0
    linked = path.read_bytes()
    check_golden(linked.decode(), f"{host}-{scope}-foreign.after.json")
    assert engram("link", host, *scope_args(scope), cwd=workspace) == 0
    assert path.read_bytes() == linked  # link twice = link once, byte for byte
    assert engram("unlink", host, *scope_args(scope), cwd=workspace) == 0
    assert path.read_bytes() == before  # foreign keys, hooks and formatting untouched
    assert engram("unlink", host, *scope_args(scope), cwd=workspace) == 0
    assert path.read_bytes() == before  # unlink twice = unlink once


def test_legacy_entries_in_a_shared_group_are_replaced_and_foreign_ones_kept(
        workspace: Path) -> None:
    path = workspace / ".claude/settings.json"
    path.parent.mkdir(parents=True)
    shutil.copy(GOLDEN / "claude-legacy.before.json", path)
    assert engram("link", "claude", cwd=workspace) == 0
    check_golden(path.read_text(), "claude-project-legacy.after.json")
    assert engram("unlink", "claude", cwd=workspace) == 0
    check_golden(path.read_text(), "claude-project-legacy.unlinked.json")


def test_json_with_comments_keeps_every_comment(workspace: Path) -> None:
    path = workspace / ".gemini/settings.json"
    path.parent.mkdir(parents=True)
    before = (GOLDEN / "gemini-comments.before.json").read_bytes()
    path.write_bytes(before)
    assert engram("link", "gemini", cwd=workspace) == 0
    text = path.read_text()
    check_golden(text, "gemini-project-comments.after.json")
    for comment in ("// Gemini CLI settings", "// the dark one", "/* hooks stay on */"):
        assert comment in text
    assert engram("unlink", "gemini", cwd=workspace) == 0
    assert path.read_bytes() == before
