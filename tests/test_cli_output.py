"""Every `--json` command prints the one versioned envelope of schemas/cli-output.schema.json,
through engram.output, and nothing else on stdout. The top-level keys are pinned: a script
that reads them must not break silently."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import REPO

from engram import output
from engram.cli import run

SCHEMA = json.loads((REPO / "schemas" / "cli-output.schema.json").read_text(encoding="utf-8"))
CARD = "---\nid: release\ntitle: Releases\ntags: [release]\n---\nCut releases from main.\n"

# command line (after `engram`) -> the envelope's keys besides `engram` and `version`
PINNED = {
    ("doctor",): {"ok", "workspace", "lint", "hosts", "problems", "warnings"},
    ("lint",): {"roots", "cards", "errors", "warnings", "ignored", "problems"},
    ("route", "release checklist"): {"limit", "selected", "warnings"},
    ("route", "release checklist", "--why-not", "release"): {"id", "selected", "explanation"},
    ("show", "release"): {"id", "path", "line", "key", "title", "card", "type", "tags",
                          "applies_to", "always", "priority", "depends_on", "format", "body", "holds_secret",
                          "sizes"},
    ("link", "claude", "--dry-run"): {"command", "dry_run", "ok", "changes"},
    ("unlink", "claude", "--dry-run"): {"command", "dry_run", "ok", "changes"},
    ("upgrade", "--dry-run"): {"command", "dry_run", "ok", "changes"},
    ("observe", "--queue", "--dry-run"): {"dry_run", "results", "remaining", "invalid"},
    ("import", "CLAUDE.md", "--dry-run"): {"imports"},
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / ".agents" / ".engram").mkdir(parents=True)
    (root / ".agents" / ".engram" / "release.md").write_text(CARD, encoding="utf-8")
    (root / "CLAUDE.md").write_text("# Project\n\n## Releases\n\nCut releases from main.\n",
                                    encoding="utf-8")
    return root


@pytest.mark.parametrize("argv", sorted(PINNED), ids=" ".join)
def test_every_json_command_prints_the_one_envelope(argv: tuple[str, ...], ws: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    run([*argv, "--json", "--cwd", str(ws)])
    out = capsys.readouterr().out
    document = json.loads(out)  # one document, nothing else on stdout
    jsonschema.validate(document, SCHEMA)
    assert document["engram"] == argv[0] and document["version"] == output.JSON_VERSION
    assert set(document) - {"engram", "version"} == PINNED[argv]
    assert list(document)[:2] == ["engram", "version"]


def test_route_batch_prints_one_envelope_per_line(ws: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    batch = tmp_path / "batch.jsonl"
    batch.write_text('{"prompt": "release checklist"}\nnot json\n', encoding="utf-8")
    run(["route", "--batch", str(batch), "--json", "--cwd", str(ws)])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    for line in lines:
        jsonschema.validate(json.loads(line), SCHEMA)
    assert json.loads(lines[0])["selected"][0]["id"] == "release"
    assert json.loads(lines[1])["warnings"][0].startswith("line 2:")


def test_every_json_command_is_covered() -> None:
    """A new --json command must be added to the schema, engram.output and this test."""
    assert set(output.COMMANDS) == {argv[0] for argv in PINNED}
    assert set(output.COMMANDS) == set(SCHEMA["properties"]["engram"]["enum"])
    with pytest.raises(ValueError):
        output.envelope("no-such-command", {})


def test_the_schema_rejects_a_foreign_envelope() -> None:
    """Positive control: the old shapes (no command name, or another version) fail."""
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"version": 1, "selected": []}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"engram": "route", "version": 2, "selected": []}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"engram": "lint", "version": 1}, SCHEMA)


def test_library_code_does_not_print() -> None:
    """Only the CLI (engram/cli.py, engram/commands/, engram/output.py) and the hook's entry
    point write to stdout or stderr; modules that run as scripts print under __main__ only."""
    import ast

    allowed = {"cli.py", "output.py", "hook_entry.py"}
    offenders = []
    for path in (REPO / "engram").rglob("*.py"):
        relative = path.relative_to(REPO / "engram")
        if relative.parts[0] == "commands" or str(relative) in allowed:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        script_main = {n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "main"}
        inside_main = {id(c) for f in script_main for c in ast.walk(f)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or id(node) in inside_main:
                continue
            name = ast.unparse(node.func)
            if name in ("print", "sys.stdout.write", "sys.stderr.write", "typer.echo"):
                offenders.append(f"{relative}:{node.lineno} {name}")
    assert offenders == []


def test_commands_print_only_through_the_output_layer() -> None:
    import ast

    offenders = []
    for path in sorted((REPO / "engram" / "commands").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and ast.unparse(node) in (
                    "sys.stdout.write", "sys.stderr.write", "typer.echo"):
                offenders.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "print":
                offenders.append(f"{path.name}:{node.lineno} print")
    assert offenders == []
