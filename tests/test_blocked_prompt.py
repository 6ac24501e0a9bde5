"""A prompt another of the user's UserPromptSubmit hooks blocks: Claude Code drops it with every
hook's context, so what engram answered never reaches the model. The transcript the client
wrote (tests/fixtures/transcripts/claude/blocked-prompt.jsonl, Claude Code 2.1.197: a session
start, "Hello there.", a prompt the user's guard blocked, the same prompt again) then holds the
client's note that the prompt was blocked and no `hook_additional_context` for it. The next
prompt sends those bodies again instead of listing them as already loaded."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from conftest import FIXTURES
from hookkit import already, call, context, make_workspace, payload, sent_ids

from engram import delivery, prompt_outcome

QUESTION = "how should the API handlers format errors?"
SENT = ["error-format", "api-style"]
CAPTURED = [json.loads(line) for line in (FIXTURES / "transcripts" / "claude" / "blocked-prompt.jsonl")
            .read_text(encoding="utf-8").splitlines()]
BLOCKED_NOTE_LINE = next(line for line in CAPTURED if line.get("type") == "system"
                         and "blocked by hook" in str(line.get("content")))
CONTEXT_LINE = next(line for line in CAPTURED
                    if (line.get("attachment") or {}).get("type") == "hook_additional_context")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj")


@pytest.fixture
def transcript(tmp_path: Path, ws: Path) -> Path:
    """A session started (its always card sent and kept), as the capture's was."""
    path = tmp_path / "home" / ".claude" / "projects" / "-proj" / "session.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in CAPTURED[:3]), encoding="utf-8")
    for client in ("claude", "codex"):
        start = context(call(client, payload(client, "SessionStart.json", ws,
                                             transcript_path=str(path))))
        assert sent_ids(start) == ["overview"]
    kept(path, start, "SessionStart")
    return path


def append(path: Path, line: dict) -> None:
    # Claude Code writes JSON the way JavaScript does: non-ASCII as is, no spaces.
    with path.open("a", encoding="utf-8") as file:
        file.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


def kept(path: Path, text: str, event: str = "UserPromptSubmit") -> None:
    """What Claude Code writes when it keeps a prompt: the prompt's hook context."""
    line = json.loads(json.dumps(CONTEXT_LINE))
    line["attachment"].update(content=[text], hookName=event, hookEvent=event)
    append(path, line)


def blocked(path: Path, prompt: str = QUESTION) -> None:
    """Claude Code's note that the user's guard blocked `prompt` (the captured line, its
    quoted prompt replaced)."""
    line = json.loads(json.dumps(BLOCKED_NOTE_LINE))
    line["content"] = line["content"].rsplit("Original prompt: ", 1)[0] + f"Original prompt: {prompt}"
    append(path, line)


def ask(ws: Path, transcript: Path, text: str = QUESTION, client: str = "claude",
        **extra: object) -> str:
    """A prompt, asked anew: Claude Code (2.1.196 and later) gives each its own prompt_id;
    `prompt_id=None` is a prompt of an earlier version."""
    extra.setdefault("prompt_id", str(uuid.uuid4()))
    return context(call(client, payload(client, "UserPromptSubmit.json", ws, prompt=text,
                                        transcript_path=str(transcript), **extra)))


def test_the_captured_transcript_shows_the_block_and_no_context_for_it() -> None:
    """The capture this relies on: the blocked prompt's note, and no context of engram's
    between it and the prompt before."""
    assert "UserPromptSubmit operation blocked by hook" in BLOCKED_NOTE_LINE["content"]
    at = CAPTURED.index(BLOCKED_NOTE_LINE)
    between = [line for line in CAPTURED[:at]
               if (line.get("attachment") or {}).get("hookEvent") == "UserPromptSubmit"]
    assert between == []


@pytest.mark.parametrize("prompt_id", ["each its own", None])
def test_a_blocked_prompts_cards_go_again_with_the_next_prompt(ws: Path, transcript: Path,
                                                               prompt_id: str | None) -> None:
    """Also before 2.1.196, whose payloads name no prompt: the same prompt asked again at
    once is then the same payload."""
    extra = {} if prompt_id else {"prompt_id": None}
    first = ask(ws, transcript, **extra)
    assert sent_ids(first) == SENT
    blocked(transcript)
    again = ask(ws, transcript, **extra)
    assert sent_ids(again) == SENT and already(again) == []
    kept(transcript, again)
    third = ask(ws, transcript, **extra)
    assert sent_ids(third) == [] and already(third) == sorted(SENT)


def test_a_kept_prompts_cards_are_listed_not_sent_again(ws: Path, transcript: Path) -> None:
    first = ask(ws, transcript)
    kept(transcript, first)
    second = ask(ws, transcript)
    assert sent_ids(second) == [] and already(second) == sorted(SENT)


def test_a_block_note_before_the_answer_keeps_the_record(ws: Path, transcript: Path) -> None:
    """The note followed by the answer's bodies is no drop (the host wrote both)."""
    first = ask(ws, transcript)
    blocked(transcript)
    kept(transcript, first)
    assert already(ask(ws, transcript)) == sorted(SENT)


@pytest.mark.parametrize("change", ["gone", "shorter", "other transcript", "no note"])
def test_anything_but_the_hosts_word_keeps_the_record(ws: Path, transcript: Path,
                                                      tmp_path: Path, change: str) -> None:
    """A lost body is worse than a duplicate, but a re-send without the host's word that the
    prompt was dropped would duplicate every body whenever a transcript is unreadable."""
    ask(ws, transcript)
    if change == "gone":
        transcript.unlink()
    elif change == "shorter":
        transcript.write_text("", encoding="utf-8")
    elif change == "other transcript":
        blocked(transcript)
        transcript = tmp_path / "fork.jsonl"
        transcript.write_text("", encoding="utf-8")
        blocked(transcript)
    second = ask(ws, transcript)
    assert sent_ids(second) == [] and already(second) == sorted(SENT)


def test_only_the_last_prompt_is_in_question(ws: Path, transcript: Path) -> None:
    """Each prompt settles the one before it: a block later on does not undo a prompt kept
    earlier."""
    first = ask(ws, transcript)
    kept(transcript, first)
    nothing_new = ask(ws, transcript)  # lists, sends nothing: nothing held
    assert sent_ids(nothing_new) == []
    blocked(transcript)
    assert already(ask(ws, transcript)) == sorted(SENT)


def test_a_compaction_between_forgets_what_was_held(ws: Path, transcript: Path) -> None:
    ask(ws, transcript)
    blocked(transcript)
    call("claude", payload("claude", "SessionStart.json", ws, source="compact",
                           transcript_path=str(transcript)))
    assert sent_ids(ask(ws, transcript)) == SENT  # after a reset: sent, once


def test_a_host_without_the_note_keeps_its_record(ws: Path, transcript: Path) -> None:
    """Codex declares no `blocked_note`: its prompt records stay as they are."""
    first = ask(ws, transcript, client="codex")
    assert sent_ids(first) == SENT
    blocked(transcript)
    assert already(ask(ws, transcript, client="codex")) == sorted(SENT)


def test_the_record_holds_keys_and_a_place_never_text(ws: Path, transcript: Path) -> None:
    ask(ws, transcript)
    (cache,) = (Path(p) for p in Path(delivery.cache_path("x")).parent.glob("*.json"))
    document = json.loads(cache.read_text(encoding="utf-8"))
    assert delivery.is_valid(document)
    (entry,) = (e for e in document["entries"].values() if e["host"] == "claude")
    held = entry["unconfirmed"]
    assert sorted(held) == ["at", "event", "keys", "offset", "path", "prompt"]
    assert QUESTION not in json.dumps(document)
    assert [key.split("@")[0] for key in held["keys"]] == SENT
    assert held["path"] == str(transcript) and held["offset"] == transcript.stat().st_size


def test_a_malformed_held_record_is_set_aside_not_trusted() -> None:
    base = {"version": delivery.CACHE_VERSION, "entries": {"claude|/p|s": {
        "host": "claude", "cwd": "/p", "session": "s", "agent": "", "delivered": [],
        "last_routed": [], "start_done": False, "created": 1.0, "updated": 1.0}}}
    assert delivery.is_valid(base)
    good = {"keys": [], "path": "/t", "offset": 0, "prompt": "0123456789abcdef"}
    for bad in ({**good, "keys": "a"}, {**good, "path": 3}, {**good, "offset": -1},
                {**good, "offset": True}, {**good, "prompt": None}, {**good, "at": "now"},
                {**good, "at": False}, {**good, "event": 7},
                {k: v for k, v in good.items() if k != "offset"}, []):
        document = json.loads(json.dumps(base))
        document["entries"]["claude|/p|s"]["unconfirmed"] = bad
        assert not delivery.is_valid(document), bad


def test_a_note_on_another_prompt_keeps_the_record(ws: Path, transcript: Path) -> None:
    ask(ws, transcript)
    blocked(transcript, "something else entirely")
    assert already(ask(ws, transcript)) == sorted(SENT)


def test_a_note_the_host_wrote_before_the_hook_answered_counts(ws: Path, transcript: Path) -> None:
    """A guard that exits 2 can finish first, and Claude Code 2.1.332 writes its note at once,
    before engram's hook has answered."""
    size = transcript.stat().st_size
    blocked(transcript)
    note = transcript.read_bytes()[size:]
    transcript.write_bytes(transcript.read_bytes()[:size])
    ask(ws, transcript)
    tail = transcript.read_bytes()[size:]
    transcript.write_bytes(transcript.read_bytes()[:size] + note + tail)
    assert sent_ids(ask(ws, transcript)) == SENT


@pytest.mark.parametrize("note", ["after", "before"])
def test_a_blocked_prompt_run_by_two_engram_entries_loses_no_card(ws: Path, transcript: Path,
                                                                  note: str) -> None:
    """engram linked in the project and with `--global`: Claude Code runs both entries on the
    prompt's payload at once, beside the user's guard that blocks it. The second run finds
    no note of the block yet (the guard still running) and must not take the first run's
    answer for one the host kept: that answer's bodies go again with the next prompt (before:
    listed as already loaded, never sent). A note written before both answered counts too.
    The next prompt carries a prompt_id of its own (2.1.196 and later)."""
    document = payload("claude", "UserPromptSubmit.json", ws, prompt=QUESTION,
                       transcript_path=str(transcript))
    if note == "before":
        blocked(transcript)
    assert sent_ids(context(call("claude", document))) == SENT
    second = context(call("claude", document))
    assert not set(sent_ids(second)) & set(SENT), "a body twice in one prompt's context"
    if note == "after":
        blocked(transcript)
    again = ask(ws, transcript, QUESTION, prompt_id="c0ffee00-0000-4000-8000-000000000001")
    assert sent_ids(again) == SENT and already(again) == []
    kept(transcript, again)
    third = ask(ws, transcript, QUESTION, prompt_id="c0ffee00-0000-4000-8000-000000000002")
    assert sent_ids(third) == [] and already(third) == sorted(SENT)


def test_a_prompt_blocked_then_asked_again_and_kept(ws: Path, transcript: Path) -> None:
    """The same prompt blocked, then asked again and kept: its note is still in the window the
    next prompt reads, but the bodies written after it show the second answer arrived."""
    first = ask(ws, transcript)
    blocked(transcript)
    again = ask(ws, transcript)
    assert sent_ids(again) == SENT
    kept(transcript, again)
    third = ask(ws, transcript)
    assert sent_ids(third) == [] and already(third) == sorted(SENT)
    assert first


def test_the_window_is_bounded(tmp_path: Path) -> None:
    """A note further on than the window reads is not taken as the host's word."""
    note = json.dumps({"type": "system", "content": "UserPromptSubmit operation blocked by hook:"
                       "\n[g]: no\n\nOriginal prompt: hi"}).encode()
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"x" * (prompt_outcome.WINDOW_BYTES + prompt_outcome.BEFORE_BYTES) + b"\n" + note)
    keys = ["alpha@0123456789abcdef"]
    sure = "UserPromptSubmit operation blocked by hook"
    assert not prompt_outcome.dropped_keys(prompt_outcome.read_window(str(path), 0), keys, sure,
                                          lambda p: p == "hi", 0)
    at = path.stat().st_size - len(note)
    window, since = prompt_outcome.read_window(str(path), at), prompt_outcome.window_offset(at)
    assert prompt_outcome.dropped_keys(window, keys, sure, lambda p: p == "hi", since)
    assert not prompt_outcome.dropped_keys(window, keys, sure, lambda p: p == "ho", since)
    assert not prompt_outcome.dropped_keys(window, keys, "", lambda p: True, since)
    assert not prompt_outcome.dropped_keys(window, [], sure, lambda p: True, since)
    assert not prompt_outcome.dropped_keys(window + b"### engram memory: alpha \n", keys, sure,
                                          lambda p: True, since)


def test_a_torn_or_odd_note_line_is_no_word() -> None:
    sure = "UserPromptSubmit operation blocked by hook"
    for window in (b'{"content": "UserPromptSubmit operation blocked by hook',
                   b"UserPromptSubmit operation blocked by hook\n",
                   b'{"content": ["UserPromptSubmit operation blocked by hook"]}\n',
                   b'{"content": "UserPromptSubmit operation blocked by hook: no quote"}\n'):
        assert not prompt_outcome.dropped_keys(window, ["a@0123456789abcdef"], sure, lambda p: True, 0)


GOLF = """---
id: golf
title: Golf notes
tags: [golf]
---
The user's own golf habits go everywhere.
"""


def two_workspaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """Two workspaces routing one card of the user's global memory, and a transcript."""
    (tmp_path / "global").mkdir()
    (tmp_path / "global" / "golf.md").write_text(GOLF, encoding="utf-8")
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(tmp_path / "global"))
    first, second = (make_workspace(tmp_path / name, cards={}) for name in ("a", "b"))
    path = tmp_path / "session.jsonl"
    path.write_text("", encoding="utf-8")
    return first, second, path


def test_a_prompt_blocked_in_another_folder_of_the_session(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """One session, two workspaces (the agent moved into another repository): a card of the
    user's global memory, sent with a prompt blocked in the first, is not taken as in the
    context in the second."""
    first, second, path = two_workspaces(tmp_path, monkeypatch)
    assert sent_ids(ask(first, path, "tell me about the golf notes")) == ["golf"]
    blocked(path, "tell me about the golf notes")
    assert sent_ids(ask(second, path, "tell me about the golf notes")) == ["golf"]


def test_a_prompt_kept_in_another_folder_of_the_session(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    first, second, path = two_workspaces(tmp_path, monkeypatch)
    kept(path, ask(first, path, "tell me about the golf notes"))
    assert already(ask(second, path, "tell me about the golf notes")) == ["golf"]


SUBAGENT_CONTEXT_LINE = json.loads(
    (FIXTURES / "transcripts" / "claude" / "subagents" / "agent-a56bac5cb98a9b22e.jsonl")
    .read_text(encoding="utf-8").splitlines()[1])


@pytest.mark.parametrize("written", ["own file", "main file", "main file, sidechain"])
def test_a_subagents_context_is_not_the_blocked_prompts(ws: Path, transcript: Path,
                                                        written: str) -> None:
    """A subagent started after a blocked prompt gets the session's cards in its own context;
    the session's model still has not. Claude Code 2.1.197 writes the subagent's context to
    the subagent's own file (captured: `subagents/agent-<id>.jsonl`, each line marked
    `isSidechain`, its attachment `hookEvent: SubagentStart`). Found in the main transcript
    after the note, such a line is still no sign that the prompt's answer arrived (before:
    the next prompt listed the blocked prompt's cards as already loaded, never sent)."""
    ask(ws, transcript)
    blocked(transcript)
    start = context(call("claude", payload("claude", "SubagentStart.json", ws,
                                           transcript_path=str(transcript))))
    assert set(SENT) <= set(sent_ids(start))
    line = json.loads(json.dumps(SUBAGENT_CONTEXT_LINE))
    line["attachment"]["content"] = [start]
    if written == "own file":
        own = transcript.parent / transcript.stem / "subagents" / "agent-a1.jsonl"
        own.parent.mkdir(parents=True)
        append(own, line)
    elif written == "main file":
        del line["isSidechain"], line["agentId"]
        append(transcript, line)
    else:
        append(transcript, line)
    again = ask(ws, transcript)
    assert sent_ids(again) == SENT and already(again) == []


def test_the_always_card_of_a_blocked_first_prompt_comes_with_the_next(ws: Path,
                                                                       tmp_path: Path) -> None:
    """A session whose first call is a prompt the user's guard blocks (its start hook did not
    run: engram linked mid-session, or the start timed out): that prompt carried the always
    card, the model never got it, and the next prompt sends it though it does not route it."""
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in CAPTURED[:3]), encoding="utf-8")
    assert sent_ids(ask(ws, path)) == ["overview", *SENT]
    blocked(path)
    again = ask(ws, path, "and the migrations?")
    assert "overview" in sent_ids(again) and already(again) == []
    kept(path, again)
    assert "overview" not in sent_ids(ask(ws, path, "and the migrations?"))


def test_the_same_words_blocked_later_elsewhere_keep_a_kept_answer(ws: Path, tmp_path: Path,
                                                                   transcript: Path) -> None:
    """A prompt kept in one workspace (its bodies written), then the same words asked from a
    nested repository of the session (no card of the outer one routes there) and blocked:
    the note quotes the same prompt, but it is a later one's. The outer workspace's next
    prompt lists the cards, not sends them again (before: the note was taken for its own
    prompt's, the kept bodies written before it were not counted, and the cards went twice;
    found by a random soak of the model-based test)."""
    nested = make_workspace(ws / "vendor" / "lib", cards={})
    kept(transcript, ask(ws, transcript))
    assert sent_ids(ask(nested, transcript)) == []
    blocked(transcript)
    again = ask(ws, transcript)
    assert sent_ids(again) == [] and already(again) == sorted(SENT)


def test_an_older_block_of_the_same_words_is_not_this_prompts(ws: Path, transcript: Path) -> None:
    """The same words blocked, asked again and kept, then asked a third time and blocked: the
    first note and the kept bodies after it are older than this prompt's answer, and the
    last note is this prompt's. Its cards go again."""
    ask(ws, transcript)
    blocked(transcript)
    again = ask(ws, transcript)
    kept(transcript, again)
    third = ask(ws, transcript, "and the migrations?")
    kept(transcript, third)
    assert sent_ids(third) == ["migrations"]
    memory = ws / ".agents" / ".engram"
    (memory / "error-format.md").write_text((memory / "error-format.md").read_text() + "\nEdited.\n")
    fourth = ask(ws, transcript)
    assert sent_ids(fourth) == ["error-format"]
    blocked(transcript)
    fifth = ask(ws, transcript)
    assert sent_ids(fifth) == ["error-format"]


def test_a_tool_calls_copy_of_one_card_does_not_keep_the_others(ws: Path, transcript: Path) -> None:
    """A blocked prompt's answer carried two cards; a tool call after the block brought one of
    them again (its body was edited, or its path was touched) and was kept. The other card
    still never reached the model: it goes with the next prompt (before: one body written
    after the note counted for all, and the other was listed as already loaded, never sent;
    found by a random soak of the model-based test)."""
    assert sent_ids(ask(ws, transcript)) == SENT
    blocked(transcript)
    kept(transcript, f"### engram memory: {SENT[0]} — Error format\nEdited body.", "PostToolUse")
    again = ask(ws, transcript)
    assert SENT[1] in sent_ids(again) and SENT[1] not in already(again)


def test_a_rule_file_claude_loads_after_the_block_keeps_its_card(tmp_path: Path) -> None:
    """With `hooks.path_rules: native`: a prompt the user's guard blocked carried a scoped
    card, then the agent read a file the card names and Claude Code loaded the card's rule
    file by itself. The model holds the card: the next prompt lists it, not sends it again
    (before: the blocked answer's keys were all forgotten at the next prompt, the rule
    load's too, and the body went a second time; found by a random soak of the model-based
    test)."""
    ws = make_workspace(tmp_path / "proj", config={"hooks": {"path_rules": "native"}})
    rule = ws / ".claude" / "rules" / "engram" / "migrations.md"
    rule.parent.mkdir(parents=True)  # linked in native mode: its starts keep the files in step
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in CAPTURED[:3]), encoding="utf-8")
    start = context(call("claude", payload("claude", "SessionStart.json", ws,
                                           transcript_path=str(path))))
    kept(path, start, "SessionStart")
    assert rule.exists()
    question = "how do we write database migrations?"
    assert "migrations" in sent_ids(ask(ws, path, question))
    blocked(path, question)
    loaded = payload("claude", "InstructionsLoaded.json", ws, file_path=str(rule),
                     load_reason="path_glob_match", transcript_path=str(path))
    assert context(call("claude", loaded)) == ""
    again = ask(ws, path, question)
    assert "migrations" not in sent_ids(again) and "migrations" in already(again)
