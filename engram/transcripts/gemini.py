"""Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, 0.61).

The file is a log of updates: a metadata line (`sessionId`, `projectHash`), message records
(`id`, `type`: user | gemini | info | error, `content`), and `$set` lines that patch fields
(the initial `messages` list among them). A record written again under the same id replaces
the earlier one (the tool-call update of a model turn). The first user record is the CLI's
`<session_context>`; tool results come back as user records of `functionResponse` parts.
Hook output sits inside the prompt as `<hook_context>` blocks; they are stripped here (and
again by the sanitizer).
Older versions wrote one JSON document with a `messages` list; that is read too.
"""

from __future__ import annotations

import json
from typing import Any, Final

from engram.sanitize import strip_hook_context
from engram.transcripts.model import Builder, Transcript, json_lines

_ROLES: Final = {"user": "user", "gemini": "assistant", "model": "assistant"}


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
    return texts


def parse(text: str) -> Transcript:
    builder = Builder("gemini")
    records: dict[str, dict[str, Any]] = {}
    order: list[str] = []

    def _record(record: Any) -> None:
        if not isinstance(record, dict) or record.get("type") not in _ROLES:
            return
        key = str(record.get("id") or f"#{len(order)}")
        if key not in records:
            order.append(key)
        records[key] = record

    lines = list(json_lines(text, builder))
    if len(lines) == 0 and text.lstrip().startswith("{"):
        try:
            document = json.loads(text)
        except (ValueError, RecursionError):
            document = None
        if isinstance(document, dict):
            lines = [document]
            builder.skipped_lines = 0
    for line in lines:
        if isinstance(line.get("sessionId"), str) and builder.session is None:
            builder.session = line["sessionId"]
        update = line.get("$set")
        for source in (update if isinstance(update, dict) else {}, line):
            messages = source.get("messages")
            if isinstance(messages, list):
                for record in messages:
                    _record(record)
        _record(line)
    for key in order:
        record = records[key]
        role = _ROLES[record["type"]]
        texts = [strip_hook_context(t) for t in _texts(record.get("content"))
                 if not t.lstrip().startswith("<session_context>")]
        builder.add(role, "\n\n".join(texts), record.get("timestamp"))
    return builder.build()
