"""A prompt another of the user's BeforeAgent hooks blocks, on Gemini CLI: a `decision: deny`
prompt is not written to the transcript, a `continue: false` one is written without any hook's
context, and in both the model never gets what engram answered. Gemini writes every prompt it
keeps with every hook's context in one transcript line, so a body not written after engram
answered was dropped, and goes again with the next prompt. The transcript the client wrote
(tests/fixtures/transcripts/gemini/blocked-prompts.jsonl, Gemini CLI 0.61.0, one process per
prompt) supplies the lines: a process's opening lines, a kept prompt, a stopped one.

The same goes for a tool's result another AfterTool hook blocks (`decision: deny`): Gemini
writes the hook's reason in place of the result, without any hook's context
(aftertool-blocked.jsonl; aftertool-kept.jsonl is the same run without the blocking hook)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from conftest import FIXTURES
from hookkit import CARDS, already, call, context, make_workspace, payload, sent_ids

from engram import delivery

CARDS_MIGRATIONS = CARDS["migrations"]
QUESTION = "how should the API handlers format errors?"
SENT = ["error-format", "api-style"]
CAPTURED = [json.loads(line) for line in (FIXTURES / "transcripts" / "gemini" / "blocked-prompts.jsonl")
            .read_text(encoding="utf-8").splitlines()]
USER = [line for line in CAPTURED if line.get("type") == "user"]
KEPT_LINE = next(line for line in USER if len(line["content"]) == 2)
STOPPED_LINE = next(line for line in USER if line["content"][0]["text"].startswith("STOPME"))
# What a process writes when it starts (a resume): the session's header and its history again.
OPENING = CAPTURED[6:10]


def _tool_lines(name: str) -> list[dict]:
    """The lines Gemini wrote for the read_file call: the model's call with its result, and
    the result as the next user turn."""
    lines = [json.loads(line) for line in (FIXTURES / "transcripts" / "gemini" / name)
             .read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line.get("toolCalls") or (
        line.get("type") == "user" and "functionResponse" in json.dumps(line.get("content")))][:2]


TOOL_KEPT, TOOL_BLOCKED = _tool_lines("aftertool-kept.jsonl"), _tool_lines("aftertool-blocked.jsonl")
READ = "db/migrations/0007_add_index.sql"


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


def prompt_payload(ws: Path, transcript: Path, text: str = QUESTION) -> dict:
    """A BeforeAgent payload stamped now, as Gemini stamps each event it sends."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return payload("gemini", "BeforeAgent.json", ws, prompt=text, transcript_path=str(transcript),
                   timestamp=now.isoformat(timespec="microseconds").replace("+00:00", "Z"))


def ask(ws: Path, transcript: Path, text: str = QUESTION) -> str:
    return context(call("gemini", prompt_payload(ws, transcript, text)))


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


def test_two_engram_entries_answering_one_prompt_send_each_body_once(ws: Path,
                                                                     transcript: Path) -> None:
    """A project link and a --global one: Gemini runs both on the same payload, and writes
    the prompt only after both answered. The second run's check finds nothing written yet,
    which is no drop."""
    document = prompt_payload(ws, transcript)
    first, second = (context(call("gemini", document)) for _ in range(2))
    assert sent_ids(first) == SENT and sent_ids(second) == [] and already(second) == sorted(SENT)
    kept(transcript, QUESTION, f"{first}\n\n{second}")
    third = ask(ws, transcript)
    assert sent_ids(third) == [] and already(third) == sorted(SENT)


def test_a_denied_prompt_asked_again_at_once_gets_its_cards(ws: Path, transcript: Path) -> None:
    """The same words again right after a deny: another event (Gemini stamps each), checked."""
    ask(ws, transcript)
    again = ask(ws, transcript)
    assert sent_ids(again) == SENT and already(again) == []


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


def read(ws: Path, transcript: Path, path: str = READ) -> str:
    session = payload("gemini", "BeforeAgent.json", ws)["session_id"]  # the prompts' session
    return context(call("gemini", payload("gemini", "AfterTool.read.json", ws, session_id=session,
                                          tool_input={"file_path": path},
                                          transcript_path=str(transcript))))


def tool_kept(path: Path, answer: str) -> None:
    """The captured lines of a read whose result Gemini kept, its hook context replaced."""
    lines = json.loads(json.dumps(TOOL_KEPT))
    for line in lines:
        text = json.dumps(line, ensure_ascii=False)
        at = text.index("<hook_context>")
        end = text.index("</hook_context>", at) + len("</hook_context>")
        line.clear()
        line.update(json.loads(text[:at] + json.dumps(f"<hook_context>{answer}</hook_context>")[1:-1]
                               + text[end:]))
    write(path, *lines)


def test_the_captured_tool_lines_hold_the_context_only_when_kept() -> None:
    assert all("<hook_context>### engram memory: gamma " in json.dumps(line, ensure_ascii=False)
               for line in TOOL_KEPT) and len(TOOL_KEPT) == 2
    assert not any("engram memory" in json.dumps(line) for line in TOOL_BLOCKED)
    assert "that file is off limits" in json.dumps(TOOL_BLOCKED[-1])


def test_a_tool_result_another_hook_blocks_sends_its_cards_again(ws: Path, transcript: Path) -> None:
    assert sent_ids(read(ws, transcript)) == ["migrations"]
    write(transcript, *TOOL_BLOCKED)
    again = ask(ws, transcript, "write a reversible database migration")
    assert "migrations" in sent_ids(again) and "migrations" not in already(again)


def test_a_kept_tool_results_cards_are_listed(ws: Path, transcript: Path) -> None:
    answer = read(ws, transcript)
    tool_kept(transcript, answer)
    write(transcript, *OPENING)  # and a resume, which writes the history again
    again = ask(ws, transcript, "write a reversible database migration")
    assert "migrations" not in sent_ids(again) and "migrations" in already(again)


def test_a_blocked_tool_results_card_comes_with_the_next_read(ws: Path, transcript: Path) -> None:
    """The next prompt does not route it: the next read of the file sends it."""
    read(ws, transcript)
    write(transcript, *TOOL_BLOCKED)
    assert "migrations" not in sent_ids(ask(ws, transcript, "Hello there."))
    assert sent_ids(read(ws, transcript)) == ["migrations"]


@pytest.mark.parametrize("result", ["blocked", "kept"])
def test_a_blocked_tool_results_card_goes_again_with_a_prompt_from_another_workspace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, result: str) -> None:
    """A card of the user's global memory sent with a tool result another AfterTool hook
    blocked never reached the model, whichever folder the next prompt comes from: a prompt
    reported from a nested repository routes it again (before: listed as `already loaded:`
    on the word of the outer workspace's record, whose held tool answer only a prompt there
    would have checked; found by the model-based test, `already loaded names ['golf'], sent
    set()`). A result Gemini kept is listed there, as in the workspace itself."""
    global_dir = tmp_path / "global"
    global_dir.mkdir()
    (global_dir / "migrations.md").write_text(CARDS_MIGRATIONS, encoding="utf-8")
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(global_dir))
    ws = make_workspace(tmp_path / "proj", {k: v for k, v in CARDS.items() if k != "migrations"})
    inner = make_workspace(ws / "vendor" / "lib", {})
    path = tmp_path / "home" / ".gemini" / "tmp" / "proj" / "chats" / "session.jsonl"
    path.parent.mkdir(parents=True)
    write(path, *CAPTURED[:2])
    call("gemini", payload("gemini", "SessionStart.json", ws, transcript_path=str(path)))
    kept(path, "Hello there.", ask(ws, path, "Hello there."))
    answer = read(ws, path)
    assert sent_ids(answer) == ["migrations"]
    if result == "blocked":
        write(path, *TOOL_BLOCKED)
    else:
        tool_kept(path, answer)
    again = ask(inner, path, "write a reversible database migration")
    if result == "blocked":
        assert "migrations" in sent_ids(again) and "migrations" not in already(again)
    else:
        assert "migrations" not in sent_ids(again) and "migrations" in already(again)


def test_tool_answers_are_checked_at_the_next_prompt_only(ws: Path, transcript: Path) -> None:
    """A second read in the same turn (its result may be written after the first's, or a
    parallel call's not at all yet) is answered from the record as it stands."""
    read(ws, transcript)
    assert sent_ids(read(ws, transcript, "db/migrations/0008_drop.sql")) == []


def test_held_tool_answers_are_bounded(ws: Path, transcript: Path) -> None:
    from engram import hook

    for n in range(hook.MAX_HELD_TOOLS + 5):
        read(ws, transcript)
        (ws / ".agents" / ".engram" / "migrations.md").write_text(
            CARDS_MIGRATIONS.replace("reversible", f"reversible ({n})"), encoding="utf-8")
    caches = [json.loads(p.read_text(encoding="utf-8"))
              for p in Path(delivery.cache_path("x")).parent.glob("*.json")]
    held = [e.get("unconfirmed_tools") for c in caches for e in c["entries"].values()]
    assert max(len(h or []) for h in held) == hook.MAX_HELD_TOOLS


def test_malformed_held_tool_answers_are_set_aside_not_trusted() -> None:
    base = {"version": delivery.CACHE_VERSION, "entries": {"gemini|/p|s": {
        "host": "gemini", "cwd": "/p", "session": "s", "agent": "", "delivered": [],
        "last_routed": [], "start_done": False, "created": 1.0, "updated": 1.0}}}
    good = {"keys": [], "path": "/t", "offset": 1}
    base["entries"]["gemini|/p|s"]["unconfirmed_tools"] = [good]
    assert delivery.is_valid(base)
    for bad in ({**good, "keys": "a"}, {**good, "path": 3}, {**good, "offset": -1},
                {**good, "offset": True}, {k: v for k, v in good.items() if k != "path"}, "x"):
        document = json.loads(json.dumps(base))
        document["entries"]["gemini|/p|s"]["unconfirmed_tools"] = [bad] if bad != "x" else bad
        assert not delivery.is_valid(document), bad


@pytest.mark.parametrize("block", ["denied", "stopped"])
def test_the_always_card_of_a_blocked_first_prompt_comes_with_the_next(ws: Path, tmp_path: Path,
                                                                       block: str) -> None:
    """Gemini's session start prints nothing: its first prompt carries the always card. When
    the user's guard blocks that prompt, the card never reached the model, and the next
    prompt sends it, though that prompt does not route it (before: the record forgot it as
    dropped, and a prompt sends the always cards only with the start's share or on merit:
    the model went without it for the whole session)."""
    path = tmp_path / "home" / ".gemini" / "tmp" / "proj" / "chats" / "session.jsonl"
    path.parent.mkdir(parents=True)
    write(path, *CAPTURED[:2])
    call("gemini", payload("gemini", "SessionStart.json", ws, transcript_path=str(path)))
    first = ask(ws, path)
    assert sent_ids(first) == ["overview", *SENT]
    if block == "stopped":
        stopped(path, QUESTION)
    again = ask(ws, path, "and the migrations?")
    assert "overview" in sent_ids(again) and already(again) == []
    kept(path, "and the migrations?", again)
    assert "overview" not in sent_ids(ask(ws, path, "and the migrations?"))
