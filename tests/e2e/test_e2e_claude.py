"""Claude Code, headless (`claude -p`), against the fake model, after a real `engram link claude`.

Conversation: (1) a prompt routing alpha, whose turn spawns a subagent; (2) `--continue` with a
prompt routing alpha and beta, whose turn reads a ledger file (gamma applies to ledger/**, and
arrives through the native rule file `link` wrote); (3) `/compact`; (4) a prompt routing alpha
again. A second, short conversation links with `hooks.path_rules: hook` and reads the same file
(gamma then arrives through the PreToolUse hook).
"""

from __future__ import annotations

from typing import Iterator

import pytest
from .harness import (LEDGER, SUBAGENT_TASK, Conversation, check_absent, check_memory,
                     conversation, delta_problems, doctor_problems, link_problems, path_problems,
                     run_problems, subagent_problems, timing_problems, verdict)

CLIENT = "claude"


def setup(c: Conversation) -> None:
    (c.home / ".claude.json").write_text('{"hasCompletedOnboarding": true}', encoding="utf-8")
    c.env.update({
        "ANTHROPIC_BASE_URL": c.server.url,
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
    })


STREAM = ["--output-format", "stream-json", "--verbose", "--include-hook-events"]


def prompt(text: str, resume: bool = False) -> list[str]:
    # stream-json with hook events: every hook call's outcome, timed as it streams
    return ["-p", text, *(["--continue"] if resume else []), "--allowedTools", "Read", "Agent",
            *STREAM]


@pytest.fixture(scope="module")
def convo() -> Iterator[Conversation]:
    with conversation(CLIENT) as c:
        setup(c)
        c.link()
        plan1 = c.server.plan("claude1", [("agent", SUBAGENT_TASK)])
        c.run("prompt1", prompt(f"{plan1} Tell me about zebrafish."))
        plan2 = c.server.plan("claude2", [("read", str(c.workspace / LEDGER))])
        c.run("prompt2", prompt(f"{plan2} Now zebrafish and quokka, please.", resume=True))
        c.run("compact", ["-p", "/compact", "--continue", *STREAM])
        c.run("after", prompt("More on zebrafish.", resume=True))
        yield c


@pytest.fixture(scope="module")
def hook_mode() -> Iterator[Conversation]:
    with conversation(CLIENT) as c:
        setup(c)
        c.engram("config", "set", "hooks.path_rules", "hook")
        c.link()
        plan = c.server.plan("claude3", [("read", str(c.workspace / LEDGER))])
        c.run("read", prompt(f"{plan} Look at the data, please."))
        yield c


def test_link_writes_this_installations_hook(convo: Conversation) -> None:
    settings = convo.workspace / ".claude" / "settings.json"
    rule = convo.workspace / ".claude" / "rules" / "engram" / "gamma.md"
    problems = link_problems(settings, CLIENT)
    if not rule.exists():
        problems.append(f"native rule {rule} not written")
    verdict(CLIENT, "link (project settings + native rules)", problems)


def test_prompt_delivers_routed_card_once(convo: Conversation) -> None:
    requests = convo.requests("prompt1")
    problems = run_problems(convo, "prompt1") + check_memory(requests, "alpha") + \
        check_memory(requests, "overview") + check_absent(requests, "beta")
    verdict(CLIENT, "SessionStart + UserPromptSubmit", problems, f"{len(requests)} requests")


def test_resumed_prompt_sends_only_the_delta(convo: Conversation) -> None:
    problems = run_problems(convo, "prompt2") + delta_problems(convo, "prompt2")
    verdict(CLIENT, "--continue: delta + already loaded", problems)


def test_read_under_applies_to_loads_native_rule(convo: Conversation) -> None:
    verdict(CLIENT, "Read -> native rule (InstructionsLoaded)", path_problems(convo, "prompt2", "tool:Read"))


def test_subagent_gets_session_context(convo: Conversation) -> None:
    verdict(CLIENT, "SubagentStart", subagent_problems(convo, "prompt1"))


def test_memory_comes_back_after_compaction(convo: Conversation) -> None:
    problems = run_problems(convo, "compact", "after")
    if not convo.requests("compact", compaction=True):
        problems.append("no compaction request reached the model")
    after = convo.requests("after")
    problems += check_memory(after, "overview") + check_memory(after, "alpha")
    verdict(CLIENT, "/compact -> PreCompact reset, memory back", problems)


def test_doctor_reports_configured_and_observed(convo: Conversation) -> None:
    problems = doctor_problems(convo, ["SessionStart", "UserPromptSubmit", "InstructionsLoaded",
                                       "PreCompact", "SubagentStart"])
    verdict(CLIENT, "doctor --json", problems)


def test_no_hook_timed_out(convo: Conversation, hook_mode: Conversation) -> None:
    verdict(CLIENT, "hook durations, no timeout", timing_problems(convo, hook_mode))


def test_pretooluse_mode_delivers_path_card(hook_mode: Conversation) -> None:
    settings = hook_mode.workspace / ".claude" / "settings.json"
    problems = run_problems(hook_mode, "read") + link_problems(settings, CLIENT)
    if "PreToolUse" not in settings.read_text(encoding="utf-8"):
        problems.append("link in hooks.path_rules=hook mode wrote no PreToolUse entry")
    if (hook_mode.workspace / ".claude" / "rules" / "engram").exists():
        problems.append("native rules folder still present in hook mode")
    problems += path_problems(hook_mode, "read", "tool:Read")
    verdict(CLIENT, "Read -> PreToolUse (path_rules: hook)", problems)
