"""Gemini CLI: SessionStart prints nothing and the next BeforeAgent delivers what it would
have. Headless Gemini CLI 0.61.0 puts SessionStart's context in front of the user's prompt
and, on `--resume`, drops every saved user turn that starts with injected context (prompt and
memory both); BeforeAgent's context survives (tests/e2e/test_e2e_gemini.py shows both)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hookkit import already, call, context, make_workspace, payload, sent_ids

CARDS = {
    "overview": "---\nid: overview\ntitle: Orientation\nalways: true\npriority: 90\n---\n"
                "The orchard service keeps its data under ledger/.\n",
    "alpha": "---\nid: alpha\ntitle: Zebrafish handling\ntags: [zebrafish]\n---\n"
             "Zebrafish records are validated twice.\n",
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj", cards=CARDS)


def start(ws: Path, source: str = "startup") -> str:
    return call("gemini", payload("gemini", "SessionStart.json", ws, source=source))


def prompt(ws: Path, text: str) -> str:
    return context(call("gemini", payload("gemini", "BeforeAgent.json", ws, prompt=text)))


def test_session_start_prints_nothing_and_first_prompt_carries_the_always_card(ws: Path) -> None:
    assert json.loads(start(ws)) == {}
    first = prompt(ws, "hello there")
    assert sent_ids(first) == ["overview"] and already(first) == []
    second = prompt(ws, "tell me about zebrafish")
    assert sent_ids(second) == ["alpha"] and already(second) == []  # overview not resent


def test_resume_sends_only_an_edited_always_card_and_lists_nothing_twice(ws: Path) -> None:
    start(ws)
    prompt(ws, "tell me about zebrafish")
    card = ws / ".agents" / ".engram" / "overview.md"
    card.write_text(card.read_text().replace("ledger/", "vault/"))
    assert json.loads(start(ws, "resume")) == {}
    text = prompt(ws, "zebrafish again")
    assert sent_ids(text) == ["overview"] and "vault/" in text
    assert already(text) == ["alpha"]  # the always card is session context, never listed
    assert prompt(ws, "zebrafish once more").count("vault/") == 0


def test_resume_with_nothing_changed_sends_nothing_new(ws: Path) -> None:
    start(ws)
    prompt(ws, "hello")
    start(ws, "resume")
    text = prompt(ws, "zebrafish")
    assert sent_ids(text) == ["alpha"]


def test_clear_resets_and_the_next_prompt_sends_the_always_card_again(ws: Path) -> None:
    start(ws)
    prompt(ws, "tell me about zebrafish")
    start(ws, "clear")
    assert sorted(sent_ids(prompt(ws, "zebrafish"))) == ["alpha", "overview"]


def test_proof_mode_proves_on_the_prompt_not_at_start(ws: Path) -> None:
    (ws / ".agents" / "engram.json").write_text(json.dumps({"proof": "compact"}))
    assert json.loads(start(ws)) == {}
    assert json.loads(start(ws, "resume")) == {}
    text = prompt(ws, "hello")
    assert "Engram proof:" in text and sent_ids(text) == ["overview"]


def test_startup_read_mode_delivers_the_always_card_on_the_first_prompt_only(ws: Path) -> None:
    (ws / ".agents" / "engram.json").write_text(json.dumps({"read": "startup"}))
    assert json.loads(start(ws)) == {}
    assert sent_ids(prompt(ws, "tell me about zebrafish")) == ["overview"]
    assert call("gemini", payload("gemini", "BeforeAgent.json", ws, prompt="zebrafish")).strip() == "{}"


@pytest.mark.parametrize("mode", ["startup", "auto", "always", "manual", "off"])
@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compress"])
def test_session_start_prints_nothing_in_any_mode(ws: Path, mode: str, source: str) -> None:
    """Whatever the read mode, proof on, new or resumed: a resumed Gemini session would drop
    the user turn SessionStart's text lands in."""
    (ws / ".agents" / "engram.json").write_text(json.dumps({"read": mode, "proof": "compact"}))
    start(ws)
    prompt(ws, "tell me about zebrafish")
    card = ws / ".agents" / ".engram" / "overview.md"
    card.write_text(card.read_text().replace("ledger/", "vault/"))
    assert json.loads(start(ws, source)) == {}
