"""What link and unlink leave behind in a user's folders: who owns what engram creates when
it runs as root, the folders it made, and the line it added to `.git/info/exclude`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from installer_helpers import PINNED, engram

NOBODY = 65534
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                             reason="needs root to chown")


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


def _owner(path: Path) -> tuple[int, int]:
    info = os.lstat(path)
    return info.st_uid, info.st_gid


def _tree(folder: Path) -> list[Path]:
    return [folder, *sorted(folder.rglob("*"))]


# -- run as root ------------------------------------------------------------------------------

@as_root
def test_root_gives_what_it_creates_in_a_users_home_to_that_user(isolated_dirs: Path,
                                                                 workspace: Path) -> None:
    """Found: `sudo engram link claude --global` with no ~/.claude yet made the folder and the
    settings file owned by root, so the user's own Claude Code could not save its settings."""
    os.chown(isolated_dirs, NOBODY, NOBODY + 1)
    assert engram("link", "claude", "--global", cwd=workspace) == 0
    folder = isolated_dirs / ".claude"
    assert (folder / "settings.json").is_file()
    assert {p.name: _owner(p) for p in _tree(folder)} == \
        {p.name: (NOBODY, NOBODY + 1) for p in _tree(folder)}


@as_root
def test_root_gives_new_project_files_and_folders_to_the_projects_owner(workspace: Path) -> None:
    """Also the native rule files and their folder, and a new .git/info/exclude."""
    (workspace / ".agents" / "engram.json").write_text('{"hooks": {"path_rules": "native"}}')
    (workspace / ".agents" / ".engram" / "py-style.md").write_text(
        "---\nid: py-style\ntitle: Python style\napplies_to: ['**/*.py']\n---\nUse ruff.\n")
    for path in _tree(workspace):
        os.chown(path, NOBODY, NOBODY)
    assert engram("link", "claude", "--local", cwd=workspace) == 0
    assert engram("link", "claude", cwd=workspace) == 0
    made = [*_tree(workspace / ".claude"), *_tree(workspace / ".git")]
    assert workspace / ".claude" / "rules" / "engram" / "py-style.md" in made
    assert workspace / ".git" / "info" / "exclude" in made
    assert [p for p in made if _owner(p) != (NOBODY, NOBODY)] == []


@as_root
def test_root_keeps_its_own_ownership_where_the_parent_is_roots(workspace: Path) -> None:
    os.chown(workspace, 0, 0)
    assert engram("link", "claude", cwd=workspace) == 0
    assert _owner(workspace / ".claude") == (0, 0)
    assert _owner(workspace / ".claude" / "settings.json") == (0, 0)


# -- folders engram made ----------------------------------------------------------------------

ORDERS = [
    [("link", "claude"), ("link", "claude", "--local"),
     ("unlink", "claude"), ("unlink", "claude", "--local")],
    [("link", "claude"), ("link", "claude", "--local"),
     ("unlink", "claude", "--local"), ("unlink", "claude")],
    [("link", "claude", "--local"), ("link", "claude"),
     ("unlink", "claude"), ("unlink", "claude", "--local")],
    [("link", "claude", "--local"), ("link", "claude"),
     ("unlink", "claude", "--local"), ("unlink", "claude")],
]


@pytest.mark.parametrize("steps", ORDERS, ids=lambda s: "/".join(" ".join(a[1:]) for a in s))
def test_unlink_in_any_order_removes_the_folder_engram_made(steps: list[tuple[str, ...]],
                                                            workspace: Path) -> None:
    """Found: link, link --local, unlink, unlink --local left an empty `.claude/`: each file
    recorded only the folders it had to create itself."""
    for args in steps:
        assert engram(*args, cwd=workspace) == 0, args
    assert not (workspace / ".claude").exists()


@pytest.mark.parametrize("steps", ORDERS[:2], ids=["project-first", "local-first"])
def test_a_folder_the_user_had_stays(steps: list[tuple[str, ...]], workspace: Path) -> None:
    (workspace / ".claude").mkdir()
    for args in steps:
        assert engram(*args, cwd=workspace) == 0, args
    assert (workspace / ".claude").is_dir()
    assert list((workspace / ".claude").iterdir()) == []


def test_a_folder_engram_made_stays_while_something_is_in_it(workspace: Path) -> None:
    for args in ORDERS[0][:2]:
        assert engram(*args, cwd=workspace) == 0
    (workspace / ".claude" / "agents.md").write_text("mine\n")
    for args in ORDERS[0][2:]:
        assert engram(*args, cwd=workspace) == 0
    assert [p.name for p in (workspace / ".claude").iterdir()] == ["agents.md"]


def test_a_folder_made_again_by_the_user_is_not_taken_for_engrams(workspace: Path) -> None:
    """engram made `.claude/`, the user removed it and made their own: that one is theirs."""
    assert engram("link", "claude", "--local", cwd=workspace) == 0
    assert engram("link", "claude", cwd=workspace) == 0
    local = workspace / ".claude" / "settings.local.json"
    data = local.read_bytes()
    settings = (workspace / ".claude" / "settings.json").read_bytes()
    for path in (workspace / ".claude").iterdir():
        path.unlink()
    held = os.open(workspace / ".claude", os.O_RDONLY)  # its inode is not reused meanwhile
    try:
        (workspace / ".claude").rmdir()
        (workspace / ".claude").mkdir()
    finally:
        os.close(held)
    local.write_bytes(data)
    (workspace / ".claude" / "settings.json").write_bytes(settings)
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert engram("unlink", "claude", "--local", cwd=workspace) == 0
    assert (workspace / ".claude").is_dir()


# -- .git/info/exclude ------------------------------------------------------------------------

EXCLUDE = "# git ls-files --others --exclude-from=.git/info/exclude\n*.swp\n"


@pytest.mark.parametrize("before", [EXCLUDE, "*.swp", "", None],
                         ids=["lines", "no-final-newline", "empty", "absent"])
def test_unlink_local_takes_back_the_exclude_line_it_added(before: str | None,
                                                           workspace: Path) -> None:
    """Found: unlink --local left `/.claude/settings.local.json` in .git/info/exclude."""
    exclude = workspace / ".git" / "info" / "exclude"
    if before is not None:
        exclude.parent.mkdir(parents=True)
        exclude.write_bytes(before.encode())
    assert engram("link", "claude", "--local", cwd=workspace) == 0
    assert "/.claude/settings.local.json\n" in exclude.read_text()
    assert engram("unlink", "claude", "--local", cwd=workspace) == 0
    if before is None:
        assert not exclude.exists() or exclude.read_bytes() == b""
    else:
        assert exclude.read_bytes() == before.encode()


def test_unlink_local_keeps_an_exclude_line_the_user_wrote(workspace: Path) -> None:
    exclude = workspace / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True)
    exclude.write_text("/.claude/settings.local.json\n")
    assert engram("link", "claude", "--local", cwd=workspace) == 0
    assert engram("unlink", "claude", "--local", cwd=workspace) == 0
    assert exclude.read_text() == "/.claude/settings.local.json\n"


def test_unlink_local_keeps_the_line_while_the_personal_file_stays(workspace: Path) -> None:
    """The user wrote their own setting into the file engram made: it stays, still personal,
    so it stays out of git."""
    assert engram("link", "claude", "--local", cwd=workspace) == 0
    local = workspace / ".claude" / "settings.local.json"
    local.write_text(local.read_text().replace("{", '{"model": "opus", ', 1))
    assert engram("unlink", "claude", "--local", cwd=workspace) == 0
    assert local.exists()
    assert "/.claude/settings.local.json\n" in (workspace / ".git/info/exclude").read_text()


def test_unlink_local_takes_back_only_its_line_after_user_edits(workspace: Path) -> None:
    exclude = workspace / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True)
    exclude.write_text(EXCLUDE)
    assert engram("link", "claude", "--local", cwd=workspace) == 0
    exclude.write_text(exclude.read_text() + "build/\n")
    assert engram("unlink", "claude", "--local", cwd=workspace) == 0
    assert exclude.read_text() == EXCLUDE + "build/\n"


def _sudo_state(isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state dir under the user's own ~/.local/state, as `sudo` (keeping HOME) sees it."""
    parent = isolated_dirs / ".local" / "state"
    parent.mkdir(parents=True)
    for folder in (isolated_dirs, isolated_dirs / ".local", parent):
        os.chown(folder, NOBODY, NOBODY + 1)
    state = parent / "engram"
    monkeypatch.setenv("ENGRAM_STATE_DIR", str(state))
    return state


@as_root
def test_sudo_leaves_no_state_file_the_user_cannot_write(
        isolated_dirs: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found: `sudo engram link claude --global` made the state dir's backups, locks and
    records root's: every later hook the user's host ran (not root) could not take its lock
    or write its cache, failed open, and delivered nothing, silently, for good."""
    from engram import cli

    state = _sudo_state(isolated_dirs, monkeypatch)
    assert cli.run(["link", "claude", "--global", "--cwd", str(workspace)]) == 0
    assert cli.run(["unlink", "claude", "--global", "--cwd", str(workspace)]) == 0
    made = _tree(state)
    assert len(made) > 3 and (state / "backups") in made
    assert [p for p in made if _owner(p) != (NOBODY, NOBODY + 1)] == []


@as_root
def test_doctor_reports_state_files_another_user_owns(
        isolated_dirs: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A state dir an older engram left root's under `sudo`: doctor names it and the chown."""
    from engram.commands import doctor

    state = _sudo_state(isolated_dirs, monkeypatch)
    (state / "locks").mkdir(parents=True)
    os.chown(state, NOBODY, NOBODY + 1)
    (state / "locks" / "x.lock").write_text("")  # root's, as sudo left it

    def problems() -> list[dict]:
        return [p for p in doctor.collect(workspace)["problems"] if p["scope"] == "state"]

    found = problems()
    assert len(found) == 1, found
    assert "2 files or folders" in found[0]["problem"] and "fail open" in found[0]["problem"]
    assert found[0]["fix"] == f"sudo chown -R {NOBODY}:{NOBODY + 1} {state}"
    for path in _tree(state):
        os.chown(path, NOBODY, NOBODY + 1)
    assert problems() == []
