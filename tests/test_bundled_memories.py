"""The bundled memories/: real cards about engram, valid against the card schema, lint-clean,
and routed when engram runs in this repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from conftest import REPO

from engram import frontmatter, resources, store

MEMORIES = REPO / "memories"
SCHEMA = json.loads((REPO / "schemas" / "memory-card.schema.json").read_text(encoding="utf-8"))


def _cards() -> list[Path]:
    return sorted(MEMORIES.glob("*.md"))


def _frontmatter(path: Path) -> dict:
    parsed = frontmatter.parse(path.read_text(encoding="utf-8"))
    assert parsed.parser == "yaml", f"{path.name}: bundled cards must be plain YAML"
    block = path.read_text(encoding="utf-8").split("---\n")[1]
    # JSON Schema sees what a JSON round trip of the YAML gives (dates become text).
    return json.loads(json.dumps(yaml.safe_load(block), default=str))


def test_at_least_twelve_cards() -> None:
    assert len(_cards()) >= 12


def test_resources_find_the_bundled_folders() -> None:
    for name in ("memories", "hosts", "schemas"):
        assert resources.data_dir(name).is_dir()
    assert {p.name for p in resources.data_dir("memories").glob("*.md")} == {
        p.name for p in _cards()}


@pytest.mark.parametrize("path", _cards(), ids=lambda p: p.name)
def test_each_card_validates_against_the_schema(path: Path) -> None:
    data = _frontmatter(path)
    jsonschema.validate(data, SCHEMA)
    assert data.get("id", path.stem) == path.stem
    stat = path.stat()
    card, problems, _ = store.load_file(store.FoundFile(str(path), str(MEMORIES), stat.st_mtime_ns,
                                                        stat.st_size))
    assert card is not None and problems == []
    assert card.format == "engram"
    assert len(card.body) > 200, "a real card, not a stub"


def test_the_schema_rejects_what_it_should() -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert not validator.is_valid({"id": "../x"})
    assert not validator.is_valid({"priority": 101})
    assert not validator.is_valid({"always": "yes"})
    assert not validator.is_valid({"depends_on": ["bad id"]})
    assert validator.is_valid({"id": "ok", "applies_to": "src/**, docs/**"})


def test_some_cards_are_path_scoped_and_dependencies_resolve() -> None:
    datas = {path.stem: _frontmatter(path) for path in _cards()}
    assert sum(1 for d in datas.values() if d.get("applies_to")) >= 3
    for card_id, data in datas.items():
        for dep in data.get("depends_on", []):
            assert dep in datas, f"{card_id} depends on unknown {dep}"


def _engram(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=60)


def test_lint_on_the_repository_has_no_errors() -> None:
    done = _engram("lint", "--json")
    payload = json.loads(done.stdout)
    errors = [p for p in payload["problems"] if p["severity"] == "error"]
    assert errors == []
    assert done.returncode == 0
    assert str(MEMORIES) in payload["roots"]


def test_route_in_the_repository_selects_adding_a_host() -> None:
    done = _engram("route", "how do I add a host", "--json")
    assert done.returncode == 0, done.stderr
    selected = json.loads(done.stdout)["selected"]
    ids = [s["id"] for s in selected]
    assert "adding-a-host" in ids
    reasons = next(s for s in selected if s["id"] == "adding-a-host")["reasons"]
    assert any(r["kind"] in ("text", "tag") for r in reasons)


def test_route_in_the_repository_by_path() -> None:
    done = _engram("route", "--path", "hosts/claude.yaml", "--json")
    assert done.returncode == 0, done.stderr
    selected = json.loads(done.stdout)["selected"]
    host = next(s for s in selected if s["id"] == "adding-a-host")
    assert any(r["kind"] == "path" for r in host["reasons"])
