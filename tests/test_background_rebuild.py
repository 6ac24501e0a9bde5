"""A stored index built by another Python, or for other memory folders, is rebuilt whole. Past
FIRST_BUILD_MAX card files that rebuild runs in a detached child (the hook would outlast the
host's timeout otherwise), and the hook answers meanwhile from nothing rather than from an
index it cannot trust: no body, no record, no change to what a session has been sent or what
Claude's native rule folder holds. Once the child is done, every session gets what it would
have got, its always cards included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hookkit import CARDS, already, context, make_workspace, payload, sent_ids

from engram import delivery, hook, index, index_compile, paths
from engram import workspace as workspace_module

# What a card set with these globs looks like in the native rule folder.
SCOPED = ["api-style", "migrations"]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Detached builds asked for (the child is not started: the build is 'still running')."""
    started: list[str] = []

    def fork_recorded(path: str, *args: object) -> bool:
        started.append(path)
        return True

    monkeypatch.setattr(index, "_refresh_in_background", fork_recorded)
    return started


def hook_call(ws: Path, name: str, session: str, **changes: object) -> str:
    raw = json.dumps(payload("claude", name, ws, session_id=session, **changes)).encode()
    text = context(hook.handle("claude", raw, defer=True))
    index._deferred.clear()  # the after-answer check runs in the hook process only
    return text


def prompt(ws: Path, session: str, text: str = "release checklist") -> str:
    return hook_call(ws, "UserPromptSubmit.json", session, prompt=text)


def entry(ws: Path, session: str) -> dict:
    document = json.loads(Path(delivery.cache_path(paths.workspace_key(str(ws.resolve()))))
                          .read_text())
    (found,) = [e for e in document["entries"].values() if e["session"] == session]
    return found


def finish_build(ws: Path) -> None:
    """What the detached child does: build the index synchronously."""
    loaded = workspace_module.load(ws)
    assert loaded is not None
    index.load_or_build(loaded).db.close()
    index.close_connections()


def upgrade_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored index was built by the Python before this one."""
    for module in (index, index_compile):
        monkeypatch.setattr(module, "PY_TAG", "cpython-3.99")


def add_memory_folder(ws: Path) -> None:
    """The user adds a memory folder: the roots the stored index was built for change."""
    extra = ws / "docs" / "memory"
    extra.mkdir(parents=True)
    (extra / "style.md").write_text("---\nid: style\ntitle: Code style\n---\nUse black.\n")
    (ws / ".agents" / "engram.json").write_text(json.dumps(
        {"roots": ["docs/memory"], "hooks": {"path_rules": "native"}}))


CHANGES = {"python": lambda ws, mp: upgrade_python(mp),
           "memory folder": lambda ws, mp: add_memory_folder(ws)}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj", config={"hooks": {"path_rules": "native"}})


def linked(ws: Path) -> Path:
    """Claude linked in native mode: the rule folder exists and a session start fills it."""
    rules = ws / ".claude" / "rules" / "engram"
    rules.mkdir(parents=True)
    hook_call(ws, "SessionStart.json", "warm")
    assert sorted(p.stem for p in rules.glob("*.md")) == SCOPED
    return rules


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_large_store_is_rebuilt_in_the_background_and_the_hook_answers_from_nothing(
        ws: Path, change: str, builds: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    rules = linked(ws)
    assert "release" in sent_ids(prompt(ws, "warm"))
    CHANGES[change](ws, monkeypatch)
    monkeypatch.setattr(index, "FIRST_BUILD_MAX", len(CARDS) - 1)
    # Every card file counts as changed: the old index's stats say nothing for this build.
    start = hook_call(ws, "SessionStart.json", "s1")
    assert builds, "the rebuild ran inside the hook call"
    assert start == "" and prompt(ws, "s1") == "" and prompt(ws, "warm") == ""
    assert entry(ws, "s1")["delivered"] == []
    assert sorted(key.split("@")[0] for key in entry(ws, "warm")["delivered"]) == \
        ["overview", "release"]
    log = (paths.state_dir() / "logs" / "engram.log").read_text()
    assert "refreshing in the background" in log
    # Claude's native rule files are left as the last complete index wrote them, not emptied
    # because the placeholder index holds no card.
    assert sorted(p.stem for p in rules.glob("*.md")) == SCOPED

    finish_build(ws)
    builds.clear()
    text = prompt(ws, "s1")
    assert not builds
    # The session that started during the build still gets its always card, once.
    assert sent_ids(text) == ["overview", "release"]
    again = prompt(ws, "s1")
    assert sent_ids(again) == [] and already(again) == ["release"]
    # The session from before is not sent again what it already has.
    assert sent_ids(prompt(ws, "warm")) == [] and already(prompt(ws, "warm")) == ["release"]


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_up_to_first_build_max_the_rebuild_runs_inside_the_call(
        ws: Path, change: str, builds: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert "release" in sent_ids(prompt(ws, "warm"))
    CHANGES[change](ws, monkeypatch)
    monkeypatch.setattr(index, "FIRST_BUILD_MAX", len(CARDS) + 1)
    assert sent_ids(prompt(ws, "s1")) == ["overview", "release"] and not builds


def test_a_gemini_session_start_during_the_build_is_delivered_by_the_first_prompt_after(
        ws: Path, builds: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini's session start hands its share to the next prompt (start_pending): a prompt
    answered during the build must not use that share up."""
    def gemini(name: str, **changes: object) -> str:
        raw = json.dumps(payload("gemini", name, ws, session_id="g1", **changes)).encode()
        return context(hook.handle("gemini", raw, defer=True))

    assert "release" in sent_ids(prompt(ws, "warm"))
    upgrade_python(monkeypatch)
    monkeypatch.setattr(index, "FIRST_BUILD_MAX", 1)
    gemini("SessionStart.json")
    gemini("BeforeAgent.json", prompt="release checklist")
    assert builds
    finish_build(ws)
    assert sent_ids(gemini("BeforeAgent.json", prompt="release checklist")) == \
        ["overview", "release"]


def test_opencode_keeps_its_slot_during_the_build(ws: Path, builds: list[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenCode's plugin holds one system-prompt slot: during the build it keeps it (an empty
    index would clear it, and the first call after the build would send it all again)."""
    def ask(slot: str) -> dict:
        return json.loads(hook.handle("opencode", json.dumps(
            {"event": "chat.message", "sessionID": "oc-1", "cwd": str(ws),
             "prompt": "release checklist", "slot": slot}).encode(), defer=True))

    first = ask("")
    assert first["action"] == "replace" and first["slot"]
    upgrade_python(monkeypatch)
    monkeypatch.setattr(index, "FIRST_BUILD_MAX", 1)
    assert ask(first["slot"]) == {"action": "retain", "text": ""} and builds
    finish_build(ws)
    assert ask(first["slot"]) == {"action": "retain", "text": ""}
    assert ask("")["text"] == first["text"]  # a process holding nothing gets it all again
