"""The types a host takes in its config file beyond the syntax (`install.schema` in
hosts/*.yaml). A host that reads its file into fixed types runs none of its hooks when one
value breaks them, engram's or the user's (Codex ignores the whole hooks.json). engram refuses to link into
such a file (as into one that does not parse) and doctor names it, with the key at fault.

"gemini_settings": Gemini CLI's settings, which 0.61.0 reads whatever type a setting holds,
but with `hooksConfig.enabled` false runs no hook, and none named in `hooksConfig.disabled`
(`_gemini_settings`).

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
  - `model` a string; `permissions` an object, its `allow`, `deny` and `ask` lists of
    strings, `defaultMode` one of Claude Code's permission modes, `additionalDirectories` a
    list of strings;
  - each other top-level setting Claude Code 2.1.197 reads into a type (`_CLAUDE_KINDS`,
    from the settings schema the client bundles: a boolean, a string, a number, a list, an
    object, one of a few strings) holds a value of that JSON type (seen for `env`,
    `cleanupPeriodDays`, `includeCoAuthoredBy`, `apiKeyHelper`, `statusLine`,
    `enabledPlugins`, `outputStyle`, `sandbox`, `$schema`, on both versions); what is inside
    an object setting is left to Claude Code (`/doctor` names it), and a setting it reads
    with a fallback (`forceLoginMethod`, `effortLevel`, `theme`, ...) takes any value;
  - `disableAllHooks` true: Claude Code reads the file and runs no hook at all;
  - in `hooks`, a group's `matcher` a string (not null), its `hooks` a list (2.1.197 asks one
    in every group); a handler an object with a `type` of command, prompt, agent, http or
    mcp_tool (2.1.197), a command handler a string `command`, a prompt handler a `prompt`
    (2.1.197); `timeout` a number above 0 (`10.5` is one; 0, -1, null, 1e400 are not),
    `async` true or false, `statusMessage` a string, `if` a string (seen), `shell` bash or
    powershell (seen), `args` a list of strings, `once` and `asyncRewake` true or false.
    Other keys of a group or a handler stay unread, and every event is checked (an event
    Claude Code does not know too).
"""

from __future__ import annotations

from typing import Any, Final, Iterable, Mapping

from engram.installer.merge import ShapeError

_CODEX_TOP: Final = ("hooks", "description")
_CODEX_TYPES: Final = ("command", "mcp_tool", "prompt", "agent")
_CODEX_EVENTS: Final = frozenset({
    "PreToolUse", "PostToolUse", "PermissionRequest", "Stop", "SubagentStart", "SubagentStop",
    "PreCompact", "PostCompact", "SessionStart", "SessionEnd", "UserPromptSubmit"})
_U64: Final = 2**64


class Ignored(ShapeError):
    """The host reads the file's syntax but not its types: it runs none of its hooks."""


def check(install: Mapping[str, Any], document: Any, host_name: str) -> None:
    """Raise Ignored at the first value of `document` the host's types refuse, or that keeps
    the host from running engram's hooks (`install.schema` of the host's definition; nothing
    to check without one)."""
    schema = install.get("schema")
    if schema == "codex_hooks" and isinstance(document, dict):
        _codex_hooks(document, host_name)
    elif schema == "claude_settings" and isinstance(document, dict):
        _claude_settings(document, host_name)
    elif schema == "gemini_settings" and isinstance(document, dict):
        _gemini_settings(document, host_name, str((install.get("entry") or {}).get("name", "")))


def _gemini_settings(document: dict[str, Any], host_name: str, name: str) -> None:
    """Gemini CLI 0.61.0 reads a file whatever types its settings hold (each seen: a `general`
    of 1, a handler `timeout` of "10"), but runs no hook with `hooksConfig.enabled` false and
    none named in `hooksConfig.disabled` (what `/hooks disable NAME` writes; engram's entries
    are named `name`)."""
    config = document.get("hooksConfig")
    if not isinstance(config, dict):
        return
    if config.get("enabled") is False:
        raise Ignored("hooksConfig.enabled", f"is false: {host_name} runs no hook while it is "
                      "set (engram's none, yours none)", 'remove "hooksConfig.enabled" (or set '
                      "it to true) if you want hooks to run, then run the command again")
    disabled = config.get("disabled")
    if name and isinstance(disabled, list) and name in disabled:
        raise Ignored("hooksConfig.disabled", f'names "{name}": {host_name} skips every hook of '
                      "that name, engram's entries", f'run `/hooks enable {name}` in '
                      f'{host_name}, or take "{name}" out of "hooksConfig.disabled", then run '
                      "the command again")


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
_CLAUDE_MODES: Final = ("default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto")
# The JSON type of each top-level setting Claude Code 2.1.197's settings schema reads without
# a fallback (`model`, `permissions` and `hooks` are checked apart): a value of another type
# and the client ignores the whole file. "int+": a whole number above 0; "0-1": a number from
# 0 to 1; a tuple: one of those strings.
_CLAUDE_KINDS: Final[dict[str, str | tuple[str, ...]]] = {
    **dict.fromkeys((
        "agentPushNotifEnabled", "allowAllClaudeAiMcps", "allowManagedHooksOnly",
        "allowManagedMcpServersOnly", "allowManagedPermissionRulesOnly", "alwaysThinkingEnabled",
        "autoCompactEnabled", "autoDreamEnabled", "autoMemoryEnabled", "autoScrollEnabled",
        "autoUploadSessions", "awaySummaryEnabled", "channelsEnabled", "disableAgentView",
        "disableAllHooks", "disableArtifact", "disableBundledSkills", "disableClaudeAiConnectors",
        "disableRemoteControl", "disableSideloadFlags", "disableSkillShellExecution",
        "disableWorkflows", "doneMeansMerged", "enableAllProjectMcpServers", "enableArtifact",
        "enableWorkflows", "enforceAvailableModels", "fastMode", "fastModePerSessionOptIn",
        "fileCheckpointingEnabled", "forceRemoteSettingsRefresh", "includeCoAuthoredBy",
        "includeGitInstructions", "inputNeededNotifEnabled", "isolatePeerMachines",
        "precomputeCompactionEnabled", "prefersReducedMotion", "promptSuggestionEnabled",
        "remoteControlAtStartup", "respectGitignore", "respondToBashCommands",
        "showClearContextOnPlanAccept", "showMessageTimestamps", "showThinkingSummaries",
        "showTurnDuration", "skipDangerousModePermissionPrompt", "skipWebFetchPreflight",
        "skipWorkflowUsageWarning", "spinnerTipsEnabled", "switchModelsOnFlag",
        "syntaxHighlightingDisabled", "terminalProgressBarEnabled", "terminalTitleFromRename",
        "todoFeatureEnabled", "verbose", "wheelScrollAccelerationEnabled",
        "workflowKeywordTriggerEnabled", "wslInheritsWindowsSettings"), "boolean"),
    **dict.fromkeys((
        "$schema", "advisorModel", "agent", "apiKeyHelper", "autoMemoryDirectory",
        "awsAuthRefresh", "awsCredentialExport", "claudeMd", "gcpAuthRefresh", "language",
        "minimumVersion", "otelHeadersHelper", "outputStyle", "plansDirectory",
        "pluginTrustMessage", "prUrlTemplate", "proxyAuthHelper", "requiredMaximumVersion",
        "requiredMinimumVersion"), "string"),
    **dict.fromkeys((
        "attribution", "breakReminder", "enabledPlugins", "env", "extraKnownMarketplaces",
        "fileSuggestion", "modelOverrides", "pluginConfigs", "policyHelper", "quietHours",
        "remote", "sandbox", "skillOverrides", "spinnerTipsOverride", "spinnerVerbs", "statusLine",
        "subagentStatusLine", "voice", "worktree"), "object"),
    **dict.fromkeys((
        "allowedHttpHookUrls", "availableModels", "claudeMdExcludes", "companyAnnouncements",
        "disabledMcpjsonServers", "enabledMcpjsonServers", "fallbackModel",
        "httpHookAllowedEnvVars", "pluginSuggestionMarketplaces"), "list of strings"),
    **dict.fromkeys((
        "allowedChannelPlugins", "allowedMcpServers", "blockedMarketplaces", "deniedMcpServers",
        "sshConfigs", "strictKnownMarketplaces"), "list"),
    **dict.fromkeys(("cleanupPeriodDays", "skillListingMaxDescChars",
                     "totalTokensReminderBudget"), "int+"),
    **dict.fromkeys(("feedbackSurveyRate", "skillListingBudgetFraction"), "0-1"),
    "autoUpdatesChannel": ("latest", "stable", "rc"),
    "daemonColdStart": ("transient", "ask"),
    "defaultShell": ("bash", "powershell"),
    "disableAutoMode": ("disable",),
    "parentSettingsBehavior": ("first-wins", "merge"),
    "totalTokensReminder": ("off", "infinite", "fixed", "countdown", "padded-countdown"),
    "tui": ("default", "fullscreen"),
}
_JS_SAFE: Final = 2**53 - 1


def _fits(value: Any, kind: str | tuple[str, ...]) -> bool:
    """Does `value` (JSON as Python reads it) fit `kind` as Claude Code's schema reads it
    (JavaScript numbers: `10.0` is a whole number, `1e400` is Infinity, which no number
    setting takes)?"""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and \
        abs(value) < float("inf")
    if isinstance(kind, tuple):
        return value in kind and isinstance(value, str)
    return {"boolean": isinstance(value, bool), "string": isinstance(value, str),
            "object": isinstance(value, dict), "list": isinstance(value, list),
            "list of strings": isinstance(value, list) and all(isinstance(v, str) for v in value),
            "int+": number and value > 0 and float(value).is_integer() and value <= _JS_SAFE,
            "0-1": number and 0 <= value <= 1}[kind]


def _check_kinds(values: dict[str, Any], kinds: Iterable[tuple[str, str | tuple[str, ...]]],
                 where: str, host_name: str) -> None:
    """Ignored at the first of `kinds` (key, kind) that `values` (the object at `where`, ""
    for the top level) holds with a value of another kind."""
    for key, kind in kinds:
        if key in values and not _fits(values[key], kind):
            path = f"{where}.{key}" if where else key
            raise _ignored(path if where else f'"{key}"', f"is {_shown_as(values[key], kind)}, "
                           f"not {_kind_named(kind)}", f'make "{path}" {_kind_named(kind)}, or '
                           "remove it, then run the command again", host_name)


def _shown_as(value: Any, kind: str | tuple[str, ...]) -> str:
    """`value` as a refusal names it beside what `kind` asks."""
    if kind == "list of strings" and isinstance(value, list):
        return "a list holding something else"
    return _shown(value)


def _kind_named(kind: str | tuple[str, ...]) -> str:
    if isinstance(kind, tuple):
        return "one of " + ", ".join(f'"{v}"' for v in kind)
    return {"boolean": "true or false", "object": "an object", "list": "a list",
            "list of strings": "a list of strings", "int+": "a whole number above 0",
            "0-1": "a number from 0 to 1", "string": "a string"}[kind]


def _claude_settings(document: dict[str, Any], host_name: str) -> None:
    model = document.get("model")
    if "model" in document and not isinstance(model, str):
        raise _ignored('"model"', f"is {_shown(model)}, not a string", 'make "model" a model '
                       'name such as "opus", or remove it, then run the command again', host_name)
    _check_kinds(document, _CLAUDE_KINDS.items(), "", host_name)
    for key in ("statusLine", "subagentStatusLine", "fileSuggestion"):
        setting = document.get(key)
        if isinstance(setting, dict) and not (setting.get("type") == "command" and
                                              isinstance(setting.get("command"), str)):
            raise _ignored(f'"{key}"', 'is not {"type": "command", "command": "..."}',
                           f'give "{key}" a "type" of "command" and a "command" string, or '
                           "remove it, then run the command again", host_name)
    if document.get("disableAllHooks") is True:
        raise Ignored('"disableAllHooks"', "is true: Claude Code runs no hook while it is set "
                      "(engram's none, yours none)", 'remove "disableAllHooks" (or set it to '
                      "false) if you want hooks to run, then run the command again")
    permissions = document.get("permissions")
    if "permissions" in document and not isinstance(permissions, dict):
        raise _ignored('"permissions"', f"is {_shown(permissions)}, not an object",
                       'make "permissions" an object such as {"allow": []}, then run the '
                       "command again", host_name)
    if isinstance(permissions, dict):
        _check_kinds(permissions, (("defaultMode", _CLAUDE_MODES),
                                   ("additionalDirectories", "list of strings")),
                     "permissions", host_name)
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
    handler_type = _kind(handler, where, host_name, _CLAUDE_TYPES,
                         {"command": ("command",), "prompt": ("prompt",)})
    timeout = handler.get("timeout")
    if "timeout" in handler and not (isinstance(timeout, (int, float)) and
                                     not isinstance(timeout, bool) and 0 < timeout < float("inf")):
        raise _ignored(f"{where}.timeout", f"is {_shown(timeout)}, not a number of seconds above "
                       "0", f'make "{where}.timeout" a number such as 10, or remove it, then run '
                       "the command again", host_name)
    own = _CLAUDE_COMMAND_KINDS if handler_type == "command" else ()
    _check_kinds(handler, _CLAUDE_HANDLER_KINDS + own, where, host_name)


# A handler's optional fields Claude Code 2.1.197 reads into a type: those of every kind
# (`async` included, as before), then a command handler's own.
_CLAUDE_HANDLER_KINDS: Final[tuple[tuple[str, str | tuple[str, ...]], ...]] = (
    ("async", "boolean"), ("statusMessage", "string"), ("if", "string"), ("once", "boolean"))
_CLAUDE_COMMAND_KINDS: Final[tuple[tuple[str, str | tuple[str, ...]], ...]] = (
    ("shell", ("bash", "powershell")), ("args", "list of strings"), ("asyncRewake", "boolean"))
