"""Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`, 0.17x).

Lines are `{timestamp, type, payload}`. The conversation is in `response_item` lines whose
payload is a `message` with role user/assistant (developer messages are harness and hook
context). The harness also sends AGENTS.md, the environment and subagent notifications as
user-role messages; those are dropped by their tags. A `compacted` line holds the model's
summary (`payload.message`) and a `replacement_history` that repeats earlier turns, which is
ignored. A subagent gets its own rollout whose `session_meta` names a `parent_thread_id`.
Older rollouts put the message at the top level instead of under `payload`.
"""

from __future__ import annotations

from typing import Any, Final

from engram.transcripts.model import Builder, Transcript, block_texts, json_lines

_TEXT_KINDS: Final = ("input_text", "output_text", "text")
_HARNESS_PREFIXES: Final = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                            "<INSTRUCTIONS>", "<subagent_notification>", "<permissions instructions>",
                            "<skills_instructions>", "<turn_aborted>", "<user_shell_command>",
                            "<collaboration_mode>", "<apps_instructions>")


def _message(payload: dict[str, Any], at: Any, builder: Builder) -> None:
    role = payload.get("role")
    if role not in ("user", "assistant"):
        return
    texts = block_texts(payload.get("content"), _TEXT_KINDS)
    if role == "user":
        texts = [t for t in texts if not t.lstrip().startswith(_HARNESS_PREFIXES)]
    builder.add(role, "\n\n".join(texts), at)


def parse(text: str) -> Transcript:
    builder = Builder("codex")
    for line in json_lines(text, builder):
        kind = line.get("type")
        payload = line.get("payload")
        at = line.get("timestamp")
        if not isinstance(payload, dict):
            if kind == "message":  # older rollout: the item itself is the line
                _message(line, at, builder)
            continue
        if kind == "session_meta":
            ident = payload.get("id") or payload.get("session_id")
            if isinstance(ident, str):
                builder.session = ident
            if isinstance(payload.get("parent_thread_id"), str):
                builder.agent = ident if isinstance(ident, str) else "subagent"
        elif kind == "response_item" and payload.get("type") == "message":
            _message(payload, at, builder)
        elif kind == "compacted":
            builder.compactions += 1
            summary = payload.get("message")
            if isinstance(summary, str):
                builder.add("summary", summary, at)
    return builder.build()
