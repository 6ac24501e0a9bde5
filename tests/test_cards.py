"""Card files of every format become Cards; every kind of bad input is reported with file and
line, skipped, and the other cards still route."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import deny_reading, write_card

from engram import index, store, workspace
from engram.card import Card
from engram.problems import Problem
from engram.query import route_request


def load_one(path: Path, root: Path | None = None) -> tuple[Card | None, list[Problem]]:
    stat = path.stat()
    found = store.FoundFile(str(path), str(root or path.parent), stat.st_mtime_ns, stat.st_size)
    card, problems, _ = store.load_file(found)
    return card, problems


def cards_and_problems(ws: Path) -> tuple[dict[str, Card], list[Problem]]:
    loaded = workspace.load(ws)
    assert loaded is not None
    cards, problems = index.load_cards(loaded)
    return {card.id: card for card in cards if not card.id.startswith("filler-")}, problems


def routed(ws: Path, prompt: str, paths: list[str] | None = None) -> list[str]:
    loaded = workspace.load(ws)
    assert loaded is not None
    compiled = index.load_or_build(loaded)
    return route_request(compiled, ws, ws, prompt, paths or [], 8).ids


MEM = ".agents/.engram"


# --- formats --------------------------------------------------------------------------------

def test_engram_card_with_every_field(tmp_path: Path) -> None:
    path = write_card(tmp_path, "x.md", """---
id: my-card
title: My card
card: One line.
type: workflow
tags: [release, ci]
applies_to: "src/**/*.py, docs/**/*.{md,mdx}"
always: false
priority: 80
depends_on: [base]
authority: instruction
evidence_refs: [tr_1]
created: 2026-01-02
---
# Heading

The body.
""")
    card, problems = load_one(path)
    assert problems == []
    assert card is not None
    assert (card.id, card.title, card.card, card.type) == ("my-card", "My card", "One line.",
                                                          "workflow")
    assert card.tags == ("release", "ci")
    assert card.applies_to == ("src/**/*.py", "docs/**/*.{md,mdx}")
    assert (card.always, card.priority, card.depends_on) == (False, 80, ("base",))
    assert card.format == "engram"
    assert card.body.startswith("# Heading") and card.body_line == 15
    assert dict(card.provenance)["authority"] == "instruction"
    assert dict(card.provenance)["created"] == "2026-01-02"  # a YAML date, kept as text
    # Delivered under what the model reads (title, body); checked for secrets as a file.
    assert card.key == f"my-card@{card.view_hash}" != card.file_key
    assert card.file_key == f"my-card@{card.content_hash}"


def test_defaults_id_from_stem_card_from_first_sentence_priority_50(tmp_path: Path) -> None:
    path = write_card(tmp_path, "release-steps.md",
                      "# Releasing\n\nBump the **version** in `engram/__init__.py`. Then tag.\n")
    card, problems = load_one(path)
    assert card is not None and problems == []
    assert card.id == "release-steps"
    assert card.title == "Releasing"
    assert card.card == "Bump the version in engram/__init__.py."
    assert (card.priority, card.type, card.always, card.applies_to) == (50, "rule", False, ())


def test_cursor_mdc_invalid_yaml_keeps_braces_and_reports_the_guess(tmp_path: Path) -> None:
    path = write_card(tmp_path, ".cursor/rules/ts.mdc", """---
description: TypeScript rules
globs: **/*.{ts,tsx}, src/**/*.js
alwaysApply: false
---
Use strict mode.
""")
    card, problems = load_one(path)
    assert card is not None
    assert card.format == "cursor"
    assert card.id == "ts"
    assert card.applies_to == ("**/*.{ts,tsx}", "src/**/*.js")
    assert card.card == "TypeScript rules"
    assert card.always is False
    assert [p.code for p in problems] == ["guessed"]
    assert problems[0].severity == "warning" and "line by line" in problems[0].message


@pytest.mark.parametrize("value, always", [("true", True), ('"true"', False), ("false", False)])
def test_cursor_always_apply_must_be_a_real_boolean(tmp_path: Path, value: str,
                                                     always: bool) -> None:
    path = write_card(tmp_path, "r.mdc", f"---\ndescription: d\nalwaysApply: {value}\n---\nBody.\n")
    card, _ = load_one(path)
    assert card is not None and card.always is always


@pytest.mark.parametrize("fmt, name, glob_line", [
    ("cursor", "r.mdc", "globs: '*'"),
    ("copilot", "r.instructions.md", "applyTo: '*'"),
])
def test_lone_star_means_every_file_in_cursor_and_copilot(tmp_path: Path, fmt: str, name: str,
                                                          glob_line: str) -> None:
    card, _ = load_one(write_card(tmp_path, name, f"---\n{glob_line}\n---\nBody.\n"))
    assert card is not None and card.format == fmt and card.applies_to == ("**",)


def test_copilot_apply_to_comma_list(tmp_path: Path) -> None:
    path = write_card(tmp_path, ".github/instructions/scala.instructions.md",
                      "---\napplyTo: '**/*.scala, **/build.sbt, **/build.sc'\n---\nScala.\n")
    card, _ = load_one(path)
    assert card is not None
    assert card.format == "copilot" and card.id == "scala"
    assert card.applies_to == ("**/*.scala", "**/build.sbt", "**/build.sc")


def test_claude_rules_paths_and_no_paths_means_always(tmp_path: Path) -> None:
    scoped, _ = load_one(write_card(tmp_path, ".claude/rules/api.md",
                                    "---\npaths:\n  - \"src/api/**/*.ts\"\n---\nAPI rules.\n"))
    unscoped, _ = load_one(write_card(tmp_path, ".claude/rules/general.md", "General rules.\n"))
    assert scoped is not None and scoped.format == "claude"
    assert scoped.applies_to == ("src/api/**/*.ts",) and scoped.always is False
    assert unscoped is not None and unscoped.format == "claude" and unscoped.always is True


def test_continue_rule(tmp_path: Path) -> None:
    card, _ = load_one(write_card(tmp_path, ".continue/rules/docs.md",
                                  "---\nname: Docs\nglobs: docs/**/*.{md,mdx}\n---\nDocs.\n"))
    assert card is not None
    assert card.format == "continue" and card.title == "Docs"
    assert card.applies_to == ("docs/**/*.{md,mdx}",)


@pytest.mark.parametrize("frontmatter_text, always", [
    # v3
    ("schema_version: 3\nid: lr-rule\ntype: rule\ntags: [deploy]\ntriggers: [ship]\n"
     "task_types: [release]\nauthority: instruction\nrevision: 1\n", True),
    # v2: no schema_version, `## Content` body
    ("id: lr-skill\ntype: skill\ntags: [deploy]\n", False),
    ("id: lr-knowledge\ntype: knowledge\n", False),
])
def test_the_long_ride_formats(tmp_path: Path, frontmatter_text: str, always: bool) -> None:
    path = write_card(tmp_path, "rules/x.md",
                      f"---\n{frontmatter_text}---\n# Title here\n\n## Content\n\nShip on Fridays.\n")
    card, problems = load_one(path)
    assert card is not None, problems
    assert card.format == "long-ride"
    assert card.body == "Ship on Fridays."  # only the `## Content` section
    assert card.always is always
    if "triggers" in frontmatter_text:
        assert set(card.tags) == {"deploy", "ship", "release"}
        assert dict(card.provenance)["revision"] == 1


# --- bad input, one file at a time ----------------------------------------------------------

@pytest.mark.parametrize("text, line, words", [
    ("---\n- a\n- b\n---\nbody\n", 2, "frontmatter"),
    ("---\ntitle: t\npriority: high\n---\nbody\n", 3, "priority"),
    ("---\npriority: 101\n---\nbody\n", 2, "between 0 and 100"),
    ("---\nid: ../../etc/passwd\n---\nbody\n", 2, "not a valid id"),
    ("---\ntitle: t\nalways: sometimes\n---\nbody\n", 3, "`always`"),
    ("---\ntags: {a: 1}\n---\nbody\n", 2, "`tags`"),
    ("---\ntitle: t\n---\n\n", 4, "no body"),
])
def test_broken_cards_are_errors_with_file_and_line(tmp_path: Path, text: str, line: int,
                                                     words: str) -> None:
    path = write_card(tmp_path, "bad.md", text)
    card, problems = load_one(path)
    assert card is None
    assert len(problems) == 1
    problem = problems[0]
    assert problem.path == str(path)
    assert problem.severity == "error"
    assert problem.line == line, problem
    assert words in problem.message
    assert problem.render().startswith(f"{path}:{line}: error: ")


def test_non_utf8_is_an_error_with_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes(b"---\ntitle: ok\n---\nline four\ncaf\xe9\n")
    card, problems = load_one(path)
    assert card is None
    assert [(p.code, p.line) for p in problems] == [("encoding", 5)]
    assert "UTF-8" in problems[0].message


def test_file_over_256_kib_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "huge.md"
    path.write_text("---\ntitle: huge\n---\n" + "word " * 60_000, encoding="utf-8")
    assert path.stat().st_size > store.MAX_CARD_BYTES
    card, problems = load_one(path)
    assert card is None
    assert [p.code for p in problems] == ["too-large"]
    # Also when the size on record is stale and the bytes are read.
    stale = store.FoundFile(str(path), str(tmp_path), 0, 10)
    card, problems, _ = store.load_file(stale)
    assert card is None and [p.code for p in problems] == ["too-large"]
    just_under = tmp_path / "under.md"
    just_under.write_text("x" * (store.MAX_CARD_BYTES - 10), encoding="utf-8")
    assert load_one(just_under)[0] is not None


def test_crlf_files_parse(tmp_path: Path) -> None:
    path = tmp_path / "crlf.md"
    path.write_bytes(b"---\r\ntitle: Windows\r\ntags: [a]\r\n---\r\nBody.\r\n")
    card, problems = load_one(path)
    assert card is not None and card.title == "Windows" and card.tags == ("a",)
    assert problems == []


# --- bad input in a workspace: reported, skipped, the rest still routes ---------------------

GOOD = "---\ntitle: Deploy checklist\ntags: [deploy]\n---\nRun the deploy checklist before shipping.\n"


def _fillers(mem: Path) -> None:
    """Unrelated cards: text routing needs a store big enough for IDF to mean something."""
    for word in ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "glacier", "harbor",
                 "iris", "juniper", "kelp", "lichen", "moss", "nectar", "opal", "pumice"]:
        write_card(mem, f"filler/filler-{word}.md",
                   f"---\ntitle: {word.title()} notes\n---\nAbout {word}.\n")


def test_every_bad_input_is_reported_and_the_good_card_still_routes(workspace: Path) -> None:
    mem = workspace / MEM
    _fillers(mem)
    write_card(mem, "good.md", GOOD)
    write_card(mem, "broken.md", "---\n- nope\n---\nbody\n")
    write_card(mem, "dup-a.md", "---\nid: dup\n---\nFirst.\n")
    write_card(mem, "dup-b.md", "---\nid: dup\n---\nSecond.\n")
    write_card(mem, "dangling.md", "---\ndepends_on: [missing-card]\n---\nD.\n")
    write_card(mem, "cyc-a.md", "---\ndepends_on: [cyc-b]\n---\nA.\n")
    write_card(mem, "cyc-b.md", "---\ndepends_on: [cyc-a]\n---\nB.\n")
    (mem / "latin1.md").write_bytes(b"caf\xe9\n")
    (mem / "huge.md").write_text("x" * (store.MAX_CARD_BYTES + 1), encoding="utf-8")

    cards, problems = cards_and_problems(workspace)
    assert set(cards) == {"good"}  # no file of the `dup` clash is named `dup`: none routes
    codes = {(Path(p.path).name, p.code) for p in problems if p.severity == "error"}
    assert codes == {
        ("broken.md", "frontmatter"), ("dup-a.md", "duplicate-id"), ("dup-b.md", "duplicate-id"),
        ("dangling.md", "dangling-dependency"), ("cyc-a.md", "cyclic-dependency"),
        ("cyc-b.md", "cyclic-dependency"), ("latin1.md", "encoding"), ("huge.md", "too-large"),
    }
    dangling = next(p for p in problems if p.code == "dangling-dependency")
    assert "missing-card" in dangling.message
    duplicate = next(p for p in problems if p.code == "duplicate-id")
    assert "dup-b.md:2" in duplicate.message and duplicate.line == 2
    assert routed(workspace, "deploy checklist") == ["good"]


def test_duplicate_id_the_file_named_for_the_id_wins_and_every_file_is_reported(
        workspace: Path) -> None:
    mem = workspace / MEM
    _fillers(mem)
    write_card(mem, "migrations.md", "---\nid: migrations\ntitle: Migrations\n---\n"
                                     "Write reversible migrations only.\n")
    write_card(mem, "draft.md", "---\ntitle: Draft\nid: migrations\n---\nTODO: write this up.\n")
    cards, problems = cards_and_problems(workspace)
    assert cards["migrations"].path.endswith("migrations.md")
    assert cards["migrations"].body.strip() == "Write reversible migrations only."
    clash = sorted((Path(p.path).name, p.line, p.severity) for p in problems
                   if p.code == "duplicate-id")
    assert clash == [("draft.md", 3, "error"), ("migrations.md", 2, "warning")]
    draft = next(p for p in problems if p.path.endswith("draft.md"))
    assert "migrations.md:2" in draft.message and "is routed" in draft.message
    assert "migrations" in routed(workspace, "reversible migrations")


def test_duplicate_id_with_several_or_no_named_files_routes_none(workspace: Path) -> None:
    mem = workspace / MEM
    _fillers(mem)
    write_card(mem, "a/migrations.md", "---\ntitle: A\n---\nFirst migrations text.\n")
    write_card(mem, "b/migrations.md", "---\ntitle: B\n---\nSecond migrations text.\n")
    write_card(mem, "one.md", "---\nid: other\n---\nOne other text.\n")
    write_card(mem, "two.md", "---\nid: other\n---\nTwo other text.\n")
    cards, problems = cards_and_problems(workspace)
    assert "migrations" not in cards and "other" not in cards
    reported = sorted(Path(p.path).parent.name + "/" + Path(p.path).name for p in problems
                      if p.code == "duplicate-id" and p.severity == "error")
    assert reported == sorted(["a/migrations.md", "b/migrations.md", ".engram/one.md",
                               ".engram/two.md"])
    assert routed(workspace, "migrations text") == []


def test_a_card_needing_a_cycle_member_is_reported_not_left_dangling(workspace: Path) -> None:
    mem = workspace / MEM
    write_card(mem, "cyc-a.md", "---\ndepends_on: [cyc-b]\n---\nA.\n")
    write_card(mem, "cyc-b.md", "---\ndepends_on: [cyc-a]\n---\nB.\n")
    write_card(mem, "needs-cycle.md",
               "---\ntitle: Needs cycle\ndepends_on: [cyc-a]\n---\nNeeds the cycle.\n")
    cards, problems = cards_and_problems(workspace)
    # Routing it would deliver a card without its prerequisite; it must be skipped and said.
    assert "needs-cycle" not in cards
    assert any(Path(p.path).name == "needs-cycle.md" and p.severity == "error"
               and "cyc-a" in p.message for p in problems)


def test_dependency_chain_on_a_dangling_card_is_dropped_whole(workspace: Path) -> None:
    mem = workspace / MEM
    write_card(mem, "top.md", "---\ndepends_on: [middle]\n---\nTop.\n")
    write_card(mem, "middle.md", "---\ndepends_on: [gone]\n---\nMiddle.\n")
    write_card(mem, "fine.md", "---\ntitle: Fine\n---\nFine.\n")
    cards, problems = cards_and_problems(workspace)
    assert set(cards) == {"fine"}
    messages = {Path(p.path).name: p.message for p in problems if p.code == "dangling-dependency"}
    assert set(messages) == {"top.md", "middle.md"}
    assert "unknown card(s): gone" in messages["middle.md"]
    assert "skipped for errors: middle" in messages["top.md"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="chmod 000 does not stop root from reading; the simulated test below "
                           "covers the same path")
def test_unreadable_file_chmod_000(workspace: Path) -> None:
    mem = workspace / MEM
    write_card(mem, "good.md", GOOD)
    locked = write_card(mem, "locked.md", "---\ntitle: Locked\n---\nSecret.\n")
    locked.chmod(0)
    try:
        cards, problems = cards_and_problems(workspace)
    finally:
        locked.chmod(0o644)
    assert set(cards) == {"good"}
    assert [(Path(p.path).name, p.code) for p in problems] == [("locked.md", "unreadable")]


def test_unreadable_file_simulated(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same as chmod 000 for a process that may read everything (root in CI containers)."""
    mem = workspace / MEM
    _fillers(mem)
    write_card(mem, "good.md", GOOD)
    locked = write_card(mem, "locked.md", "---\ntitle: Locked\n---\nSecret.\n")
    with monkeypatch.context() as patch:  # undo() would also drop the isolation fixture's env
        deny_reading(patch, locked)
        cards, problems = cards_and_problems(workspace)
    assert set(cards) == {"good"}
    assert [(Path(p.path).name, p.code, p.severity) for p in problems] == [
        ("locked.md", "unreadable", "error")]
    assert "Permission denied" in problems[0].message
    assert routed(workspace, "deploy checklist") == ["good"]


# --- scanning -------------------------------------------------------------------------------

def test_scan_skips_reserved_folders_and_non_cards(workspace: Path) -> None:
    mem = workspace / MEM
    write_card(mem, "kept.md", "Kept.\n")
    write_card(mem, "nested/deeper/kept2.mdc", "---\ndescription: d\n---\nKept too.\n")
    for reserved in ("inbox", "traces", "archive"):
        write_card(mem, f"{reserved}/no.md", "Never routed.\n")
    write_card(mem, "notes.txt", "not a card\n")
    cards, problems = cards_and_problems(workspace)
    assert set(cards) == {"kept", "kept2"}
    assert problems == []


def test_symlink_out_of_the_root_is_not_followed(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = write_card(outside, "secret.md", "---\ntitle: secret\n---\nOutside text.\n")
    (outside / "dir").mkdir()
    write_card(outside / "dir", "also.md", "Also outside.\n")
    mem = workspace / MEM
    write_card(mem, "kept.md", "Kept.\n")
    (mem / "link.md").symlink_to(secret)
    (mem / "linkdir").symlink_to(outside / "dir", target_is_directory=True)
    cards, problems = cards_and_problems(workspace)
    assert set(cards) == {"kept"}
    assert sorted((Path(p.path).name, p.code) for p in problems) == [
        ("link.md", "symlink"), ("linkdir", "symlink")]


def test_symlink_inside_the_workspace_is_followed(workspace: Path) -> None:
    shared = write_card(workspace, "docs/shared.md", "---\nid: shared\n---\nShared text.\n")
    (workspace / MEM / "shared.md").symlink_to(shared)
    cards, problems = cards_and_problems(workspace)
    assert set(cards) == {"shared"} and problems == []


def test_workspace_card_wins_over_global_on_duplicate_id(workspace: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    global_dir = tmp_path / "global"
    write_card(global_dir, "style.md", "Global style.\n")
    write_card(global_dir, "only-global.md", "Only global.\n")
    write_card(workspace / MEM, "style.md", "Workspace style.\n")
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(global_dir))
    cards, problems = cards_and_problems(workspace)
    assert set(cards) == {"style", "only-global"}
    assert cards["style"].body == "Workspace style."
    shadowed = [p for p in problems if p.code == "shadowed"]
    assert len(shadowed) == 1 and shadowed[0].severity == "warning"


def test_dependency_order_puts_prerequisites_first() -> None:
    def card(card_id: str, *deps: str) -> Card:
        return Card(id=card_id, title=card_id, card="", body="b", path=f"/{card_id}.md",
                    root="/", content_hash="h", depends_on=deps)

    order = store.dependency_order([card("c", "b"), card("b", "a"), card("a"), card("z", "a")])
    assert order.index("a") < order.index("b") < order.index("c")
    assert order.index("a") < order.index("z")


@pytest.mark.parametrize("folder, rule, not_rule, says", [
    (".cursor/rules", "api.mdc", "wireframes/settings.md", "Cursor loads only *.mdc"),
    (".github/instructions", "go.instructions.md", "README.md",
     "GitHub Copilot loads only *.instructions.md"),
    (".claude/rules", "style.md", "old.mdc", "Claude Code loads only *.md"),
])
def test_a_host_rule_folder_routes_only_the_files_its_host_loads(tmp_path: Path, folder: str,
                                                                rule: str, not_rule: str,
                                                                says: str) -> None:
    """Cursor loads only .mdc from .cursor/rules (a .md there is a note or a wireframe),
    Copilot only *.instructions.md from .github/instructions, Claude only .md from
    .claude/rules: engram routes what the host would load, and says why it skips the rest."""
    root = tmp_path / folder
    for name in (rule, not_rule):
        write_card(root, name, "---\ndescription: settings layout\n---\nThe settings tab layout.\n")
    found, problems = store.scan([(str(root), "workspace")])
    assert [os.path.basename(f.path) for f in found] == [os.path.basename(rule)]
    assert [(p.code, p.severity, os.path.basename(p.path)) for p in problems] == [
        ("not-a-rule", "warning", os.path.basename(not_rule))]
    assert says in problems[0].message


def test_engrams_generated_rule_copies_are_never_cards(tmp_path: Path) -> None:
    """`.claude/rules/engram/` (install.native_rules) holds engram's generated copies of
    cards: a scan of the workspace's `.claude/rules` as a memory root skips it, and only it
    (a `team/engram` folder there is the user's)."""
    (tmp_path / ".git").mkdir()  # the workspace root
    root = tmp_path / ".claude" / "rules"
    for name in ("style.md", "engram/style.md", "team/api.md", "team/engram/db.md"):
        write_card(root, name, "---\ndescription: style\n---\nThe house style.\n")
    expected = ["style.md", os.path.join("team", "api.md"), os.path.join("team", "engram", "db.md")]
    for given in (None, str(tmp_path)):  # found upward from the root, or named
        found, problems = store.scan([(str(root), "workspace")], workspace=given)
        assert sorted(os.path.relpath(f.path, root) for f in found) == expected
        assert problems == []


def test_plain_markdown_outside_host_rule_folders_still_counts(tmp_path: Path) -> None:
    root = tmp_path / MEM
    write_card(root, "notes.md", "---\nid: notes\n---\nbody\n")
    write_card(root, "rule.mdc", "---\ndescription: d\n---\nbody\n")
    found, problems = store.scan([(str(root), "workspace")])
    assert sorted(os.path.basename(f.path) for f in found) == ["notes.md", "rule.mdc"]
    assert problems == []
