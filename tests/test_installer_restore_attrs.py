"""`engram restore` onto a file that is gone brings back the saved file as it was: its mode
(a settings file holding API keys kept 0600 must not come back world-readable) and, run as
root, its owner. Each backup and original records them beside its bytes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Iterator

import pytest
from installer_helpers import PINNED, engram

SECRET = '{"env": {"ANTHROPIC_API_KEY": "sk-not-a-real-key"}}\n'


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """A new file gets 0644 here, as on most machines."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def private_settings(workspace: Path) -> Path:
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(SECRET)
    os.chmod(path, 0o600)
    return path


@pytest.mark.parametrize("which", [(), ("--original",)])
def test_restore_of_a_removed_private_file_keeps_it_private(
        which: tuple[str, ...], workspace: Path) -> None:
    path = private_settings(workspace)
    assert engram("link", "claude", cwd=workspace) == 0
    path.unlink()
    assert engram("restore", "claude", *which, cwd=workspace) == 0
    assert path.read_text() == SECRET
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_restore_of_a_removed_file_keeps_its_unusual_mode(workspace: Path) -> None:
    path = private_settings(workspace)
    os.chmod(path, 0o640)
    assert engram("link", "claude", cwd=workspace) == 0
    assert engram("link", "claude", cwd=workspace) == 0
    path.unlink()
    assert engram("restore", "claude", cwd=workspace) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_restore_as_root_gives_a_removed_file_back_to_its_owner(workspace: Path) -> None:
    path = private_settings(workspace)
    os.chown(path, 4321, 4321)
    assert engram("link", "claude", cwd=workspace) == 0
    path.unlink()
    assert engram("restore", "claude", "--original", cwd=workspace) == 0
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4321, 4321, 0o600)
    assert json.loads(path.read_text())["env"]


def test_a_backup_with_no_record_of_its_mode_restores_as_before(workspace: Path) -> None:
    """Backups an older engram made hold no record: nothing fails, and the file comes back its
    owner's alone, as the backup is (nothing says who could read the file it was)."""
    path = private_settings(workspace)
    assert engram("link", "claude", cwd=workspace) == 0
    for record in (workspace.parent / "state" / "backups").rglob("*.meta.json"):
        record.unlink()
    path.unlink()
    assert engram("restore", "claude", "--original", cwd=workspace) == 0
    assert path.read_text() == SECRET
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
