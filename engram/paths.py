"""Where engram keeps its own files. Every location can be redirected by environment
variables, which the tests use to keep the developer's real dirs untouched."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

MEMORY_DIR_NAME = ".agents/.engram"
WORKSPACE_CONFIG_NAME = ".agents/engram.json"


def _home() -> Path:
    home = os.environ.get("HOME")
    if home:
        return Path(home)
    return Path(os.path.expanduser("~"))


def state_dir() -> Path:
    """The state dir: compiled indexes, delivery caches, logs (ENGRAM_STATE_DIR wins)."""
    explicit = os.environ.get("ENGRAM_STATE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else _home() / ".local" / "state"
    return base / "engram"


def user_config_path() -> Path:
    """The user-scope config file (ENGRAM_CONFIG_DIR, else $XDG_CONFIG_HOME/engram)."""
    explicit = os.environ.get("ENGRAM_CONFIG_DIR")
    if explicit:
        return Path(explicit) / "config.json"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg else _home() / ".config"
    return base / "engram" / "config.json"


def global_memory_dir() -> Path | None:
    """The global memory root named by ENGRAM_GLOBAL_DIR, if any."""
    explicit = os.environ.get("ENGRAM_GLOBAL_DIR")
    return Path(explicit) if explicit else None


def workspace_key(root: Path) -> str:
    """A short stable name for a workspace's files in the state dir."""
    return hashlib.sha1(str(root).encode("utf-8", "surrogatepass")).hexdigest()[:16]
