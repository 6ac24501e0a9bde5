"""How a host's config lives on disk, and who else writes it: engram's edit must keep what the
file is beyond its text (extended attributes, an ACL) and must never clobber a change another
program (the host saving its settings, the user's editor) made after engram read the file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest
from installer_helpers import PINNED, engram

from engram import fileio
from engram.installer import filedance


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


def claude_settings(workspace: Path, text: str) -> Path:
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def ours(path: Path) -> int:
    return path.read_text(encoding="utf-8").count(f"{PINNED} hook")


HOST_SAVE = '{\n  "model": "opus",\n  "theme": "dark"\n}\n'


def _interleave(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, target: Path,
                write: Callable[[], None]) -> list[bool]:
    """Make another program save `target` once, the moment engram calls `module.name` while
    working on it (after its read, before its replace). Returns a flag list: [True] once done."""
    real = getattr(module, name)
    done: list[bool] = []

    def hooked(*args: Any, **kwargs: Any) -> Any:
        first = args[0] if args else None
        about_target = first is None or Path(os.fspath(first)).name.startswith(
            (target.name, f".{target.name}."))
        if not done and about_target:
            done.append(True)
            write()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, hooked)
    return done


# Each point engram passes between reading the file and replacing it: recording the file's
# pre-engram original, backing up the bytes it read, writing the new file beside it.
POINTS = [(filedance, "_record_original"), (filedance, "_backup"), (fileio, "_temp_name")]


@pytest.mark.parametrize("module, name", POINTS, ids=[n for _, n in POINTS])
def test_a_host_save_between_read_and_replace_is_kept_by_link(
        module: Any, name: str, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = claude_settings(workspace, '{\n  "model": "opus"\n}\n')
    done = _interleave(monkeypatch, module, name, path,
                       lambda: path.write_text(HOST_SAVE, encoding="utf-8"))
    assert engram("link", "claude", cwd=workspace) == 0
    assert done, f"engram never reached {name}"
    settings = json.loads(path.read_text(encoding="utf-8"))
    assert settings.get("theme") == "dark", "the host's save was overwritten by engram's"
    assert ours(path) > 0


@pytest.mark.parametrize("module, name", POINTS[1:], ids=[n for _, n in POINTS[1:]])
def test_a_host_save_between_read_and_replace_is_kept_by_unlink(
        module: Any, name: str, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = claude_settings(workspace, '{\n  "model": "opus"\n}\n')
    assert engram("link", "claude", cwd=workspace) == 0
    linked = path.read_text(encoding="utf-8")
    saved = json.loads(linked)
    saved["theme"] = "dark"
    done = _interleave(monkeypatch, module, name, path,
                       lambda: path.write_text(json.dumps(saved, indent=2) + "\n", encoding="utf-8"))
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert done, f"engram never reached {name}"
    settings = json.loads(path.read_text(encoding="utf-8"))
    assert settings.get("theme") == "dark", "the host's save was overwritten by engram's"
    assert ours(path) == 0


def test_a_host_save_before_engram_deletes_the_file_it_made_keeps_the_file(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """engram created the file; unlink would delete it, but the host saved a setting in it
    after engram read it: the file stays, with the host's setting and none of engram's."""
    assert engram("link", "claude", cwd=workspace) == 0
    path = workspace / ".claude" / "settings.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    saved["theme"] = "dark"
    done = _interleave(monkeypatch, filedance, "_backup", path,
                       lambda: path.write_text(json.dumps(saved, indent=2) + "\n", encoding="utf-8"))
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert done
    assert path.exists(), "the file the host had just saved a setting in was deleted"
    assert json.loads(path.read_text(encoding="utf-8")) == {"theme": "dark"}


def test_restore_takes_the_lock_link_takes(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`engram restore` and `engram link` on one file at once must not interleave their read
    and replace: they wait for one lock."""
    path = claude_settings(workspace, '{\n  "model": "opus"\n}\n')
    taken: list[str] = []
    real = filedance.exclusive_lock

    def recording(lock_path: Any, timeout: float = 5.0) -> Any:
        taken.append(os.fspath(lock_path))
        return real(lock_path, timeout)

    monkeypatch.setattr(filedance, "exclusive_lock", recording)
    assert engram("link", "claude", cwd=workspace) == 0
    by_link = set(taken)
    taken.clear()
    assert engram("restore", "claude", "--original", cwd=workspace) == 0
    assert path.read_text(encoding="utf-8") == '{\n  "model": "opus"\n}\n'
    assert set(taken) & by_link, f"restore locked {taken}, link {sorted(by_link)}"


def test_a_host_save_during_restore_is_backed_up_before_it_is_replaced(
        workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    path = claude_settings(workspace, '{\n  "model": "opus"\n}\n')
    assert engram("link", "claude", cwd=workspace) == 0
    done = _interleave(monkeypatch, fileio, "_temp_name", path,
                       lambda: path.write_text(HOST_SAVE, encoding="utf-8"))
    assert engram("restore", "claude", "--original", cwd=workspace) == 0
    assert done
    assert path.read_text(encoding="utf-8") == '{\n  "model": "opus"\n}\n'
    saved = [b.path.read_text(encoding="utf-8") for b in filedance.backups(path) if not b.original]
    assert HOST_SAVE in saved, "the host's save was replaced without a backup"
