"""Host transcripts reduced to what people said: user and assistant text turns, with the
model-written compaction summaries kept apart, and tool calls, hook output and harness
context left out. One parser per host format; `parse` picks one from a hint or by sniffing.

Every parser is total: a malformed line is counted and skipped, never raised.
"""

from __future__ import annotations

import json
from typing import Callable, Final

from engram.transcripts.model import ROLES as ROLES
from engram.transcripts.model import Builder as Builder
from engram.transcripts.model import Transcript as Transcript
from engram.transcripts.model import Turn as Turn
from engram.transcripts.model import block_texts as block_texts
from engram.transcripts.model import json_lines as json_lines

HOSTS: Final = ("claude", "codex", "gemini")


def detect(text: str) -> str:
    """The host whose format `text` is in, or `note` for anything that is not JSONL."""
    seen = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            return "note"
        if not isinstance(value, dict):
            return "note"
        if "payload" in value and value.get("type") in (
            "session_meta", "response_item", "event_msg", "turn_context", "compacted"
        ):
            return "codex"
        if "$set" in value or "projectHash" in value or value.get("type") == "gemini":
            return "gemini"
        if "parentUuid" in value or value.get("type") in ("queue-operation", "last-prompt") or (
            "sessionId" in value and "uuid" in value
        ):
            return "claude"
        if isinstance(value.get("messages"), list) and "sessionId" in value:
            return "gemini"  # the older single-document Gemini chat file
        seen += 1
        if seen >= 20:
            break
    return "note"


def _note(text: str) -> Transcript:
    builder = Builder("note")
    builder.add("note", text)
    return builder.build()


def parse(text: str, host: str | None = None) -> Transcript:
    """Parse `text` as `host`'s transcript format (sniffed when `host` is None or does not
    fit); a file in no known format is one `note` turn."""
    from engram.transcripts import claude, codex, gemini

    parsers: dict[str, Callable[[str], Transcript]] = {
        "claude": claude.parse, "codex": codex.parse, "gemini": gemini.parse, "note": _note,
    }
    sniffed = detect(text)
    chosen = host if host in HOSTS and sniffed in (host, "note") else sniffed
    if chosen != "note" and sniffed == "note" and not text.lstrip().startswith("{"):
        chosen = "note"  # a queue entry named a host but the file is plain text
    return parsers[chosen](text)
