"""A session's delivery record outlives the cache's bounds on its live records: one the TTL
(7 days idle) or the per-workspace cap (the 200 sessions used longest ago) took out of the
workspace's cache still speaks for the session when it is resumed (Claude Code `--resume`,
Codex `resume`, Gemini CLI `--resume`): the resumed history holds every body it was sent,
so none is sent again. A reset the session had meanwhile is still applied: never a loss."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hookkit import already, call, context, make_workspace, payload, sent_ids

from engram import delivery, paths

DAY = 24 * 3600.0
HOSTS = ("claude", "codex", "gemini")


class Clock:
    """The wall clock the hook reads, moved by the test (`time.time`, `time.time_ns`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.offset = 0.0
        real, real_ns = time.time, time.time_ns
        monkeypatch.setattr(time, "time", lambda: real() + self.offset)
        monkeypatch.setattr(time, "time_ns", lambda: real_ns() + int(self.offset * 1e9))

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    return Clock(monkeypatch)


def prompt(client: str, cwd: Path, text: str, session: str = "S") -> str:
    name = "BeforeAgent.json" if client == "gemini" else "UserPromptSubmit.json"
    return context(call(client, payload(client, name, cwd, prompt=text, session_id=session)))


def start(client: str, cwd: Path, source: str, session: str = "S") -> str:
    return context(call(client, payload(client, "SessionStart.json", cwd, source=source,
                                        session_id=session)))


def first_session(client: str, ws: Path) -> None:
    """Session S starts and is sent the always card and the release card."""
    start(client, ws, "startup")
    assert set(sent_ids(prompt(client, ws, "how do we cut a release and deploy?"))) >= {"release"}


def resumed(client: str, ws: Path) -> list[str]:
    """Session S resumed: what its start and a prompt on the same subject send."""
    text = start(client, ws, "resume") + "\n" + prompt(client, ws, "the release and deploy again")
    return sent_ids(text)


def nested_with_global_card(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A nested repository with no memory of its own, and a card of the user's global memory
    (`reviews`) that both workspaces route."""
    global_dir = tmp_path / "global"
    global_dir.mkdir()
    (global_dir / "reviews.md").write_text(
        "---\ntitle: Code reviews\ntags: [reviews]\n---\nTwo approvals before merging.\n")
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(global_dir))
    return make_workspace(ws / "vendor" / "lib", {})


@pytest.mark.parametrize("client", HOSTS)
def test_a_session_the_ttl_evicted_gets_nothing_again_when_resumed(ws: Path, clock: Clock,
                                                                  client: str) -> None:
    first_session(client, ws)
    clock.advance(8 * DAY)
    prompt(client, ws, "how do we cut a release?", session="other")  # prunes S's record
    entries = delivery.read_document(delivery.cache_path(paths.workspace_key(str(ws))))["entries"]
    assert not any(key.endswith("|S") for key in entries)  # the live cache stays bounded
    assert resumed(client, ws) == []


@pytest.mark.parametrize("client", HOSTS)
def test_a_session_the_cap_evicted_gets_nothing_again_when_resumed(
        ws: Path, clock: Clock, client: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delivery, "MAX_SESSIONS", 3)
    first_session(client, ws)
    for number in range(4):
        clock.advance(120)
        prompt(client, ws, "how do we cut a release?", session=f"other{number}")
    entries = delivery.read_document(delivery.cache_path(paths.workspace_key(str(ws))))["entries"]
    assert len(entries) == 3 and not any(key.endswith("|S") for key in entries)
    text = prompt(client, ws, "the release and deploy again")
    assert sent_ids(text) == [] and "release" in already(text)


@pytest.mark.parametrize("client", HOSTS)
def test_a_reset_after_the_eviction_still_applies(ws: Path, clock: Clock, client: str,
                                                  tmp_path: Path) -> None:
    """Evicted, then reset from a folder outside any workspace (a /clear or a compaction's
    start there): the record the resume brings back is reset, its bodies sent again."""
    first_session(client, ws)
    clock.advance(8 * DAY)
    prompt(client, ws, "how do we cut a release?", session="other")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    start(client, elsewhere, "clear")
    assert "release" in sent_ids(prompt(client, ws, "the release and deploy again"))


@pytest.mark.parametrize("days", [8, 32, 400])
@pytest.mark.parametrize("client", HOSTS)
def test_a_reset_older_than_the_ttl_is_not_forgotten(ws: Path, clock: Clock, client: str,
                                                     tmp_path: Path, days: int) -> None:
    """A session reset from another folder, then idle past the TTL (or past the age records
    are kept) while other workspaces' hooks sweep old reset markers: its record here, never
    rewritten since, must not be taken for the context it had before the reset (that would
    lose the release card)."""
    first_session(client, ws)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    start(client, elsewhere, "clear")
    clock.advance(days * DAY)
    delivery.sweep_reset_markers(time.time())  # another workspace's hook, a write in 32
    assert "release" in sent_ids(prompt(client, ws, "the release and deploy again"))


@pytest.mark.parametrize("client", HOSTS)
def test_a_record_older_than_the_kept_age_is_sent_again(ws: Path, clock: Clock,
                                                        client: str) -> None:
    """Past EVICTED_MAX_AGE a record no longer speaks for its session (the markers of the
    resets it may have missed are gone): a resume then gets its bodies again, a second copy
    rather than a loss."""
    first_session(client, ws)
    clock.advance(8 * DAY)
    prompt(client, ws, "how do we cut a release?", session="other")
    clock.advance(delivery.EVICTED_MAX_AGE)
    assert set(resumed(client, ws)) == {"overview", "release"}


def test_damaged_or_foreign_set_aside_records_are_ignored(ws: Path, clock: Clock) -> None:
    first_session("claude", ws)
    clock.advance(8 * DAY)
    prompt("claude", ws, "how do we cut a release?", session="other")
    [kept] = (Path(paths.state_dir_str()) / "delivery" / "evicted").iterdir()
    for damage in (b"{", b'{"key": "claude|/elsewhere|S", "entry": {}}', b"[]",
                   kept.read_bytes().replace(b'"updated":', b'"updated":"x","was":'),
                   kept.read_bytes().replace(b'"delivered":[', b'"delivered":[1,')):
        kept.write_bytes(damage)
        assert "overview" in sent_ids(start("claude", ws, "resume"))
        clock.advance(8 * DAY)
        prompt("claude", ws, "how do we cut a release?", session="other")
        assert kept.exists()


def test_set_aside_records_are_bounded_by_age_and_count(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setattr(delivery, "MAX_EVICTED", 5)
    now = 1_000_000_000.0
    records = {f"claude|/w|s{i}": dict(delivery.new_entry("claude", "/w", f"s{i}", "", 0),
                                       updated=now - i * 3600) for i in range(8)}
    records["claude|/w|old"] = dict(delivery.new_entry("claude", "/w", "old", "", 0),
                                    updated=now - delivery.EVICTED_MAX_AGE - 1)
    delivery.set_aside(records)
    delivery.sweep_reset_markers(now)
    kept = {key for key in records if delivery.restore(key, now) is not None}
    assert kept == {f"claude|/w|s{i}" for i in range(5)}  # the most recently used


@pytest.mark.parametrize("client", HOSTS)
def test_a_card_sent_in_a_workspace_whose_cache_evicted_the_record_is_not_sent_again(
        ws: Path, clock: Clock, client: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A card of the user's global memory the session was sent in a nested repository, whose
    cache has since evicted the session's record (other sessions there): back in the
    workspace it is still in the context."""
    inner = nested_with_global_card(ws, tmp_path, monkeypatch)
    monkeypatch.setattr(delivery, "MAX_SESSIONS", 2)
    start(client, ws, "startup")
    prompt(client, ws, "hello")  # Gemini CLI: the start's cards come with the first prompt
    assert "reviews" in sent_ids(prompt(client, inner, "how do code reviews work?"))
    for number in range(3):
        clock.advance(120)
        prompt(client, inner, "how do code reviews work?", session=f"other{number}")
    back = prompt(client, ws, "how do code reviews work?")
    assert sent_ids(back) == [] and already(back) == ["reviews"]


@pytest.mark.parametrize("client", HOSTS)
def test_a_session_in_use_keeps_its_list_of_workspaces(ws: Path, clock: Clock, client: str,
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A session used every week for longer than the list of its workspaces is kept after
    its last change: the list is dated by the session's last use, not by the day it reached
    its last workspace, so a card it has from one workspace is not sent again in the other."""
    inner = nested_with_global_card(ws, tmp_path, monkeypatch)
    start(client, ws, "startup")
    prompt(client, ws, "hello")
    assert "reviews" in sent_ids(prompt(client, inner, "how do code reviews work?"))
    for _week in range(6):  # the session works in both every few days, for 36 days
        clock.advance(6 * DAY)
        prompt(client, ws, "how do we cut a release?")
        prompt(client, inner, "hello")
        delivery.sweep_reset_markers(time.time())  # another workspace's hook, a write in 32
    back = prompt(client, ws, "how do code reviews work?")
    assert sent_ids(back) == [] and already(back) == ["reviews"]


@pytest.mark.parametrize("client", HOSTS)
def test_a_card_from_a_workspace_the_session_left_is_not_sent_again(
        ws: Path, clock: Clock, client: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A session sent a card in one workspace, then working in the other for longer than a
    record is trusted, with prompts that route that card (listed there as already loaded, on
    the first workspace's record): the model still holds it. The record that carries it
    for the session is the one the session keeps using, not the one it left."""
    inner = nested_with_global_card(ws, tmp_path, monkeypatch)
    start(client, ws, "startup")
    prompt(client, ws, "hello")  # Gemini CLI's start is delivered with the first prompt
    assert "reviews" in sent_ids(prompt(client, inner, "how do code reviews work?"))
    for _week in range(6):  # the session works in the outer workspace alone, for 36 days
        clock.advance(6 * DAY)
        again = prompt(client, ws, "how do code reviews work?")
        assert sent_ids(again) == [] and already(again) == ["reviews"], _week


TOOL_READ = {"claude": "PostToolUse.read.json", "codex": "PreToolUse.patch-update.json",
             "gemini": "AfterTool.read.json"}


@pytest.mark.parametrize("client", HOSTS)
@pytest.mark.parametrize("call_between", ["off-topic prompt", "tool call"])
def test_a_call_that_sends_nothing_still_uses_the_record(ws: Path, clock: Clock, client: str,
                                                        call_between: str) -> None:
    """A record is trusted for 30 days after the session's last call, a call that sent
    nothing included: a session that spent 29 days on tool calls and prompts routing no
    new card after its release card, then asked about releases 8 days later, was sent the
    release card again into the context that held it (found by a random soak of the
    model-based test: a Gemini read between two prompts 37 days apart)."""
    first_session(client, ws)
    clock.advance(29 * DAY)
    if call_between == "off-topic prompt":
        assert sent_ids(prompt(client, ws, "what is the capital of mongolia")) == []
    else:
        assert sent_ids(context(call(client, payload(client, TOOL_READ[client], ws,
                                                     session_id="S")))) == []
    clock.advance(8 * DAY)
    answer = prompt(client, ws, "how do we cut a release and deploy?")
    assert "release" not in sent_ids(answer), answer


@pytest.mark.parametrize("tool", ["PostToolUse.read.json", "PreToolUse.json"])
def test_a_tool_call_claude_answers_from_its_rule_files_still_uses_the_record(
        tmp_path: Path, clock: Clock, tool: str) -> None:
    """With `hooks.path_rules: native` Claude Code loads a path's cards from engram's rule
    files, so the hook sends nothing for its tool calls; they are still calls of the session.
    A session that spent 29 days on tool calls after its release card, then asked about
    releases 8 days later, was sent the card again into the context that held it: the
    native-mode answer returned before the record was read."""
    ws = make_workspace(tmp_path / "proj", config={"hooks": {"path_rules": "native"}})
    first_session("claude", ws)
    clock.advance(29 * DAY)
    document = payload("claude", tool, ws, session_id="S", tool_name="Read",
                       tool_input={"file_path": str(ws / "src" / "app.py")})
    assert sent_ids(context(call("claude", document))) == []
    clock.advance(8 * DAY)
    answer = prompt("claude", ws, "how do we cut a release and deploy?")
    assert "release" not in sent_ids(answer), answer


@pytest.mark.parametrize("client", HOSTS)
def test_a_prompt_read_mode_startup_answers_with_nothing_still_uses_the_record(
        tmp_path: Path, clock: Clock, client: str) -> None:
    """`read: startup` sends memory at session start only: a prompt gets nothing, yet it is
    a call of the session. A session that prompted 29 days after its start, then was resumed
    8 days later, must not be sent its always card again (the resumed history holds it)."""
    ws = make_workspace(tmp_path / "proj", config={"read": "startup"})
    sent = sent_ids(start(client, ws, "startup") + "\n"
                    + prompt(client, ws, "how do we cut a release and deploy?"))
    assert sent, "the start's always card"
    clock.advance(29 * DAY)
    assert sent_ids(prompt(client, ws, "how do we cut a release and deploy?")) == []
    clock.advance(8 * DAY)
    again = sent_ids(start(client, ws, "resume") + "\n"
                     + prompt(client, ws, "how do we cut a release and deploy?"))
    assert not set(sent) & set(again), again


@pytest.mark.parametrize("client,event", [("claude", "InstructionsLoaded.json"),
                                          *((client, "SessionEnd.json") for client in HOSTS)])
def test_a_silent_call_of_the_session_still_uses_the_record(ws: Path, clock: Clock, client: str,
                                                            event: str) -> None:
    """Calls that answer nothing at all are calls of the session too: Claude Code's load of
    its CLAUDE.md, and a session's end (the session may be resumed: its history holds every
    body). Both returned before the record was dated."""
    first_session(client, ws)
    clock.advance(29 * DAY)
    document = payload(client, event, ws, session_id="S")
    if event == "InstructionsLoaded.json":
        document["file_path"] = str(ws / "CLAUDE.md")
    call(client, document)
    clock.advance(8 * DAY)
    answer = prompt(client, ws, "how do we cut a release and deploy?")
    assert "release" not in sent_ids(answer), answer


@pytest.mark.parametrize("client", HOSTS)
def test_a_reset_swept_while_the_clock_ran_ahead_is_not_lost(ws: Path, clock: Clock,
                                                             client: str, tmp_path: Path) -> None:
    """A session cleared from another folder, then the clock set 40 days ahead (a wrong
    date after a resume from sleep, a VM restored) while another workspace's hook swept the
    reset markers, then set right: the record here, last used a minute before the reset,
    looks a minute old again, but the marker of the reset it has not applied is gone. It
    must not be taken for the context the /clear emptied."""
    first_session(client, ws)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    clock.advance(60)
    start(client, elsewhere, "clear")
    clock.advance(40 * DAY)
    delivery.sweep_reset_markers(time.time())  # another workspace's hook, a write in 32
    clock.advance(-40 * DAY + 60)
    assert "release" in sent_ids(prompt(client, ws, "the release and deploy again"))


@pytest.mark.parametrize("client", HOSTS)
def test_a_reset_while_the_clock_is_set_back_still_applies(ws: Path, clock: Clock,
                                                           client: str, tmp_path: Path) -> None:
    """A session in use for 36 days (its start's reset marker swept after 31, as it should
    be: the record has applied it), then the clock set back 40 days (a dead clock battery, a
    VM snapshot's date) and the session cleared from another folder: the new reset must be
    later than the one the record applied, whatever the clock says, or the record keeps
    the bodies the /clear emptied."""
    first_session(client, ws)
    for _week in range(6):
        clock.advance(6 * DAY)
        prompt(client, ws, "what is the capital of mongolia")
        delivery.sweep_reset_markers(time.time())  # another workspace's hook, a write in 32
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    clock.advance(-40 * DAY)
    start(client, elsewhere, "clear")
    assert "release" in sent_ids(prompt(client, ws, "the release and deploy again"))


@pytest.mark.parametrize("client", HOSTS)
def test_a_session_list_made_while_the_clock_is_behind_is_kept(
        ws: Path, clock: Clock, client: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A session started while the wall clock was 40 days behind the latest time a hook had
    seen (set back since): its list of workspaces, made by its first call, was dated by the
    wall clock, so the next sweep (by the later clock) took it for 40 days old and dropped it,
    and the card of the user's global memory the session got in one workspace was sent again
    in the other (a second copy: the list is what ties its records together)."""
    inner = nested_with_global_card(ws, tmp_path, monkeypatch)
    join = delivery.join_workspace

    def stamped_by_the_system(host: str, context_id: str, location: str) -> None:
        join(host, context_id, location)
        made = delivery._session_file(host, context_id)
        os.utime(made, (time.time(), time.time()))  # the system's clock is the wall clock

    monkeypatch.setattr(delivery, "join_workspace", stamped_by_the_system)
    prompt(client, ws, "hello", session="earlier")  # a hook reads the clock
    clock.advance(-40 * DAY)
    assert "reviews" in sent_ids(prompt(client, ws, "how do code reviews work?"))
    delivery.sweep_reset_markers(delivery.clock())  # another workspace's hook, a write in 32
    there = prompt(client, inner, "how do code reviews work?")
    assert sent_ids(there) == [] and already(there) == ["reviews"]
