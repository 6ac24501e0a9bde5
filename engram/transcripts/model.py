"""The transcript model every host parser builds: turns, the finished transcript, the
builder the parsers share, and the helpers for JSON-lines files and content blocks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, Iterator

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
