"""Which context a delivery record stands for: one host session (or one subagent of it),
whatever folder the host reports as its cwd. A host's cwd follows the agent around (Claude
Code's payload cwd follows a `cd` in its Bash tool; Codex may start in a sub-folder), so the
same session reaches the hook from many spellings of many folders, while the model's context
stays one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hookkit import already, call, context, make_workspace, payload, sent_ids


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "proj")
    (root / "src" / "api").mkdir(parents=True)
    return root


def prompt(client: str, cwd: Path | str, text: str, session: str = "S") -> str:
    name = "BeforeAgent.json" if client == "gemini" else "UserPromptSubmit.json"
    return context(call(client, payload(client, name, Path(cwd), prompt=text,
                                        session_id=session)))


def start(client: str, cwd: Path | str, source: str, session: str = "S") -> str:
    return context(call(client, payload(client, "SessionStart.json", Path(cwd), source=source,
                                        session_id=session)))


def compact(client: str, cwd: Path | str, session: str = "S") -> str:
    """A completed compaction, as the host reports it: Claude Code and Codex announce it
    (PreCompact) and then start the session again with source "compact"; Gemini CLI
    announces a manual /compress only."""
    name = "PreCompress.json" if client == "gemini" else "PreCompact.json"
    answer = context(call(client, payload(client, name, Path(cwd), trigger="manual",
                                          session_id=session)))
    if client != "gemini":
        answer += context(call(client, payload(client, "SessionStart.json", Path(cwd),
                                               source="compact", session_id=session)))
    return answer


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_a_sub_folder_of_the_workspace_is_the_same_session(ws: Path, client: str,
                                                          tmp_path: Path) -> None:
    """The agent moved into src/api (or the host spelled the folder another way): what the
    session was sent is not sent again, and is listed as loaded."""
    link = tmp_path / "link-to-proj"
    os.symlink(ws, link)
    first = prompt(client, ws, "what is the release checklist?")
    assert sent_ids(first) == ["overview", "release"]
    for cwd in (ws / "src" / "api", f"{ws}/src/", f"{ws}/src/api/../..", link / "src"):
        again = prompt(client, cwd, "what is the release checklist?")
        assert sent_ids(again) == [], f"sent again from {cwd}"
        assert already(again) == ["release"]


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_a_compaction_reported_from_a_sub_folder_resets_the_session(ws: Path,
                                                                    client: str) -> None:
    """The compaction arrives with the cwd the agent last moved to: the session's memory
    comes back at the next prompt, wherever that prompt comes from."""
    start(client, ws, "startup")
    prompt(client, ws, "what is the release checklist?")
    compacted = compact(client, ws / "src" / "api")  # Claude, Codex: a `compact` start
    after = prompt(client, ws, "what is the release checklist?")
    assert sent_ids(compacted) + sent_ids(after) == ["overview", "release"]


def test_a_sub_folder_entry_point_keeps_subagents_apart(ws: Path) -> None:
    """A subagent started from a sub-folder gets the session's context from the parent's
    record, and the parent's own record is untouched."""
    prompt("claude", ws, "what is the release checklist?")
    sub = context(call("claude", payload("claude", "SubagentStart.json", ws / "src",
                                         session_id="S", agent_id="a1")))
    assert sent_ids(sub) == ["overview", "release"]
    assert sent_ids(prompt("claude", ws / "src", "what is the release checklist?")) == []


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
@pytest.mark.parametrize("where", ["nested workspace", "no workspace", "bare nested repo"])
def test_a_reset_reported_from_another_workspace_resets_the_session_everywhere(
        ws: Path, tmp_path: Path, client: str, where: str) -> None:
    """The agent went into a nested repository (a submodule, a vendored checkout, with or
    without memory of its own) or out of any workspace, and the session was compacted or
    cleared there: back in the workspace, its memory comes back."""
    if where == "no workspace":
        cwd = tmp_path / "elsewhere"
        cwd.mkdir()
    elif where == "bare nested repo":  # a workspace with no memory: nothing routes there
        cwd = ws / "vendor" / "lib"
        (cwd / ".git").mkdir(parents=True)
    else:
        cards = {"inner": "---\ntitle: Inner notes\ntags: [inner]\n---\nInner rule.\n"}
        cwd = make_workspace(ws / "vendor" / "lib", cards)
    start(client, ws, "startup")
    prompt(client, ws, "what is the release checklist?")
    compact(client, cwd)
    after = prompt(client, ws, "what is the release checklist?")
    assert sent_ids(after) == ["overview", "release"], f"after a compaction in the {where}"
    prompt(client, ws, "what is the release checklist?")
    start(client, cwd, "clear")
    after = prompt(client, ws, "what is the release checklist?")
    assert sent_ids(after) == ["overview", "release"], f"after /clear in the {where}"


def test_a_reset_elsewhere_does_not_touch_other_sessions_or_hosts(ws: Path,
                                                                  tmp_path: Path) -> None:
    inner = make_workspace(ws / "vendor" / "lib", {})
    prompt("claude", ws, "what is the release checklist?", session="A")
    prompt("claude", ws, "what is the release checklist?", session="B")
    prompt("codex", ws, "what is the release checklist?", session="A")
    compact("claude", inner, session="A")
    assert sent_ids(prompt("claude", ws, "what is the release checklist?", session="B")) == []
    assert sent_ids(prompt("codex", ws, "what is the release checklist?", session="A")) == []
    assert sent_ids(prompt("claude", ws, "what is the release checklist?",
                           session="A")) == ["overview", "release"]


def test_a_body_sent_again_after_a_reset_is_kept_on_resume(ws: Path) -> None:
    """Claude's legacy PreToolUse trigger: what it sent is forgotten at the next session start
    (a resumed history drops it). After a compaction the same card came back through a
    prompt, whose context a resume keeps: the resume must not forget that one."""
    target = str(ws / "db" / "migrations" / "001.sql")
    touched = context(call("claude", payload("claude", "PreToolUse.json", ws, session_id="S",
                                             tool_name="Read",
                                             tool_input={"file_path": target})))
    assert sent_ids(touched) == ["migrations"]
    compact("claude", ws)
    assert "migrations" in sent_ids(prompt("claude", ws, "how do I write database migrations?"))
    start("claude", ws, "resume")
    again = prompt("claude", ws, "how do I write database migrations?")
    assert sent_ids(again) == [] and already(again) == ["migrations"]


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
def test_a_card_the_session_has_from_another_workspace_is_not_sent_again(
        ws: Path, tmp_path: Path, client: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's global memory reaches every workspace: the agent went into a nested
    repository, and the cards it already has (the same id and content) are not sent again
    there, nor, back in the workspace, what it was sent in the nested one."""
    global_dir = tmp_path / "global"
    global_dir.mkdir()
    (global_dir / "house-style.md").write_text(
        "---\ntitle: House style\ntags: [style]\nalways: true\n---\nTabs, never spaces.\n")
    (global_dir / "reviews.md").write_text(
        "---\ntitle: Code reviews\ntags: [reviews]\n---\nTwo approvals before merging.\n")
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(global_dir))
    inner = make_workspace(ws / "vendor" / "lib", {})
    start(client, ws, "startup")
    assert "reviews" in sent_ids(prompt(client, ws, "how do code reviews work?"))
    there = prompt(client, inner, "how do code reviews work?")
    assert sent_ids(there) == [] and already(there) == ["reviews"]
    assert "house-style" not in sent_ids(start(client, inner, "resume"))
    assert sent_ids(prompt(client, inner, "release checklist and style")) == []
    # a compaction anywhere brings everything back, in either workspace
    compacted = compact(client, inner)  # Claude, Codex: a `compact` start
    assert sent_ids(compacted) + sent_ids(prompt(client, inner, "how do code reviews work?")) \
        == ["house-style", "reviews"]
    back = prompt(client, ws, "how do code reviews work?")
    assert "reviews" not in sent_ids(back) and already(back) == ["reviews"]


def test_an_oversized_or_odd_list_of_workspaces_is_left_alone(ws: Path, tmp_path: Path) -> None:
    """The session's list of workspaces past its bound (or a folder in its place) is neither
    read nor grown: each workspace delivers on its own, as it did before the list existed."""
    from engram import delivery

    listing = Path(delivery._session_file("claude", "S"))
    listing.parent.mkdir(parents=True)
    listing.write_bytes(b"x" * (delivery.MAX_SESSION_BYTES + 1))
    assert sent_ids(prompt("claude", ws, "what is the release checklist?")) == [
        "overview", "release"]
    assert sent_ids(prompt("claude", ws / "src", "what is the release checklist?")) == []
    assert listing.stat().st_size == delivery.MAX_SESSION_BYTES + 1
    listing.unlink()
    listing.mkdir()
    assert already(prompt("claude", ws, "what is the release checklist?")) == ["release"]


def test_what_a_resume_drops_elsewhere_is_not_counted_delivered(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude's legacy PreToolUse trigger sent a global card in the workspace; the session
    was then resumed from a nested repository. A resumed history drops what PreToolUse added,
    so the card is sent again there rather than counted as delivered from the first."""
    global_dir = tmp_path / "global"
    global_dir.mkdir()
    (global_dir / "sql-style.md").write_text(
        "---\ntitle: SQL style\ntags: [sql]\napplies_to: [\"queries/**\"]\n---\nUpper-case keywords.\n")
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(global_dir))
    inner = make_workspace(ws / "vendor" / "lib", {})
    touched = context(call("claude", payload(
        "claude", "PreToolUse.json", ws, session_id="S", tool_name="Read",
        tool_input={"file_path": str(ws / "queries" / "report.sql")})))
    assert sent_ids(touched) == ["sql-style"]
    start("claude", inner, "resume")
    assert sent_ids(prompt("claude", inner, "what is our sql style?")) == ["sql-style"]
