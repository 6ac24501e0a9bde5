"""Delta delivery through the hook, replaying the real Claude Code and Codex payloads with
their cwd pointed at a test workspace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hookkit import already, call, context, make_workspace, payload, sent_ids

from engram import delivery, paths


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj")


def prompt(client: str, ws: Path, text: str, name: str = "UserPromptSubmit.json", **extra: object) -> str:
    return context(call(client, payload(client, name, ws, prompt=text, **extra)))


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_session_start_sends_always_cards_once(ws: Path, client: str) -> None:
    first = context(call(client, payload(client, "SessionStart.json", ws)))
    assert sent_ids(first) == ["overview"]
    assert "This repository is the payments service." in first
    again = call(client, payload(client, "SessionStart.json", ws, source="resume"))
    assert again.strip() == "{}"  # resume keeps the delivered set: the host replays it


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_prompt_delta_then_already_loaded(ws: Path, client: str) -> None:
    call(client, payload(client, "SessionStart.json", ws))
    first = prompt(client, ws, "how should the API handlers format errors?")
    assert sent_ids(first) == ["error-format", "api-style"]  # prerequisite first
    assert "already loaded" not in first
    second = prompt(client, ws, "how should the API handlers format errors?")
    assert sent_ids(second) == []
    assert already(second) == ["api-style", "error-format"]  # sorted
    answer = json.loads(call(client, payload(client, "UserPromptSubmit.json", ws, prompt="api handlers")))
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_off_topic_prompt_injects_nothing(ws: Path, client: str) -> None:
    call(client, payload(client, "SessionStart.json", ws))
    assert call(client, payload(client, "UserPromptSubmit.json", ws, prompt="thanks!")).strip() == "{}"
    assert call(client, payload(client, "UserPromptSubmit.json", ws,
                                prompt="hello there")).strip() == "{}"


def test_always_cards_come_with_first_prompt_when_no_session_start(ws: Path) -> None:
    text = prompt("claude", ws, "what is the release checklist?")
    assert sent_ids(text) == ["overview", "release"]
    later = prompt("claude", ws, "what is the release checklist?")
    assert already(later) == ["release"]  # always cards are not listed later


def test_edited_card_is_delivered_again(ws: Path) -> None:
    prompt("claude", ws, "release checklist")
    card = ws / ".agents" / ".engram" / "release.md"
    card.write_text(card.read_text().replace("Tuesdays", "Wednesdays"))
    text = prompt("claude", ws, "release checklist")
    assert sent_ids(text) == ["release"] and "Wednesdays" in text


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_compaction_resets(ws: Path, client: str) -> None:
    call(client, payload(client, "SessionStart.json", ws))
    prompt(client, ws, "release checklist")
    # Codex's compaction payloads come from a second captured session: same session here.
    session = payload(client, "UserPromptSubmit.json", ws)["session_id"]
    compacted = call(client, payload(client, "PreCompact.json", ws, session_id=session))
    assert compacted == ""  # Claude reads PreCompact stdout as compaction instructions
    restart = context(call(client, payload(client, "SessionStart.compact.json" if client == "codex"
                                           else "SessionStart.3.json", ws, session_id=session)))
    assert sent_ids(restart) == ["overview"]
    assert sent_ids(prompt(client, ws, "release checklist")) == ["release"]


@pytest.mark.parametrize("client", ["claude", "codex"])
@pytest.mark.parametrize("trigger", ["manual", "auto"])
def test_a_compaction_that_does_not_happen_resets_nothing(ws: Path, client: str,
                                                          trigger: str) -> None:
    """PreCompact fires before a compaction that may not happen: Claude Code 2.1.197 and
    2.1.332 fire it, then nothing more, for "Not enough messages to compact", a compaction
    blocked by another PreCompact hook and one whose request failed; Codex 0.171.0 for one
    stopped by another hook and one whose request failed. The model still holds every body:
    none is sent again. A completed compaction is followed by SessionStart(compact) (Codex:
    PostCompact first; Claude: PostCompact after), and only then does memory come back."""
    session = payload(client, "UserPromptSubmit.json", ws)["session_id"]
    call(client, payload(client, "SessionStart.json", ws))
    assert sent_ids(prompt(client, ws, "release checklist")) == ["release"]
    for _ in range(2):
        assert call(client, payload(client, "PreCompact.json", ws, session_id=session,
                                    trigger=trigger)) == ""
        again = prompt(client, ws, "release checklist")
        assert sent_ids(again) == [] and already(again) == ["release"]
    call(client, payload(client, "PreCompact.json", ws, session_id=session, trigger=trigger))
    post = ["PostCompact.json", "SessionStart.compact.json"] if client == "codex" else \
        ["SessionStart.3.json", "PostCompact.json"]
    answers = [context(call(client, payload(client, name, ws, session_id=session,
                                            trigger=trigger))) for name in post]
    assert [sent_ids(a) for a in answers] == ([[], ["overview"]] if client == "codex"
                                              else [["overview"], []])
    assert sent_ids(prompt(client, ws, "release checklist")) == ["release"]


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_session_start_run_twice_sends_the_always_cards_once(ws: Path, client: str) -> None:
    """A host runs every hook entry the event matches: a team's project file and the user's
    own `engram link --global` (or `--local`) both run engram, with the same payload, at the
    same moment (real Claude Code 2.1.332: the always card twice in the first request). The
    second run of one start event is not a second reset: the always cards go once. A new
    start after a prompt resets as before."""
    session = payload(client, "UserPromptSubmit.json", ws)["session_id"]
    start = payload(client, "SessionStart.json", ws, session_id=session)
    assert sent_ids(context(call(client, start))) == ["overview"]
    assert sent_ids(context(call(client, start))) == []
    assert sent_ids(prompt(client, ws, "release checklist", session_id=session)) == ["release"]
    compact = payload(client, "SessionStart.compact.json" if client == "codex"
                      else "SessionStart.3.json", ws, session_id=session)
    assert sent_ids(context(call(client, compact))) == ["overview"]
    assert sent_ids(context(call(client, compact))) == []
    assert sent_ids(prompt(client, ws, "release checklist", session_id=session)) == ["release"]
    assert sent_ids(context(call(client, compact))) == ["overview"]  # a new compaction


@pytest.mark.parametrize("source", ["startup", "compact"])
@pytest.mark.parametrize("loaded", ["CLAUDE.md", ".claude/rules/engram/migrations.md"])
def test_a_rule_load_between_two_runs_of_one_start_is_part_of_that_start(
        tmp_path: Path, source: str, loaded: str) -> None:
    """Claude Code loads CLAUDE.md (and, with `hooks.path_rules: native`, engram's rule files)
    as a session starts or after a compaction, and runs its InstructionsLoaded hooks at the
    same moment as the SessionStart ones (observed on 2.1.197 and 2.1.332 with both a project
    and a `--global` link: the three calls within one second, their order varying). A rule
    load the delivery lock lets in between the two runs of one start is no new activity of
    the session: the second run is still that start, and the always cards go once (before:
    twice, the second run taken for a new reset)."""
    ws = make_workspace(tmp_path / "proj", config={"hooks": {"path_rules": "native"}})
    (ws / ".claude" / "rules" / "engram").mkdir(parents=True)
    (ws / "CLAUDE.md").write_text("Project notes for the agent.\n", encoding="utf-8")
    session = payload("claude", "UserPromptSubmit.json", ws)["session_id"]
    name = "SessionStart.json" if source == "startup" else "SessionStart.3.json"
    start = payload("claude", name, ws, session_id=session)
    rule_load = payload("claude", "InstructionsLoaded.json", ws, session_id=session,
                        file_path=str(ws / loaded))
    if source == "compact":
        call("claude", payload("claude", "SessionStart.json", ws, session_id=session))
        prompt("claude", ws, "release checklist", session_id=session)
        call("claude", payload("claude", "PreCompact.json", ws, session_id=session))
    assert sent_ids(context(call("claude", start))) == ["overview"]
    assert call("claude", rule_load) == ""
    assert sent_ids(context(call("claude", start))) == []
    # A rule file Claude loaded itself is in the context: a prompt does not send its card.
    assert sent_ids(prompt("claude", ws, "how do we write database migrations?",
                           session_id=session)) == ([] if "migrations" in loaded else ["migrations"])


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_start_run_twice_after_the_clock_was_set_back_is_one_start(
        ws: Path, client: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reset stamp is later than the session's last one, so after the wall clock is set
    back (a correction, a restored VM) the stamp of a compaction's start is ahead of the
    clock: the second run of that start is still the same start, not a new reset (before:
    the always cards twice, for as long as the clock stayed behind; found by a random soak
    of the model-based test, `foxtrot sent twice to claude|s2 with no reset or edit`)."""
    import time as real_time

    from engram import hook

    session = payload(client, "UserPromptSubmit.json", ws)["session_id"]
    assert sent_ids(context(call(client, payload(client, "SessionStart.json", ws,
                                                 session_id=session)))) == ["overview"]

    class SetBack:
        def time(self) -> float:
            return real_time.time() - 3 * 86400

        def time_ns(self) -> int:
            return real_time.time_ns() - 3 * 86400 * 10**9

        def __getattr__(self, name: str) -> object:
            return getattr(real_time, name)

    monkeypatch.setattr(delivery, "time", SetBack())
    monkeypatch.setattr(hook, "time", SetBack())
    call(client, payload(client, "PreCompact.json", ws, session_id=session))
    compact = payload(client, "SessionStart.compact.json" if client == "codex"
                      else "SessionStart.3.json", ws, session_id=session)
    assert sent_ids(context(call(client, compact))) == ["overview"]
    assert sent_ids(context(call(client, compact))) == []


def test_a_manual_compress_on_gemini_resets_at_once(ws: Path) -> None:
    """Gemini CLI 0.61.0 sends nothing after a compression (no PostCompress, no `compress`
    session start), so a manual /compress resets when it is announced: if it then compresses
    nothing the next prompt sends its cards again (a duplicate, where waiting for a signal
    that never comes would lose them). PreCompress "auto" fires before every model turn."""
    def ask() -> str:
        return context(call("gemini", payload("gemini", "BeforeAgent.json", ws,
                                              prompt="release checklist")))

    assert sent_ids(ask()) == ["overview", "release"]
    call("gemini", payload("gemini", "PreCompress.json", ws, trigger="auto"))
    assert already(ask()) == ["release"]
    call("gemini", payload("gemini", "PreCompress.json", ws, trigger="manual"))
    assert sent_ids(ask()) == ["overview", "release"]


def test_clear_start_resets_but_resume_keeps(ws: Path) -> None:
    prompt("claude", ws, "release checklist")
    call("claude", payload("claude", "SessionStart.json", ws, source="resume"))
    assert already(prompt("claude", ws, "release checklist")) == ["release"]
    call("claude", payload("claude", "SessionStart.json", ws, source="clear"))
    assert sent_ids(prompt("claude", ws, "release checklist")) == ["release"]


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_subagent_gets_session_context_parent_untouched(ws: Path, client: str) -> None:
    call(client, payload(client, "SessionStart.json", ws))
    prompt(client, ws, "release checklist")
    prompt(client, ws, "hello there")  # routes nothing: the last routed context stays
    sub = context(call(client, payload(client, "SubagentStart.json", ws)))
    assert sent_ids(sub) == ["overview", "release"]
    answer = json.loads(call(client, payload(client, "SubagentStart.json", ws)))
    assert answer == {}  # the subagent already has them
    assert already(prompt(client, ws, "release checklist")) == ["release"]


def test_codex_subagent_prompt_is_keyed_to_the_subagent(ws: Path) -> None:
    main = prompt("codex", ws, "release checklist")
    assert sent_ids(main) == ["overview", "release"]
    sub = prompt("codex", ws, "release checklist", name="UserPromptSubmit.2.json")
    assert sent_ids(sub) == ["overview", "release"]  # its own set, not the parent's
    cache = json.loads(Path(delivery.cache_path(paths.workspace_key(str(ws.resolve())))).read_text())
    keys = sorted(cache["entries"])
    assert len(keys) == 2 and any("#agent:" in key for key in keys)


def test_a_codex_subagents_patch_is_the_subagents_not_the_parents(ws: Path) -> None:
    """Codex 0.171.0 sends the subagent's `agent_id` on a PreToolUse inside it (captured from
    a real `spawn_agent` whose task applies a patch through the shell): the card the patch
    routes goes to the subagent's record. Recorded in the parent's, the parent's own prompt
    asking for it would get only `already loaded:` for a body it never saw."""
    captured = payload("codex", "PreToolUse.subagent-shell-patch.json", ws)
    session = captured["session_id"]
    call("codex", payload("codex", "SessionStart.json", ws, session_id=session))
    call("codex", payload("codex", "SubagentStart.json", ws, session_id=session,
                          agent_id=captured["agent_id"], turn_id=captured["turn_id"]))
    patch = captured["tool_input"]["command"].replace("ledger/entries.txt", "db/migrations/0002.sql")
    sub = context(call("codex", dict(captured, tool_input={"command": patch})))
    assert sent_ids(sub) == ["migrations"]
    parent = prompt("codex", ws, "how do I write a database migration?", session_id=session)
    assert sent_ids(parent) == ["migrations"]


def test_different_sessions_and_hosts_are_separate(ws: Path) -> None:
    prompt("claude", ws, "release checklist")
    other = prompt("claude", ws, "release checklist", session_id="another-session")
    assert sent_ids(other) == ["overview", "release"]
    codex = prompt("codex", ws, "release checklist", session_id="e49f4ed0-e9a1-4b75-a155-294ba4c0a054")
    assert sent_ids(codex) == ["overview", "release"]


def test_route_uses_payload_cwd_not_process_cwd(ws: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = make_workspace(tmp_path / "other", cards={})
    monkeypatch.chdir(elsewhere)
    assert sent_ids(prompt("claude", ws, "release checklist")) == ["overview", "release"]


def test_cache_never_holds_prompt_text_or_bodies(ws: Path, tmp_path: Path) -> None:
    secret_prompt = "release checklist with zebra-unicorn-4711"
    prompt("claude", ws, secret_prompt)
    prompt("claude", ws, "flamingo-prompt-text says hello there")
    for file in (tmp_path / "state").rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            assert b"zebra-unicorn-4711" not in data, file
            assert b"flamingo-prompt-text" not in data, file
            # Bodies live only in the card files and the compiled index.
            assert b"Releases are cut from main" not in data or file.parent.name == "index", file


def test_proof_line_and_modes(ws: Path) -> None:
    (ws / ".agents" / "engram.json").write_text(json.dumps({"proof": "compact"}))
    text = prompt("claude", ws, "release checklist")
    proof = text.splitlines()[-1]
    assert proof.startswith("Engram proof: routed 2, loaded 2, reused 0, skipped 0 (sig ")
    assert proof.endswith(")") and len(proof.split("sig ")[1].rstrip(")")) == 16
    again = prompt("claude", ws, "release checklist")
    assert again.splitlines() == ["already loaded: release",
                                  again.splitlines()[-1]]
    assert again.splitlines()[-1].split("sig ")[1] != proof.split("sig ")[1]  # routed keys differ
    nothing = prompt("claude", ws, "hello there")
    assert nothing.startswith("Engram proof: routed 0") and "###" not in nothing
    (ws / ".agents" / "engram.json").write_text(json.dumps({"proof": "compact", "read": "off"}))
    off = prompt("claude", ws, "api handlers")
    assert "read mode off" in off and "###" not in off


def test_read_modes(ws: Path) -> None:
    config = ws / ".agents" / "engram.json"
    config.write_text(json.dumps({"read": "always"}))
    prompt("claude", ws, "release checklist")
    assert sent_ids(prompt("claude", ws, "release checklist")) == ["release"]
    config.write_text(json.dumps({"read": "startup"}))
    assert call("claude", payload("claude", "UserPromptSubmit.json", ws, prompt="api handlers")).strip() == "{}"
    assert sent_ids(context(call("claude", payload("claude", "SessionStart.json", ws,
                                                   session_id="s-startup")))) == ["overview"]
    for mode in ("manual", "off"):
        config.write_text(json.dumps({"read": mode}))
        assert call("claude", payload("claude", "SessionStart.json", ws, session_id=f"s-{mode}")).strip() == "{}"


def test_same_routing_same_bytes(tmp_path: Path) -> None:
    outputs = []
    for name in ("a", "b"):
        ws = make_workspace(tmp_path / name)
        # Two sessions: one session reaching both workspaces has its cards from the first
        # (test_delivery_scope.py), which is not the same routing.
        outputs.append(prompt("claude", ws, "how should the API handlers format errors?",
                              session_id=f"session-{name}"))
    assert outputs[0] == outputs[1]


def test_unrelated_events_and_no_workspace_answer_empty(ws: Path, tmp_path: Path) -> None:
    assert call("claude", payload("claude", "Stop.json", ws)).strip() == "{}"
    assert call("claude", payload("claude", "PostToolUse.json", ws)).strip() == "{}"
    bare = tmp_path / "bare"
    bare.mkdir()
    assert call("claude", payload("claude", "UserPromptSubmit.json", bare, prompt="release")) == "{}"
    assert call("codex", payload("codex", "PreToolUse.json", ws)).strip() == "{}"  # Bash, not apply_patch


def _big_always_card(name: str, topic: str, priority: int) -> str:
    body = " ".join(f"{name} detail {i} about {topic}." for i in range(120))
    return (f"---\ntitle: {name.title()} guide\ntags: [{name}, {topic}]\nalways: true\n"
            f"priority: {priority}\n---\n{body}\n")


def test_an_always_card_folded_at_session_start_comes_whole_when_a_prompt_asks_for_it(
        tmp_path: Path) -> None:
    """Codex's 2,400-token budget holds two of these three always cards at session start; the
    third is folded to its one line and not recorded. A later prompt about it gets its body
    (once); an off-topic prompt still gets nothing, and the cards sent at start are neither
    sent again nor listed."""
    ws = make_workspace(tmp_path / "proj", {
        "deploy": _big_always_card("deploy", "shipping", 90),
        "styleguide": _big_always_card("styleguide", "formatting", 50),
        "oncall": _big_always_card("oncall", "paging", 40)})
    start = context(call("codex", payload("codex", "SessionStart.json", ws, source="startup")))
    assert sent_ids(start) == ["deploy", "styleguide"]
    assert "- oncall: " in start  # folded: the model has the one line, not the body
    assert prompt("codex", ws, "thanks, that helps") == ""
    asked = prompt("codex", ws, "who gets paged? show me the oncall guide")
    assert sent_ids(asked) == ["oncall"] and already(asked) == []
    again = prompt("codex", ws, "who gets paged? show me the oncall guide")
    assert sent_ids(again) == []
    assert sent_ids(prompt("codex", ws, "the deploy shipping guide again")) == []
