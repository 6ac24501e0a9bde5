"""A host's hook never sends a card the host loads by itself (its rule folders, an imported
CLAUDE.md or AGENTS.md still in place); the other hosts still get it. Through the hook entry,
with real files in temp dirs and real payloads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hookkit import already, call, context, make_workspace, payload, sent_ids
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import host_registry as hosts
from engram import native_loads

OVERVIEW = "---\nid: overview\ntitle: Overview\nalways: true\n---\nThe payments service.\n"
# `.claude/rules/style.md`: no `paths:`, so Claude loads it at launch.
CLAUDE_STYLE = "# Style\n\nUse black formatting and type hints everywhere in the payments code.\n"
# `.claude/rules/db/migrations.md`: `paths:`, so Claude loads it when a migration is read.
CLAUDE_MIGRATIONS = ("---\npaths: [\"db/migrations/**\"]\n---\n# Migrations\n\n"
                     "Write reversible migrations only.\n")
CURSOR_API = ("---\ndescription: HTTP API handlers\nglobs: src/api/**\nalwaysApply: false\n---\n"
              "API handlers return problem+json errors.\n")
CURSOR_CORE = "---\ndescription: Core\nalwaysApply: true\n---\nPrefer small pull requests.\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "proj", cards={"overview": OVERVIEW},
                          config={"roots": [".claude/rules", ".cursor/rules"]})
    (root / ".claude" / "rules" / "db").mkdir(parents=True)
    (root / ".claude" / "rules" / "style.md").write_text(CLAUDE_STYLE, encoding="utf-8")
    (root / ".claude" / "rules" / "db" / "migrations.md").write_text(CLAUDE_MIGRATIONS,
                                                                     encoding="utf-8")
    (root / ".cursor" / "rules").mkdir(parents=True)
    (root / ".cursor" / "rules" / "api.mdc").write_text(CURSOR_API, encoding="utf-8")
    (root / ".cursor" / "rules" / "core.mdc").write_text(CURSOR_CORE, encoding="utf-8")
    return root


def start(host: str, ws: Path, session: str = "s1") -> str:
    client = {"claude": "claude", "codex": "codex"}[host]
    return context(call(host, payload(client, "SessionStart.json", ws, session_id=session)))


def prompt(host: str, ws: Path, text: str, session: str = "s1") -> str:
    client = {"claude": "claude", "codex": "codex"}[host]
    return context(call(host, payload(client, "UserPromptSubmit.json", ws, prompt=text,
                                      session_id=session)))


def cursor_start(ws: Path) -> str:
    document = {"hook_event_name": "sessionStart", "session_id": "c-1", "conversation_id": "c-1",
                "generation_id": "g", "is_background_agent": False, "composer_mode": "agent",
                "cursor_version": "1.7.0", "workspace_roots": [str(ws)]}
    answer = call("cursor", document)
    return (json.loads(answer) if answer.strip() else {}).get("additional_context", "")


def test_claude_never_gets_its_own_rule_files_codex_does(ws: Path) -> None:
    """`.claude/rules/style.md` (no paths: loaded at launch) is always-on for engram: Claude's
    session start leaves it out, Codex's carries it."""
    claude = start("claude", ws)
    assert sorted(sent_ids(claude)) == ["core", "overview"]
    assert "black formatting" not in claude
    codex = start("codex", ws, session="s2")
    assert sorted(sent_ids(codex)) == ["core", "overview", "style"]
    assert "black formatting" in codex


def test_a_claude_path_rule_is_neither_sent_nor_listed_to_claude(ws: Path) -> None:
    """`.claude/rules/db/migrations.md` with `paths:`: a prompt naming migrations routes it;
    Claude loads it when a migration is read, so its hook neither sends it nor lists it as
    already loaded, nor counts it in the proof. Codex gets it, once."""
    start("claude", ws)
    first = prompt("claude", ws, "write the db migrations for the new table")
    again = prompt("claude", ws, "write the db migrations for the new table")
    assert "reversible" not in first and "migrations" not in sent_ids(first)
    assert "migrations" not in already(again)
    start("codex", ws, session="s2")
    codex = prompt("codex", ws, "write the db migrations for the new table", session="s2")
    assert "migrations" in sent_ids(codex) and "reversible" in codex
    assert "migrations" in already(prompt("codex", ws, "write the db migrations for the new table",
                                          session="s2"))


def test_proof_does_not_count_a_native_card_as_routed(ws: Path) -> None:
    config = ws / ".agents" / "engram.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "proof": "on"}))
    start("claude", ws)
    text = prompt("claude", ws, "write the db migrations for the new table")
    assert "migrations" not in text
    start("codex", ws, session="s2")
    assert "migrations" in prompt("codex", ws, "write the db migrations for the new table",
                                  session="s2")


def test_claude_path_trigger_leaves_its_own_path_rule_to_claude(ws: Path) -> None:
    """Reading a migration (PostToolUse, hook mode): the card is Claude's own rule file."""
    start("claude", ws)
    read = payload("claude", "PostToolUse.json", ws, tool_name="Read",
                   tool_input={"file_path": str(ws / "db/migrations/001.sql")},
                   tool_response={"type": "text"})
    assert "reversible" not in context(call("claude", read))


def test_cursor_rules_reach_claude_but_not_cursor(ws: Path) -> None:
    """`.cursor/rules/*.mdc` are Cursor's: Claude gets them (the always-on one at session start,
    the API one when a prompt routes it); Cursor's session start leaves its own rule out but
    carries the always-on Claude rule, which Cursor does not read."""
    assert "small pull requests" in start("claude", ws)
    text = prompt("claude", ws, "fix the api handlers error response")
    assert "api" in sent_ids(text) and "problem+json" in text
    cursor = cursor_start(ws)
    assert "small pull requests" not in cursor
    assert "black formatting" in cursor and "payments service" in cursor


IMPORTED = """---
id: testing
title: "Testing"
card: "Run the suite with make test."
tags: ["testing"]
derived_from: "CLAUDE.md#testing"
---
Run the whole suite with `make test` before pushing.
"""


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "imp", cards={"overview": OVERVIEW})
    folder = root / ".agents" / ".engram" / "claude"
    folder.mkdir()
    (folder / "testing.md").write_text(IMPORTED, encoding="utf-8")
    (root / "CLAUDE.md").write_text("# Project\n\n## Testing\n\nRun the whole suite with "
                                    "`make test` before pushing.\n" + "More text.\n" * 120,
                                    encoding="utf-8")
    return root


def test_cards_imported_from_a_claude_md_still_in_place_are_not_sent_to_claude(imported: Path) -> None:
    start("claude", imported)
    assert "make test" not in prompt("claude", imported, "how do I run the testing suite")
    start("codex", imported, session="s2")
    assert "make test" in prompt("codex", imported, "how do I run the testing suite", session="s2")


def test_after_import_replace_claude_gets_the_cards(imported: Path) -> None:
    """`engram import --replace` swapped CLAUDE.md for a pointer: Claude no longer loads the
    rules itself, so its hook routes them."""
    (imported / "CLAUDE.md").write_text(
        "# Agent instructions\n\nThis project's instructions live as memory cards in "
        "`.agents/.engram/claude/`.\n", encoding="utf-8")
    start("claude", imported)
    assert "make test" in prompt("claude", imported, "how do I run the testing suite")


def test_after_the_source_is_deleted_claude_gets_the_cards(imported: Path) -> None:
    (imported / "CLAUDE.md").unlink()
    start("claude", imported)
    assert "make test" in prompt("claude", imported, "how do I run the testing suite")


def test_engram_generated_rules_are_not_claude_native() -> None:
    patterns = native_loads.patterns_of(hosts.load_host("claude"))
    assert native_loads.matches(patterns, ".claude/rules/x.md")
    assert native_loads.matches(patterns, ".claude/rules/a/b/x.md")
    assert native_loads.matches(patterns, "CLAUDE.md")
    assert native_loads.matches(patterns, "pkg/CLAUDE.md")
    assert not native_loads.matches(patterns, ".claude/rules/engram/x.md")
    assert not native_loads.matches(patterns, "AGENTS.md")
    assert not native_loads.matches(patterns, ".cursor/rules/x.mdc")
    assert not native_loads.matches(patterns, "../CLAUDE.md")


@pytest.mark.parametrize("host,path,loaded", [
    ("codex", "AGENTS.md", True), ("codex", "sub/AGENTS.md", True), ("codex", "CLAUDE.md", False),
    ("gemini", "GEMINI.md", True), ("gemini", "AGENTS.md", False),
    ("cursor", ".cursor/rules/a.mdc", True), ("cursor", ".cursorrules", True),
    ("cursor", ".claude/rules/a.md", False),
    ("opencode", "AGENTS.md", True), ("windsurf", ".windsurf/rules/a.md", True),
])
def test_host_definitions_name_what_each_host_loads(host: str, path: str, loaded: bool) -> None:
    assert native_loads.matches(native_loads.patterns_of(hosts.load_host(host)), path) is loaded


def test_native_rule_sync_leaves_out_claudes_own_rule_files(ws: Path) -> None:
    """Native mode writes `.claude/rules/engram/<id>.md` for scoped cards; a card that is
    already Claude's rule file must not get a second copy there."""
    from engram import native_rules, workspace
    from engram.index import load_cards

    cards, _ = load_cards(workspace.load(ws))
    scoped = [c for c in cards if c.applies_to]
    assert {c.id for c in scoped} >= {"migrations", "api"}
    folder = ws / ".claude" / "rules" / "engram"
    native_rules.sync_rules(folder, scoped, root=str(ws),
                            loads_natively=native_loads.patterns_of(hosts.load_host("claude")))
    written = sorted(p.stem for p in folder.glob("*.md"))
    assert written == ["api"]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    from engram.cli import run

    capsys.readouterr()
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def test_route_explain_and_why_not_say_which_host_loads_a_card_itself(
        ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "route", "write the db migrations for the new table", "--explain",
                    "--cwd", str(ws))
    assert code == 0
    assert "loaded by Claude Code itself (.claude/rules/db/migrations.md): not injected into " \
        "it, only into the other hosts" in out
    code, out = cli(capsys, "route", "write the db migrations", "--why-not", "migrations",
                    "--cwd", str(ws))
    assert code == 0 and "loaded by Claude Code itself" in out
    code, out = cli(capsys, "route", "fix the api handlers", "--why-not", "api", "--cwd", str(ws))
    assert "loaded by Cursor itself (.cursor/rules/api.mdc)" in out
    code, out = cli(capsys, "route", "fix the api handlers", "--why-not", "overview",
                    "--cwd", str(ws))
    assert "itself" not in out


def test_doctor_lists_the_cards_a_host_loads_itself(ws: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(capsys, "doctor", "--json", "--cwd", str(ws))
    native = {i["id"]: i["note"] for i in json.loads(out)["workspace"]["loaded_natively"]}
    assert set(native) == {"style", "migrations", "api", "core"}
    assert native["style"] == "loaded by Claude Code itself (.claude/rules/style.md)"
    _code, out = cli(capsys, "doctor", "--cwd", str(ws))
    assert "card api: loaded by Cursor itself (.cursor/rules/api.mdc); routed to the other " \
        "hosts only" in out


def test_doctor_names_an_imported_file_still_in_place(imported: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _code, out = cli(capsys, "doctor", "--cwd", str(imported))
    assert "card testing: loaded by Claude Code itself (CLAUDE.md)" in out


def test_init_says_rule_folders_go_to_the_other_hosts(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".claude" / "rules").mkdir(parents=True)
    (root / ".claude" / "rules" / "style.md").write_text(CLAUDE_STYLE, encoding="utf-8")
    (root / "CLAUDE.md").write_text("# P\n\n## A\n\nx\n\n## B\n\ny\n", encoding="utf-8")
    code, out = cli(capsys, "init", "--no-input", "--cwd", str(root))
    assert code == 0
    assert "routed to the OTHER hosts" in out and "Claude Code .claude/rules/" in out
    assert "--replace` swaps it for a pointer, and then its own host gets the sections" in out


def test_cards_imported_from_agents_md_skip_codex_and_opencode_not_claude(tmp_path: Path) -> None:
    """AGENTS.md is Codex's and OpenCode's own file (single-slot OpenCode too); Claude Code
    does not read it, so its cards reach Claude through engram."""
    root = make_workspace(tmp_path / "agents", cards={"overview": OVERVIEW})
    folder = root / ".agents" / ".engram" / "agents"
    folder.mkdir()
    (folder / "testing.md").write_text(IMPORTED.replace("CLAUDE.md#", "AGENTS.md#"),
                                       encoding="utf-8")
    (root / "AGENTS.md").write_text("## Testing\n\nRun `make test`.\n" + "More.\n" * 200,
                                    encoding="utf-8")
    start("codex", root)
    assert "make test" not in prompt("codex", root, "how do I run the testing suite")
    start("claude", root, session="s2")
    assert "make test" in prompt("claude", root, "how do I run the testing suite", session="s2")
    slot = json.loads(call("opencode", {"event": "chat.message", "sessionID": "oc-1",
                                        "cwd": str(root), "prompt": "how do I run the testing suite"}))
    assert "payments service" in slot["text"] and "make test" not in slot["text"]


def test_link_in_native_mode_writes_no_copy_of_claudes_own_rules(
        ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`engram link claude` with path_rules native writes .claude/rules/engram/ for scoped
    cards, except the ones Claude already loads from .claude/rules/."""
    config = ws / ".agents" / "engram.json"
    config.write_text(json.dumps({**json.loads(config.read_text()),
                                  "hooks": {"path_rules": "native"}}))
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", "/bin/sh")
    code, out = cli(capsys, "link", "claude", "--cwd", str(ws))
    assert code == 0, out
    assert sorted(p.stem for p in (ws / ".claude" / "rules" / "engram").glob("*.md")) == ["api"]


@pytest.mark.parametrize("twin", ["symlink", "copy"])
def test_agents_md_as_a_twin_of_an_imported_claude_md_keeps_codex_out(imported: Path,
                                                                      twin: str) -> None:
    """`engram import` imports CLAUDE.md and an identical AGENTS.md once, under CLAUDE.md.
    Codex loads AGENTS.md, the same text: it gets none of those cards either."""
    if twin == "symlink":
        (imported / "AGENTS.md").symlink_to("CLAUDE.md")
    else:
        (imported / "AGENTS.md").write_bytes((imported / "CLAUDE.md").read_bytes())
    start("codex", imported)
    assert "make test" not in prompt("codex", imported, "how do I run the testing suite")
    (imported / "AGENTS.md").unlink()
    (imported / "AGENTS.md").write_text("# Other instructions\n", encoding="utf-8")
    start("codex", imported, session="s2")
    assert "make test" in prompt("codex", imported, "how do I run the testing suite", session="s2")


_GLOB_ALPHABET = "ab./*?[]{},!-\\"
_PATH_ALPHABET = "ab./-CLAUDE.md"


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.text(alphabet=_GLOB_ALPHABET, min_size=1, max_size=12),
       st.text(alphabet=_PATH_ALPHABET, min_size=1, max_size=16))
def test_literal_prefilter_never_hides_a_match(glob: str, relative: str) -> None:
    """The head/tail test that spares the hook `re` and `engram.globs` only ever says no to a
    path the compiled glob does not match either."""
    import re

    from engram import globs

    if glob.startswith("/"):  # an absolute entry is a file of the user's, no workspace glob
        assert not native_loads.matches((glob,), relative)
        return
    try:
        regex = re.compile(globs.translate(glob))
    except (globs.GlobError, re.error):
        return
    if regex.match(relative):
        assert native_loads._may_match((glob,), relative), (glob, relative)


@pytest.mark.parametrize(("glob", "relative"), [
    ("**/CLAUDE.md", "CLAUDE.md"), ("**/CLAUDE.md", "a/b/CLAUDE.md"),
    (".claude/rules/**/*.md", ".claude/rules/x/y.md"), (".cursorrules", ".cursorrules"),
    ("a//b.md", "a/b.md"), ("{a,b}/*.md", "b/x.md"), ("a/[bc].md", "a/c.md"),
])
def test_literal_prefilter_keeps_real_matches(glob: str, relative: str) -> None:
    assert native_loads.matches((glob,), relative)


def test_literal_prefilter_rejects_a_card_under_the_memory_folder() -> None:
    patterns = native_loads.patterns_of(hosts.load_host("claude"))
    assert not native_loads._may_match(patterns, ".agents/.engram/release.md")
    assert native_loads._may_match(patterns, "docs/CLAUDE.md")


@pytest.fixture
def from_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with the cards `engram import ~/.claude/CLAUDE.md` and
    `engram import ~/.codex/AGENTS.md` made (no CLAUDE.md or AGENTS.md of the project's)."""
    from engram.cli import run

    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    home = Path.home()
    root = make_workspace(tmp_path / "proj", cards={"overview": OVERVIEW})
    for folder, name, text in ((".claude", "CLAUDE.md", "Deploy staging with `make ship`."),
                               (".codex", "AGENTS.md", "Lint with `make vet` before a commit.")):
        (home / folder).mkdir(parents=True, exist_ok=True)
        (home / folder / name).write_text(f"# Mine\n\n## Habits\n\n{text}\n", encoding="utf-8")
        assert run(["import", str(home / folder / name), "--cwd", str(root)]) == 0
    return root


def test_a_card_of_the_users_own_claude_md_is_left_to_claude(from_home: Path) -> None:
    """Claude Code loads `~/.claude/CLAUDE.md` in every project: a card imported from it went
    to Claude's hook as well once the project had no CLAUDE.md of its own (the card named
    `CLAUDE.md` as its source, which was taken for the project's), so the model read it
    twice. The card names `~/.claude/CLAUDE.md`, which Claude's definition lists."""
    assert "make ship" in (from_home / ".agents/.engram/outside-claude/habits.md").read_text(
        encoding="utf-8")
    start("claude", from_home)
    assert "make ship" not in prompt("claude", from_home, "how do I deploy staging, make ship")
    start("codex", from_home, session="s2")
    assert "make ship" in prompt("codex", from_home, "how do I deploy staging, make ship",
                                 session="s2")
    # And the other way round: Codex loads ~/.codex/AGENTS.md itself, Claude does not.
    start("claude", from_home, session="s3")
    assert "make vet" in prompt("claude", from_home, "lint with make vet", session="s3")
    start("codex", from_home, session="s4")
    assert "make vet" not in prompt("codex", from_home, "lint with make vet", session="s4")


def test_claude_gets_the_card_once_it_no_longer_loads_the_file(
        from_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `CLAUDE_CONFIG_DIR` elsewhere Claude reads its CLAUDE.md there, not in ~/.claude;
    with the file gone it reads none: either way the card is engram's to send."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    start("claude", from_home)
    assert "make ship" in prompt("claude", from_home, "how do I deploy staging, make ship")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    (Path.home() / ".claude" / "CLAUDE.md").unlink()
    start("claude", from_home, session="s5")
    assert "make ship" in prompt("claude", from_home, "how do I deploy staging, make ship",
                                 session="s5")


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(host=st.sampled_from(["claude", "codex", "gemini"]), moved=st.booleans(),
       form=st.sampled_from(["home", "absolute", "moved", "relative", "other file"]),
       state=st.sampled_from(["whole", "pointer", "gone"]))
def test_a_card_from_the_users_own_file_is_left_to_the_host_exactly_while_it_reads_it(
        host: str, moved: bool, form: str, state: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle: the host leaves the card to itself exactly when `derived_from` names the
    file it reads now (its folder, or where its own variable moved it) and that file still
    holds the original (not engram's pointer, not gone)."""
    import shutil

    definition = hosts.load_host(host)
    name = {"claude": "CLAUDE.md", "codex": "AGENTS.md", "gemini": "GEMINI.md"}[host]
    variable = {"claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME"}.get(host)
    home_folder = Path.home() / {"claude": ".claude", "codex": ".codex", "gemini": ".gemini"}[host]
    elsewhere = tmp_path / "moved-config"
    for folder in (home_folder, elsewhere):
        shutil.rmtree(folder, ignore_errors=True)
    if variable and moved:
        monkeypatch.setenv(variable, str(elsewhere))
    elif variable:
        monkeypatch.delenv(variable, raising=False)
    reads = elsewhere if variable and moved else home_folder
    named = {"home": home_folder / name, "absolute": home_folder / name, "moved": elsewhere / name,
             "relative": None, "other file": home_folder / "NOTES.md"}[form]
    source = (f"~/{named.relative_to(Path.home()).as_posix()}"
              if form == "home" and named is not None else str(named) if named else name)
    for folder in (home_folder, elsewhere):
        folder.mkdir(parents=True, exist_ok=True)
        for file in (name, "NOTES.md"):
            if state == "whole":
                (folder / file).write_text("# Mine\n\n## Habits\n\n" + "Text.\n" * 200,
                                           encoding="utf-8")
            elif state == "pointer":
                (folder / file).write_text(
                    "# Agent instructions\n\nSee `.agents/.engram/outside-x/`.\n", encoding="utf-8")
    location = str(tmp_path / "ws")
    found = native_loads.native_file(native_loads.patterns_of(definition), location,
                                     f"{location}/.agents/.engram/outside-x/habits.md",
                                     [("derived_from", f"{source}#habits")])
    expected = state == "whole" and named is not None and named == reads / name
    assert bool(found) == expected, (source, reads, found)


def _agents_md_workspace(tmp_path: Path, claude_md: str, where: str = "") -> Path:
    """A workspace whose AGENTS.md (at `where`, a folder of it) was imported by `engram
    import`, with `claude_md` as the CLAUDE.md beside it."""
    root = make_workspace(tmp_path / "agents", cards={"overview": OVERVIEW})
    folder = root / ".agents" / ".engram" / "agents"
    folder.mkdir()
    source = f"{where}/AGENTS.md" if where else "AGENTS.md"
    (folder / "testing.md").write_text(IMPORTED.replace("CLAUDE.md#", f"{source}#"),
                                       encoding="utf-8")
    (root / source).parent.mkdir(parents=True, exist_ok=True)
    (root / source).write_text("## Testing\n\nRun `make test`.\n" + "More.\n" * 200,
                               encoding="utf-8")
    (root / source).parent.joinpath("CLAUDE.md").write_text(claude_md, encoding="utf-8")
    return root


@pytest.mark.parametrize("where", ["", "services/api"])
@pytest.mark.parametrize("claude_md", [
    "@AGENTS.md\n",  # what Claude Code's docs say a repository with an AGENTS.md should do
    "# Claude\n\nRead these first: @./AGENTS.md\n\nUse plan mode for billing changes.\n",
    "See @.claude/shared.md for the rest.\n",  # an import of a file that imports it
])
def test_an_agents_md_that_claude_md_imports_is_left_to_claude(tmp_path: Path, claude_md: str,
                                                               where: str) -> None:
    """Claude Code expands `@path` imports in the CLAUDE.md it loads (relative to the
    importing file, up to 5 hops), so a CLAUDE.md holding `@AGENTS.md` loads AGENTS.md
    whole: its cards went to Claude's hook as well, and the model read each rule twice."""
    root = _agents_md_workspace(tmp_path, claude_md, where)
    shared = (root / where / ".claude" / "shared.md")
    shared.parent.mkdir(parents=True, exist_ok=True)
    shared.write_text("Shared notes.\n\n@../AGENTS.md\n", encoding="utf-8")
    start("claude", root)
    assert "make test" not in prompt("claude", root, "how do I run the testing suite")
    start("codex", root, session="s2")
    assert "make test" not in prompt("codex", root, "how do I run the testing suite",
                                     session="s2")


@pytest.mark.parametrize("claude_md", [
    "Other agents read `@AGENTS.md`; Claude does not.\n",  # a code span imports nothing
    "```\n@AGENTS.md\n```\n",  # nor does a code block
    "<!-- @AGENTS.md -->\n",
    "Mail agents@AGENTS.md for access.\n",  # not an import: no space before the @
    "@AGENTS.md.bak\n",  # another file (missing)
    "Run `make lint\n@AGENTS.md` first.\n",  # a code span over two lines
    "Notes\u2028@AGENTS.md\n",  # a line separator is no line break to Claude or Gemini
    "Notes\u00a0@AGENTS.md\n",  # nor a no-break space a space to Gemini (the narrower reading)
    "~~~\n@AGENTS.md\n~~~\n",
    "<div>\n@AGENTS.md\n</div>\n",  # an HTML block
])
def test_a_claude_md_that_does_not_import_agents_md_leaves_its_cards_to_the_hook(
        tmp_path: Path, claude_md: str) -> None:
    root = _agents_md_workspace(tmp_path, claude_md)
    start("claude", root)
    assert "make test" in prompt("claude", root, "how do I run the testing suite")


def test_an_imported_agents_md_replaced_by_the_pointer_goes_to_claude(tmp_path: Path) -> None:
    """`engram import --replace` left the pointer in AGENTS.md: what CLAUDE.md imports no
    longer holds the rules, so Claude's hook sends them."""
    root = _agents_md_workspace(tmp_path, "@AGENTS.md\n")
    (root / "AGENTS.md").write_text("# Agent instructions\n\nThis project's instructions live "
                                    "as memory cards in `.agents/.engram/agents/`.\n",
                                    encoding="utf-8")
    start("claude", root)
    assert "make test" in prompt("claude", root, "how do I run the testing suite")


@pytest.mark.parametrize("imports", [True, False])
def test_an_agents_md_that_gemini_md_imports_is_left_to_gemini(tmp_path: Path,
                                                               imports: bool) -> None:
    """Gemini CLI (0.61.0's import processor) expands `@AGENTS.md` in the GEMINI.md it loads
    too: the cards of that AGENTS.md are Gemini's own then, and only then."""
    root = _agents_md_workspace(tmp_path, "# Claude\n")
    (root / "GEMINI.md").write_text("@AGENTS.md\n" if imports else "No imports here.\n",
                                    encoding="utf-8")
    call("gemini", payload("gemini", "SessionStart.json", root, session_id="g1"))
    answer = context(call("gemini", payload("gemini", "BeforeAgent.json", root, session_id="g1",
                                            prompt="how do I run the testing suite")))
    assert ("make test" in answer) is not imports
