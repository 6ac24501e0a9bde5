"""Path safety: card ids and generated rule file names cannot leave their folder
(`../`, absolute paths, separators, NUL, Windows reserved names); memory roots, folders and
cards linked to places outside the workspace are not followed without
`security.follow_symlinks`.

Already covered elsewhere, not repeated here: the rule-name table (tests/test_native_rules.py
test_unsafe_ids_are_rejected), a card file linked out of the root (tests/test_cards.py
test_symlink_out_of_the_root_is_not_followed), and the transcript queue reading only the
hosts' folders and those the user configured, refusing links, hard links, oversized files
and credential files (tests/test_observe.py test_unsafe_sources_are_refused_with_a_reason_
and_leave_the_queue, test_user_level_allowed_dirs_are_honoured,
test_symlinks_planted_in_the_memory_folder_are_not_written_through)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hookkit import call, context, make_workspace, payload, sent_ids
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import formats, native_rules, paths
from engram import workspace as workspace_module
from engram.card import Card

HOSTILE_IDS = ["../x", "../../etc/passwd", "/etc/passwd", "a/b", "a\\b", "C:\\x", "C:x", "a\x00b",
               "..", ".", "", "CON", "con.md", "nul", "NUL.txt", "aux", "prn.x", "com1", "LPT9",
               "x" * 300, ".hidden", "a:b", "a\nb", "a b", "~root", "%2e%2e%2fx"]
id_text = st.one_of(st.sampled_from(HOSTILE_IDS), st.text(max_size=20),
                    st.text(alphabet="./\\:\x00-_aZ9 ", max_size=12))


def stays_inside(folder: Path, name: str) -> bool:
    target = os.path.normpath(os.path.join(str(folder), name))
    return os.path.dirname(target) == str(folder)


@settings(max_examples=400, deadline=None)
@given(id_text)
def test_a_valid_card_id_names_one_file_inside_its_folder(card_id: str) -> None:
    folder = Path("/memory/root")
    for accepted in (formats.is_valid_id(card_id), native_rules.is_safe_id(card_id)):
        if accepted:
            assert stays_inside(folder, card_id + ".md")
            assert "\x00" not in card_id and "/" not in card_id and "\\" not in card_id
            assert card_id.split(".")[0].lower().strip() not in (
                "con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
                *(f"lpt{i}" for i in range(10)))


@pytest.mark.parametrize("card_id", [i for i in HOSTILE_IDS if i and "\x00" not in i
                                     and "\n" not in i])
def test_a_card_with_a_hostile_id_is_reported_and_never_routed(workspace: Path,
                                                               card_id: str) -> None:
    card = workspace / ".agents" / ".engram" / "hostile.md"
    card.write_text(f"---\nid: {json.dumps(card_id)}\ntitle: Hostile\ntags: [hostile]\n---\n"
                    "A body about hostile things.\n", encoding="utf-8")
    text = context(call("claude", payload("claude", "UserPromptSubmit.json", workspace,
                                          prompt="hostile things")))
    assert card_id not in sent_ids(text) or formats.is_valid_id(card_id)
    from engram import lint

    problems = [p for p in lint.lint_workspace(workspace_module.load(workspace))
                if p.path == str(card)]
    if not formats.is_valid_id(card_id):
        assert any(p.code == "invalid" and p.line == 2 for p in problems), problems


@settings(max_examples=150, deadline=None)
@given(st.lists(id_text, min_size=1, max_size=6))
def test_rule_sync_writes_only_inside_the_rules_folder(tmp_path_factory: pytest.TempPathFactory,
                                                       ids: list[str]) -> None:
    base = tmp_path_factory.mktemp("rules")
    rules = base / "ws" / ".claude" / "rules" / "engram"
    rules.mkdir(parents=True)
    cards = [Card(id=card_id, title="t", card="c", body="body", path="/x.md", root="/",
                  content_hash="0" * 16, applies_to=("src/**",)) for card_id in ids]
    native_rules.sync_rules(rules, cards)
    written = [Path(folder) / name for folder, _dirs, files in os.walk(base) for name in files]
    assert all(path.parent == rules and (path.suffix == ".md" or path.name == ".gitignore")
               for path in written), written


# --- links out of the workspace ---------------------------------------------------------------

OUTSIDE_CARD = ("---\nid: outsider\ntitle: Outside plan\ntags: [outsideplan]\n---\n"
                "This body lives outside the workspace.\n")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "outsider.md").write_text(OUTSIDE_CARD, encoding="utf-8")
    return folder


def routed(ws: Path) -> list[str]:
    return sent_ids(context(call("claude", payload("claude", "UserPromptSubmit.json", ws,
                                                   prompt="outsideplan outside plan"))))


def _allow_symlinks_for_the_user() -> None:
    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"security": {"follow_symlinks": True}}))


def test_a_repository_cannot_switch_on_following_links_out_of_itself(tmp_path: Path,
                                                                    outside: Path) -> None:
    ws = tmp_path / "proj"
    (ws / ".git").mkdir(parents=True)
    (ws / ".agents").mkdir()
    (ws / ".agents" / ".engram").symlink_to(outside, target_is_directory=True)
    (ws / ".agents" / "engram.json").write_text(json.dumps({"security": {"follow_symlinks": True}}))
    assert "outsider" not in routed(ws)
    loaded = workspace_module.load(ws)
    assert loaded.settings["security.follow_symlinks"] is False
    assert any("security.follow_symlinks" in w and "user scope only" in w for w in loaded.warnings)


def test_a_memory_root_linked_outside_the_workspace_is_not_followed(tmp_path: Path,
                                                                     outside: Path) -> None:
    ws = tmp_path / "proj"
    (ws / ".git").mkdir(parents=True)
    (ws / ".agents").mkdir()
    (ws / ".agents" / ".engram").symlink_to(outside, target_is_directory=True)
    assert "outsider" not in routed(ws)
    loaded = workspace_module.load(ws)
    assert loaded.roots == () and any("outside the workspace" in w for w in loaded.warnings)
    # ... and followed once the user says so.
    _allow_symlinks_for_the_user()
    assert "outsider" in routed(ws)


def test_a_memory_root_linked_inside_the_workspace_is_followed(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj", cards={})
    shared = ws / "docs" / "memory"
    shared.mkdir(parents=True)
    (shared / "outsider.md").write_text(OUTSIDE_CARD, encoding="utf-8")
    (ws / ".agents" / ".engram").rmdir()
    (ws / ".agents" / ".engram").symlink_to(shared, target_is_directory=True)
    assert "outsider" in routed(ws)


def test_a_folder_linked_outside_from_inside_the_root_is_not_followed(tmp_path: Path,
                                                                       outside: Path) -> None:
    ws = make_workspace(tmp_path / "proj", cards={})
    (ws / ".agents" / ".engram" / "team").symlink_to(outside, target_is_directory=True)
    assert "outsider" not in routed(ws)
    _allow_symlinks_for_the_user()
    assert "outsider" in routed(ws)


def test_a_config_root_outside_the_workspace_is_skipped(tmp_path: Path, outside: Path) -> None:
    ws = make_workspace(tmp_path / "proj", cards={},
                        config={"roots": [os.path.relpath(outside, tmp_path / "proj")]})
    assert "outsider" not in routed(ws)
    assert any("outside the workspace" in w for w in workspace_module.load(ws).warnings)


def test_a_touched_path_outside_the_workspace_routes_nothing(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj", cards={
        "everything": "---\nid: everything\napplies_to: [\"**\"]\n---\nFor every file.\n"},
        config={"hooks": {"path_rules": "hook"}})
    for path in ("/etc/passwd", str(ws / ".." / ".." / "etc" / "passwd"), "../../etc/passwd"):
        document = payload("claude", "PreToolUse.json", ws, tool_name="Read",
                           tool_input={"file_path": path})
        assert sent_ids(context(call("claude", document))) == [], path
    # Positive control: the same card does route for a path inside the workspace, so the
    # empty answers above come from the path check, not from path routing being off.
    document = payload("claude", "PreToolUse.json", ws, tool_name="Read",
                       tool_input={"file_path": str(ws / "src" / "app.py")})
    assert sent_ids(context(call("claude", document))) == ["everything"]
