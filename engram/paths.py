"""Where engram keeps its own files. Every location can be redirected by environment
variables, which the tests use to keep the developer's real dirs untouched.

The `*_str` forms serve the hook path, which avoids importing pathlib (~4 ms a process)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Mapping

MEMORY_DIR_NAME = ".agents/.engram"
WORKSPACE_CONFIG_NAME = ".agents/engram.json"


def env_int(name: str, default: int) -> int:
    """A whole number from the environment, or `default` when the variable is unset or holds
    anything else: a tuning variable read when a module loads must never fail a hook."""
    try:
        return int(os.environ.get(name) or default)
    except ValueError:
        return default


def home_str() -> str:
    home = os.environ.get("HOME")
    return home if home else os.path.expanduser("~")


def _xdg(name: str) -> str | None:
    """An XDG base folder variable when it names an absolute path. The spec says to ignore a
    relative one: read against whatever folder engram runs in (a repository, for the hook and
    most commands), it would put the state dir's card text and settings backups where Git
    commits them, and take the user-level config from a file a repository can ship."""
    value = os.environ.get(name)
    return value if value and os.path.isabs(value) else None


def state_dir_str() -> str:
    explicit = os.environ.get("ENGRAM_STATE_DIR")
    if explicit:
        return explicit
    xdg = _xdg("XDG_STATE_HOME")
    base = xdg if xdg else os.path.join(home_str(), ".local", "state")
    return os.path.join(base, "engram")


def foreign_owner(path: str) -> int | None:
    """The owner of the folder at `path` when it is another user's: not this process's and
    not root's (root reads every file anyway, and under sudo a user's state dir is the
    user's). None when it is ours, absent, or the system has no owners (Windows)."""
    if not hasattr(os, "geteuid"):
        return None
    try:
        owner = os.stat(path).st_uid
    except OSError:
        return None
    euid = os.geteuid()
    return None if euid == 0 or owner in (euid, 0) else owner


def make_state_dir(tighten: bool = False) -> None:
    """Create the state dir readable and writable by its owner alone (0700), whatever the
    umask: it holds every card's text (the index), settings backups and delivery records, and
    under umask 000 or 002 another user could put a file of theirs where engram writes. With
    `tighten` (commands, not the hook), one an older engram made open to others is made so
    too. Raises `EngramError` for a state dir another user owns (a folder someone made first
    at a shared path `ENGRAM_STATE_DIR` names, `/tmp/engram`): they could read what engram
    writes there or put files of theirs in its place; nothing is written in it. Else never
    raises: a state dir engram cannot make is each writer's failure to report."""
    path = state_dir_str()
    owner = foreign_owner(path)
    if owner is not None:
        from engram.errors import EngramError

        raise EngramError(f"the state dir {path} belongs to another user (uid {owner}): engram "
                          "writes nothing there", hint="set ENGRAM_STATE_DIR to a folder of your own")
    try:
        try:
            os.mkdir(path, 0o700)  # the mode is masked by the umask, which never adds bits
            return
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.mkdir(path, 0o700)
            return
        except FileExistsError:
            pass
        if tighten:
            import stat

            info = os.stat(path)
            # Only a folder of the user's own (under sudo, the user's state dir is not root's)
            # that holds engram's state: not a `/tmp` or a home ENGRAM_STATE_DIR names.
            if stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o077 and \
                    info.st_uid == os.geteuid() and \
                    any(os.path.isdir(os.path.join(path, name)) for name in ("index", "delivery")):
                os.chmod(path, 0o700)
    except (OSError, AttributeError):  # AttributeError: no geteuid (Windows)
        pass


def state_dir() -> "Path":
    """The state dir: compiled indexes, delivery caches, logs (ENGRAM_STATE_DIR wins)."""
    from pathlib import Path

    return Path(state_dir_str())


def user_config_file() -> str:
    explicit = os.environ.get("ENGRAM_CONFIG_DIR")
    if explicit:
        return os.path.join(explicit, "config.json")
    xdg = _xdg("XDG_CONFIG_HOME")
    base = xdg if xdg else os.path.join(home_str(), ".config")
    return os.path.join(base, "engram", "config.json")


def user_config_path() -> "Path":
    """The user-scope config file (ENGRAM_CONFIG_DIR, else $XDG_CONFIG_HOME/engram)."""
    from pathlib import Path

    return Path(user_config_file())


def global_memory_dir_str() -> str | None:
    return os.environ.get("ENGRAM_GLOBAL_DIR") or None


def workspace_key(root: "str | os.PathLike[str]") -> str:
    """A short stable name for a workspace's files in the state dir."""
    import xxhash

    return xxhash.xxh64_hexdigest(os.fspath(root).encode("utf-8", "surrogatepass"))


def lock_file_for(target: "str | os.PathLike[str]") -> str:
    """The lock file guarding writes to `target`: in the state dir, keyed by the target's
    real path, so no lock file of engram's is left beside a file in the user's repository."""
    real = os.path.realpath(os.fspath(target))
    return os.path.join(state_dir_str(), "locks", workspace_key(real) + ".lock")


def host_folder(install: "Mapping[str, Any]") -> str:
    """A host's own folder (`install.global_folder`: `~/.claude`, `~/.config/opencode`), or
    where the user moved it with the host's own variable (`install.global_folder_env`:
    `$CLAUDE_CONFIG_DIR`, `$CODEX_HOME`, `$XDG_CONFIG_HOME/opencode`), as the host reads it; a
    variable unset, empty or not an absolute path leaves the default. '' for a host without
    one."""
    name, _, rest = str(install.get("global_folder_env") or "").lstrip("$").partition("/")
    value = os.path.expanduser(os.environ.get(name, "")) if name else ""
    if value and os.path.isabs(value):  # never "/opencode" from an empty variable
        return os.path.join(value, rest) if rest else value
    folder = install.get("global_folder")
    return os.path.expanduser(str(folder)) if folder else ""
