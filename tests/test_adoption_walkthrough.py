"""From an existing repository to routed memory: the README's "Use it in your repository"
commands, run in order in a temp repository with a realistic CLAUDE.md (8 sections), Cursor
rules and Copilot instructions, then a hook session through the linked host. Also init, import,
new, show and --why-not on their own."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

from engram import hook
from engram.cli import run

CLAUDE_MD = (FIXTURES / "adoption" / "CLAUDE.md").read_text(encoding="utf-8")
MEM = Path(".agents/.engram")


def engram(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def readme_commands() -> list[list[str]]:
    """The engram commands of the README section, in order (install and cd lines skipped)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Use it in your repository", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL).group(1)
    commands = []
    for line in block.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "engram":
            commands.append(words[1:])
    return commands


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "acme"
    (root / ".git").mkdir(parents=True)
    (root / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    rules = root / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "react.mdc").write_text(
        "---\ndescription: React component rules for the storefront\nglobs: web/**/*.tsx\n"
        "alwaysApply: false\n---\nUse function components and CSS modules.\n", encoding="utf-8")
    instructions = root / ".github" / "instructions"
    instructions.mkdir(parents=True)
    (instructions / "python.instructions.md").write_text(
        "---\napplyTo: 'shop/**/*.py'\n---\nType hints on every public function; ruff clean.\n",
        encoding="utf-8")
    (root / ".claude").mkdir()
    for path in ("web/src/App.tsx", "shop/payments/gateway.py", "shop/catalog/models.py"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("\n", encoding="utf-8")
    return root


def _context(answer: str) -> str:
    return (json.loads(answer).get("hookSpecificOutput") or {}).get("additionalContext", "") \
        if answer.strip() else ""


def test_readme_walkthrough_reaches_routed_memory_in_a_linked_host(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commands = readme_commands()
    assert [c[0] for c in commands] == ["init", "import", "import", "lint", "route", "link",
                                        "import"]
    outputs = []
    for args in commands:
        code, out = engram(capsys, *args, "--cwd", str(repo))
        assert code == 0, (args, out)
        outputs.append(out)
    init, preview, imported, lint, route, link, replaced = outputs
    assert "ROUTED   .cursor/rules/" in init and "ROUTED   .github/instructions/" in init
    assert "FOUND    CLAUDE.md" in init and "engram link claude" in init
    assert "dry run: nothing written" in preview
    assert "today:" in imported and "engram:" in imported
    assert "0 error(s), 0 warning(s)" in lint
    assert "payments" in route
    assert (repo / ".claude" / "settings.json").is_file()
    assert "REPLACED CLAUDE.md" in replaced
    archived = repo / MEM / "archive" / "CLAUDE.md"
    assert archived.read_text(encoding="utf-8") == CLAUDE_MD
    assert len((repo / "CLAUDE.md").read_text(encoding="utf-8")) < 400

    cards = sorted(p.stem for p in (repo / MEM / "claude").glob("*.md"))
    assert len(cards) == 9  # the preamble and the 8 sections
    assert {"acme-shop", "project-overview", "testing", "payments", "deployment"} <= set(cards)

    # A Claude Code session through the hook the link installed.
    def fire(event: str, **extra: object) -> str:
        raw = json.dumps({"session_id": "walk", "cwd": str(repo), "hook_event_name": event,
                          **extra}).encode()
        return _context(hook.handle("claude", raw))

    start = fire("SessionStart", source="startup")
    assert "### engram memory: acme-shop" in start
    assert "### engram memory: project-overview" in start
    webhook = fire("UserPromptSubmit", prompt="Why is the stripe webhook processed twice?")
    assert "### engram memory: payments" in webhook
    again = fire("UserPromptSubmit", prompt="Stripe webhook again: make it idempotent")
    assert "### engram memory: payments" not in again  # never the same card twice
    react = fire("UserPromptSubmit", prompt="Add a react component for the cart badge")
    assert "### engram memory: react" in react  # a Cursor rule routed to Claude Code
    off_topic = fire("UserPromptSubmit", prompt="thanks")
    assert off_topic == ""
    total = sum(map(len, (start, webhook, again, react, off_topic)))
    assert total < len(CLAUDE_MD) + len(start)


def test_init_is_idempotent_and_yes_imports_and_links(repo: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, first = engram(capsys, "init", "--no-input", "--cwd", str(repo))
    assert code == 0
    config = (repo / ".agents" / "engram.json").read_text(encoding="utf-8")
    assert json.loads(config)["roots"] == [".cursor/rules", ".github/instructions"]
    assert (repo / MEM / "memory-cards.md").is_file()
    code, second = engram(capsys, "init", "--no-input", "--cwd", str(repo))
    assert code == 0 and "CREATED" not in second and "ROUTED" not in second
    assert (repo / ".agents" / "engram.json").read_text(encoding="utf-8") == config
    code, out = engram(capsys, "init", "--yes", "--cwd", str(repo))
    assert code == 0, out
    assert (repo / MEM / "claude" / "payments.md").is_file()
    assert (repo / ".claude" / "settings.json").is_file()
    code, out = engram(capsys, "init", "--no-input", "--cwd", str(repo))
    assert "is imported into .agents/.engram/claude/" in out and "claude is linked" in out
    assert "next:" in out and "engram import" not in out.split("next:")[1]


def test_init_never_routes_engrams_generated_claude_rules(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    own = repo / ".claude" / "rules"
    (own / "engram").mkdir(parents=True)
    (own / "style.md").write_text("---\npaths: ['shop/**']\n---\nBlack formatting.\n")
    (own / "engram" / "payments.md").write_text(
        "---\npaths: ['shop/**']\n---\n<!-- engram:generated from memory card payments -->\nX\n")
    assert engram(capsys, "init", "--no-input", "--cwd", str(repo))[0] == 0
    code, out = engram(capsys, "lint", "--cwd", str(repo), "--json")
    paths = {p["path"] for p in json.loads(out)["problems"]}
    assert not any("/engram/" in p for p in paths), paths
    assert json.loads(out)["cards"] == 4  # starter, react, python, style


def test_import_splits_by_headings_and_keeps_global_content_global(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "import", "CLAUDE.md", "--json", "--cwd", str(repo))
    assert code == 0
    report = json.loads(out)["imports"][0]
    by_id = {c["id"]: c for c in report["cards"]}
    assert by_id["acme-shop"]["always"] and by_id["project-overview"]["always"]
    assert not by_id["testing"]["always"] and by_id["testing"]["tags"] == ["testing"]
    assert by_id["database-migrations"]["line"] == CLAUDE_MD.split("\n").index(
        "## Database migrations") + 1
    text = (repo / MEM / "claude" / "database-migrations.md").read_text(encoding="utf-8")
    assert 'derived_from: "CLAUDE.md#database-migrations"' in text
    assert "card: \"Every model change ships with a migration" in text
    assert report["source_chars"] == len(CLAUDE_MD)
    assert (repo / "CLAUDE.md").read_text(encoding="utf-8") == CLAUDE_MD  # untouched
    # Importing again writes nothing new; an edited card is kept, not overwritten.
    edited = repo / MEM / "claude" / "testing.md"
    edited.write_text(edited.read_text(encoding="utf-8") + "Also run mypy.\n", encoding="utf-8")
    code, out = engram(capsys, "import", "CLAUDE.md", "--cwd", str(repo))
    assert code == 0 and "(kept)" in out and "(unchanged)" in out
    assert "Also run mypy." in edited.read_text(encoding="utf-8")


def test_import_avoids_ids_taken_by_other_cards(repo: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (repo / MEM).mkdir(parents=True)
    (repo / MEM / "testing.md").write_text("---\ntitle: Our testing\n---\nPytest.\n")
    code, out = engram(capsys, "import", "CLAUDE.md", "--cwd", str(repo))
    assert code == 0
    assert (repo / MEM / "claude" / "claude-testing.md").is_file()
    code, out = engram(capsys, "lint", "--cwd", str(repo))
    assert "duplicate" not in out


def test_new_writes_a_valid_card_and_show_prints_it_with_sizes(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "new", "db-migrations", "--title", "Database migrations",
                       "--tags", "db,migrations", "--applies-to", "shop/**/migrations/*.py",
                       "--body", "Migrations must be reversible.", "--cwd", str(repo))
    assert code == 0 and "CREATED" in out
    code, out = engram(capsys, "new", "db-migrations", "--cwd", str(repo))
    assert code == 1 and "exists" in out
    code, out = engram(capsys, "show", "db-migrations", "--cwd", str(repo))
    assert code == 0
    assert "Migrations must be reversible." in out and "key       db-migrations@" in out
    assert re.search(r"claude \d+ of 9,500 chars \(fits\)", out)
    code, out = engram(capsys, "show", "db-migrations", "--json", "--cwd", str(repo))
    payload = json.loads(out)
    assert payload["tags"] == ["db", "migrations"] and payload["body"].startswith("Migrations")
    assert {s["host"] for s in payload["sizes"]} >= {"claude", "codex"}
    code, out = engram(capsys, "show", "db-migration", "--cwd", str(repo))
    assert code == 1 and "did you mean db-migrations" in out
    code, out = engram(capsys, "new", "placeholder-card", "--cwd", str(repo))
    code, out = engram(capsys, "lint", "--cwd", str(repo))
    assert "[placeholder]" in out


def test_why_not_says_in_words_which_words_matched_where(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert engram(capsys, "import", "CLAUDE.md", "--cwd", str(repo))[0] == 0
    code, out = engram(capsys, "route", "make the stripe webhook idempotent", "--why-not",
                       "deployment", "--cwd", str(repo))
    assert code == 0
    assert "None of the prompt's words" in out and "'stripe'" in out
    assert "A prompt naming one of its tags (deployment) always selects it." in out
    code, out = engram(capsys, "route", "make the stripe webhook idempotent", "--why-not",
                       "payments", "--cwd", str(repo))
    assert "payments IS selected" in out and "'stripe'" in out
    code, out = engram(capsys, "route", "run the tests before the deploy tag", "--why-not",
                       "frontend-conventions", "--cwd", str(repo))
    assert re.search(r"matched frontend-conventions on .* in its body|None of the prompt", out)
    assert "messag" not in out  # words as typed, never stems
    code, out = engram(capsys, "route", "x", "--why-not", "paymnts", "--cwd", str(repo))
    assert "Did you mean payments?" in out


class _Terminal:
    """stdin as a terminal that answers the init questions."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        return self.answers.pop(0) + "\n" if self.answers else ""


def test_init_asks_before_importing_and_linking(repo: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _Terminal(["y", "n"]))
    code, out = engram(capsys, "init", "--cwd", str(repo))
    assert code == 0, out
    assert "Import CLAUDE.md into memory cards now? [Y/n]" in out
    assert "Link engram into claude, cursor? [Y/n]" in out
    assert (repo / MEM / "claude" / "payments.md").is_file()
    assert not (repo / ".claude" / "settings.json").exists()
    assert "engram link claude" in out.rsplit("next:\n", 1)[1]


def test_import_takes_one_copy_of_files_with_the_same_content(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "AGENTS.md").symlink_to("CLAUDE.md")
    code, out = engram(capsys, "init", "--yes", "--cwd", str(repo))
    assert code == 0, out
    assert "SKIPPED AGENTS.md: same content as CLAUDE.md" in out
    assert not (repo / MEM / "agents").exists()
    code, out = engram(capsys, "lint", "--strict", "--cwd", str(repo))
    assert code == 0, out


def test_import_measures_over_the_users_own_prompts(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts = repo / "prompts.txt"
    prompts.write_text("Why is the stripe webhook processed twice?\n"
                       '{"prompt": "fix the model", "paths": ["shop/catalog/models.py"]}\n',
                       encoding="utf-8")
    code, out = engram(capsys, "import", "CLAUDE.md", "--dry-run", "--prompts", str(prompts),
                       "--json", "--cwd", str(repo))
    assert code == 0
    report = json.loads(out)["imports"][0]
    assert report["prompts"] == 2 and "payments" in report["delivered"]
    assert not (repo / MEM / "claude").exists()


def test_import_says_more_not_negative_less_when_a_file_is_too_small_to_gain() -> None:
    from engram.commands.import_cmd import _saving

    assert _saving(0.62) == "62% less"
    assert _saving(-0.05).startswith("5% more")


def test_import_claims_no_saving_when_no_prompt_selected_a_card(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A session that sent no card saves nothing to speak of: '100% less' would be the claim
    of a store the prompts never reach. The table says no prompt selected a card instead."""
    prompts = repo / "prompts.txt"
    prompts.write_text("Tune the quantum flux capacitor's oscillation\n", encoding="utf-8")
    code, out = engram(capsys, "import", "CLAUDE.md", "--dry-run", "--prompts", str(prompts),
                       "--cwd", str(repo))
    assert code == 0
    engram_line = next(line for line in out.splitlines() if line.strip().startswith("engram:"))
    assert "less" not in engram_line and "no prompt selected a card" in engram_line
    # Only the always cards went out, and the line says so.
    assert "only the 2 always card(s) went out" in engram_line
    assert "--prompts" not in engram_line
    code, out = engram(capsys, "import", "CLAUDE.md", "--dry-run", "--cwd", str(repo))
    assert code == 0
    engram_line = next(line for line in out.splitlines() if line.strip().startswith("engram:"))
    # The sample's prompts do reach this repository's cards: the saving is stated as before.
    assert "no prompt selected" not in engram_line and "% " in engram_line


def git_repository(tmp_path: Path) -> tuple[str, Path]:
    """A real Git repository (`acme`), and the git program; skipped without one."""
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    root = tmp_path / "acme"
    root.mkdir()
    subprocess.run([git, "init", "-q", str(root)], check=True)
    return git, root


def git_status(git: str, root: Path) -> str:
    """What `git add -A` would stage, one `?? path` line each."""
    import subprocess

    return subprocess.run([git, "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
                          capture_output=True, text=True, check=True).stdout


def test_a_file_git_ignores_is_imported_into_cards_git_ignores_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the secrets owner: `CLAUDE.local.md` (personal, ignored by Git) holding a
    staging password was imported into `.agents/.engram/claude.local/`, which `git add -A`
    stages: the card was blocked from every hook, yet the password went into the team's
    history, and the personal notes with it. A file Git ignores gives cards Git ignores, and
    its archived original too; the import says so, and names the card holding a secret."""
    git, root = git_repository(tmp_path)
    (root / ".gitignore").write_text("CLAUDE.local.md\n", encoding="utf-8")
    secret = "postgres://admin:Vq8-rT2zLmx9Kp@staging.db.acme.internal:5432/app"
    (root / "CLAUDE.local.md").write_text(
        "# My notes\n\n## Staging\n\nConnect with `" + secret + "`.\n\n"
        "## Review style\n\nI like small pull requests, reviewed the same day.\n",
        encoding="utf-8")
    (root / "CLAUDE.md").write_text("# Team\n\n## Testing\n\nRun pytest before pushing.\n",
                                    encoding="utf-8")
    code, out = engram(capsys, "import", "CLAUDE.local.md", "CLAUDE.md", "--cwd", str(root))
    assert code == 0
    assert secret not in out and "Vq8-rT2zLmx9Kp" not in out
    assert "ignored by Git" in out
    assert "holds a secret" in out
    status = git_status(git, root)
    personal = root / MEM / "claude.local"
    assert sorted(p.name for p in personal.glob("*.md"))  # the cards are there, for this user
    assert "claude.local" not in status, status
    assert ".agents/.engram/claude/testing.md" in status  # the team's file's cards are not hidden
    code, out = engram(capsys, "import", "CLAUDE.local.md", "--replace", "--cwd", str(root))
    assert code == 0
    status = git_status(git, root)
    assert "archive" not in status and "claude.local" not in status, status
    assert (root / MEM / "archive" / "CLAUDE.local.md").read_text(encoding="utf-8").count(secret) == 1


def test_the_users_own_global_file_is_not_merged_into_the_teams_cards(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`engram import ~/.claude/CLAUDE.md` in a repository whose CLAUDE.md was imported: the
    user's sections went into the team's `claude/` folder (a section of the same name silently
    "kept" as the team's), where `git add -A` stages them; `--replace` would have left Claude a
    pointer to this repository's cards in every other project. Now the file gets a folder of
    its own, kept out of Git, and `--replace` is refused with the file untouched."""
    git, root = git_repository(tmp_path)
    (root / "CLAUDE.md").write_text("# Team\n\n## Testing\n\nRun pytest before pushing.\n",
                                    encoding="utf-8")
    mine = tmp_path / "home" / ".claude" / "CLAUDE.md"
    mine.parent.mkdir(parents=True, exist_ok=True)
    personal = "# Me\n\n## Testing\n\nI like verbose output.\n\n## Staging\n\nMine is db-7.\n"
    mine.write_text(personal, encoding="utf-8")
    assert engram(capsys, "import", "CLAUDE.md", "--cwd", str(root))[0] == 0
    code, out = engram(capsys, "import", str(mine), "--replace", "--cwd", str(root))
    assert code == 1 and "REFUSED" in out, out
    assert mine.read_text(encoding="utf-8") == personal
    assert not (root / MEM / "outside-claude").exists()
    code, out = engram(capsys, "import", str(mine), "--cwd", str(root))
    assert code == 0, out
    assert "outside this repository" in out and "--replace" not in out.split("next:")[0]
    team = root / MEM / "claude" / "testing.md"
    assert "Run pytest" in team.read_text(encoding="utf-8")
    assert sorted(p.name for p in (root / MEM / "claude").glob("*.md")) == ["testing.md"]
    texts = [p.read_text(encoding="utf-8") for p in (root / MEM / "outside-claude").glob("*.md")]
    assert any("verbose output" in t for t in texts) and any("db-7" in t for t in texts)
    status = git_status(git, root)
    assert "outside-claude" not in status and ".agents/.engram/claude/testing.md" in status


def test_a_file_from_outside_a_workspace_without_git_imports_without_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a repository nothing is staged: no `WARNING` that Git does not ignore the
    cards, exit 0 (Git's check answers nothing there, which is no "not ignored")."""
    root = tmp_path / "notes"
    (root / ".agents").mkdir(parents=True)
    (root / ".agents" / "engram.json").write_text("{}", encoding="utf-8")
    mine = tmp_path / "home" / "CLAUDE.md"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("# Me\n\n## Style\n\nSmall pull requests.\n", encoding="utf-8")
    code, out = engram(capsys, "import", str(mine), "--cwd", str(root))
    assert code == 0 and "WARNING" not in out, out
    assert (root / MEM / "outside-claude" / "style.md").is_file()


def test_import_gives_a_section_the_workspace_paths_it_names_as_applies_to(
        tmp_path: Path) -> None:
    from engram.commands.import_cmd import _path_kind
    from engram.importer import named_paths, plan

    (tmp_path / "backend" / "migrations").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "api.md").write_text("x", encoding="utf-8")
    kind = _path_kind(tmp_path)
    body = ("Put them in `backend/migrations/`, document them in `docs/api.md`, lint "
            "`backend/**/*.py`; not `missing/dir/`, `../outside/x`, `https://x.org/a/b`, "
            "`/etc/passwd` or `--flag/x`.")
    assert named_paths(body, kind) == ("backend/migrations/**", "docs/api.md",
                                       "backend/**/*.py")
    assert named_paths(body, None) == ()  # pure planning without a workspace derives nothing
    text = ("# Guide\n\nBe brief.\n\n## Migrations\nReversible only, in `backend/migrations/`.\n"
            "\n## Style\nShort names.\n")
    cards = {card.id: card for card in plan(text, "CLAUDE.md", kind)}
    assert cards["migrations"].applies_to == ("backend/migrations/**",)
    assert cards["style"].applies_to == ()
    assert all(not card.applies_to for card in cards.values() if card.always)


def test_importing_the_pointer_again_imports_nothing(repo: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """`import --replace` run twice (or `import` after it) must not split engram's own pointer
    into a card, nor say it replaced a file it had already replaced."""
    code, out = engram(capsys, "import", "CLAUDE.md", "--replace", "--cwd", str(repo))
    assert code == 0 and "REPLACED CLAUDE.md" in out
    cards = sorted((repo / MEM / "claude").glob("*.md"))
    pointer = (repo / "CLAUDE.md").read_bytes()
    for args in (["--replace"], [], ["--dry-run"]):
        code, again = engram(capsys, "import", "CLAUDE.md", *args, "--cwd", str(repo))
        assert code == 0, again
        assert "REPLACED" not in again and "agent-instructions" not in again, again
        assert "already engram's pointer" in again
        assert sorted((repo / MEM / "claude").glob("*.md")) == cards
        assert (repo / "CLAUDE.md").read_bytes() == pointer
    assert (repo / MEM / "archive" / "CLAUDE.md").read_text(encoding="utf-8") == CLAUDE_MD



def test_init_counts_a_linked_windsurf_as_linked(repo: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "link", "windsurf", "--cwd", str(repo))
    assert code == 0 and (repo / ".windsurf" / "hooks.json").is_file(), out
    code, out = engram(capsys, "init", "--no-input", "--cwd", str(repo))
    assert code == 0 and "windsurf is linked" in out, out
    assert "engram link windsurf" not in out.split("next:")[1]


@pytest.mark.parametrize("link", [True, False], ids=["symlink", "copy"])
def test_a_second_run_never_imports_a_twin_of_an_imported_file(
        repo: Path, capsys: pytest.CaptureFixture[str], link: bool) -> None:
    """AGENTS.md as a symlink or copy of CLAUDE.md is imported once, under CLAUDE.md, in one
    run; a later `init --yes` or `import AGENTS.md` must not import it again under other ids
    (every card would be routed twice)."""
    agents = repo / "AGENTS.md"
    if link:
        agents.symlink_to("CLAUDE.md")
    else:
        agents.write_text(CLAUDE_MD, encoding="utf-8")
    code, out = engram(capsys, "init", "--yes", "--cwd", str(repo))
    assert code == 0, out
    folders = sorted(p.name for p in (repo / MEM).iterdir() if p.is_dir())
    assert folders == ["claude"]
    for args in (["init", "--yes"], ["import", "AGENTS.md"], ["init", "--no-input"]):
        code, out = engram(capsys, *args, "--cwd", str(repo))
        assert code == 0, out
        assert sorted(p.name for p in (repo / MEM).iterdir() if p.is_dir()) == folders, args
        assert "FOUND    AGENTS.md" not in out, out


def test_replace_of_a_symlinked_claude_md_replaces_the_link_not_its_target(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CLAUDE.md as a symlink to AGENTS.md: `import CLAUDE.md --replace` is about CLAUDE.md.
    It used to resolve the link and import and overwrite AGENTS.md instead (cards under
    `agents/`, AGENTS.md turned into the pointer, so Codex lost the file it loads whole)."""
    (repo / "CLAUDE.md").rename(repo / "AGENTS.md")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    for args in ([], ["--replace"]):
        code, out = engram(capsys, "import", "CLAUDE.md", *args, "--cwd", str(repo))
        assert code == 0 and "CLAUDE.md -> .agents/.engram/claude/" in out, out
    assert "REPLACED CLAUDE.md" in out
    assert sorted(p.name for p in (repo / MEM).iterdir() if p.is_dir()) == ["archive", "claude"]
    assert (repo / "AGENTS.md").read_text(encoding="utf-8") == CLAUDE_MD
    assert not (repo / "CLAUDE.md").is_symlink()
    assert len((repo / "CLAUDE.md").read_text(encoding="utf-8")) < 400
    assert (repo / MEM / "archive" / "CLAUDE.md").read_text(encoding="utf-8") == CLAUDE_MD
