"""`engram set-read` and `engram set-proof`: shortcuts for the `read` and `proof` settings."""

from __future__ import annotations

import sys
from pathlib import Path

from engram import config, settings_store
from engram.errors import EngramError

EXPLANATIONS = {
    "startup": "memory is injected at session start only",
    "auto": "each prompt gets only the memory this session has not had yet",
    "always": "every routed body is re-sent on every prompt (still within the host budget)",
    "manual": "nothing is injected automatically",
    "off": "nothing is injected",
    "compact": "hook output ends with an `Engram proof:` line",
}


def run(key: str, value: str, *, global_scope: bool, cwd: Path) -> int:
    setting = config.SETTINGS_BY_KEY[key]
    if value == "status":
        merged, sources = settings_store.effective(cwd)
        current = merged[key]
        sys.stdout.write(f"{key}: {current} ({sources[key]}) - "
                         f"{EXPLANATIONS.get(current, 'no proof line')}\n")
        return 0
    if value not in setting.choices:
        raise EngramError(f"invalid {key} mode {value!r}",
                          "valid: " + ", ".join((*setting.choices, "status")))
    path, scope = settings_store.scope_file(global_scope, cwd)
    settings_store.set_value(path, scope, key, value)
    sys.stdout.write(f"SET {key} = {value} in {path} ({scope} scope): "
                     f"{EXPLANATIONS.get(value, 'no proof line')}\n")
    return 0
