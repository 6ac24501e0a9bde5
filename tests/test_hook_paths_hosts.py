"""Path triggers (Claude PostToolUse/InstructionsLoaded, Codex apply_patch, Gemini AfterTool)
and the runtime of Gemini, Cursor, Windsurf and OpenCode, from real payloads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hookkit import already, call, context, make_workspace, payload, sent_ids

PATH_CARDS = {
    f"area{i}": f"---\nid: area{i}\ntitle: Area {i} rules\napplies_to: [\"src/area{i}/**\"]\n"
                f"priority: {90 - i}\n---\nRules for area {i}.\n" for i in range(5)
}
PATH_CARDS["migrations"] = ("---\nid: migrations\ntitle: Migrations\ntags: [migrations]\n"
                            "applies_to: [\"db/migrations/**\"]\n---\nReversible migrations only.\n")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "proj", cards=PATH_CARDS)
    return root


def hook_mode(ws: Path) -> None:
    (ws / ".agents" / "engram.json").write_text(json.dumps({"hooks": {"path_rules": "hook"}}))


def native_mode(ws: Path) -> None:
    (ws / ".agents" / "engram.json").write_text(json.dumps({"hooks": {"path_rules": "native"}}))


def claude_post(ws: Path, path: str, tool: str = "Read", **changes: object) -> dict:
    return payload("claude", "PostToolUse.json", ws, tool_name=tool,
                   tool_input={"file_path": path}, tool_response={"type": "text"}, **changes)


def test_claude_posttooluse_is_the_default_path_trigger(ws: Path) -> None:
    """No setting: hook mode, PostToolUse (its context survives a resume on every Claude
    version; PreToolUse's is dropped by 2.1.197)."""
    first = json.loads(call("claude", claude_post(ws, str(ws / "db/migrations/001.sql"))))
    assert first["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert sent_ids(first["hookSpecificOutput"]["additionalContext"]) == ["migrations"]
    for tool in ("Edit", "Write", "MultiEdit"):
        assert call("claude", claude_post(ws, str(ws / "db/migrations/002.sql"), tool)).strip() == "{}"
    assert sent_ids(context(call("claude", claude_post(ws, str(ws / "src/area1/a.py"), "Write")))) \
        == ["area1"]
    assert call("claude", payload("claude", "PostToolUse.json", ws)).strip() == "{}"  # Bash
    text = context(call("claude", payload("claude", "UserPromptSubmit.json", ws,
                                          prompt="write the migrations")))
    assert already(text) == ["migrations"] and sent_ids(text) == []


def test_a_legacy_pretooluse_delivery_is_sent_again_after_a_resume(ws: Path) -> None:
    """A link from an earlier release still runs PreToolUse, whose context Claude Code 2.1.197
    drops from a resumed history: after a resume the card is sent again, not lost.
    PostToolUse's context is kept, so its deliveries stay delivered."""
    path = str(ws / "db/migrations/001.sql")
    assert sent_ids(context(call("claude", claude_read(ws, path)))) == ["migrations"]
    assert sent_ids(context(call("claude", claude_post(ws, str(ws / "src/area1/a.py"))))) == ["area1"]
    call("claude", payload("claude", "SessionStart.json", ws, source="resume"))
    assert call("claude", claude_post(ws, str(ws / "src/area1/b.py"))).strip() == "{}"
    text = context(call("claude", payload("claude", "UserPromptSubmit.json", ws,
                                          prompt="migrations please")))
    assert sent_ids(text) == ["migrations"]
    assert call("claude", claude_read(ws, path)).strip() == "{}"  # and once again only


def test_claude_posttooluse_native_mode_injects_nothing(ws: Path) -> None:
    native_mode(ws)
    assert call("claude", claude_post(ws, str(ws / "db/migrations/001.sql"))).strip() == "{}"


def claude_read(ws: Path, path: str, tool: str = "Read") -> dict:
    return payload("claude", "PreToolUse.json", ws, tool_name=tool,
                   tool_input={"file_path": path})


def test_claude_pretooluse_hook_mode_injects_matching_card_once(ws: Path) -> None:
    hook_mode(ws)
    first = context(call("claude", claude_read(ws, str(ws / "db/migrations/001.sql"))))
    assert sent_ids(first) == ["migrations"]
    answer = json.loads(call("claude", claude_read(ws, str(ws / "db/migrations/001.sql"))))
    assert answer == {}
    assert "permissionDecision" not in json.dumps(answer)
    # ... and the next prompt does not send it again: the delivered set is shared.
    text = context(call("claude", payload("claude", "UserPromptSubmit.json", ws,
                                          prompt="write the migrations")))
    assert already(text) == ["migrations"] and sent_ids(text) == []


def test_prompt_delivery_is_not_repeated_by_path_trigger(ws: Path) -> None:
    hook_mode(ws)
    call("claude", payload("claude", "UserPromptSubmit.json", ws, prompt="migrations please"))
    assert call("claude", claude_read(ws, str(ws / "db/migrations/002.sql"), "Edit")).strip() == "{}"


def test_path_trigger_caps_three_bodies_per_event_by_priority(ws: Path) -> None:
    patch = "*** Begin Patch\n" + "".join(
        f"*** Add File: src/area{i}/x.py\n+print({i})\n" for i in range(5)) + "*** End Patch\n"
    document = payload("codex", "PreToolUse.json", ws, tool_name="apply_patch",
                       tool_input={"command": patch})
    first = sent_ids(context(call("codex", document)))
    assert len(first) == 3
    second = sent_ids(context(call("codex", document)))
    assert len(second) == 2 and not set(first) & set(second)
    assert call("codex", document).strip() == "{}"


def test_a_path_card_arrives_after_the_cards_it_depends_on(tmp_path: Path) -> None:
    """`depends_on` holds on a path trigger as on a prompt: the prerequisite comes first, and
    a card the prompt then routes is not sent again."""
    cards = {"api-tests": "---\nid: api-tests\ntitle: API tests\napplies_to: [\"api/test/**\"]\n"
                          "depends_on: [factories]\n---\nUse app.inject.\n",
             "factories": "---\nid: factories\ntitle: Seed data builders\n---\nPrefer "
                          "builders over fixtures.\n"}
    ws = make_workspace(tmp_path / "proj", cards=cards)
    hook_mode(ws)
    text = context(call("claude", claude_read(ws, str(ws / "api/test/orders.test.ts"), "Edit")))
    assert sent_ids(text) == ["factories", "api-tests"]
    text = context(call("claude", payload("claude", "UserPromptSubmit.json", ws,
                                          prompt="which seed data builders do we have?")))
    assert sent_ids(text) == [] and already(text) == ["factories"]


def test_codex_apply_patch_update_delete_move_targets(ws: Path) -> None:
    patch = ("*** Begin Patch\n*** Update File: README.md\n@@\n-a\n+b\n"
             "*** Delete File: src/area1/old.py\n"
             "*** Update File: lib/x.py\n*** Move to: db/migrations/003.sql\n@@\n-x\n+y\n"
             "*** End Patch\n")
    document = payload("codex", "PreToolUse.json", ws, tool_name="apply_patch",
                       tool_input={"command": patch})
    assert sorted(sent_ids(context(call("codex", document)))) == ["area1", "migrations"]


def test_paths_outside_the_workspace_never_match(ws: Path, tmp_path: Path) -> None:
    hook_mode(ws)
    outside = tmp_path / "elsewhere" / "db" / "migrations" / "001.sql"
    assert call("claude", claude_read(ws, str(outside))).strip() == "{}"
    assert call("claude", claude_read(ws, "../elsewhere/db/migrations/001.sql")).strip() == "{}"


def test_relative_path_resolves_against_payload_cwd(ws: Path) -> None:
    hook_mode(ws)
    sub = ws / "db"
    sub.mkdir()
    document = claude_read(ws, "migrations/001.sql")
    document["cwd"] = str(sub)
    assert sent_ids(context(call("claude", document))) == ["migrations"]


def test_claude_native_mode_pretooluse_injects_nothing(ws: Path) -> None:
    native_mode(ws)
    assert call("claude", claude_read(ws, str(ws / "db/migrations/001.sql"))).strip() == "{}"


def test_claude_other_tools_answer_empty(ws: Path) -> None:
    hook_mode(ws)
    document = payload("claude", "PreToolUse.json", ws)  # the real Bash call
    assert call("claude", document).strip() == "{}"


def test_instructions_loaded_records_native_rule(ws: Path) -> None:
    rule = ws / ".claude" / "rules" / "engram" / "migrations.md"
    document = payload("claude", "InstructionsLoaded.json", ws, file_path=str(rule),
                       load_reason="path_glob_match")
    assert call("claude", document) == ""  # its output is ignored by Claude: print nothing
    text = context(call("claude", payload("claude", "UserPromptSubmit.json", ws,
                                          prompt="migrations please")))
    assert sent_ids(text) == [] and already(text) == ["migrations"]


@pytest.mark.parametrize("relative, card", [
    (".claude/rules/engram/migrations.md", "migrations"),
    (".claude/rules/engram/sub/migrations.md", ""),  # engram writes no sub-folders
    (".claude/rules/engram/.gitignore", ""),
    (".claude/rules/migrations.md", ""),  # the user's own rule
    ("vendor/.claude/rules/engram/migrations.md", ""),  # another project's copy
    ("migrations.md", ""),  # the name alone: a file outside the workspace
    ("?", ""),
])
def test_which_loaded_file_is_an_engram_rule(relative: str, card: str) -> None:
    from engram import hook

    assert hook.generated_rule_id(".claude/rules/engram", relative) == card
    assert hook.generated_rule_id("", relative) == ""


def _observed(ws: Path) -> list[dict]:
    from engram import firing_log

    return [json.loads(line) for line in Path(firing_log.observed_log_path()).read_text().splitlines()
            if "rule" in json.loads(line)]


def test_a_rule_load_is_engrams_by_one_test_for_delivery_and_doctor(ws: Path, tmp_path: Path) -> None:
    """The delivery record and the firing log (doctor's `rules`) agree on which loaded file
    is engram's: a copy in another project is neither; the workspace named through a symlink
    of its folder is both."""
    other = tmp_path / "other" / ".claude" / "rules" / "engram" / "migrations.md"
    document = payload("claude", "InstructionsLoaded.json", ws, file_path=str(other))
    assert call("claude", document) == ""
    text = context(call("claude", payload("claude", "UserPromptSubmit.json", ws,
                                          prompt="migrations please")))
    assert sent_ids(text) == ["migrations"]  # another project's copy delivered nothing here
    assert _observed(ws)[-1]["engram_rule"] is False
    alias = tmp_path / "alias"
    alias.symlink_to(ws)
    rule = alias / ".claude" / "rules" / "engram" / "migrations.md"
    document = payload("claude", "InstructionsLoaded.json", ws, file_path=str(rule), session_id="s2")
    assert call("claude", document) == ""
    text = context(call("claude", payload("claude", "UserPromptSubmit.json", ws,
                                          prompt="migrations please", session_id="s2")))
    assert sent_ids(text) == [] and already(text) == ["migrations"]
    last = _observed(ws)[-1]
    assert last["engram_rule"] is True and last["rule"] == ".claude/rules/engram/migrations.md"


def test_gemini_start_before_agent_strips_hook_context(ws: Path) -> None:
    start = json.loads(call("gemini", payload("gemini", "SessionStart.json", ws)))
    assert start == {}  # no always cards here
    document = payload("gemini", "BeforeAgent.json", ws,
                       prompt="<hook_context>### engram memory: migrations — Migrations\n"
                              "Reversible migrations only.</hook_context>\n\nhello there")
    assert call("gemini", document).strip() == "{}"  # routes on the user's words only
    document["prompt"] = "<hook_context>x</hook_context>\n\nplan the migrations"
    answer = json.loads(call("gemini", document))
    assert answer["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert sent_ids(answer["hookSpecificOutput"]["additionalContext"]) == ["migrations"]


def test_gemini_after_tool_matches_file_tools_only(ws: Path) -> None:
    for tool, field in (("read_file", "file_path"), ("write_file", "file_path"),
                        ("replace", "file_path"), ("read_file", "absolute_path")):
        document = payload("gemini", "AfterTool.json", ws, tool_name=tool,
                           tool_input={field: str(ws / f"src/area0/{tool}.py")},
                           session_id=f"g-{tool}-{field}")
        assert sent_ids(context(call("gemini", document))) == ["area0"], tool
    near_miss = payload("gemini", "AfterTool.json", ws, tool_name="search_replace_all",
                        tool_input={"file_path": str(ws / "src/area0/a.py")})
    assert call("gemini", near_miss).strip() == "{}"
    assert call("gemini", payload("gemini", "AfterTool.json", ws)).strip() == "{}"  # shell


def test_gemini_precompress_auto_never_resets(ws: Path) -> None:
    before = payload("gemini", "BeforeAgent.json", ws, prompt="plan the migrations")
    assert sent_ids(context(call("gemini", before))) == ["migrations"]
    assert call("gemini", payload("gemini", "PreCompress.json", ws)) == ""
    assert already(context(call("gemini", before))) == ["migrations"]
    call("gemini", payload("gemini", "PreCompress.json", ws, trigger="manual"))
    assert sent_ids(context(call("gemini", before))) == ["migrations"]


CURSOR_START = {"hook_event_name": "sessionStart", "session_id": "c-1", "conversation_id": "c-1",
                "generation_id": "g", "is_background_agent": False, "composer_mode": "agent",
                "cursor_version": "1.7.0"}


def test_cursor_session_start_golden(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj")  # the default cards: one always card
    document = {**CURSOR_START, "workspace_roots": [str(ws)]}
    answer = json.loads(call("cursor", document))
    assert answer == {"additional_context": "### engram memory: overview — Project overview\n"
                                            "This repository is the payments service. "
                                            "It is written in Python 3.12."}
    # A sessionStart is a fresh context for that session: the start set comes again, same bytes.
    assert json.loads(call("cursor", document)) == answer


def test_windsurf_never_pretends_delivery(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj", config={"proof": "compact"})
    document = {"agent_action_name": "pre_user_prompt", "trajectory_id": "t-1",
                "execution_id": "e-1", "timestamp": "2026-11-30T10:00:00Z",
                "tool_info": {"user_prompt": "release checklist", "cwd": str(ws)}}
    first = call("windsurf", document)
    assert first.startswith("Engram proof: routed 2, loaded 0, reused 0, skipped 0; no channel "
                            "to the model on this host: nothing delivered (sig ")
    assert call("windsurf", document) == first  # nothing was marked delivered
    (ws / ".agents" / "engram.json").write_text("{}")
    assert call("windsurf", document) == ""



def test_windsurf_documented_prompt_payload_is_seen_from_the_hooks_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windsurf's pre_user_prompt carries no cwd (only tool_info.user_prompt); it runs the
    command in its working_directory, the workspace root by default. Without that folder the
    hook did nothing at all: no proof, and doctor said "never observed" after every prompt."""
    from engram import firing_log

    ws = make_workspace(tmp_path / "proj", config={"proof": "compact"})
    document = {"agent_action_name": "pre_user_prompt", "trajectory_id": "t-2",
                "execution_id": "e-1", "timestamp": "2026-11-30T10:00:00Z",
                "tool_info": {"user_prompt": "release checklist"}}
    monkeypatch.chdir(ws)
    assert call("windsurf", document).startswith("Engram proof: routed 2, loaded 0")
    assert firing_log.read().get("windsurf", {}).get("pre_user_prompt", {}).get("count") == 1
    monkeypatch.chdir(tmp_path)  # not a workspace: nothing to say
    assert call("windsurf", document) == ""

def opencode(ws: Path, event: str, prompt: str = "", session: str = "oc-1") -> dict:
    return json.loads(call("opencode", {"event": event, "sessionID": session, "cwd": str(ws),
                                        "prompt": prompt}))


def test_opencode_slot_replace_retain_clear(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj")
    start = opencode(ws, "session.created")
    assert start["action"] == "replace" and sent_ids(start["text"]) == ["overview"]
    assert opencode(ws, "chat.message", "hello there") == {"action": "retain", "text": ""}
    routed = opencode(ws, "chat.message", "release checklist")
    assert routed["action"] == "replace" and sent_ids(routed["text"]) == ["overview", "release"]
    assert opencode(ws, "chat.message", "release checklist") == {"action": "retain", "text": ""}
    assert opencode(ws, "chat.message", "thanks!") == {"action": "retain", "text": ""}
    again = opencode(ws, "session.compacted")
    assert again["action"] == "replace" and sent_ids(again["text"]) == ["overview", "release"]
    (ws / ".agents" / "engram.json").write_text(json.dumps({"read": "off"}))
    assert opencode(ws, "chat.message", "release checklist") == {"action": "clear", "text": ""}
    assert opencode(ws, "chat.message", "release checklist") == {"action": "retain", "text": ""}


def test_foreign_dialects_in_claude_settings_are_not_filed_as_claude(ws: Path) -> None:
    copilot = {"sessionId": "cp-1", "hookEventName": "UserPromptSubmit", "cwd": str(ws),
               "prompt": "plan the migrations", "timestamp": 1764496800000}
    assert call("claude", copilot).strip() == "{}"
    vscode_snake = {"session_id": "vs-1", "hook_event_name": "UserPromptSubmit", "cwd": str(ws),
                    "prompt": "plan the migrations", "timestamp": "2026-11-30T10:00:00Z"}
    assert call("claude", vscode_snake).strip() == "{}"
    mine = payload("claude", "UserPromptSubmit.json", ws, prompt="plan the migrations")
    assert sent_ids(context(call("claude", mine))) == ["migrations"]  # Claude's own session is fresh


def test_session_start_keeps_native_rules_in_step(ws: Path) -> None:
    from engram.cli import run

    native_mode(ws)
    assert run(["link", "claude", "--cwd", str(ws)]) == 0
    rules = ws / ".claude" / "rules" / "engram"
    assert (rules / "migrations.md").exists() and (rules / "area0.md").exists()
    (ws / ".agents" / ".engram" / "area0.md").unlink()
    card = ws / ".agents" / ".engram" / "migrations.md"
    card.write_text(card.read_text().replace("Reversible migrations only.", "Squash before merge."))
    call("claude", payload("claude", "SessionStart.json", ws))
    assert not (rules / "area0.md").exists()  # no stale rule survives a session start
    assert "Squash before merge." in (rules / "migrations.md").read_text()
