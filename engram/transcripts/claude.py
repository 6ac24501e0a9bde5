"""Claude Code transcripts (`~/.claude/projects/<slug>/<session>.jsonl`, 2.1.x).

Each line is one event. What people said is in `user`/`assistant` lines; hook output is in
`attachment` lines; `/compact` appends a `system` line with `subtype: compact_boundary` and a
`user` line flagged `isCompactSummary` that holds the model's summary. The turns from before
compaction stay in the file. A subagent's own file carries `isSidechain` and `agentId`.
"""

from __future__ import annotations

from typing import Final

from engram.transcripts.model import Builder, Transcript, block_texts, json_lines

# User-role lines that are the CLI talking, not the user: slash-command echoes and their
# captured stdout.
_HARNESS_PREFIXES: Final = ("<command-name>", "<command-message>", "<command-args>",
                            "<local-command-stdout>", "<local-command-stderr>",
                            "<local-command-caveat>", "<bash-stdout>", "<bash-stderr>")


def parse(text: str) -> Transcript:
    builder = Builder("claude")
    for event in json_lines(text, builder):
        kind = event.get("type")
        if builder.session is None and isinstance(event.get("sessionId"), str):
            builder.session = event["sessionId"]
        if event.get("isSidechain") and isinstance(event.get("agentId"), str):
            builder.agent = event["agentId"]
        if kind == "system" and event.get("subtype") == "compact_boundary":
            builder.compactions += 1
            continue
        if kind == "summary" and isinstance(event.get("summary"), str):
            builder.add("summary", event["summary"])  # older versions: a model-written title
            continue
        if kind not in ("user", "assistant") or event.get("isMeta"):
            continue
        message = event.get("message")
        if not isinstance(message, dict):
            continue
        texts = block_texts(message.get("content"))
        if event.get("isCompactSummary"):
            builder.add("summary", "\n\n".join(texts), event.get("timestamp"))
            continue
        role = "assistant" if kind == "assistant" else "user"
        if role == "user":
            texts = [t for t in texts if not t.lstrip().startswith(_HARNESS_PREFIXES)]
        builder.add(role, "\n\n".join(texts), event.get("timestamp"))
    return builder.build()
