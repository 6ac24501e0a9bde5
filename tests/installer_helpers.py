"""Shared by the installer tests: run the CLI in-process, compare with golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import typer

from engram.cli import app
from engram.errors import EngramError

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "installer"
PINNED = "/opt/engram/bin/engram"
UPDATE = os.environ.get("ENGRAM_UPDATE_GOLDENS") == "1"  # regenerate: ENGRAM_UPDATE_GOLDENS=1 pytest


def engram(*args: str, cwd: Path) -> int:
    """The CLI in-process, with its exit code. (engram.cli.run currently drops the code that
    typer returns in non-standalone mode, so read it from app() directly.)"""
    try:
        result = app(args=[*args, "--cwd", str(cwd)], prog_name="engram", standalone_mode=False)
    except typer.Exit as done:
        return int(done.exit_code or 0)
    except EngramError as exc:
        typer.echo(f"engram: error: {exc}", err=True)
        return 1
    return int(result or 0)


def check_golden(actual: str, name: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
    if not path.exists():
        pytest.fail(f"golden {name} missing: run with ENGRAM_UPDATE_GOLDENS=1 and review it")
    assert actual == path.read_text(encoding="utf-8"), f"differs from golden {name}"


# ---- a host's file as the host itself reads it (an oracle apart from engram's own reader) ----

def _strip_json_comments(text: str) -> str:
    """strip-json-comments 3.x as Gemini CLI 0.61.0 bundles it, step for step: each comment's
    characters but blanks become spaces. A quote toggles a string unless an odd run of
    backslashes precedes it (inside a string or not, as there). Nothing else: a trailing
    comma stays for JSON.parse to reject."""
    import re

    def escaped(pos: int) -> bool:
        count = 0
        while pos - count - 1 >= 0 and text[pos - count - 1] == "\\":
            count += 1
        return count % 2 == 1

    def blank(part: str) -> str:  # JavaScript's /\S/g, its own idea of a blank
        return re.sub("[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f"
                      "\u3000\ufeff]", " ", part)

    out: list[str] = []
    in_string, comment, offset, i = False, "", 0, 0
    while i < len(text):
        pair = text[i:i + 2]
        if not comment and text[i] == '"' and not escaped(i):
            in_string = not in_string
        if in_string:
            i += 1
            continue
        if not comment and pair == "//":
            out.append(text[offset:i])
            offset, comment = i, "line"
            i += 1
        elif comment == "line" and pair == "\r\n":
            i += 1
            out.append(blank(text[offset:i]))
            offset, comment = i, ""
        elif comment == "line" and text[i] == "\n":
            out.append(blank(text[offset:i]))
            offset, comment = i, ""
        elif not comment and pair == "/*":
            out.append(text[offset:i])
            offset, comment = i, "block"
            i += 1
        elif comment == "block" and pair == "*/":
            i += 1
            out.append(blank(text[offset:i + 1]))
            offset, comment = i + 1, ""
        i += 1
    return "".join(out) + (blank(text[offset:]) if comment else text[offset:])


def _refuse_constant(name: str) -> None:
    raise ValueError(f"JSON.parse and serde_json reject {name}")


def host_reads(host: str, text: str) -> object:
    """The value the host's own parser gets from `text`, or ValueError where it rejects the
    file whole: JSON.parse after strip-json-comments for Gemini CLI (no trailing comma, no
    byte order mark: Gemini 0.61.0 stops at start on either); serde_json for Codex (no byte
    order mark, no escape of half a surrogate pair: Codex 0.171.0 runs none of the file's
    hooks), read into Codex's types (`_codex_types`); strict JSON after one byte order mark
    for the others (Claude Code skips one), Claude's read into its types (`_claude_types`).
    Python's json module is JSON.parse but for `NaN`, `Infinity` and `-Infinity`, which no
    host reads."""
    import json

    from engram import host_registry

    syntax = host_registry.get(host).install.get("syntax", "json")
    if syntax == "jsonc":
        return json.loads(_strip_json_comments(text), parse_constant=_refuse_constant)
    if syntax == "serde_json":
        value = json.loads(text, parse_constant=_refuse_constant)
        if any("\ud800" <= ch <= "\udfff" for part in _strings(value) for ch in part):
            raise ValueError("serde_json rejects an escape of half a surrogate pair")
        _codex_types(value)
        return value
    value = json.loads(text.removeprefix("\ufeff"), parse_constant=_refuse_constant)
    if host == "claude":
        _claude_types(value)
    return value


CODEX_EVENTS = ("PreToolUse", "PostToolUse", "PermissionRequest", "Stop", "SubagentStart",
                "SubagentStop", "PreCompact", "PostCompact", "SessionStart", "SessionEnd",
                "UserPromptSubmit")


def _codex_types(value: object) -> None:
    """Codex 0.171.0 reads hooks.json into fixed types (serde) and ignores the whole file when
    a value does not fit them; each rule below was seen with the real client (e2e
    `test_engram_links_exactly_the_hooks_files_codex_reads`). The top level takes
    `description` (a string or null) and `hooks` alone (an array at either level, which serde
    reads as a struct's fields in order, is left out: engram refuses it anyway). In `hooks`,
    each event Codex knows holds a list (null is refused) of groups (objects; `matcher` a
    string or null, `hooks` a list, anything else unread) of handlers: a `type` of command,
    mcp_tool, prompt or agent; a command's `command` a string, `timeout` an unsigned 64-bit
    whole number or null (no `10.0`), `async` a boolean, `statusMessage` a string or null;
    an mcp_tool's `server` and `tool` strings. An event Codex does not know is skipped
    whatever it holds. A key named twice in an object Codex reads into fields is refused
    (the unit tests' files never name one twice: engram refuses every such file)."""
    def fail(why: str) -> None:
        raise ValueError(f"Codex ignores the file: {why}")

    if not isinstance(value, dict):
        return
    for key in value:
        if key not in ("description", "hooks"):
            fail(f"unknown field {key!r}")
    if not isinstance(value.get("description"), (str, type(None))):
        fail("description is not a string")
    hooks = value.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        fail("hooks is not an object")
    assert isinstance(hooks, dict)
    for event in CODEX_EVENTS:
        if event not in hooks:
            continue
        groups = hooks[event]
        if not isinstance(groups, list):
            fail(f"{event} is not a list")
        for group in groups:
            if not isinstance(group, dict):
                fail("a group is not an object")
            if not isinstance(group.get("matcher"), (str, type(None))):
                fail("a matcher is not a string")
            if "hooks" in group and not isinstance(group["hooks"], list):
                fail("a group's hooks is not a list")
            for handler in group.get("hooks") or ():
                if not isinstance(handler, dict) or handler.get("type") not in \
                        ("command", "mcp_tool", "prompt", "agent"):
                    fail("a handler of no known type")
                needs = {"command": ["command"], "mcp_tool": ["server", "tool"]}
                for field_name in needs.get(handler["type"], []):
                    if not isinstance(handler.get(field_name), str):
                        fail(f"a {handler['type']} handler's {field_name} is not a string")
                if handler["type"] != "command":
                    continue
                timeout = handler.get("timeout")
                if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int)
                                            or not 0 <= timeout <= 2**64 - 1):
                    fail("a timeout is not an unsigned whole number")
                if "async" in handler and not isinstance(handler["async"], bool):
                    fail("async is not a boolean")
                if not isinstance(handler.get("statusMessage"), (str, type(None))):
                    fail("statusMessage is not a string")


def _claude_types(value: object) -> None:
    """Claude Code checks its settings' types and runs none of the file's hooks when one
    does not fit; the rules below were each seen with the real clients (e2e
    `test_engram_links_exactly_the_settings_claude_reads`), refused where 2.1.197 or 2.1.332
    refuses them: `model` a string; `permissions.allow`, `deny`, `ask` lists of strings; in
    `hooks`, a group's `matcher` a string (not null) and its `hooks` a list, present; a
    handler an object, its `type` command, prompt, agent, http or mcp_tool, a command's
    `command` and a prompt's `prompt` strings, `timeout` a finite number above 0, `async` a
    boolean, `statusMessage` a string, `if` a string, `once` a boolean, `shell` bash or
    powershell; the other settings in `_CLAUDE_SEEN` of the type each takes, `statusLine`
    naming a command, `permissions` an object with a known `defaultMode`; and no hook at all
    with `disableAllHooks` true. (Claude Code checks more settings; engram checks the type
    of each it knows, `installer/schema.py`.)"""
    import math

    def fail(why: str) -> None:
        raise ValueError(f"Claude Code ignores the file's hooks: {why}")

    if not isinstance(value, dict):
        return
    if "model" in value and not isinstance(value["model"], str):
        fail("model is not a string")
    for key, fits in _CLAUDE_SEEN.items():
        if key in value and not fits(value[key]):
            fail(f"{key} is not of its type")
    if value.get("disableAllHooks") is True:
        fail("disableAllHooks is true")
    status = value.get("statusLine")
    if isinstance(status, dict) and (status.get("type") != "command" or
                                     not isinstance(status.get("command"), str)):
        fail("statusLine names no command")
    permissions = value.get("permissions")
    if "permissions" in value and not isinstance(permissions, dict):
        fail("permissions is not an object")
    if isinstance(permissions, dict) and "defaultMode" in permissions and \
            permissions["defaultMode"] not in ("default", "acceptEdits", "bypassPermissions",
                                               "plan", "dontAsk", "auto"):
        fail("an unknown permission mode")
    if isinstance(permissions, dict) and "additionalDirectories" in permissions and not (
            isinstance(permissions["additionalDirectories"], list) and
            all(isinstance(d, str) for d in permissions["additionalDirectories"])):
        fail("permissions.additionalDirectories is not a list of strings")
    if isinstance(permissions, dict):
        for key in ("allow", "deny", "ask"):
            if key in permissions and not (isinstance(permissions[key], list) and all(
                    isinstance(rule, str) for rule in permissions[key])):
                fail(f"permissions.{key} is not a list of strings")
    hooks = value.get("hooks")
    if not isinstance(hooks, dict):
        return
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict):
                continue
            if "matcher" in group and not isinstance(group["matcher"], str):
                fail("a matcher is not a string")
            if not isinstance(group.get("hooks"), list):
                fail("a group has no hooks list")
            for handler in group["hooks"]:
                if not isinstance(handler, dict):
                    fail("a handler is not an object")
                kind = handler.get("type")
                if kind not in ("command", "prompt", "agent", "http", "mcp_tool"):
                    fail("a handler of no known type")
                field_name = {"command": "command", "prompt": "prompt"}.get(kind)
                if field_name and not isinstance(handler.get(field_name), str):
                    fail(f"a {kind} handler's {field_name} is not a string")
                if "timeout" in handler:
                    timeout = handler["timeout"]
                    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or \
                            not math.isfinite(timeout) or timeout <= 0:
                        fail("a timeout is not a number above 0")
                if "async" in handler and not isinstance(handler["async"], bool):
                    fail("async is not a boolean")
                if "statusMessage" in handler and not isinstance(handler["statusMessage"], str):
                    fail("statusMessage is not a string")
                for key, fits in (("if", _is_str), ("once", _is_bool)):
                    if key in handler and not fits(handler[key]):
                        fail(f"a handler's {key} is not of its type")
                if kind == "command" and handler.get("shell", "bash") not in ("bash", "powershell"):
                    fail("a handler's shell is not bash or powershell")


def _is_str(v: object) -> bool:
    return isinstance(v, str)


def _is_bool(v: object) -> bool:
    return isinstance(v, bool)


def _whole_above_0(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and v == int(v)


# Settings Claude Code 2.1.197 and 2.1.332 were seen to ignore the whole file for, when one
# holds a value of another type (e2e `test_engram_links_exactly_the_settings_claude_reads`).
_CLAUDE_SEEN = {
    "env": lambda v: isinstance(v, dict), "statusLine": lambda v: isinstance(v, dict),
    "enabledPlugins": lambda v: isinstance(v, dict), "sandbox": lambda v: isinstance(v, dict),
    "apiKeyHelper": _is_str, "outputStyle": _is_str, "$schema": _is_str,
    "includeCoAuthoredBy": _is_bool, "verbose": _is_bool, "disableAllHooks": _is_bool,
    "cleanupPeriodDays": _whole_above_0,
    "feedbackSurveyRate": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
    and 0 <= v <= 1,
    "tui": lambda v: v in ("default", "fullscreen"),
    "fallbackModel": lambda v: isinstance(v, list) and all(isinstance(m, str) for m in v),
}


def host_accepts(host: str, text: str) -> bool:
    try:
        host_reads(host, text)
    except ValueError:
        return False
    return True


def _strings(value: object) -> list[str]:
    """Every string of a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
