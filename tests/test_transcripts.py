"""Parsers over the transcripts the real clients wrote (tests/fixtures/transcripts): user and
assistant text only, compaction summaries apart, tool and hook noise gone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram import transcripts

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
CLAUDE = FIXTURES / "claude" / "89911e3f-d66a-438d-a2b9-8e2499b304dd.jsonl"
CLAUDE_AGENT = FIXTURES / "claude" / "subagents" / "agent-a56bac5cb98a9b22e.jsonl"
CODEX_MAIN = FIXTURES / "codex" / "rollout-2026-11-30T08-38-36-01a22b9b-2102-79e3-81c7-c85525b54bf2.jsonl"
CODEX_AGENT = FIXTURES / "codex" / "rollout-2026-11-30T08-38-37-01a22b9b-252a-77c1-b1ac-74ccbec2e750.jsonl"
CODEX_COMPACT = FIXTURES / "codex" / "rollout-2026-11-30T08-38-39-01a22b9b-2c58-7fc1-9352-911d4c1ffe54.jsonl"
GEMINI = FIXTURES / "gemini" / "session-2026-11-30T08-38-9d22c879.jsonl"

NOISE = ("MARKER-", "fake-tool-ran", "AGENTS.md", "<environment_context>", "<session_context>",
         "<command-name>", "<local-command", "subagent_notification", "skills_instructions",
         "tool_use", "agentId:")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _roles(transcript: transcripts.Transcript) -> list[tuple[str, str]]:
    return [(t.role, t.text) for t in transcript.turns]


@pytest.mark.parametrize("path,host", [
    (CLAUDE, "claude"), (CLAUDE_AGENT, "claude"), (CODEX_MAIN, "codex"), (CODEX_AGENT, "codex"),
    (CODEX_COMPACT, "codex"), (GEMINI, "gemini"),
])
def test_detects_the_host_and_leaves_no_tool_or_hook_noise(path: Path, host: str) -> None:
    text = _read(path)
    assert transcripts.detect(text) == host
    parsed = transcripts.parse(text)
    assert parsed.host == host and parsed.skipped_lines == 0
    for turn in parsed.turns:
        if turn.role != "summary":
            assert not any(noise in turn.text for noise in NOISE), turn
    assert any(t.role == "user" for t in parsed.turns)
    assert any(t.role == "assistant" and t.text == "DONE" for t in parsed.turns)


def test_claude_session_with_compaction() -> None:
    parsed = transcripts.parse(_read(CLAUDE), "claude")
    assert parsed.session == "89911e3f-d66a-438d-a2b9-8e2499b304dd"
    assert parsed.compactions == 1
    assert [r for r, _ in _roles(parsed)] == ["user", "assistant", "summary"]
    assert parsed.turns[0].text == "STEPS:bash,agent probe"
    # The turns from before compaction are kept; the summary is the model's and stays apart.
    assert parsed.turns[2].text.startswith("This session is being continued")
    assert parsed.turns[0].at == "2026-11-30T08:38:32.661Z"


def test_claude_subagent_transcript() -> None:
    parsed = transcripts.parse(_read(CLAUDE_AGENT))
    assert parsed.agent == "a56bac5cb98a9b22e"
    assert _roles(parsed) == [("user", "Reply with the single word ok."), ("assistant", "DONE")]


def test_codex_main_and_subagent() -> None:
    main = transcripts.parse(_read(CODEX_MAIN))
    assert main.session == "01a22b9b-2102-79e3-81c7-c85525b54bf2" and main.agent is None
    assert _roles(main) == [("user", "STEPS:bash,agent,wait probe"), ("assistant", "DONE")]
    agent = transcripts.parse(_read(CODEX_AGENT))
    assert agent.agent == "01a22b9b-252a-77c1-b1ac-74ccbec2e750"
    assert _roles(agent) == [("user", "Reply with the single word ok."), ("assistant", "DONE")]


def test_codex_compaction_summary_is_kept_apart_and_history_not_repeated() -> None:
    parsed = transcripts.parse(_read(CODEX_COMPACT))
    assert parsed.compactions == 1
    roles = [r for r, _ in _roles(parsed)]
    assert roles == ["user", "assistant", "summary", "assistant"]
    assert parsed.turns[2].text.startswith("Another language model started")
    # replacement_history repeats the prompt; it must not come back as a second user turn.
    assert sum(t.text == "STEPS:bash probe" for t in parsed.turns) == 1


def test_gemini_dedupes_updated_records_and_drops_session_context() -> None:
    parsed = transcripts.parse(_read(GEMINI))
    assert parsed.session == "9d22c879-800d-48e7-acf7-c73eaadd7ccd"
    assert [r for r, _ in _roles(parsed)] == ["user", "assistant"]
    # Gemini folds hook output into the prompt as <hook_context> blocks: stripped.
    assert parsed.turns[0].text == "STEPS:bash probe"


def test_older_formats() -> None:
    codex_old = "\n".join(json.dumps(line) for line in [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "yo"}]},
    ])
    assert _roles(transcripts.parse(codex_old, "codex")) == [("user", "hi"), ("assistant", "yo")]
    gemini_doc = json.dumps({"sessionId": "s1", "messages": [
        {"id": "1", "type": "user", "content": "question"},
        {"id": "2", "type": "gemini", "content": "answer"}]}, indent=2)
    parsed = transcripts.parse(gemini_doc, "gemini")
    assert _roles(parsed) == [("user", "question"), ("assistant", "answer")]
    claude_old = json.dumps({"type": "summary", "summary": "Fixing the build", "leafUuid": "x"})
    assert _roles(transcripts.parse(claude_old, "claude")) == [("summary", "Fixing the build")]


def test_malformed_lines_are_skipped_not_raised() -> None:
    text = _read(CLAUDE_AGENT) + "\n{not json\n[1, 2]\n" + '{"type": "user", "message": 3}\n'
    parsed = transcripts.parse(text, "claude")
    assert parsed.skipped_lines == 2
    assert len(parsed.turns) == 2


def test_plain_text_is_a_note_even_when_a_host_is_named() -> None:
    note = "# Deploy notes\nAlways run migrations before the deploy."
    for host in (None, "claude", "codex"):
        parsed = transcripts.parse(note, host)
        assert parsed.host == "note"
        assert _roles(parsed) == [("note", note)]


def test_a_wrong_host_hint_is_corrected_by_sniffing() -> None:
    parsed = transcripts.parse(_read(CODEX_MAIN), "claude")
    assert parsed.host == "codex"
