"""`engram lint` as a card author works from it: every problem of every card in one run, each
with a file, a line and a code; unknown keys with did-you-mean; --strict, --ignore and
`lint.ignore`; a card too large for a linked host. The one-pass report is pinned by a golden
file (regenerate with ENGRAM_UPDATE_GOLDENS=1 and review the diff)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import FIXTURES, write_card

from engram.cli import run

GOLDEN = FIXTURES / "lint" / "one-pass-report.txt"
UPDATE = os.environ.get("ENGRAM_UPDATE_GOLDENS") == "1"
MEM = ".agents/.engram"

CARDS = {
    "style.md": "---\ntitle: Code style\ntag: [style]\napplies-to: [\"src/**/*.py\"]\n---\n"
                "Format with ruff; line length 100.\n",
    "deploy.md": "---\ntitle: Deploying\npriorty: 80\ndependson: [style]\npriority: high\n"
                 "always: maybe\n---\nDeploy with `make release`.\n",
    "api/errors.md": "---\nid: errors\ntitle: API errors\n---\nReturn problem+json.\n",
    "errors.md": "---\ntitle: Error handling\n---\nNever swallow exceptions.\n",
    "release.md": "---\ntitle: Release notes\ndepends_on:\n  - style\n  - changelog-format\n"
                  "---\nEvery release gets notes.\n",
    "zig.md": "---\ntitle: Zig\napplies_to: [\"nowhere/**/*.zig\"]\n---\nUse zig fmt.\n",
    "handbook.md": "---\ntitle: The whole handbook\ntags: [handbook]\n---\n"
                   + "".join(f"Rule {n}: keep handler {n} small and tested before merging.\n"
                             for n in range(220)),
}


def engram(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run(list(args))
    return code, capsys.readouterr().out


@pytest.fixture
def store(workspace: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    for name, text in CARDS.items():
        write_card(workspace / MEM, name, text)
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
    assert run(["link", "claude", "--cwd", str(workspace)]) == 0
    capsys.readouterr()
    return workspace


def test_one_run_reports_every_problem_with_file_line_and_code(
        store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "lint", "--cwd", str(store))
    assert code == 1
    if UPDATE:
        GOLDEN.write_text(out, encoding="utf-8")
    assert out == GOLDEN.read_text(encoding="utf-8")


def test_json_sets_a_line_for_every_problem(store: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "lint", "--cwd", str(store), "--json")
    assert code == 1
    payload = json.loads(out)
    assert payload["problems"], payload
    for problem in payload["problems"]:
        assert isinstance(problem["line"], int) and problem["line"] >= 1, problem
        assert problem["code"], problem
    codes = {p["code"] for p in payload["problems"]}
    assert {"unknown-key", "invalid", "duplicate-id", "dangling-dependency", "glob-unmatched",
            "over-budget"} <= codes
    dangling = next(p for p in payload["problems"] if p["code"] == "dangling-dependency")
    lines = (store / MEM / "release.md").read_text().split("\n")
    assert "changelog-format" in lines[dangling["line"] - 1]


@pytest.mark.parametrize("typo,meant", [("tag", "tags"), ("applies-to", "applies_to"),
                                        ("priorty", "priority"), ("dependson", "depends_on"),
                                        ("Depends-On", "depends_on"), ("titel", "title")])
def test_unknown_keys_suggest_the_key_meant(workspace: Path, capsys: pytest.CaptureFixture[str],
                                            typo: str, meant: str) -> None:
    write_card(workspace / MEM, "card.md", f"---\ntitle: T\n{typo}: x\n---\nBody.\n")
    code, out = engram(capsys, "lint", "--cwd", str(workspace))
    assert code == 0
    assert f"card.md:3: warning: unknown frontmatter key `{typo}` is ignored; did you mean " \
           f"`{meant}`? [unknown-key]" in out


def test_strict_fails_on_warnings_and_ignore_skips_a_check(
        workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_card(workspace / MEM, "zig.md", CARDS["zig.md"])
    assert engram(capsys, "lint", "--cwd", str(workspace))[0] == 0
    code, out = engram(capsys, "lint", "--cwd", str(workspace), "--strict")
    assert code == 1 and "[glob-unmatched]" in out
    code, out = engram(capsys, "lint", "--cwd", str(workspace), "--strict",
                       "--ignore", "glob-unmatched")
    assert code == 0 and "1 ignored" in out and "[glob-unmatched]" not in out
    assert run(["config", "set", "lint.ignore", "glob-unmatched", "--cwd", str(workspace)]) == 0
    capsys.readouterr()
    assert engram(capsys, "lint", "--cwd", str(workspace), "--strict")[0] == 0


def test_a_project_without_cards_is_an_error_that_names_init(
        workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "lint", "--cwd", str(workspace))
    assert code == 1
    assert "no memory cards found" in out and "engram init" in out and "[no-cards]" in out


def test_over_budget_only_for_linked_hosts(workspace: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    write_card(workspace / MEM, "handbook.md", CARDS["handbook.md"])
    code, out = engram(capsys, "lint", "--cwd", str(workspace))
    assert code == 0 and "over-budget" not in out
    assert run(["link", "codex", "--cwd", str(workspace)]) == 0
    capsys.readouterr()
    code, out = engram(capsys, "lint", "--cwd", str(workspace))
    assert "larger than codex's budget of 2,400 tokens" in out and "split it" in out
    assert "claude" not in out


def test_linked_hosts_read_from_the_configs_or_from_doctors_rows_agree(
        workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """lint reads the configs itself; doctor hands it the rows it inspected. One test of what
    counts as linked serves both, so they name the same hosts."""
    from engram import card_size
    from engram.installer import health, ops

    def both() -> tuple[list[str], list[str]]:
        rows = [health.inspect(host, workspace, scope, ops.path_rules(workspace))
                for host in card_size.injecting_hosts() if host.install for scope in (False, True)]
        return card_size.linked_hosts(workspace), card_size.linked_hosts(workspace, rows)

    assert both() == ([], [])
    assert run(["link", "codex", "--cwd", str(workspace)]) == 0
    assert run(["link", "claude", "--cwd", str(workspace)]) == 0
    capsys.readouterr()
    linked = both()
    assert linked[0] == linked[1] and sorted(linked[0]) == ["claude", "codex"]
    (workspace / ".codex" / "hooks.json").write_text("{ not json")  # broken: still linked?
    assert both()[0] == both()[1]
