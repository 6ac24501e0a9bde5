"""A prompt another of the user's BeforeAgent hooks blocks, on Gemini CLI: a `decision: deny`
prompt is not written to the transcript, a `continue: false` one is written without any hook's
context, and in both the model never gets what engram answered. Gemini writes every prompt it
keeps with every hook's context in one transcript line, so a body not written after engram
answered was dropped, and goes again with the next prompt. The transcript the client wrote
(tests/fixtures/transcripts/gemini/blocked-prompts.jsonl, Gemini CLI 0.61.0, one process per
prompt) supplies the lines: a process's opening lines, a kept prompt, a stopped one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES
from hookkit import already, call, context, make_workspace, payload, sent_ids

from engram import delivery

QUESTION = "how should the API handlers format errors?"
SENT = ["error-format", "api-style"]
CAPTURED = [json.loads(line) for line in (FIXTURES / "transcripts" / "gemini" / "blocked-prompts.jsonl")
            .read_text(encoding="utf-8").splitlines()]
USER = [line for line in CAPTURED if line.get("type") == "user"]
KEPT_LINE = next(line for line in USER if len(line["content"]) == 2)
STOPPED_LINE = next(line for line in USER if line["content"][0]["text"].startswith("STOPME"))
# What a process writes when it starts (a resume): the session's header and its history again.
OPENING = CAPTURED[6:10]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj")


@pytest.fixture
def transcript(tmp_path: Path, ws: Path) -> Path:
    """A session started, and its first prompt (with the always card) kept, as the capture's."""
    path = tmp_path / "home" / ".gemini" / "tmp" / "proj" / "chats" / "session.jsonl"
    path.parent.mkdir(parents=True)
    write(path, *CAPTURED[:2])
    call("gemini", payload("gemini", "SessionStart.json", ws, transcript_path=str(path)))
    hello = ask(ws, path, "Hello there.")
    assert sent_ids(hello) == ["overview"]
    kept(path, "Hello there.", hello)
    write(path, CAPTURED[4])
    return path


def write(path: Path, *lines: dict) -> None:
    # Gemini writes JSON the way JavaScript does: non-ASCII as is, no spaces.
    with path.open("a", encoding="utf-8") as file:
        for line in lines:
            file.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


def kept(path: Path, prompt: str, answer: str) -> None:
    """What Gemini writes when it keeps a prompt: the prompt and the hooks' context."""
    line = json.loads(json.dumps(KEPT_LINE))
    line["content"] = [{"text": prompt}, {"text": f"<hook_context>{answer}</hook_context>"}]
    line["displayContent"] = [{"text": prompt}]
    write(path, line)


def stopped(path: Path, prompt: str) -> None:
    """What Gemini writes for a prompt another hook stopped (`continue: false`)."""
    line = json.loads(json.dumps(STOPPED_LINE))
    line["content"] = [{"text": prompt}]
    write(path, line)


def ask(ws: Path, transcript: Path, text: str = QUESTION) -> str:
    return context(call("gemini", payload("gemini", "BeforeAgent.json", ws, prompt=text,
                                          transcript_path=str(transcript))))


def test_the_captured_transcript_shows_what_gemini_keeps() -> None:
    """The capture this relies on: the kept prompts hold engram's context, the stopped one
    holds none, and the denied one is not there at all."""
    texts = [line["content"][0]["text"] for line in USER]
    assert "BLOCKME Tell me about zebrafish." in texts  # exit 2: a failed hook, the prompt kept
    assert not any("DENYME" in text for text in texts)
    assert STOPPED_LINE["content"] == [{"text": "STOPME Tell me about ledgerkeeping."}]
    assert "### engram memory: alpha " in KEPT_LINE["content"][1]["text"] or \
        "### engram memory: overview " in KEPT_LINE["content"][1]["text"]


@pytest.mark.parametrize("block", ["denied", "stopped"])
def test_a_blocked_prompts_cards_go_again_with_the_next_prompt(ws: Path, transcript: Path,
                                                               block: str) -> None:
    first = ask(ws, transcript)
    assert sent_ids(first) == SENT
    if block == "stopped":
        stopped(transcript, QUESTION)
    write(transcript, *OPENING)  # the next prompt comes from a resumed process
    again = ask(ws, transcript)
    assert sent_ids(again) == SENT and already(again) == []
    kept(transcript, QUESTION, again)
    third = ask(ws, transcript)
    assert sent_ids(third) == [] and already(third) == sorted(SENT)


def test_a_blocked_prompt_in_a_running_session_is_found_too(ws: Path, transcript: Path) -> None:
    """Interactive: the next prompt comes from the same process, nothing written between."""
    ask(ws, transcript)
    assert sent_ids(ask(ws, transcript)) == SENT


def test_a_kept_prompts_cards_are_listed_not_sent_again(ws: Path, transcript: Path) -> None:
    first = ask(ws, transcript)
    kept(transcript, QUESTION, first)
    write(transcript, CAPTURED[4], *OPENING)  # the model's reply, then a resume
    second = ask(ws, transcript)
    assert sent_ids(second) == [] and already(second) == sorted(SENT)


def test_only_the_bodies_not_written_go_again(ws: Path, transcript: Path) -> None:
    first = ask(ws, transcript)
    kept(transcript, QUESTION, first.split("### engram memory: api-style ")[0])
    second = ask(ws, transcript)
    assert sent_ids(second) == ["api-style"] and already(second) == ["error-format"]


@pytest.mark.parametrize("change", ["gone", "shorter", "other transcript", "none when answered"])
def test_nothing_to_go_by_keeps_the_record(ws: Path, transcript: Path, tmp_path: Path,
                                           change: str) -> None:
    """A transcript engram cannot read, or not the one it answered for, says nothing: a
    re-send then would duplicate every body whenever a transcript is unreadable."""
    if change == "none when answered":
        transcript.unlink()
    ask(ws, transcript)
    if change == "gone":
        transcript.unlink()
    elif change == "shorter":
        transcript.write_text("", encoding="utf-8")
    elif change == "other transcript":
        transcript = transcript.with_name("another.jsonl")
        write(transcript, *CAPTURED[:2])
    second = ask(ws, transcript)
    assert sent_ids(second) == [] and already(second) == sorted(SENT)


def test_the_record_holds_the_prompts_digest_never_its_text(ws: Path, transcript: Path) -> None:
    ask(ws, transcript)
    stored = "".join(path.read_text(encoding="utf-8")
                     for path in Path(delivery.cache_path("x")).parent.glob("*.json"))
    assert '"unconfirmed"' in stored and QUESTION not in stored
