"""Reading and changing one config scope on disk (workspace `.agents/engram.json` or the user
file), with validation against the settings table and an atomic write."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from engram import config, fileio, paths, workspace
from engram.errors import EngramError


def scope_file(global_scope: bool, cwd: Path) -> tuple[Path, str]:
    """(config file, scope name) for a command run in `cwd`."""
    if global_scope:
        return paths.user_config_path(), "user"
    root = workspace.find_root(cwd)
    if root is None:
        raise EngramError(f"no workspace found at or above {cwd}",
                          "run inside a Git repository, or use --global for the user scope")
    return root / paths.WORKSPACE_CONFIG_NAME, "workspace"


def set_value(path: Path, scope: str, key: str, raw: Any) -> Any:
    setting = config.SETTINGS_BY_KEY.get(key)
    value = config.coerce(key, raw)
    assert setting is not None
    if setting.user_only and scope != "user":
        raise EngramError(f"{key} can only be set in the user scope", "add --global")
    if setting.workspace_only and scope != "workspace":
        raise EngramError(f"{key} can only be set in the workspace scope", "drop --global")
    def put(flat: dict[str, Any]) -> bool:
        flat[key] = value
        return True

    _update(path, scope, put)
    return value


def unset_value(path: Path, key: str, scope: str = "workspace") -> bool:
    if key not in config.SETTINGS_BY_KEY:
        raise EngramError(f"unknown config key {key!r}",
                          "valid keys: " + ", ".join(s.key for s in config.SETTINGS))
    def drop(flat: dict[str, Any]) -> bool:
        return flat.pop(key, _ABSENT) is not _ABSENT

    return _update(path, scope, drop)


_ABSENT = object()
_ATTEMPTS = 3


def _bytes(path: Path) -> bytes | None:
    try:
        return fileio.read_bounded(path, config.MAX_CONFIG_BYTES)
    except FileNotFoundError:
        return None


def _update(path: Path, scope: str, change: Callable[[dict[str, Any]], bool]) -> bool:
    """Apply `change` (True: write) to the settings in `path`, under its lock. The user's
    editor may save the file while engram writes it: engram checks the file still holds
    what it read just before its replace, and computes the change again from the new text
    when it does not."""
    with fileio.exclusive_lock(paths.lock_file_for(path), timeout=5.0):
        for _ in range(_ATTEMPTS):
            try:
                before = _bytes(path)
            except OSError:
                before = None  # read_file says what is wrong with it
            flat = config.read_file(path)
            old = dict(flat)
            if not change(flat):
                return False
            from engram.installer.filedance import Changed

            try:
                _write(path, scope, _edited(before, old, flat), before)
            except Changed:
                continue
            return True
    raise EngramError(f"{path} kept changing while engram tried to update it",
                      "close the program that is writing it and run the command again")


class _Rewrite(Exception):
    """A layout the in-place edit does not handle: the file is written from its settings."""


def _edited(before: bytes | None, old: dict[str, Any], new: dict[str, Any]) -> str:
    """The file's new text: the settings that changed from `old` to `new` (flat, dotted) are
    edited in place, as engram edits a host's file (jsonc.patch), and every other byte stays:
    the user's own keys (`"team": {}`, a dotted `"my.note"`), their order, indentation and
    layout. A new or blank file, or one laid out in a way the edit cannot follow (a setting
    written both flat and nested), is written from its settings, sorted."""
    text = before.decode("utf-8") if before is not None else ""
    if not text.strip():
        return config.render(new)
    import copy
    import json

    from engram.installer import jsonc

    try:
        document = json.loads(text)
        wanted = copy.deepcopy(document)
        for key in old.keys() | new.keys():
            if key not in new or key not in old or not _same(old[key], new[key]):
                _put(wanted, key, new.get(key, _ABSENT))
        if not _same(config.flatten(wanted), new):
            raise _Rewrite()
        edited = jsonc.patch(text, document, wanted)
        if not _same(jsonc.parse(edited), wanted):
            raise _Rewrite()
    except (_Rewrite, ValueError, TypeError, RecursionError):
        return config.render(new)
    return edited


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, 1 and true and 1.0 apart."""
    import json

    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _put(document: dict[str, Any], dotted: str, value: Any) -> None:
    """Set the setting `dotted` in `document` where the file holds it (a flat dotted key, or
    nested objects, made as needed), or remove it (`_ABSENT`) with the objects it leaves
    empty."""
    if dotted in document:
        if value is _ABSENT:
            del document[dotted]
        else:
            document[dotted] = value
        return
    *parents, leaf = dotted.split(".")
    trail = [document]
    for part in parents:
        child = trail[-1].get(part, _ABSENT)
        if child is _ABSENT:
            if value is _ABSENT:
                return
            child = trail[-1][part] = {}
        if not isinstance(child, dict):
            raise _Rewrite()
        trail.append(child)
    if value is not _ABSENT:
        trail[-1][leaf] = value
        return
    trail[-1].pop(leaf, None)
    for node, part in zip(reversed(trail[:-1]), reversed(parents), strict=True):
        if node[part]:
            break
        del node[part]  # emptied by this removal (an object the user left empty stays)


def _write(path: Path, scope: str, text: str, before: bytes | None) -> None:
    """Replace a settings file the way engram edits any file of the user's: through a symlink
    (settings kept in a dotfiles repository stay there, linked; a workspace's link only while
    it stays inside the workspace, as for the hosts' files: a repository must not make
    `config set` write into a file of the user's), never splitting a hard link, keeping the
    file's owner (run as root), mode and extended attributes. Changed when the file no
    longer holds `before` (None: absent) at the moment of the replace (filedance.Changed)."""
    from engram.installer import filedance
    from engram.installer.merge import ShapeError
    from engram.installer.plan import follow_symlinks

    if scope == "user":
        place = filedance.Place(path.parent, follow_outside=True, what="engram's config folder")
    else:
        root = path.parent.parent  # the workspace holding .agents/engram.json
        place = filedance.Place(root, follow_symlinks(), f"the workspace {root}")
    try:
        filedance.check_place(path, place)
    except ShapeError as exc:
        raise EngramError(f"{path} {exc.problem}", exc.fix) from None
    target = filedance.target_of(path)
    try:
        info: os.stat_result | None = target.stat()
    except FileNotFoundError:
        info = None
    if info is not None and info.st_nlink > 1:
        raise EngramError(f"{path} has {info.st_nlink} hard links; engram replaces a file whole, "
                          "which would leave the other names with the old settings",
                          "make the other names symlinks to it, then run the command again")
    owner = (info.st_uid, info.st_gid) if info is not None else filedance.new_owner(target)
    if info is None:
        filedance.make_parents(target, owner)
    fileio.atomic_write_bytes(target, text.encode("utf-8"), owner=owner,
                              keep_attributes=info is not None,
                              check=filedance.unchanged(target, before))


def effective(cwd: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """(effective settings, where each came from) for `cwd`."""
    user = config.read_file(paths.user_config_file())
    root = workspace.find_root(cwd)
    ws_layer = config.read_file(os.path.join(root, paths.WORKSPACE_CONFIG_NAME)) if root else {}
    merged = config.effective(user, ws_layer)
    sources = {}
    for key in merged:
        sources[key] = "workspace" if key in ws_layer else "user" if key in user else "default"
    return merged, sources
