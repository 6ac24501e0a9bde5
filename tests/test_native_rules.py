"""Claude native path rules: rendering, syncing, stale removal, unsafe ids, link/unlink."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from installer_helpers import PINNED, engram

from engram.card import Card
from engram.native_rules import GENERATED_MARKER, is_safe_id, remove_rules, render_rule, sync_rules


def card(card_id: str, applies_to: tuple[str, ...] = ("src/**/*.py",), body: str = "Use ruff.",
         title: str = "Python style") -> Card:
    return Card(id=card_id, title=title, card=title, body=body, path=f"/m/{card_id}.md",
                root="/m", content_hash="h", applies_to=applies_to)


def test_render_rule_writes_paths_frontmatter_and_body() -> None:
    text = render_rule(card("py-style", ("**/*.{ts,tsx}", "src/api/*.py"), "Line one.\n\nTwo.\n"))
    assert text.startswith('---\npaths:\n  - "**/*.{ts,tsx}"\n  - "src/api/*.py"\n---\n')
    assert GENERATED_MARKER in text and "py-style" in text
    assert text.endswith("# Python style\n\nLine one.\n\nTwo.\n")


def test_paths_frontmatter_is_yaml_that_round_trips() -> None:
    yaml = pytest.importorskip("yaml")
    globs = ("**/*.md", 'docs/"quoted"/*.md', "{a,b}/**")
    text = render_rule(card("x", globs))
    front = text.split("---\n")[1]
    assert tuple(yaml.safe_load(front)["paths"]) == globs


@pytest.mark.parametrize("bad", ["", ".", "..", "../x", "a/b", "a\\b", "nul\x00", "CON", "con.md",
                                 "Lpt1", "com9.txt", ".hidden", "trailing.", "trailing ", "a:b"])
def test_unsafe_ids_are_rejected(bad: str) -> None:
    assert not is_safe_id(bad)


@pytest.mark.parametrize("good", ["py-style", "api.v2", "console", "a_b", "ünïcode"])
def test_safe_ids(good: str) -> None:
    assert is_safe_id(good)


def test_sync_writes_updates_removes_stale_and_skips_unsafe(tmp_path: Path) -> None:
    rules = tmp_path / ".claude" / "rules" / "engram"
    changed = sync_rules(rules, [card("a"), card("b"), card("always", ()), card("../evil")])
    assert sorted(p.name for p in changed) == ["a.md", "b.md"]
    assert sorted(p.name for p in rules.iterdir()) == [".gitignore", "a.md", "b.md"]
    # engram's files ignore themselves, one by one (a file of the user's there is not ignored)
    assert (rules / ".gitignore").read_text().splitlines()[1:] == ["/.gitignore", "/a.md", "/b.md"]
    assert not (tmp_path / ".claude" / "rules" / "evil.md").exists()
    assert sync_rules(rules, [card("a"), card("b")]) == []  # nothing changed: nothing written
    changed = sync_rules(rules, [card("a", body="New body.")])
    assert sorted(p.name for p in changed) == ["a.md", "b.md"]
    assert "New body." in (rules / "a.md").read_text()
    assert not (rules / "b.md").exists()


def test_sync_and_remove_leave_user_files_alone(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "mine.md").write_text("my own rule")
    (rules / "a.md").write_text("a hand-written rule named like a card")
    sync_rules(rules, [card("a")])
    assert (rules / "mine.md").read_text() == "my own rule"
    assert (rules / "a.md").read_text() == "a hand-written rule named like a card"
    remove_rules(rules)
    assert rules.is_dir() and (rules / "mine.md").exists()


def test_telling_a_generated_rule_reads_only_the_top_of_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stale generated rule (the marker at its top) is removed, a big user file with the
    marker further down is kept, a file over 1 MiB is never ours; the check reads at most
    4 KiB of each file."""
    from engram import fileio

    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "stale.md").write_text(render_rule(card("stale")) + "x" * 500_000)
    (rules / "notes.md").write_text("n" * 5000 + GENERATED_MARKER)
    (rules / "huge.md").write_text(render_rule(card("huge")) + "x" * (1024 * 1024))
    read: list[int] = []
    real_read = fileio.os.read

    def counting_read(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        read.append(len(data))
        return data

    monkeypatch.setattr(fileio.os, "read", counting_read)
    removed = remove_rules(rules)
    assert [p.name for p in removed] == ["stale.md"]
    assert sorted(p.name for p in rules.iterdir()) == ["huge.md", "notes.md"]
    assert read and max(read) <= 4096, read


def test_read_bounded_head(tmp_path: Path) -> None:
    import os

    from engram.fileio import FileTooLarge, NotRegularFile, read_bounded

    path = tmp_path / "f"
    path.write_bytes(b"abcdef")
    assert read_bounded(path, 10, head=4) == b"abcd"
    assert read_bounded(path, 10, head=100) == b"abcdef"
    with pytest.raises(FileTooLarge):
        read_bounded(path, 5, head=2)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo")
        with pytest.raises(NotRegularFile):
            read_bounded(tmp_path / "fifo", 10, head=4)


def test_a_stored_secret_verdict_counts_only_for_the_content_it_was_given_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled index's verdict saves the scan for a card of the exact key (id@hash) it
    was given for; a card of any other key is scanned, so a stale verdict lets no secret
    through."""
    from engram import secrets

    token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    scanned: list[str] = []
    real = secrets.has_secrets
    monkeypatch.setattr(secrets, "has_secrets", lambda text: scanned.append(text) or real(text))
    clean, edited, blocked = card("clean"), card("edited", body=f"Token {token}."), card("blocked")
    verdicts = {"clean@h": False, "edited@old-hash": False, "blocked@h": True}
    rules = tmp_path / "rules"
    changed = sync_rules(rules, [clean, edited, blocked], secret_verdicts=verdicts)
    assert [p.name for p in changed] == ["clean.md"]
    assert scanned == [secrets.card_text(edited)]  # only the card its verdict did not name
    assert token not in "".join(p.read_text() for p in rules.iterdir())


def test_sync_into_an_unwritable_place_does_not_raise(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert sync_rules(blocker / "rules", [card("a")]) == []


def test_link_writes_rules_for_workspace_cards_and_unlink_removes_them(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)
    (workspace / ".agents" / "engram.json").write_text('{"hooks": {"path_rules": "native"}}')
    memory = workspace / ".agents" / ".engram"
    (memory / "py-style.md").write_text(
        "---\nid: py-style\ntitle: Python style\napplies_to: ['src/**/*.py']\n---\nUse ruff.\n")
    (memory / "general.md").write_text("---\nid: general\ntitle: General\n---\nBe kind.\n")
    assert engram("link", "claude", cwd=workspace) == 0
    rules = workspace / ".claude" / "rules" / "engram"
    assert sorted(p.name for p in rules.iterdir()) == [".gitignore", "py-style.md"]
    assert "Use ruff." in (rules / "py-style.md").read_text()
    hooks = json.loads((workspace / ".claude/settings.json").read_text())["hooks"]
    assert "InstructionsLoaded" in hooks
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert not rules.exists()
    assert not (workspace / ".claude").exists()  # nor the folders link created for it


def test_switching_to_hook_path_rules_removes_the_rule_files(workspace: Path) -> None:
    (workspace / ".agents" / "engram.json").write_text('{"hooks": {"path_rules": "native"}}')
    memory = workspace / ".agents" / ".engram"
    (memory / "py.md").write_text("---\nid: py\napplies_to: ['*.py']\n---\nBody.\n")
    assert engram("link", "claude", cwd=workspace) == 0
    assert (workspace / ".claude/rules/engram/py.md").exists()
    (workspace / ".agents" / "engram.json").write_text('{"hooks": {"path_rules": "hook"}}')
    assert engram("link", "claude", cwd=workspace) == 0
    assert not (workspace / ".claude/rules/engram").exists()


def test_dry_run_link_names_the_rules_it_would_write_and_writes_none(
        workspace: Path, capsys: pytest.CaptureFixture) -> None:
    (workspace / ".agents" / "engram.json").write_text('{"hooks": {"path_rules": "native"}}')
    (workspace / ".agents" / ".engram" / "py.md").write_text(
        "---\nid: py\napplies_to: ['*.py']\n---\nBody.\n")
    assert engram("link", "claude", "--dry-run", cwd=workspace) == 0
    assert "WOULD CREATE .claude/rules/engram (~py)" in capsys.readouterr().out
    assert not (workspace / ".claude").exists()


def test_upgrade_to_the_hook_default_removes_the_rule_files(workspace: Path) -> None:
    """A project linked when native rules were the default: `upgrade` swaps InstructionsLoaded
    for PostToolUse and removes the rule files, or Claude would load each card a second time."""
    config = workspace / ".agents" / "engram.json"
    config.write_text('{"hooks": {"path_rules": "native"}}')
    (workspace / ".agents" / ".engram" / "py.md").write_text(
        "---\nid: py\napplies_to: ['*.py']\n---\nBody.\n")
    assert engram("link", "claude", cwd=workspace) == 0
    assert (workspace / ".claude/rules/engram/py.md").exists()
    config.write_text("{}")
    assert engram("upgrade", cwd=workspace) == 0
    hooks = json.loads((workspace / ".claude/settings.json").read_text())["hooks"]
    assert "PostToolUse" in hooks and "InstructionsLoaded" not in hooks
    assert not (workspace / ".claude/rules/engram").exists()
