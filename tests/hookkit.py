"""Helpers for hook tests: a workspace with cards, payload replay in-process and as a real
process, and reading the hook's answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import load_payload

from engram import hook

CARDS = {
    "migrations": """---
id: migrations
title: Database migrations
card: Migrations must be reversible and tested with make migrate-test.
tags: [migrations, database]
applies_to: ["db/migrations/**"]
priority: 70
---
Write reversible migrations only. Run `make migrate-test` before committing a migration.
""",
    "api-style": """---
id: api-style
title: HTTP API style guide
card: API handlers return problem+json errors and never leak stack traces.
tags: [api, http, handlers]
applies_to: ["src/api/**/*.py"]
depends_on: [error-format]
priority: 60
---
Every API handler validates its input with pydantic models and returns errors as
problem+json documents. Never leak a stack trace in a response.
""",
    "error-format": """---
id: error-format
title: Error format
card: Errors are RFC 9457 problem+json documents with a stable type URI.
tags: [errors]
priority: 80
---
Errors are RFC 9457 problem+json documents. The `type` URI is stable and documented.
""",
    "overview": """---
id: overview
title: Project overview
always: true
priority: 90
---
This repository is the payments service. It is written in Python 3.12.
""",
    "release": """---
id: release
title: Release checklist
tags: [release, deploy]
priority: 30
---
Releases are cut from main on Tuesdays. Bump the version, update the changelog, tag.
""",
}


def make_workspace(root: Path, cards: dict[str, str] | None = None,
                   config: dict | None = None) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    memory = root / ".agents" / ".engram"
    memory.mkdir(parents=True, exist_ok=True)
    for name, text in (CARDS if cards is None else cards).items():
        (memory / f"{name}.md").write_text(text, encoding="utf-8")
    if config:
        (root / ".agents" / "engram.json").write_text(json.dumps(config), encoding="utf-8")
    return root


def payload(client: str, name: str, cwd: Path, **changes: object) -> dict:
    """A real client payload with its cwd pointed at a test workspace."""
    document = load_payload(client, name)
    document["cwd"] = str(cwd)
    document.update(changes)
    return document


def call(host: str, document: dict | bytes | str) -> str:
    raw = document if isinstance(document, bytes) else (
        document.encode() if isinstance(document, str) else json.dumps(document).encode())
    return hook.handle(host, raw)


def context(answer: str) -> str:
    """The injected text of a Claude/Codex/Gemini answer ('' for `{}` or nothing)."""
    if not answer.strip():
        return ""
    document = json.loads(answer)
    return (document.get("hookSpecificOutput") or {}).get("additionalContext", "")


def sent_ids(text: str) -> list[str]:
    return [line.split(": ", 1)[1].split(" — ")[0] for line in text.splitlines()
            if line.startswith("### engram memory: ")]


def already(text: str) -> list[str]:
    for line in text.splitlines():
        if line.startswith("already loaded: "):
            return line[len("already loaded: "):].split(", ")
    return []


def run_process(host: str, stdin: bytes, env: dict | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess:
    """`engram hook HOST` as a real process (the way hosts run it)."""
    return subprocess.run([sys.executable, "-m", "engram", "hook", host], input=stdin,
                          capture_output=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
