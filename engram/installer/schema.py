"""The types a host takes in its config file beyond the syntax (`install.schema` in
hosts/*.yaml). A host that reads its file into fixed types ignores the whole file when one
value breaks them: none of its hooks run, engram's or the user's. engram refuses to link into
such a file (as into one that does not parse) and doctor names it, with the key at fault.

"codex_hooks": Codex's hooks.json, as Codex 0.171.0 reads it (serde, each case observed with
the real client: its warning "failed to parse hooks config ...: unknown field `x`, expected
`description` or `hooks`", and no hook of the file run):
  - the top level takes `description` (a string or null) and `hooks` (an object or null),
    nothing else: `$schema`, `model` or any other key beside them and the file is ignored;
  - the value of each event it reads (`_CODEX_EVENTS`; null seen refused for each) is a list
    of matcher groups; an event name it does not know is skipped whatever it holds (engram
    still asks a list there, as it does for every host, and checks no more);
  - a group's `matcher` is a string or null, its `hooks` a list; other keys are kept unread;
  - a handler has a `type` of command, mcp_tool, prompt or agent (`Command` is not one); a
    command handler a string `command`, `timeout` a whole number 0 to 2^64-1 or null (`10.0`,
    `1e1`, `-1`, `"10"` are not), `async` true or false (not null), `statusMessage` a string
    or null; an mcp_tool handler a `server` and a `tool`. Other keys of a handler (`name`,
    `env`, `args`, ...) and of a group (`description`) are kept unread, whatever they hold;
    the fields of the other kinds are not checked.
"""

from __future__ import annotations

from typing import Any, Final

from engram.installer.merge import ShapeError

_CODEX_TOP: Final = ("hooks", "description")
_CODEX_TYPES: Final = ("command", "mcp_tool", "prompt", "agent")
_CODEX_EVENTS: Final = frozenset({
    "PreToolUse", "PostToolUse", "PermissionRequest", "Stop", "SubagentStart", "SubagentStop",
    "PreCompact", "PostCompact", "SessionStart", "SessionEnd", "UserPromptSubmit"})
_U64: Final = 2**64


class Ignored(ShapeError):
    """The host reads the file's syntax but not its types: it ignores the whole file."""


def check(schema: str | None, document: Any, host_name: str) -> None:
    """Raise Ignored at the first value of `document` the host's types refuse (`schema`, the
    host's `install.schema`; nothing to check without one)."""
    if schema == "codex_hooks" and isinstance(document, dict):
        _codex_hooks(document, host_name)


def _ignored(key: str, problem: str, fix: str, host_name: str) -> Ignored:
    return Ignored(key, f"{problem}: {host_name} ignores the whole file, so none of its hooks "
                   "run (yours included)", fix)


def _codex_hooks(document: dict[str, Any], host_name: str) -> None:
    extra = [key for key in document if key not in _CODEX_TOP]
    if extra:
        names = ", ".join(f'"{key}"' for key in extra)
        raise _ignored(names, f"{'is a key' if len(extra) == 1 else 'are keys'} {host_name} "
                       "does not take in hooks.json (it takes \"hooks\" and \"description\" "
                       "alone at the top level)",
                       f"take {names} out of the file ({host_name} reads no other key there; keep "
                       "what you need elsewhere), then run the command again; engram does not "
                       "delete keys of yours", host_name)
    if document.get("description") is not None and not isinstance(document["description"], str):
        raise _ignored('"description"', "is not a string", 'make "description" a string, then '
                       "run the command again", host_name)
    hooks = document.get("hooks")
    if not isinstance(hooks, dict):
        return  # absent or null: no hooks; another type is the shape check's to refuse
    for event, groups in hooks.items():
        if event not in _CODEX_EVENTS:
            continue
        for i, group in enumerate(groups if isinstance(groups, list) else ()):
            if not isinstance(group, dict):
                continue  # the shape check refuses it
            where = f"hooks.{event}[{i}]"
            if group.get("matcher") is not None and not isinstance(group["matcher"], str):
                raise _ignored(f"{where}.matcher", "is not a string",
                               f'make "{where}.matcher" a string, then run the command again',
                               host_name)
            handlers = group.get("hooks")
            for j, handler in enumerate(handlers if isinstance(handlers, list) else ()):
                if isinstance(handler, dict):
                    _codex_handler(handler, f"{where}.hooks[{j}]", host_name)


def _codex_handler(handler: dict[str, Any], where: str, host_name: str) -> None:
    kind = handler.get("type")
    if kind not in _CODEX_TYPES:
        shown = "missing" if "type" not in handler else _shown(kind)
        raise _ignored(f"{where}.type", f"is {shown}, not one of " + ", ".join(_CODEX_TYPES),
                       f'give the handler at "{where}" one of those types, then run the command '
                       "again", host_name)
    for needed in {"command": ("command",), "mcp_tool": ("server", "tool")}.get(str(kind), ()):
        if not isinstance(handler.get(needed), str):
            shown = "missing" if needed not in handler else _shown(handler[needed])
            raise _ignored(f"{where}.{needed}", f"is {shown}, not a string (a {kind} handler "
                           "needs one)", f'make "{where}.{needed}" a string, or remove the '
                           "handler, then run the command again", host_name)
    if kind != "command":
        return  # the other kinds' optional fields are not checked (none observed)
    status, run_async, timeout = (handler.get(k) for k in ("statusMessage", "async", "timeout"))
    if status is not None and not isinstance(status, str):
        raise _ignored(f"{where}.statusMessage", f"is {_shown(status)}, not a string",
                       f'make "{where}.statusMessage" a string, then run the command again',
                       host_name)
    if "async" in handler and not isinstance(run_async, bool):
        raise _ignored(f"{where}.async", f"is {_shown(run_async)}, not true or false",
                       f'make "{where}.async" true or false, then run the command again',
                       host_name)
    if timeout is not None and not (type(timeout) is int and 0 <= timeout < _U64):
        raise _ignored(f"{where}.timeout", f"is {_shown(timeout)}, not a whole number of "
                       "seconds (0 or more, written without a decimal point or exponent)",
                       f'make "{where}.timeout" a whole number such as 10, then run the '
                       "command again", host_name)


def _shown(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"' if len(value) <= 40 else "a long string"
    if isinstance(value, (int, float)):
        return str(value) if len(str(value)) <= 24 else "a huge number"
    return "a list" if isinstance(value, list) else "an object"
