"""`engram route` and `engram lint` as a user runs them: exit codes, --json envelopes with
pinned keys, --explain, --batch, --root, --limit, and errors outside a workspace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, write_card

from engram import __version__
from engram.cli import run

MEM = ".agents/.engram"
FILLER_WORDS = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "glacier", "harbor",
                "iris", "juniper", "kelp", "lichen", "moss", "nectar", "opal", "pumice"]


def engram(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def ws(workspace: Path) -> Path:
    mem = workspace / MEM
    for word in FILLER_WORDS:
        write_card(mem, f"filler/filler-{word}.md",
                   f"---\ntitle: {word.title()} notes\n---\nAbout {word}.\n")
    write_card(mem, "migrations.md", "---\ntitle: Database migrations\ntags: [database]\n---\n"
               "Write reversible migrations.\n")
    write_card(mem, "python.md", "---\ntitle: Python files\napplies_to: [\"src/**/*.py\"]\n"
               "depends_on: [base]\n---\nType hints everywhere.\n")
    write_card(mem, "base.md", "---\ntitle: Base conventions\n---\nBase.\n")
    write_card(mem, "start.md", "---\ntitle: Project overview\nalways: true\n---\nOverview.\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
    return workspace


# --- route ----------------------------------------------------------------------------------

def test_route_json_envelope_keys_are_pinned(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = engram(capsys, "route", "database migrations", "--path", "src/app.py",
                          "--cwd", str(ws), "--json")
    assert code == 0
    payload = json.loads(out)
    assert set(payload) == {"engram", "version", "limit", "selected", "warnings"}
    assert payload["version"] == 1 and payload["limit"] == 8
    assert payload["warnings"] == []
    for selected in payload["selected"]:
        assert set(selected) == {"id", "score", "path", "counted", "reasons"}
        assert isinstance(selected["score"], (int, float))
        assert Path(selected["path"]).is_file()
        for reason in selected["reasons"]:
            assert set(reason) <= {"kind", "detail", "words"}
            assert reason["kind"] in {"path", "text", "tag", "always", "dependency"}
            for word in reason.get("words", ()):
                assert set(word) == {"word", "field"}
                assert word["field"] in {"title", "tags", "description", "body"}
    ids = [s["id"] for s in payload["selected"]]
    assert ids == ["start", "base", "python", "migrations"]
    assert [s["counted"] for s in payload["selected"]] == [False, False, True, True]
    kinds = {s["id"]: [r["kind"] for r in s["reasons"]] for s in payload["selected"]}
    assert kinds["start"] == ["always"]
    assert kinds["base"][0] == "dependency"
    assert kinds["python"] == ["path"]
    assert "tag" in kinds["migrations"] and "text" in kinds["migrations"]


def test_route_json_reports_skipped_cards_as_warnings(ws: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    write_card(ws / MEM, "broken.md", "---\npriority: high\n---\nBody.\n")
    code, out, _ = engram(capsys, "route", "hello", "--cwd", str(ws), "--json")
    assert code == 0
    warnings = json.loads(out)["warnings"]
    assert len(warnings) == 1 and "broken.md:2: error:" in warnings[0]


def test_route_explain_names_every_reason(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = engram(capsys, "route", "database migrations", "--path", "src/app.py",
                          "--cwd", str(ws), "--explain")
    assert code == 0
    assert "always: delivered at session start" in out
    assert "path: src/**/*.py matches src/app.py" in out
    assert "dependency: required by python" in out
    assert "tag: the prompt names its tag 'database'" in out
    assert "why: the prompt names one of its tags" in out
    assert 'words: matched "migrations" in the title' in out
    assert "how cards are chosen:" in out
    assert "{" not in out.split("how cards are chosen:")[1]  # no unfilled placeholder
    # the rule of the code written (`--written`, a path event) too, which selects no card here
    assert "code written into a touched file (a path event, `--written`) selects a card on 2 " \
        "pieces of evidence" in out
    assert "score" not in out  # a raw score means nothing to a card author
    plain = engram(capsys, "route", "database migrations", "--cwd", str(ws))[1]
    assert "migrations" in plain and "words:" not in plain and "score" not in plain


def test_route_limit_says_what_it_shows_on_top(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--limit 1` ranks one card; the always card and the ranked card's dependency are shown
    on top of the limit, and the output says so."""
    code, out, _ = engram(capsys, "route", "--path", "src/app.py", "--cwd", str(ws), "--limit", "1")
    assert code == 0
    assert "not counted in the limit" in out
    assert "note: the limit (1) counts the 1 ranked card(s); 2 more shown on top of it" in out


def test_route_abstains_on_small_talk(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for prompt in ("hello there", "thanks!"):
        code, out, _ = engram(capsys, "route", prompt, "--cwd", str(ws), "--json")
        assert code == 0
        assert [s["id"] for s in json.loads(out)["selected"]] == ["start"]


def test_route_limit(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for n in range(5):
        write_card(ws / MEM, f"src{n}.md", f"---\napplies_to: [src/**]\n---\nS{n}.\n")
    out = engram(capsys, "route", "--path", "src/app.py", "--cwd", str(ws), "--json",
                 "--limit", "2")[1]
    ranked = [s for s in json.loads(out)["selected"]
              if s["reasons"][0]["kind"] not in ("always", "dependency")]
    assert len(ranked) == 2
    code, _, err = engram(capsys, "route", "x", "--cwd", str(ws), "--limit", "0")
    assert code == 1 and "--limit" in err


def test_route_batch_one_line_out_per_line_in(ws: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text("\n".join([
        json.dumps({"prompt": "database migrations"}),
        json.dumps({"prompt": "", "paths": ["src/app.py"]}),
        "not json",
        json.dumps({"prompt": "hello there", "paths": []}),
        json.dumps({"prompt": 3}),
    ]) + "\n", encoding="utf-8")
    code, out, _ = engram(capsys, "route", "--batch", str(batch), "--cwd", str(ws))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 5
    results = [json.loads(line) for line in lines]
    assert all(set(r) == {"engram", "version", "limit", "selected", "warnings"} for r in results)
    ids = [[s["id"] for s in r["selected"]] for r in results]
    assert "migrations" in ids[0]
    assert ids[1] == ["start", "base", "python"]
    assert ids[2] == [] and results[2]["warnings"][0].startswith("line 3:")
    assert ids[3] == ["start"]
    assert ids[4] == [] and results[4]["warnings"][0].startswith("line 5:")


def test_route_root_routes_over_explicit_roots(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    cards = tmp_path / "cards"
    write_card(cards, "rust.md", "---\ntitle: Rust crates\napplies_to: [\"**/*.rs\"]\n---\nR.\n")
    plain = tmp_path / "plain"  # not a workspace: --root needs none
    plain.mkdir()
    code, out, _ = engram(capsys, "route", "--path", "lib/a.rs", "--root", str(cards),
                          "--cwd", str(plain), "--json")
    assert code == 0
    assert [s["id"] for s in json.loads(out)["selected"]] == ["rust"]
    code, _, err = engram(capsys, "route", "x", "--root", str(tmp_path / "missing"),
                          "--cwd", str(plain))
    assert code == 1 and "memory root not found" in err


def test_route_outside_a_workspace_is_a_clear_error(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, out, err = engram(capsys, "route", "anything", "--cwd", str(plain))
    assert code == 1
    assert out == ""
    assert err.startswith("engram: error: no workspace found")
    assert "hint:" in err and "--root" in err
    assert "Traceback" not in err


def test_route_needs_a_prompt_or_a_path(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = engram(capsys, "route", "--cwd", str(ws))
    assert code == 1 and "prompt" in err


# --- lint -----------------------------------------------------------------------------------

def test_lint_clean_store_exits_0(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = engram(capsys, "lint", "--cwd", str(ws))
    assert code == 0, out
    assert "0 error(s)" in out


def test_lint_errors_exit_1_with_file_and_line(ws: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    write_card(ws / MEM, "broken.md", "---\ntitle: t\npriority: high\n---\nBody.\n")
    code, out, _ = engram(capsys, "lint", "--cwd", str(ws))
    assert code == 1
    # Paths are shown relative to where the user stands (--cwd here).
    assert f"{Path(MEM) / 'broken.md'}:3: error:" in out and out.rstrip().count("[invalid]") == 1
    assert "1 error(s)" in out


def test_lint_warnings_alone_exit_0(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_card(ws / MEM, "everything.md", "---\napplies_to: [\"**/*\"]\n---\nAll files.\n")
    code, out, _ = engram(capsys, "lint", "--cwd", str(ws))
    assert code == 0
    assert "matches every file" in out


def test_lint_flags_broken_globs_in_json(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_card(ws / MEM, "spec.md", "---\ntitle: Spec\napplies_to: /**/*.\n---\nSpec.\n")
    write_card(ws / MEM, "docs.md",
               "---\ntitle: Docs\napplies_to: \"docs/\\\\*_/_.{md,mdx}\"\n---\nDocs.\n")
    write_card(ws / MEM, "nowhere.md",
               "---\ntitle: Nowhere\napplies_to: [\"nowhere/**/*.zig\"]\n---\nNone.\n")
    code, out, _ = engram(capsys, "lint", "--cwd", str(ws), "--json")
    assert code == 1
    payload = json.loads(out)
    assert set(payload) == {"engram", "version", "roots", "cards", "errors", "warnings", "ignored",
                            "problems"}
    assert payload["version"] == 1
    assert payload["roots"] == [str(ws / MEM)]
    for problem in payload["problems"]:
        assert set(problem) == {"path", "line", "severity", "code", "message"}
    by_file: dict[str, list[dict]] = {}
    for problem in payload["problems"]:
        by_file.setdefault(Path(problem["path"]).name, []).append(problem)
    spec = [p for p in by_file["spec.md"] if p["severity"] == "error"]
    assert spec and all(p["line"] == 3 and p["code"] == "glob" for p in spec)
    assert "'/**/*.'" in spec[0]["message"]
    docs = [p for p in by_file["docs.md"] if p["severity"] == "error"]
    assert docs and docs[0]["line"] == 3 and "backslash" in " ".join(p["message"] for p in docs)
    assert [p["code"] for p in by_file["nowhere.md"]] == ["glob-unmatched"]
    assert payload["errors"] == sum(p["severity"] == "error" for p in payload["problems"])
    assert payload["warnings"] == len(payload["problems"]) - payload["errors"]


def test_lint_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cards = tmp_path / "cards"
    write_card(cards, "dup1.md", "---\nid: same\n---\nOne.\n")
    write_card(cards, "dup2.md", "---\nid: same\n---\nTwo.\n")
    code, out, _ = engram(capsys, "lint", "--root", str(cards), "--json")
    assert code == 1
    payload = json.loads(out)
    assert payload["roots"] == [str(cards)]
    # Neither file is named `same`: both are reported, with the line of their `id:`.
    assert [(Path(p["path"]).name, p["line"], p["code"]) for p in payload["problems"]] == [
        ("dup1.md", 2, "duplicate-id"), ("dup2.md", 2, "duplicate-id")]


def test_lint_outside_a_workspace_is_a_clear_error(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, _, err = engram(capsys, "lint", "--cwd", str(plain))
    assert code == 1 and "no workspace found" in err


# --- the executables ------------------------------------------------------------------------

def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO))


ENGRAM_BIN = Path(sys.executable).with_name("engram")


@pytest.mark.parametrize("argv", [
    [str(ENGRAM_BIN), "--version"],
    [sys.executable, "-m", "engram", "--version"],
])
def test_version_as_a_subprocess(argv: list[str], tmp_path: Path) -> None:
    if not Path(argv[0]).exists():
        pytest.skip(f"{argv[0]} is not installed next to this Python")
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=_env(),
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"engram {__version__}"


@pytest.mark.parametrize("argv", [
    [str(ENGRAM_BIN), "--help"],
    [sys.executable, "-m", "engram", "--help"],
])
def test_help_as_a_subprocess(argv: list[str], tmp_path: Path) -> None:
    if not Path(argv[0]).exists():
        pytest.skip(f"{argv[0]} is not installed next to this Python")
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=_env(),
                          timeout=60)
    assert done.returncode == 0, done.stderr
    for command in ("route", "lint"):
        assert command in done.stdout


def test_route_as_a_subprocess_outside_a_workspace(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "engram", "route", "x"], capture_output=True,
                          text=True, cwd=tmp_path, env=_env(), timeout=60)
    assert done.returncode == 1
    assert "no workspace found" in done.stderr
    assert "Traceback" not in done.stderr
