"""`engram set-read` and `engram set-proof`: shortcuts for the `read` and `proof` settings.
They are personal (how much memory you want to see, whether you want a proof line), so they
are written to the user's config unless `--project` shares them through the workspace."""

from __future__ import annotations

from pathlib import Path

from engram import config, output, paths, settings_store
from engram.errors import EngramError

EXPLANATIONS = {
    "read": {
        "startup": "memory is injected at session start only",
        "auto": "each prompt gets only the memory this session has not had yet",
        "always": "every routed body is re-sent on every prompt (still within the host budget)",
        "manual": "hooks inject nothing; pull cards yourself with `engram route PROMPT` and "
                  "`engram show ID`",
        "off": "engram injects nothing into any host",
    },
    "proof": {
        "off": "no proof line at the end of hook output (memory is still injected)",
        "compact": "hook output ends with an `Engram proof:` line",
    },
}


def run(key: str, value: str, *, project: bool, cwd: Path) -> int:
    setting = config.SETTINGS_BY_KEY[key]
    words = EXPLANATIONS[key]
    if value == "status":
        merged, sources = settings_store.effective(cwd)
        current = merged[key]
        output.write(f"{key}: {current} ({sources[key]}) - {words.get(current, '')}\n")
        return 0
    if value not in setting.choices:
        raise EngramError(f"invalid {key} mode {value!r}",
                          "valid: " + ", ".join((*setting.choices, "status")))
    path, scope = settings_store.scope_file(not project, cwd)
    settings_store.set_value(path, scope, key, value)
    output.write(f"SET {key} = {value} in {path} ({scope} scope): {words.get(value, '')}\n")
    if scope == "user":
        merged, sources = settings_store.effective(cwd)
        if sources[key] == "workspace" and merged[key] != value:
            output.write(f"note: this workspace sets {key} = {merged[key]} in "
                             f"{paths.WORKSPACE_CONFIG_NAME}, which wins here; "
                             f"`engram config unset {key}` there to use yours\n")
    return 0
