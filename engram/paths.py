"""Where engram keeps its own files. Every location can be redirected by environment
variables, which the tests use to keep the developer's real dirs untouched.

The `*_str` forms serve the hook path, which avoids importing pathlib (~4 ms a process)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

MEMORY_DIR_NAME = ".agents/.engram"
WORKSPACE_CONFIG_NAME = ".agents/engram.json"


def home_str() -> str:
    home = os.environ.get("HOME")
    return home if home else os.path.expanduser("~")


def state_dir_str() -> str:
    explicit = os.environ.get("ENGRAM_STATE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_STATE_HOME")
    base = xdg if xdg else os.path.join(home_str(), ".local", "state")
    return os.path.join(base, "engram")


def state_dir() -> "Path":
    """The state dir: compiled indexes, delivery caches, logs (ENGRAM_STATE_DIR wins)."""
    from pathlib import Path

    return Path(state_dir_str())


def user_config_file() -> str:
    explicit = os.environ.get("ENGRAM_CONFIG_DIR")
    if explicit:
        return os.path.join(explicit, "config.json")
    xdg = os.environ.get("XDG_CONFIG_HOME")
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
