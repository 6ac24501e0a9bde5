"""The types a host takes in its config file beyond the syntax (`install.schema` in
hosts/*.yaml). A host that reads its file into fixed types runs none of its hooks when one
value breaks them, engram's or the user's (Codex ignores the whole hooks.json). engram refuses to link into
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

"claude_settings": Claude Code's settings files, as Claude Code 2.1.197 (the pinned client)
and 2.1.332 read them (zod; each case observed with the real clients: the user's own hook in
the file did not run). A file either version ignores is refused:
  - `model` a string; `permissions`' `allow`, `deny` and `ask` lists of strings (these two
    seen; Claude Code checks its other settings too, which engram leaves to it: `/doctor`);
  - in `hooks`, a group's `matcher` a string (not null), its `hooks` a list (2.1.197 asks one
    in every group); a handler an object with a `type` of command, prompt, agent, http or
    mcp_tool (2.1.197), a command handler a string `command`, a prompt handler a `prompt`
    (2.1.197); `timeout` a number above 0 (`10.5` is one; 0, -1, null, 1e400 are not),
    `async` true or false, `statusMessage` a string. Other keys of a group or a handler stay
    unread, and every event is checked (an event Claude Code does not know too).
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
    """The host reads the file's syntax but not its types: it runs none of its hooks."""


def check(schema: str | None, document: Any, host_name: str) -> None:
    """Raise Ignored at the first value of `document` the host's types refuse (`schema`, the
    host's `install.schema`; nothing to check without one)."""
    if schema == "codex_hooks" and isinstance(document, dict):
        _codex_hooks(document, host_name)
    elif schema == "claude_settings" and isinstance(document, dict):
        _claude_settings(document, host_name)


def _ignored(key: str, problem: str, fix: str, host_name: str) -> Ignored:
    return Ignored(key, f"{problem}: {host_name} then runs none of the file's hooks (yours "
                   "included)", fix)


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


def _kind(handler: dict[str, Any], where: str, host_name: str, kinds: tuple[str, ...],
          needs: dict[str, tuple[str, ...]]) -> str:
    """The handler's `type`, one of `kinds`, with the string fields its kind `needs`."""
    kind = handler.get("type")
    if kind not in kinds:
        shown = "missing" if "type" not in handler else _shown(kind)
        raise _ignored(f"{where}.type", f"is {shown}, not one of " + ", ".join(kinds),
                       f'give the handler at "{where}" one of those types, then run the command '
                       "again", host_name)
    for needed in needs.get(str(kind), ()):
        if not isinstance(handler.get(needed), str):
            shown = "missing" if needed not in handler else _shown(handler[needed])
            raise _ignored(f"{where}.{needed}", f"is {shown}, not a string (a {kind} handler "
                           "needs one)", f'make "{where}.{needed}" a string, or remove the '
                           "handler, then run the command again", host_name)
    return str(kind)


def _codex_handler(handler: dict[str, Any], where: str, host_name: str) -> None:
    kind = _kind(handler, where, host_name, _CODEX_TYPES,
                 {"command": ("command",), "mcp_tool": ("server", "tool")})
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


_CLAUDE_TYPES: Final = ("command", "prompt", "agent", "http", "mcp_tool")


def _claude_settings(document: dict[str, Any], host_name: str) -> None:
    model = document.get("model")
    if "model" in document and not isinstance(model, str):
        raise _ignored('"model"', f"is {_shown(model)}, not a string", 'make "model" a model '
                       'name such as "opus", or remove it, then run the command again', host_name)
    permissions = document.get("permissions")
    for key in ("allow", "deny", "ask"):
        rules = permissions.get(key) if isinstance(permissions, dict) else None
        if isinstance(permissions, dict) and key in permissions and not (
                isinstance(rules, list) and all(isinstance(rule, str) for rule in rules)):
            raise _ignored(f"permissions.{key}", "is not a list of strings",
                           f'make "permissions.{key}" a list such as ["Bash(npm test)"], then '
                           "run the command again", host_name)
    hooks = document.get("hooks")
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for i, group in enumerate(groups if isinstance(groups, list) else ()):
            if not isinstance(group, dict):
                continue  # the shape check refuses it
            where = f"hooks.{event}[{i}]"
            if "matcher" in group and not isinstance(group["matcher"], str):
                raise _ignored(f"{where}.matcher", f"is {_shown(group['matcher'])}, not a "
                               "string", f'make "{where}.matcher" a string ("" for every tool), '
                               "or remove it, then run the command again", host_name)
            if "hooks" not in group:
                raise _ignored(where, 'has no "hooks" list', f'give "{where}" a "hooks" list '
                               "(or remove the group), then run the command again", host_name)
            handlers = group["hooks"]
            for j, handler in enumerate(handlers if isinstance(handlers, list) else ()):
                if isinstance(handler, dict):
                    _claude_handler(handler, f"{where}.hooks[{j}]", host_name)


def _claude_handler(handler: dict[str, Any], where: str, host_name: str) -> None:
    _kind(handler, where, host_name, _CLAUDE_TYPES, {"command": ("command",), "prompt": ("prompt",)})
    timeout = handler.get("timeout")
    if "timeout" in handler and not (isinstance(timeout, (int, float)) and
                                     not isinstance(timeout, bool) and 0 < timeout < float("inf")):
        raise _ignored(f"{where}.timeout", f"is {_shown(timeout)}, not a number of seconds above "
                       "0", f'make "{where}.timeout" a number such as 10, or remove it, then run '
                       "the command again", host_name)
    for key, want, name in (("async", bool, "true or false"), ("statusMessage", str, "a string")):
        if key in handler and not isinstance(handler[key], want):
            raise _ignored(f"{where}.{key}", f"is {_shown(handler[key])}, not {name}",
                           f'make "{where}.{key}" {name}, or remove it, then run the command '
                           "again", host_name)
