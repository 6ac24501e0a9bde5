"""A file engram reads or edits for the user that is not a regular file (a FIFO, a socket, a
link to /dev/zero or /dev/null, a directory) is refused or passed over: the command ends
within seconds, with no traceback, and leaves the special file as it was. Run as real
processes with a timeout: a blocking open of a FIFO would hang the test itself."""

from __future__ import annotations

import errno
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engram", *args, "--cwd", str(cwd)],
                          capture_output=True, text=True, timeout=30, env=dict(os.environ),
                          stdin=subprocess.DEVNULL)


def fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def to_dev_zero(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")


def a_socket(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))  # the socket file stays after the process closes it


def kind(path: Path) -> str:
    info = os.lstat(path)
    return "link" if stat.S_ISLNK(info.st_mode) else "fifo" if stat.S_ISFIFO(info.st_mode) \
        else "socket" if stat.S_ISSOCK(info.st_mode) else "dir" if stat.S_ISDIR(info.st_mode) \
        else "file"


def dot_git_fifo(path: Path) -> None:
    path.rmdir()
    os.mkfifo(path)


def commondir_fifo(path: Path) -> None:
    """A worktree's `.git` file naming its folder, whose `commondir` is a FIFO."""
    path.rmdir()
    (path.parent / "gitdir").mkdir()
    os.mkfifo(path.parent / "gitdir" / "commondir")
    path.write_text("gitdir: gitdir\n")


CASES: list[tuple[str, str, Callable[[Path], None], tuple[str, ...]]] = [
    ("gitignore-fifo", ".gitignore", fifo, ("link", "claude", "--local")),
    ("gitignore-dev-zero", ".gitignore", to_dev_zero, ("link", "claude", "--local")),
    ("exclude-fifo", ".git/info/exclude", fifo, ("link", "claude", "--local")),
    ("exclude-dev-zero", ".git/info/exclude", to_dev_zero, ("link", "claude", "--local")),
    ("exclude-socket", ".git/info/exclude", a_socket, ("link", "claude", "--local")),
    ("dot-git-fifo", ".git", dot_git_fifo, ("link", "claude", "--local")),
    ("commondir-fifo", ".git", commondir_fifo, ("link", "claude", "--local")),
    ("settings-socket", ".claude/settings.json", a_socket, ("link", "claude")),
    ("settings-socket-restore", ".claude/settings.json", a_socket, ("restore", "claude")),
    ("settings-fifo-unlink", ".claude/settings.json", fifo, ("unlink", "claude")),
    ("settings-fifo-restore", ".claude/settings.json", fifo, ("restore", "claude")),
    ("plugin-fifo", ".opencode/plugins/engram.js", fifo, ("link", "opencode")),
    ("config-fifo", ".agents/engram.json", fifo, ("config", "set", "load.max_tokens", "900")),
    ("claude-md-fifo", "CLAUDE.md", fifo, ("import", "CLAUDE.md", "--replace")),
]


@pytest.mark.parametrize("name, rel, plant, args", CASES, ids=[c[0] for c in CASES])
def test_a_special_file_is_refused_or_passed_over_without_hanging(
        name: str, rel: str, plant: Callable[[Path], None], args: tuple[str, ...],
        workspace: Path) -> None:
    if args[0] == "restore":  # something to restore: a backup of the regular file it was
        (workspace / ".claude").mkdir()
        (workspace / rel).write_text("{}\n")
        assert cli("link", "claude", cwd=workspace).returncode == 0
        (workspace / rel).unlink()
    plant(workspace / rel)
    before = kind(workspace / rel)
    result = cli(*args, cwd=workspace)  # subprocess.TimeoutExpired: it hung
    assert result.returncode in (0, 1), (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "crash" not in result.stderr
    assert kind(workspace / rel) == before


def not_utf8(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"# caf\xe9 (Latin-1)\n/build\n")


@pytest.mark.parametrize("rel", [".gitignore", ".git/info/exclude"])
def test_git_lists_that_are_not_utf8_are_left_as_they_are(rel: str, workspace: Path) -> None:
    """Git reads its ignore lists as bytes; a Latin-1 comment in one crashed `link --local`."""
    not_utf8(workspace / rel)
    result = cli("link", "claude", "--local", cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert (workspace / rel).read_bytes() == b"# caf\xe9 (Latin-1)\n/build\n"
    assert cli("unlink", "claude", "--local", cwd=workspace).returncode == 0
    assert (workspace / rel).read_bytes() == b"# caf\xe9 (Latin-1)\n/build\n"


@pytest.mark.parametrize("error", [errno.EROFS, errno.EACCES, errno.ENOSPC])
def test_restore_that_cannot_write_says_so_and_changes_nothing(
        error: int, workspace: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A read-only mount, a folder the user may not write, a full disk: a clear refusal, exit
    1, the file and its folder as they were (no temp file left)."""
    from installer_helpers import engram

    from engram.installer import filedance

    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus"}\n')
    assert engram("link", "claude", cwd=workspace) == 0
    linked = path.read_bytes()
    listing = sorted(os.listdir(path.parent))

    def fail(*_args: object, **_kwargs: object) -> None:
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(filedance, "atomic_write_bytes", fail)
    capsys.readouterr()
    assert engram("restore", "claude", "--original", cwd=workspace) == 1
    err = capsys.readouterr().err
    assert "REFUSED .claude/settings.json" in err and os.strerror(error) in err
    assert path.read_bytes() == linked and sorted(os.listdir(path.parent)) == listing
