"""The suite must catch a broken install. After a real `engram link`, each hook command is
pointed at a wrapper that runs the real `engram hook` and re-wraps its answer in a wrong
envelope: a top-level `additionalContext` instead of `hookSpecificOutput.additionalContext`.
The hook fires and produces the memory (the wrapper's log shows it), yet the client drops it,
and the suite's checker must report the card missing from the model request.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from engram.installer.command import is_ours

from . import test_e2e_claude as claude
from . import test_e2e_codex as codex
from . import test_e2e_gemini as gemini
from .harness import BODY, ENGRAM, Conversation, check_memory, conversation, report

WRAPPER = '''import json, subprocess, sys
raw = sys.stdin.buffer.read()
done = subprocess.run([{engram!r}, "hook", sys.argv[1]], input=raw, capture_output=True, timeout=30)
try:
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
except (ValueError, KeyError, TypeError):
    context = ""
with open({log!r}, "a", encoding="utf-8") as log:
    log.write(json.dumps({{"context": context}}) + "\\n")
sys.stdout.write(json.dumps({{"additionalContext": context}}) if context else "{{}}")
'''

CONFIG = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
          "gemini": ".gemini/settings.json"}


def break_envelope(c: Conversation) -> Path:
    """Point every engram hook command at the wrong-envelope wrapper; return its log."""
    log = c.workspace.parent / "wrapper.jsonl"
    wrapper = c.workspace.parent / "wrong_envelope.py"
    wrapper.write_text(WRAPPER.format(engram=str(ENGRAM), log=str(log)), encoding="utf-8")
    config = c.workspace / CONFIG[c.client]
    document = json.loads(config.read_text(encoding="utf-8"))
    for groups in document["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                if is_ours(handler.get("command"), (c.client,)):
                    handler["command"] = f"{sys.executable} {wrapper} {c.client}"
    config.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return log


def first_prompt(c: Conversation) -> list[str]:
    text = "Tell me about zebrafish."
    if c.client == "claude":
        claude.setup(c)
        return claude.prompt(text)
    if c.client == "codex":
        codex.setup(c)
        return codex.exec_args(text)
    gemini.setup(c)
    return gemini.prompt(text, resume=False)


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_wrong_envelope_is_caught(client: str) -> None:
    with conversation(client) as c:
        argv = first_prompt(c)
        c.link()
        log = break_envelope(c)
        run = c.run("broken", argv)
        assert run.returncode == 0, run.stderr[-800:]
        produced = [json.loads(line)["context"] for line in log.read_text(encoding="utf-8").splitlines()]
        assert any(BODY["alpha"] in text for text in produced), \
            f"the wrapped hook never produced alpha's body: {produced}"
        requests = c.requests("broken")
        problems = check_memory(requests, "alpha")
        report(c.label)["events"]["broken install (wrong envelope) caught"] = \
            "PASS" if problems and all("missing" in p for p in problems) else "FAIL"
        assert problems, "the checker did not notice the memory missing from the model request"
        assert all("missing" in p for p in problems), problems
