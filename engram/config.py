"""Workspace and user configuration: JSON files (no YAML on the hook path), dotted keys,
validated against one table of known keys."""

from __future__ import annotations

import os

from engram import json_accel
from engram.errors import EngramError
from engram.record import Record, frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Final


@frozen
class Setting(Record):
    key: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    kind: type = str
    minimum: int | None = None
    maximum: int | None = None
    user_only: bool = False
    workspace_only: bool = False
    or_path: bool = False  # besides the choices, an absolute path is a valid value


MAX_CONFIG_BYTES: Final = 1024 * 1024

SETTINGS: Final[tuple[Setting, ...]] = (
    Setting("read", "auto", "when memory is injected",
            choices=("startup", "auto", "always", "manual", "off")),
    Setting("proof", "off", "end hook output with an `Engram proof:` line (off: no proof line; "
            "memory is still injected)",
            choices=("off", "compact")),
    Setting("load.limit", 8, "most cards routed for one prompt", kind=int, minimum=1, maximum=100),
    Setting("load.max_tokens", 1600, "budget for hosts whose limit is `load.max_tokens`",
            kind=int, minimum=100, maximum=200_000),
    Setting("load.max_path_cards", 3, "most bodies a path trigger injects per event",
            kind=int, minimum=1, maximum=20),
    Setting("load.code", True, "path triggers also route on the touched files' code: the names "
            "it uses and the modules it imports", kind=bool),
    Setting("hooks.path_rules", "hook",
            "Claude path trigger: a PostToolUse hook, or native .claude/rules files",
            choices=("native", "hook")),
    Setting("hooks.command", "auto",
            "the engram a hook entry runs: auto (`engram` on PATH in shared project files, this "
            "installation's absolute path with --global/--local), path, absolute, or a path",
            choices=("auto", "path", "absolute"), or_path=True),
    Setting("roots", [], "extra memory roots, relative to the workspace root",
            kind=list, workspace_only=True),
    Setting("transcripts.allowed_dirs", [],
            "extra folders `observe` may read transcripts from (user scope only)",
            kind=list, user_only=True),
    Setting("lint.ignore", [], "lint check codes to skip (e.g. glob-unmatched)", kind=list),
    Setting("security.follow_symlinks", False,
            "follow symlinked memory roots and cards that point outside the workspace "
            "(user scope only: a repository cannot switch off its own guard)",
            kind=bool, user_only=True),
    Setting("install.follow_symlinks", False,
            "let link write through symlinked host configs and rule folders that point outside "
            "the workspace or the host's config folder (user scope only)",
            kind=bool, user_only=True),
)
SETTINGS_BY_KEY: Final = {s.key: s for s in SETTINGS}


def defaults() -> dict[str, Any]:
    return {s.key: s.default for s in SETTINGS}


def flatten(document: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"load": {"limit": 3}} -> {"load.limit": 3}; lists and scalars are leaves."""
    flat: dict[str, Any] = {}
    for key, value in document.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for dotted, value in sorted(flat.items()):
        node = nested
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested


def _valid_keys_hint() -> str:
    return "valid keys: " + ", ".join(s.key for s in SETTINGS)


def coerce(key: str, raw: Any) -> Any:
    """Validate one value for `key` (from a CLI string or a file); EngramError when invalid."""
    setting = SETTINGS_BY_KEY.get(key)
    if setting is None:
        raise EngramError(f"unknown config key {key!r}", _valid_keys_hint())
    value = raw
    if setting.kind is int:
        if isinstance(raw, bool):
            raise EngramError(f"{key} must be a whole number, not {raw!r}")
        try:
            value = int(raw)
        except (TypeError, ValueError):
            raise EngramError(f"{key} must be a whole number, not {raw!r}") from None
        if setting.minimum is not None and value < setting.minimum or (
            setting.maximum is not None and value > setting.maximum
        ):
            raise EngramError(f"{key} must be between {setting.minimum} and {setting.maximum}")
    elif setting.kind is bool:
        if isinstance(raw, str):
            lowered = raw.strip().lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
                raise EngramError(f"{key} must be true or false, not {raw!r}")
            value = lowered in ("true", "1", "yes", "on")
        elif not isinstance(raw, bool):
            raise EngramError(f"{key} must be true or false, not {raw!r}")
    elif setting.kind is list:
        if isinstance(raw, str) and raw.strip().startswith("["):
            value = _json_list(key, raw)
        elif isinstance(raw, str):
            value = [part.strip() for part in raw.split(",") if part.strip()]
        elif not (isinstance(raw, list) and all(isinstance(v, str) for v in raw)):
            raise EngramError(f"{key} must be a list of strings")
    else:
        if not isinstance(raw, str):
            raise EngramError(f"{key} must be a string, not {raw!r}")
        if setting.choices and raw not in setting.choices and not (
                setting.or_path and os.path.isabs(os.path.expanduser(raw))):
            raise EngramError(f"invalid value {raw!r} for {key}",
                              "valid values: " + ", ".join(setting.choices))
        if setting.or_path and raw not in setting.choices and not _names_engram(raw):
            # engram finds its own hook entries by the program's name: an entry run by
            # another name would never be found again (each link adding one more, unlink
            # leaving them all)
            raise EngramError(f"{key}: {raw!r} does not name an engram executable",
                              "give the path of an `engram` script (or a link named engram)")
    return value


def _names_engram(path: str) -> bool:
    """Is the file this path names called `engram` (`engram.exe`, `engram.cmd` on Windows)?"""
    base = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return base in ("engram", "engram.exe", "engram.cmd", "engram.bat", "engram-script.py")


def _json_list(key: str, raw: str) -> list[str]:
    """A list setting given as a JSON list (`["docs/mem", "notes"]`), as the config file holds
    it; a value that starts like one and is not a list of strings is refused, never stored as
    one odd item."""
    import json

    try:
        value = json.loads(raw)
    except ValueError as exc:
        value = exc
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        problem = f"not valid JSON: {value}" if isinstance(value, ValueError) else \
            "not a list of strings"
        raise EngramError(f"{key}: {raw.strip()!r} looks like a JSON list but is {problem}",
                          'write it as a JSON list of strings (\'["docs/mem", "notes"]\') or '
                          "comma-separated (docs/mem,notes)")
    return list(value)


def read_file(path: "str | os.PathLike[str]") -> dict[str, Any]:
    """A config file as flat dotted keys; {} when absent. Unknown keys are kept (newer
    engram versions may have written them) but ignored."""
    from engram import fileio

    path = os.fspath(path)
    try:
        text = fileio.read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise EngramError(f"cannot read config {path}: {reason}",
                          f"make {path} a plain JSON file, or delete it") from None
    try:
        document = json_accel.loads(text) if text.strip() else {}
    except RecursionError:
        raise EngramError(f"config {path} nests too deeply", f"fix or delete {path}") from None
    except json_accel.JSONDecodeError as exc:
        raise EngramError(f"config {path} is not valid JSON (line {exc.lineno})",
                          f"fix or delete {path}") from None
    if not isinstance(document, dict):
        raise EngramError(f"config {path} must hold a JSON object")
    return flatten(document)


def effective(user: dict[str, Any], workspace: dict[str, Any],
              on_invalid: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Defaults, then user scope, then workspace scope; invalid values are reported through
    `on_invalid` and fall back to the layer below."""
    merged = defaults()
    for scope, layer in (("user", user), ("workspace", workspace)):
        for key, raw in layer.items():
            setting = SETTINGS_BY_KEY.get(key)
            if setting is None:
                continue
            if setting.user_only and scope != "user":
                if on_invalid:
                    # A cloned repository must not turn off the guards that protect its reader
                    # (links out of it, folders `observe` reads): said, so it is not a mystery.
                    on_invalid(f"workspace config sets {key}, a setting read from the user scope "
                               "only; ignored (set it with `engram config set --global`)")
                continue
            if setting.workspace_only and scope != "workspace":
                continue
            try:
                merged[key] = coerce(key, raw)
            except EngramError as exc:
                if on_invalid:
                    on_invalid(f"{scope} config: {exc.message}")
    return merged


def render(flat: dict[str, Any]) -> str:
    return json_accel.dumps(_nest(flat), indent=2, sort_keys=True) + "\n"
