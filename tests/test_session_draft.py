"""save-session drafts say what the user said: the user's own instructions and corrections,
not the first request and the last answer; a line holding a secret is left out and noted; an
existing card on the same subject is named so the reviewer can merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_card

from engram import promote, session_draft
from engram.cli import run

SESSION = [
    ("user", "Set up the project so I can run the tests"),
    ("assistant", "I ran `npm ci` to install dependencies, then `npm test`."),
    ("user", "No, we always use pnpm, never npm. Use pnpm install --frozen-lockfile."),
    ("assistant", "Understood, switching to pnpm."),
    ("user", "Remember that the test database runs on port 5433."),
    ("user", "Don't commit the .env file. The staging token is ghp_aB3dE6gH9jK2mN5pQ8rS1tV4wX7yZ0cF3hJ6"
             " and you must not use it in tests."),
    ("user", "What does the flaky test do?"),
    ("assistant", "All done: dependencies install with npm ci and the tests pass."),
]


def claude_transcript(path: Path) -> Path:
    lines = []
    for number, (role, text) in enumerate(SESSION):
        content = text if role == "user" else [{"type": "text", "text": text}]
        lines.append(json.dumps({"type": role, "sessionId": "5e551011", "cwd": "/home/dev/proj",
                                 "uuid": f"u{number}", "timestamp": f"2026-11-30T09:0{number}:00Z",
                                 "message": {"role": role, "content": content}}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_instructions_are_found_in_the_users_words() -> None:
    said, left_out = session_draft.instructions(
        ["Set up the project", "No, we always use pnpm, never npm.",
         "What does the flaky test do?", "remember: the API key is [REDACTED:api-key] in vault",
         "Please don't touch the migrations folder."])
    assert said == ["We always use pnpm, never npm.", "Don't touch the migrations folder."]
    assert left_out == 1


def test_a_session_without_instructions_drafts_nothing() -> None:
    assert session_draft.draft(["Add a login page", "thanks!"]) is None


def test_observe_drafts_the_correction_not_the_answer_and_names_related_cards(
        workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_card(workspace / ".agents" / ".engram", "package-manager.md",
               "---\ntitle: Package manager\ntags: [pnpm]\n---\nWe use pnpm workspaces.\n")
    source = claude_transcript(tmp_path / "session.jsonl")
    assert run(["observe", "--file", str(source), "--cwd", str(workspace)]) == 0
    capsys.readouterr()
    (inbox,) = (workspace / ".agents" / ".engram" / "inbox").glob("*.md")
    text = inbox.read_text(encoding="utf-8")
    wrapper = promote.read_wrapper(text)
    (candidate,) = wrapper.candidates
    assert candidate.title == "We always use pnpm, never npm"
    assert "- We always use pnpm, never npm.\n" in candidate.body
    assert "- The test database runs on port 5433.\n" in candidate.body
    assert "npm ci" not in candidate.body and "REDACTED" not in candidate.body
    assert "pnpm" in candidate.tags
    assert "Left out 1 instruction line(s) holding a redacted secret" in text
    assert "An existing card covers the same subject: `package-manager`" in text
    assert promote.problems(candidate) == []

    code = run(["save-session", "--file", str(inbox), "--yes", "--cwd", str(workspace)])
    out = capsys.readouterr().out
    assert code == 0
    assert "covers the same subject as package-manager" in out
    card = workspace / ".agents" / ".engram" / f"{candidate.id}.md"
    assert "never npm" in card.read_text(encoding="utf-8")
