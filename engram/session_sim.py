"""Play a session through the real hook, in a throwaway workspace and state dir, and count the
characters injected: what `engram import` reports against the file a host loads whole, and
what the adoption benchmark measures."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

# Everyday requests in a repository, used when the user gives no prompts of their own.
SAMPLE_PROMPTS: tuple[str, ...] = (
    "Fix the failing test in the CI run",
    "Add a new API endpoint for user settings",
    "Refactor the database access layer",
    "Update the README with the new setup steps",
    "Why is the build slow?",
    "Add input validation to the signup form",
    "Write unit tests for the payment module",
    "Review this change for security problems",
    "Bump the dependencies and fix what breaks",
    "How do we deploy a release?",
    "Add logging to the background job",
    "thanks, looks good",
)


@dataclass(frozen=True)
class Step:
    prompt: str
    paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class SessionResult:
    start_chars: int
    per_step: tuple[int, ...]
    delivered: tuple[str, ...]  # ids whose bodies were sent

    @property
    def total(self) -> int:
        return self.start_chars + sum(self.per_step)


@contextmanager
def _state_dir(path: str) -> Iterator[None]:
    previous = os.environ.get("ENGRAM_STATE_DIR")
    os.environ["ENGRAM_STATE_DIR"] = path
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("ENGRAM_STATE_DIR", None)
        else:
            os.environ["ENGRAM_STATE_DIR"] = previous


def _context(answer: str) -> str:
    if not answer.strip():
        return ""
    document = json.loads(answer)
    return (document.get("hookSpecificOutput") or {}).get("additionalContext", "") or ""


def play(cards: Path, steps: list[Step], host: str = "claude") -> SessionResult:
    """One session over a copy of the card folder `cards`: a start, then each step's prompt and
    its touched paths (path triggers through the hook, as `hooks.path_rules: hook`)."""
    from engram import hook

    with tempfile.TemporaryDirectory(prefix="engram-session-") as temp:
        ws = Path(temp) / "proj"
        (ws / ".git").mkdir(parents=True)
        shutil.copytree(cards, ws / ".agents" / ".engram")
        (ws / ".agents" / "engram.json").write_text(
            json.dumps({"read": "auto", "hooks": {"path_rules": "hook"}}), encoding="utf-8")
        delivered: list[str] = []

        with _state_dir(str(Path(temp) / "state")):
            def fire(event: str, **extra: object) -> str:
                raw = json.dumps({"session_id": "simulated", "cwd": str(ws),
                                  "hook_event_name": event, **extra}).encode()
                text = _context(hook.handle(host, raw))
                delivered.extend(line.split(": ", 1)[1].split(" — ")[0]
                                 for line in text.splitlines()
                                 if line.startswith("### engram memory: "))
                return text

            start = len(fire("SessionStart", source="startup"))
            per_step = []
            for step in steps:
                size = len(fire("UserPromptSubmit", prompt=step.prompt))
                for path in step.paths:
                    target = ws / path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.touch()
                    size += len(fire("PreToolUse", tool_name="Read",
                                     tool_input={"file_path": str(target)}))
                per_step.append(size)
    return SessionResult(start, tuple(per_step), tuple(dict.fromkeys(delivered)))


def read_prompts(path: Path) -> list[Step]:
    """Prompts from a file: one per line, or JSON lines `{"prompt": ..., "paths": [...]}`."""
    steps = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            item = json.loads(line)
            steps.append(Step(str(item.get("prompt") or item.get("subject") or ""),
                              tuple(str(p) for p in item.get("paths") or item.get("files") or ())))
        else:
            steps.append(Step(line))
    return steps
