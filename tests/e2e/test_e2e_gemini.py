"""Gemini CLI, headless (`gemini -p`, `--resume latest`), against the fake model's Gemini API,
after a real `engram link gemini`.

Conversation: (0) an opening prompt that routes nothing; (1) resume with a prompt routing
alpha; (2) resume with a prompt routing alpha and beta, whose turn reads the ledger with
read_file (gamma applies to ledger/**: AfterTool).

Compression is not exercised: in headless mode `/compress` starts the compression without
waiting for it (the command's action is fire-and-forget) and then sends "/compress" to the
model as a prompt, so whether the history gets replaced is a race; auto-compression needs a
context near the model's limit. See `test_memory_comes_back_after_compress`.

Why the opener: Gemini CLI 0.61.0 drops the first user turn of a session (the one merged with
its `<session_context>`) when the session is resumed, together with the context hooks injected
into it. `test_resumed_history_keeps_first_turn` records that loss; it is expected to fail
until Gemini fixes it (strict xfail, so the suite notices the day it does).
"""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from .harness import (LEDGER, Conversation, check_absent, check_memory, conversation,
                      delta_problems, doctor_problems, link_problems, path_problems, report,
                      run_problems, timing_problems, verdict)

CLIENT = "gemini"
MODEL = "gemini-2.5-flash"


def setup(c: Conversation) -> None:
    settings = c.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }), encoding="utf-8")
    c.env.update({"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": c.server.url,
                  "GEMINI_CLI_TRUST_WORKSPACE": "true"})


def prompt(text: str, resume: bool = True) -> list[str]:
    # yolo: headless Gemini offers no tool that needs approval otherwise (throw-away workspace)
    return [*(["--resume", "latest"] if resume else []), "-p", text, "-m", MODEL,
            "--approval-mode", "yolo", "--output-format", "json"]


@pytest.fixture(scope="module")
def convo() -> Iterator[Conversation]:
    with conversation(CLIENT) as c:
        setup(c)
        c.link()
        c.run("opener", prompt("Hello there.", resume=False))
        c.run("prompt1", prompt("Tell me about zebrafish."))
        plan = c.server.plan("gemini2", [("read", LEDGER)])
        c.run("prompt2", prompt(f"{plan} Now zebrafish and quokka, please."))
        yield c


def test_link_writes_this_installations_hook(convo: Conversation) -> None:
    verdict(CLIENT, "link (.gemini/settings.json)",
            link_problems(convo.workspace / ".gemini" / "settings.json", CLIENT))


def test_session_start_delivers_always_card_once(convo: Conversation) -> None:
    requests = convo.requests("opener")
    problems = run_problems(convo, "opener") + check_memory(requests, "overview") + \
        check_absent(requests, "alpha")
    verdict(CLIENT, "SessionStart", problems)


def test_prompt_delivers_routed_card_once(convo: Conversation) -> None:
    requests = convo.requests("prompt1")
    problems = run_problems(convo, "prompt1") + check_memory(requests, "alpha") + \
        check_absent(requests, "beta")
    verdict(CLIENT, "BeforeAgent", problems, f"{len(requests)} requests")


def test_resumed_prompt_sends_only_the_delta(convo: Conversation) -> None:
    problems = run_problems(convo, "prompt2") + delta_problems(convo, "prompt2")
    verdict(CLIENT, "--resume: delta + already loaded", problems)


def test_read_file_under_applies_to_delivers_card(convo: Conversation) -> None:
    verdict(CLIENT, "AfterTool read_file", path_problems(convo, "prompt2", "tool:read_file"))


def test_memory_comes_back_after_compress(convo: Conversation) -> None:
    reason = ("Gemini CLI 0.61.0 cannot be made to compress headless reliably: `-p /compress` "
              "fires PreCompress(manual) and starts the compression without awaiting it, then "
              "sends '/compress' to the model as a prompt, so the history may or may not be "
              "replaced (on this machine it was not, and engram's reset re-sent alpha: 2 copies)")
    report(CLIENT)["events"]["compression"] = "SKIPPED (not reliably reachable headless)"
    pytest.skip(reason)


@pytest.mark.xfail(strict=True, reason="Gemini CLI 0.61.0 drops the first user turn (and the "
                   "context injected into it) from a resumed session")
def test_resumed_history_keeps_first_turn(convo: Conversation) -> None:
    requests = convo.requests("prompt1")
    problems = check_memory(requests, "overview")
    if problems:
        report(CLIENT)["notes"].append(
            "client bug: --resume drops the session's first turn, so the always card delivered "
            "at SessionStart is gone from the resumed history while engram counts it delivered")
    assert not problems, problems


def test_doctor_reports_configured_and_observed(convo: Conversation) -> None:
    problems = doctor_problems(convo, ["SessionStart", "BeforeAgent", "AfterTool", "PreCompress"])
    verdict(CLIENT, "doctor --json", problems)


def test_no_hook_timed_out(convo: Conversation) -> None:
    verdict(CLIENT, "hook durations, no timeout", timing_problems(convo))
