"""The workspace a hook or command works in: found from a cwd (the payload's, never the
process's), with its config and memory roots. Strings inside (the hook path avoids pathlib);
Path views for everyone else."""

from __future__ import annotations

import os

from engram import config, paths
from engram.record import Record, frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

_MARKERS = (paths.MEMORY_DIR_NAME, paths.WORKSPACE_CONFIG_NAME, ".git")


def _path(value: str) -> "Path":
    from pathlib import Path

    return Path(value)


@frozen
class Root(Record):
    """A folder of memory cards; `scope` is "workspace", "config", "global" or "explicit"."""

    location: str
    scope: str

    @property
    def path(self) -> "Path":
        return _path(self.location)


@frozen
class Workspace(Record):
    location: str  # the workspace root, resolved
    settings: dict[str, Any]
    roots: tuple[Root, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def root(self) -> "Path":
        return _path(self.location)

    @property
    def memory_location(self) -> str:
        return os.path.join(self.location, paths.MEMORY_DIR_NAME)

    @property
    def memory_dir(self) -> "Path":
        """The workspace's own memory folder (`.agents/.engram/`), present or not."""
        return _path(self.memory_location)

    @property
    def config_location(self) -> str:
        return os.path.join(self.location, paths.WORKSPACE_CONFIG_NAME)

    @property
    def config_path(self) -> "Path":
        return _path(self.config_location)

    @property
    def key(self) -> str:
        return paths.workspace_key(self.location)

    def __hash__(self) -> int:
        return hash(self.location)


def find_root_str(cwd: "str | os.PathLike[str]") -> str | None:
    try:
        current = os.path.realpath(os.fspath(cwd))
    except (OSError, ValueError):
        return None
    while True:
        for marker in _MARKERS:
            if os.path.exists(os.path.join(current, marker)):
                return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def find_root(cwd: "str | os.PathLike[str]") -> "Path | None":
    """The nearest directory at or above `cwd` holding `.agents/.engram/`,
    `.agents/engram.json` or `.git`."""
    found = find_root_str(cwd)
    return _path(found) if found is not None else None


def _is_within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


def load(cwd: "str | os.PathLike[str]", explicit_roots: "list[Any] | None" = None) -> Workspace | None:
    """The workspace around `cwd`, or None when there is none. With `explicit_roots`, those
    roots replace the workspace's own (as `engram route --root` does)."""
    root = find_root_str(cwd)
    if root is None:
        if not explicit_roots:
            return None
        root = os.path.realpath(os.fspath(cwd))
    warnings: list[str] = []
    user_layer = config.read_file(paths.user_config_file())
    workspace_layer = config.read_file(os.path.join(root, paths.WORKSPACE_CONFIG_NAME))
    settings = config.effective(user_layer, workspace_layer, warnings.append)
    roots: list[Root] = []
    if explicit_roots:
        roots = [Root(os.path.realpath(os.fspath(p)), "explicit") for p in explicit_roots]
    else:
        memory_dir = os.path.join(root, paths.MEMORY_DIR_NAME)
        if os.path.isdir(memory_dir):
            real = os.path.realpath(memory_dir)
            if _is_within(real, root) or settings["security.follow_symlinks"]:
                roots.append(Root(memory_dir, "workspace"))
            else:
                warnings.append(f"{paths.MEMORY_DIR_NAME} links to {real}, outside the workspace; "
                                "not followed (set security.follow_symlinks true to allow it)")
        for relative in settings["roots"]:
            candidate = os.path.realpath(os.path.join(root, relative))
            if not _is_within(candidate, root) and not settings["security.follow_symlinks"]:
                warnings.append(f"config root {relative!r} lies outside the workspace; skipped "
                                "(set security.follow_symlinks true to allow it)")
                continue
            if os.path.isdir(candidate):
                roots.append(Root(candidate, "config"))
            else:
                warnings.append(f"config root {relative!r} is not a folder; skipped")
        global_dir = paths.global_memory_dir_str()
        if global_dir is not None and os.path.isdir(global_dir):
            roots.append(Root(os.path.realpath(global_dir), "global"))
    return Workspace(location=root, settings=settings, roots=tuple(roots), warnings=tuple(warnings))
