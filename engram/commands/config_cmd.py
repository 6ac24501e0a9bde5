"""`engram config view|get|set|unset`."""

from __future__ import annotations

import json
from pathlib import Path

from engram import config, output, paths, settings_store
from engram.errors import EngramError

ACTIONS = ("view", "get", "set", "unset")
# Settings that change what `link` writes: the linked hosts are re-linked at once, so the
# configs never disagree with the setting.
RELINK_KEYS = frozenset({"hooks.path_rules", "hooks.command"})


def run(action: str, key: str | None, value: str | None, *, global_scope: bool, cwd: Path) -> int:
    if action not in ACTIONS:
        raise EngramError(f"unknown action {action!r}", "use one of: " + ", ".join(ACTIONS))
    if action == "view" and global_scope:
        path = paths.user_config_path()
        flat = config.read_file(path)
        output.write(f"# user scope: {path}\n")
        known = [s for s in config.SETTINGS if s.key in flat]
        for setting in known:
            output.write(f"{setting.key}  {json.dumps(flat[setting.key])}  {setting.help}\n")
        if not known:
            output.write("(nothing set; every setting comes from the defaults or the "
                             "workspace)\n")
        return 0
    if action == "view":
        merged, sources = settings_store.effective(cwd)
        width = max(len(k) for k in merged)
        for setting in config.SETTINGS:
            shown = json.dumps(merged[setting.key])
            output.write(f"{setting.key:<{width}}  {shown:<12} ({sources[setting.key]})  "
                             f"{setting.help}\n")
        return 0
    if not key:
        raise EngramError(f"`engram config {action}` needs a KEY",
                          "valid keys: " + ", ".join(s.key for s in config.SETTINGS))
    if key not in config.SETTINGS_BY_KEY:
        raise EngramError(f"unknown config key {key!r}",
                          "valid keys: " + ", ".join(s.key for s in config.SETTINGS))
    if action == "get":
        merged, _ = settings_store.effective(cwd)
        output.write(json.dumps(merged[key]) + "\n")
        return 0
    path, scope = settings_store.scope_file(global_scope, cwd)
    if action == "unset":
        removed = settings_store.unset_value(path, key, scope)
        output.write(f"{'UNSET' if removed else 'UNCHANGED'} {key} in {path}\n")
        return _relink(key, cwd) if removed else 0
    if value is None:
        raise EngramError(f"`engram config set {key}` needs a VALUE")
    stored = settings_store.set_value(path, scope, key, value)
    output.write(f"SET {key} = {json.dumps(stored)} in {path} ({scope} scope)\n")
    return _relink(key, cwd)


def _relink(key: str, cwd: Path) -> int:
    """Bring every linked host (this project, personal and global files) in line with the
    new setting, as `engram upgrade` would; say so when nothing is linked."""
    if key not in RELINK_KEYS:
        return 0
    from engram.commands import upgrade

    output.write(f"{key} changes what the hook entries hold: re-linking (`engram upgrade`)\n")
    return upgrade.run(cwd=cwd)
