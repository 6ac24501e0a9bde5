"""Host transcripts reduced to what people said: user and assistant text turns, with the
model-written compaction summaries kept apart, and tool calls, hook output and harness
context left out. One parser per host format; `parse` picks one from a hint or by sniffing.

Every parser is total: a malformed line is counted and skipped, never raised.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Final, Iterator

HOSTS: Final = ("claude", "codex", "gemini")
ROLES: Final = ("user", "assistant", "summary", "note")


@dataclass(frozen=True)
class Turn:
    """`role` is user | assistant | note, or `summary` for a model-written compaction
    summary: what the model said happened, not what anyone said."""

    role: str
    text: str
    at: str | None = None


@dataclass(frozen=True)
class Transcript:
    host: str  # claude | codex | gemini | note
    session: str | None
    turns: tuple[Turn, ...]
    compactions: int = 0
    agent: str | None = None  # set for a subagent's own transcript
    skipped_lines: int = 0


@dataclass
class Builder:
    """Mutable accumulator the parsers share; frozen into a Transcript at the end."""

    host: str
    session: str | None = None
    agent: str | None = None
    compactions: int = 0
    skipped_lines: int = 0

    def __post_init__(self) -> None:
        self.turns: list[Turn] = []

    def add(self, role: str, text: str, at: Any = None) -> None:
        text = text.strip()
        if text:
            self.turns.append(Turn(role, text, at if isinstance(at, str) else None))

    def build(self) -> Transcript:
        return Transcript(self.host, self.session, tuple(self.turns), self.compactions,
                          self.agent, self.skipped_lines)


def json_lines(text: str, builder: Builder) -> Iterator[dict[str, Any]]:
    """Each line that holds a JSON object; anything else counts as skipped."""
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            builder.skipped_lines += 1
            continue
        if isinstance(value, dict):
            yield value
        else:
            builder.skipped_lines += 1


def block_texts(content: Any, kinds: tuple[str, ...] = ("text",)) -> list[str]:
    """Text of a message's content: a plain string, or the `text` of typed blocks whose type
    is in `kinds` (tool_use / tool_result / images are dropped)."""
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type", "text") in kinds:
                text = block.get("text")
                if isinstance(text, str):
                    texts.append(text)
            elif isinstance(block, str):
                texts.append(block)
    return texts


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
