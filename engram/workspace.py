"""The workspace a hook or command works in: found from a cwd (the payload's, never the
process's), with its config and memory roots."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram import config, paths

_MARKERS = (paths.MEMORY_DIR_NAME, paths.WORKSPACE_CONFIG_NAME, ".git")


@dataclass(frozen=True)
class Root:
    """A folder of memory cards; `scope` is "workspace", "config" or "global"."""

    path: Path
    scope: str


@dataclass(frozen=True)
class Workspace:
    root: Path
    settings: dict[str, Any] = field(hash=False, compare=False)
    roots: tuple[Root, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def memory_dir(self) -> Path:
        """The workspace's own memory folder (`.agents/.engram/`), present or not."""
        return self.root / paths.MEMORY_DIR_NAME

    @property
    def config_path(self) -> Path:
        return self.root / paths.WORKSPACE_CONFIG_NAME

    @property
    def key(self) -> str:
        return paths.workspace_key(self.root)


def find_root(cwd: Path) -> Path | None:
    """The nearest directory at or above `cwd` holding `.agents/.engram/`,
    `.agents/engram.json` or `.git`."""
    try:
        current = cwd.resolve()
    except (OSError, RuntimeError):
        return None
    for candidate in (current, *current.parents):
        for marker in _MARKERS:
            if (candidate / marker).exists():
                return candidate
    return None


def load(cwd: Path, explicit_roots: list[Path] | None = None) -> Workspace | None:
    """The workspace around `cwd`, or None when there is none. With `explicit_roots`, those
    roots replace the workspace's own (as `engram route --root` does)."""
    root = find_root(cwd)
    if root is None:
        if not explicit_roots:
            return None
        root = cwd.resolve()
    warnings: list[str] = []
    user_layer = config.read_file(paths.user_config_path())
    workspace_layer = config.read_file(root / paths.WORKSPACE_CONFIG_NAME)
    settings = config.effective(user_layer, workspace_layer, warnings.append)
    roots: list[Root] = []
    if explicit_roots:
        roots = [Root(p.resolve(), "explicit") for p in explicit_roots]
    else:
        memory_dir = root / paths.MEMORY_DIR_NAME
        if memory_dir.is_dir():
            roots.append(Root(memory_dir, "workspace"))
        for relative in settings["roots"]:
            candidate = (root / relative).resolve()
            if not _is_within(candidate, root) and not settings["security.follow_symlinks"]:
                warnings.append(f"config root {relative!r} lies outside the workspace; skipped "
                                "(set security.follow_symlinks true to allow it)")
                continue
            if candidate.is_dir():
                roots.append(Root(candidate, "config"))
            else:
                warnings.append(f"config root {relative!r} is not a folder; skipped")
        global_dir = paths.global_memory_dir()
        if global_dir is not None and global_dir.is_dir():
            roots.append(Root(global_dir.resolve(), "global"))
    return Workspace(root=root, settings=settings, roots=tuple(roots), warnings=tuple(warnings))


def _is_within(path: Path, parent: Path) -> bool:
    try:
        path.relative_to(parent)
    except ValueError:
        return False
    return True
