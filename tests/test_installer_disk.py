"""How a host's config lives on disk, and who else writes it: engram's edit must keep what the
file is beyond its text (extended attributes, an ACL) and must never clobber a change another
program (the host saving its settings, the user's editor) made after engram read the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from installer_helpers import PINNED, engram

from engram import fileio
from engram.installer import filedance

VENV_ENGRAM = Path(sys.executable).parent / "engram"


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


# ---- what the file is beyond its text ---------------------------------------------------------

JSON_FILES = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
              "gemini": ".gemini/settings.json", "cursor": ".cursor/hooks.json",
              "windsurf": ".windsurf/hooks.json"}


def _set_xattr_or_skip(path: Path, name: str, value: bytes) -> None:
    if not hasattr(os, "setxattr"):
        pytest.skip("no extended attributes on this platform")
    try:
        os.setxattr(path, name, value)
    except OSError as exc:
        pytest.skip(f"the file system takes no {name}: {exc}")


def _xattr(path: Path, name: str) -> bytes | None:
    try:
        return os.getxattr(path, name)
    except OSError:
        return None


@pytest.mark.parametrize("host", sorted(JSON_FILES))
def test_extended_attributes_survive_link_upgrade_and_unlink(host: str, workspace: Path) -> None:
    """A tag, a backup tool's mark, a label set on the file (`user.*` attributes) belong to
    the file, not to engram's edit of its text."""
    path = workspace / JSON_FILES[host]
    path.parent.mkdir(parents=True)
    mine = '{"description": "x"}\n' if host == "codex" else '{"x": 1}\n'  # Codex takes no "x"
    path.write_text(mine, encoding="utf-8")
    _set_xattr_or_skip(path, "user.dotfiles.tag", b"keep me")
    for command in (("link", host), ("upgrade",), ("unlink", host)):
        assert engram(*command, cwd=workspace) == 0
        assert _xattr(path, "user.dotfiles.tag") == b"keep me", f"lost by {command}"
    assert path.read_text(encoding="utf-8") == mine


def _acl(*entries: tuple[int, int, int]) -> bytes:
    """A POSIX access ACL as Linux stores it (`system.posix_acl_access`): version 2, then
    (tag, permissions, id) entries in tag order."""
    import struct

    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


UNDEFINED = 0xFFFFFFFF
# owner rw-, user 4242 r--, owning group ---, mask r--, others ---: `ls -l` shows 0640
ACL = _acl((0x01, 6, UNDEFINED), (0x02, 4, 4242), (0x04, 0, UNDEFINED), (0x10, 4, UNDEFINED),
           (0x20, 0, UNDEFINED))


def test_an_acl_is_kept_and_the_owning_group_gets_no_access_it_did_not_have(
        workspace: Path) -> None:
    """With an ACL, the group bits `ls -l` shows are the mask, not the owning group's
    access: a new file given the same mode and no ACL would let the owning group read a
    file it could not, and take the named user's access away."""
    path = claude_settings(workspace, '{"model": "opus"}\n')
    path.chmod(0o600)
    _set_xattr_or_skip(path, "system.posix_acl_access", ACL)
    assert path.stat().st_mode & 0o777 == 0o640
    for command in ("link", "unlink"):
        assert engram(command, "claude", cwd=workspace) == 0
        assert _xattr(path, "system.posix_acl_access") == ACL, f"ACL lost by {command}"
        assert path.stat().st_mode & 0o777 == 0o640


# ---- engram's own settings files, which are the user's too ----------------------------------

def _linked_config(path: Path, real: Path) -> None:
    real.parent.mkdir(parents=True, exist_ok=True)
    real.write_text('{\n  "roots": [".agents/.engram"]\n}\n', encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(os.path.relpath(real, path.parent))


def _set_and_unset_through(path: Path, real: Path, workspace: Path, *flag: str) -> None:
    link_text = os.readlink(path)
    assert engram("config", "set", "proof", "compact", *flag, cwd=workspace) == 0
    assert path.is_symlink() and os.readlink(path) == link_text, "the link was replaced"
    assert json.loads(real.read_text(encoding="utf-8"))["proof"] == "compact"
    assert engram("config", "unset", "proof", *flag, cwd=workspace) == 0
    assert path.is_symlink() and os.readlink(path) == link_text
    assert json.loads(real.read_text(encoding="utf-8")) == {"roots": [".agents/.engram"]}


def test_config_set_writes_through_the_users_settings_linked_from_dotfiles(
        workspace: Path, isolated_dirs: Path) -> None:
    """Settings kept in a dotfiles repository and linked into place: `config set` and
    `unset` change the dotfiles file, and the link stays, pointing where it did."""
    path = Path(os.environ["ENGRAM_CONFIG_DIR"]) / "config.json"
    real = isolated_dirs / "dotfiles" / "engram" / "config.json"
    _linked_config(path, real)
    _set_and_unset_through(path, real, workspace, "--global")


def test_config_set_writes_through_a_workspace_settings_link_inside_the_workspace(
        workspace: Path) -> None:
    path = workspace / ".agents" / "engram.json"
    real = workspace / "config" / "engram.json"
    _linked_config(path, real)
    _set_and_unset_through(path, real, workspace)


def test_config_set_never_writes_through_a_workspace_settings_link_leading_out(
        workspace: Path, isolated_dirs: Path) -> None:
    """A repository may commit `.agents/engram.json` as a link to a file of the user's
    (`~/.claude/settings.json`): `config set` in it must not write engram's settings there."""
    path = workspace / ".agents" / "engram.json"
    real = isolated_dirs / ".claude" / "settings.json"
    _linked_config(path, real)
    before = real.read_bytes()
    assert engram("config", "set", "proof", "compact", cwd=workspace) == 1
    assert real.read_bytes() == before and path.is_symlink()


def test_config_set_refuses_a_hard_linked_settings_file(workspace: Path, tmp_path: Path) -> None:
    path = workspace / ".agents" / "engram.json"
    path.write_text("{}\n", encoding="utf-8")
    other = tmp_path / "shared-engram.json"
    os.link(path, other)
    assert engram("config", "set", "proof", "compact", cwd=workspace) == 1
    assert path.read_text(encoding="utf-8") == "{}\n" and os.path.samefile(path, other)


def test_config_set_keeps_the_files_attributes(workspace: Path) -> None:
    path = workspace / ".agents" / "engram.json"
    path.write_text("{}\n", encoding="utf-8")
    path.chmod(0o640)
    _set_xattr_or_skip(path, "user.dotfiles.tag", b"keep me")
    assert engram("config", "set", "proof", "compact", cwd=workspace) == 0
    assert _xattr(path, "user.dotfiles.tag") == b"keep me"
    assert path.stat().st_mode & 0o777 == 0o640


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_config_set_as_root_keeps_the_users_private_settings_file_theirs(
        isolated_dirs: Path, workspace: Path) -> None:
    """`sudo engram config set ... --global` (HOME kept) on a user's 0600 settings file: a
    file root owns and only root may read would fail every later engram command of the
    user's, hooks included."""
    path = Path(os.environ["ENGRAM_CONFIG_DIR"]) / "config.json"
    path.parent.mkdir(parents=True)
    path.write_text("{}\n", encoding="utf-8")
    path.chmod(0o600)
    for item in (isolated_dirs, path.parent.parent, path.parent, path):
        os.chown(item, 4242, 4242)
    assert engram("config", "set", "proof", "compact", "--global", cwd=workspace) == 0
    info = path.stat()
    assert (info.st_uid, info.st_gid) == (4242, 4242)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_config_set_as_root_gives_a_new_settings_file_to_the_owner_of_its_folder(
        isolated_dirs: Path, workspace: Path) -> None:
    path = Path(os.environ["ENGRAM_CONFIG_DIR"]) / "config.json"
    path.parent.parent.mkdir(parents=True, exist_ok=True)
    for item in (isolated_dirs, path.parent.parent):
        os.chown(item, 4242, 4242)
    assert engram("config", "set", "proof", "compact", "--global", cwd=workspace) == 0
    for made in (path.parent, path):
        info = made.stat()
        assert (info.st_uid, info.st_gid) == (4242, 4242), f"{made} is root's"


# ---- the repository's own exclude file ------------------------------------------------------

def _engram_with_file_size_limit(limit: int, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The real engram process, allowed to write files of at most `limit` bytes (a disk
    that fills up in the middle of a write fails it the same way)."""
    import resource
    import signal

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([str(VENV_ENGRAM), *args, "--cwd", str(cwd)], preexec_fn=limited,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not VENV_ENGRAM.exists() or not hasattr(os, "fork"),
                    reason="needs the installed engram script and POSIX limits")
def test_a_write_that_fails_midway_leaves_the_git_exclude_file_whole(workspace: Path) -> None:
    """`link --local` adds two lines to .git/info/exclude and `unlink --local` takes them
    back: a write that fails midway (disk full) must leave the user's lines there, all of
    them, not a file cut where the write stopped."""
    exclude = workspace / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True)
    users = "".join(f"/build-{n:05d}/\n" for n in range(4000))  # 56,000 bytes
    exclude.write_text(users, encoding="utf-8")
    done = _engram_with_file_size_limit(32768, "link", "claude", "--local", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert exclude.read_text(encoding="utf-8").startswith(users), "the user's lines were cut"
    assert engram("unlink", "claude", "--local", cwd=workspace) == 0
    assert engram("link", "claude", "--local", cwd=workspace) == 0  # now it fits
    assert exclude.read_text(encoding="utf-8") != users
    done = _engram_with_file_size_limit(32768, "unlink", "claude", "--local", cwd=workspace)
    assert exclude.read_text(encoding="utf-8").startswith(users), "the user's lines were cut"


# ---- what a killed engram leaves beside the user's file --------------------------------------

KILL_AT_REPLACE = """
import os, signal, sys
real = os.replace
def replace(src, dst, *a, **k):
    if str(dst).endswith(sys.argv[1]):
        os.kill(os.getpid(), signal.SIGKILL)   # the new file written beside it, not yet renamed
    return real(src, dst, *a, **k)
os.replace = replace
from engram.cli import run
run(sys.argv[2:])
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX signals")
def test_the_temp_file_a_killed_link_left_beside_the_config_is_removed_by_the_next(
        workspace: Path) -> None:
    """A link killed after writing its new file and before renaming it (SIGKILL, a power
    cut) leaves `.settings.json.<pid>.<random>.tmp` in the project: untracked noise in `git
    status`, committed by a `git add -A`, and holding the user's whole settings (their
    `env` keys too). The next engram edit of that file removes it."""
    path = claude_settings(workspace, '{\n  "env": {"API_TOKEN": "from-the-users-settings"}\n}\n')
    before = path.read_bytes()
    killed = subprocess.run([sys.executable, "-c", KILL_AT_REPLACE, "settings.json", "link",
                             "claude", "--cwd", str(workspace)], capture_output=True, timeout=120)
    assert killed.returncode == -9, killed.stderr.decode()
    assert path.read_bytes() == before
    left = [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1  # what the killed process left
    users = path.parent / ".settings.json.old.tmp"  # a name engram never gives: the user's
    users.write_text("{}", encoding="utf-8")
    os.utime(users, (1, 1))
    assert engram("link", "claude", cwd=workspace) == 0
    assert sorted(p.name for p in path.parent.iterdir()) == [users.name, "settings.json"], \
        "the killed link's temp file is still beside the config"


def test_two_local_links_at_once_each_take_their_exclude_lines_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`engram link claude --local` in two repositories at once (a script over a folder of
    clones): each records the lines it added to its exclude file in one shared record; a
    record written over the other's would leave that repository's lines behind at unlink."""
    import threading

    from engram.installer import ops

    repos = []
    for name in ("one", "two"):
        root = tmp_path / name
        (root / ".git" / "info").mkdir(parents=True)
        (root / ".git" / "info" / "exclude").write_text("# mine\n", encoding="utf-8")
        repos.append((root, root / ".claude" / "settings.local.json"))
    real = ops._exclude_notes
    second = threading.Thread(target=ops.keep_out_of_git, args=repos[1])
    started: list[bool] = []

    def read_then_let_the_other_run() -> dict[str, dict[str, object]]:
        notes = real()
        if threading.current_thread() is not second and not started:
            started.append(True)
            second.start()  # the other process, while this one holds what it read
            second.join(timeout=1.0)
        return notes

    monkeypatch.setattr(ops, "_exclude_notes", read_then_let_the_other_run)
    ops.keep_out_of_git(*repos[0])
    second.join(timeout=30)
    monkeypatch.setattr(ops, "_exclude_notes", real)
    for root, path in repos:
        assert "settings.local.json" in (root / ".git/info/exclude").read_text(encoding="utf-8")
        ops.take_back_from_git_exclude(root, path)
        assert (root / ".git/info/exclude").read_text(encoding="utf-8") == "# mine\n", \
            f"{root.name}'s exclude lines were left behind"


HOST_FILES = {"claude": (".claude/settings.json", '{\n  "model": "opus"\n}\n'),
              # Codex's hooks.json takes no key beside "hooks" but "description"
              "codex": (".codex/hooks.json", '{\n  "description": "mine"\n}\n'),
              "gemini": (".gemini/settings.json", '{\n  // mine\n  "model": "flash" /* mine too */\n}\n'),
              "cursor": (".cursor/hooks.json", '{\n  "version": 1,\n  "model": "x"\n}\n'),
              "windsurf": (".windsurf/hooks.json", '{\n  "model": "x"\n}\n')}


@pytest.mark.parametrize("host", sorted(HOST_FILES))
def test_every_hosts_save_during_link_and_unlink_is_kept(
        host: str, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for each host's format: the host's save (a setting added at the top) lands
    while engram writes its backup; link and unlink each keep it, and engram's entries are
    in the file after link and gone after unlink."""
    relative, text = HOST_FILES[host]
    path = workspace / relative
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    for command in ("link", "unlink"):
        with monkeypatch.context() as patch:
            saved = _host_save(host, path.read_text(encoding="utf-8"), command)
            done = _interleave(patch, filedance, "_backup", path,
                               lambda text=saved: path.write_text(text, encoding="utf-8"))
            assert engram(command, host, cwd=workspace) == 0
            assert done
        now = path.read_text(encoding="utf-8")
        assert f"saved_by_host_{command}" in now, f"{command} overwrote the host's save"
        assert (ours(path) > 0) == (command == "link")
    assert path.read_text(encoding="utf-8") == _host_save(host, _host_save(host, text, "link"),
                                                          "unlink")


def _host_save(host: str, text: str, command: str) -> str:
    """A setting added at the top; in Codex's hooks.json, which takes no other key (Codex
    ignores the file then), its description edited."""
    if host == "codex":
        return text.replace('"description": "', f'"description": "saved_by_host_{command} ', 1)
    return text.replace("{\n", '{\n  "saved_by_host_' + command + '": true,\n', 1)


def test_a_setting_saved_in_engrams_config_during_config_set_is_kept(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's editor saves `.agents/engram.json` while `engram config set` writes it:
    the editor's setting stays beside the one set."""
    path = workspace / ".agents" / "engram.json"
    path.write_text('{\n  "proof": "off"\n}\n', encoding="utf-8")
    done = _interleave(monkeypatch, fileio, "_temp_name", path, lambda: path.write_text(
        '{\n  "proof": "off",\n  "load": {"limit": 3}\n}\n', encoding="utf-8"))
    assert engram("config", "set", "hooks.path_rules", "native", cwd=workspace) == 0
    assert done
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved.get("load") == {"limit": 3}, "the editor's save was overwritten"
    assert saved["hooks"]["path_rules"] == "native"


ODD_NAME = os.fsdecode(b"caf\xe9 dir\nnext")  # Latin-1, a space, a line break


@pytest.mark.skipif(sys.platform == "darwin", reason="APFS names are UTF-8 only")
def test_a_folder_name_that_is_not_utf8_links_and_unlinks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder named in Latin-1 (`café` from an old disk or archive: the byte 0xE9, which is
    not UTF-8), with a space and a line break: link crashed (exit 3, "surrogates not allowed")
    writing the path into the backup folder's note, for the project, `--local` and
    `--global`. Every file now links, relinks with no change, upgrades, restores and unlinks
    back to its bytes."""
    root = tmp_path / ODD_NAME
    home, workspace = root / "home", root / "proj"
    (workspace / ".git").mkdir(parents=True)
    (workspace / ".agents" / ".engram").mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    files = {workspace / ".claude" / "settings.json": '{"model": "x"}\n',
             workspace / ".gemini" / "settings.json": '{\n  // mine\n  "model": "y"\n}\n',
             home / ".claude" / "settings.json": '{"theme": "dark"}\n'}
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for args in (["link", "all"], ["link", "claude", "--local"], ["link", "claude", "--global"],
                 ["link", "codex", "--global"], ["link", "opencode", "--global"]):
        assert engram(*args, cwd=workspace) == 0, args
    linked = {p: p.read_bytes() for p in files}
    assert all(b"engram" in data for data in linked.values())
    assert engram("link", "all", cwd=workspace) == 0
    assert engram("upgrade", cwd=workspace) == 0
    assert {p: p.read_bytes() for p in files} == linked
    assert engram("restore", "claude", cwd=workspace) == 0
    assert engram("restore", "claude", cwd=workspace) == 0
    assert (workspace / ".claude" / "settings.json").read_bytes() == linked[
        workspace / ".claude" / "settings.json"]
    for args in (["unlink", "all"], ["unlink", "claude", "--local"],
                 ["unlink", "claude", "--global"], ["unlink", "codex", "--global"],
                 ["unlink", "opencode", "--global"]):
        assert engram(*args, cwd=workspace) == 0, args
    assert {p: p.read_text(encoding="utf-8") for p in files} == files
    assert sorted(p.name for p in (workspace / ".claude").iterdir()) == ["settings.json"]
    assert not (home / ".codex").exists() and not (home / ".config" / "opencode").exists()
