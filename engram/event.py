"""Normalize a host's hook payload into one Event, driven by the host definition's
`runtime:` section (field map, events, tools). Pure: plain dicts in, a frozen Event out."""

from __future__ import annotations

import re
from engram.record import frozen


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, Mapping

MAX_PROMPT_CHARS: Final = 100_000
KEEP_ON_SOURCES: Final = ("resume", "fork")


@frozen
class Event:
    host: str
    name: str  # the host's own event name
    kind: str  # start | prompt | path | subagent | reset | rule_loaded | end
    session: str
    cwd: str
    agent: str = ""  # set inside a subagent
    prompt: str = ""
    paths: tuple[str, ...] = ()
    source: str = ""
    trigger: str = ""
    tool: str = ""
    transcript_path: str = ""
    rule_file: str = ""
    silent: bool = False  # print nothing at all (Claude PreCompact, InstructionsLoaded)
    no_model_channel: bool = False  # Windsurf: nothing reaches the model
    resets: bool = False  # this event clears the session's delivered set

    @property
    def cache_key(self) -> str:
        """The delivery cache key: host, cwd, session[#agent:<id>]."""
        session = f"{self.session}#agent:{self.agent}" if self.agent else self.session
        return f"{self.host}|{self.cwd}|{session}"


def _is_absolute(path: str) -> bool:
    return path.startswith("/") or (len(path) > 2 and path[1] == ":" and path[2] in "\\/") \
        or path.startswith("\\\\")


def dig(payload: Any, dotted: str) -> Any:
    """payload["a"]["b"] for "a.b"; numeric parts index lists; None when absent."""
    node = payload
    for part in dotted.split("."):
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit():
            index = int(part)
            node = node[index] if index < len(node) else None
        else:
            return None
        if node is None:
            return None
    return node


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def strip_blocks(prompt: str, tags: list[str]) -> str:
    """Drop `<tag>...</tag>` blocks (text an earlier hook injected) from a prompt."""
    for tag in tags:
        name = re.escape(tag)
        prompt = re.sub(rf"<{name}>.*?</{name}>", " ", prompt, flags=re.DOTALL)
    return prompt.strip()


def is_foreign(runtime: Mapping[str, Any], payload: Mapping[str, Any]) -> bool:
    """A payload in another product's dialect (Copilot CLI, VS Code, Devin reading Claude's
    settings)."""
    return any(marker in payload for marker in runtime.get("foreign_markers") or ())


def normalize(host: str, runtime: Mapping[str, Any], payload: Any) -> Event | None:
    """The Event for this payload, or None when engram has nothing to do with it (unknown
    event, unmatched tool, foreign dialect, missing session or cwd)."""
    if not isinstance(payload, dict) or is_foreign(runtime, payload):
        return None
    fields: Mapping[str, str] = runtime.get("fields") or {}
    name = _text(dig(payload, fields.get("event", "hook_event_name")))
    spec = (runtime.get("events") or {}).get(name)
    if not isinstance(spec, dict):
        return None
    session = dig(payload, fields.get("session", "session_id"))
    cwd = dig(payload, fields.get("cwd", "cwd"))
    if not isinstance(session, (str, int)) or str(session) == "" or not isinstance(cwd, str) \
            or not _is_absolute(cwd):
        # Hosts send an absolute cwd; a relative one would resolve against wherever the hook
        # process happens to run, which is never the user's workspace.
        return None
    kind = spec.get("kind", "")
    agent = dig(payload, fields["agent"]) if "agent" in fields else None
    tool = _text(dig(payload, fields["tool"])) if "tool" in fields else ""
    prompt = _text(dig(payload, fields["prompt"])) if "prompt" in fields else ""
    prompt = strip_blocks(prompt[:MAX_PROMPT_CHARS], list(runtime.get("strip_prompt_blocks") or ()))
    source = _text(dig(payload, fields["source"])) if "source" in fields else ""
    trigger = _text(dig(payload, fields["trigger"])) if "trigger" in fields else ""
    paths: list[str] = []
    if kind == "path":
        tools = spec.get("tools")
        if tools and tool not in tools:
            return None
        for dotted in spec.get("path_fields") or ():
            value = dig(payload, dotted)
            if isinstance(value, str) and value:
                paths.append(value)
                break
        for dotted in spec.get("patch_fields") or ():
            from engram import patch_paths

            paths.extend(patch_paths.targets(_text(dig(payload, dotted))))
        if not paths:
            return None
    resets = False
    if kind == "start":
        resets = source not in tuple(spec.get("keep_on_sources") or KEEP_ON_SOURCES)
    elif kind == "reset":
        allowed = spec.get("reset_triggers")
        resets = not allowed or trigger in allowed
    return Event(
        host=host, name=name, kind=kind, session=str(session), cwd=cwd,
        agent=str(agent) if isinstance(agent, (str, int)) and str(agent) else "",
        prompt=prompt, paths=tuple(paths), source=source, trigger=trigger, tool=tool,
        transcript_path=_text(payload.get("transcript_path")),
        rule_file=_text(payload.get("file_path")) if kind == "rule_loaded" else "",
        silent=bool(spec.get("silent")), no_model_channel=bool(spec.get("no_model_channel")),
        resets=resets,
    )
