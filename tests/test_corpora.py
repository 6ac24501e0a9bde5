"""The real rule corpora in ../shared/data (read at test time, never copied: inbox-zero is
AGPL): every file loads, the lenient path keeps braces, continue's globs normalise to the data
README's lists, and path routing equals the wcmatch ground truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import shared_or_skip
from wcmatch import glob as wcglob

from engram import frontmatter, globs, index, store
from engram.query import route_request

FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".md", ".mdc"))


def _load(path: Path, root: Path):  # noqa: ANN202
    stat = path.stat()
    return store.load_file(store.FoundFile(str(path), str(root), stat.st_mtime_ns, stat.st_size))


def test_every_corpus_file_loads_without_a_crash() -> None:
    data = shared_or_skip("data")
    files = _files(data)
    assert len(files) >= 500
    loaded = 0
    for path in files:
        card, problems, digest = _load(path, path.parent)
        assert digest, path
        if card is None:
            # Skipped files say why, with an error.
            assert any(p.severity == "error" for p in problems), path
        else:
            loaded += 1
            assert card.body.strip()
    assert loaded >= len(files) - 5


def test_awesome_cursorrules_invalid_yaml_goes_through_the_lenient_path() -> None:
    folder = shared_or_skip("data", "awesome-cursorrules", "rules")
    parsers: dict[str, int] = {}
    brace_globs = 0
    for path in _files(folder):
        text = path.read_text(encoding="utf-8")
        parsed = frontmatter.parse(text)
        parsers[parsed.parser] = parsers.get(parsed.parser, 0) + 1
        card, problems, _ = _load(path, folder)
        if parsed.parser == "lenient":
            assert any(p.code == "guessed" and "line by line" in p.message for p in problems) \
                or card is None, path
        if card is None:
            continue
        assert card.format == "cursor"
        for pattern in card.applies_to:
            # Brace groups stay whole: no half-groups like `**/*.{ts` or `tsx}`.
            assert pattern.count("{") == pattern.count("}"), (path, pattern)
            brace_globs += "{" in pattern
    assert parsers == {"lenient": 230, "yaml": 27}  # the data README's count
    assert brace_globs == 2  # `**/*.{ts,tsx,js,jsx,py,rs}` and `**/*.{ts,tsx,js,jsx,html,css}`


def test_a_known_brace_file_keeps_its_group() -> None:
    folder = shared_or_skip("data", "awesome-cursorrules", "rules")
    found = []
    for path in _files(folder):
        card, _, _ = _load(path, folder)
        if card is not None and "**/*.{ts,tsx,js,jsx,py,rs}" in card.applies_to:
            found.append(path.name)
    assert found


# From the data README's per-rule table (continue).
CONTINUE_GLOBS = {
    "no-any-types": ["**/*.{ts,tsx}"],
    "typescript-enum-usage": ["**/*.{ts,tsx}"],
    "test-running-guide": ["gui/**/*", "core/**/*"],
    "gui-link-opening": ["gui/**/*"],
    "documentation-description-rule": ["docs/**/*.{md,mdx}"],
    "colors": ["gui/**/*.tsx"],
    "css-units": ["gui/**/*.tsx"],
    "llm-specificity": ["core/llm/llms/**/*.{ts,test.ts}"],
    "intellij-plugin-test-execution": ["extensions/intellij/**/*Test.kt"],
    "vs-code-commands-helper-functions": ["extensions/vscode/src/commands.ts"],
    "continue-specificity": ["/**/*."],
    "documentation-standards": ["docs/\\*_/_.{md,mdx}"],
}
CONTINUE_TASK_COUNTS = {
    "no-any-types": 163, "typescript-enum-usage": 163, "test-running-guide": 116,
    "gui-link-opening": 52, "documentation-description-rule": 28, "colors": 26, "css-units": 26,
    "llm-specificity": 25, "intellij-plugin-test-execution": 4,
    "vs-code-commands-helper-functions": 3, "continue-specificity": 0,
    "documentation-standards": 0,
}


def _continue_cards() -> tuple[Path, dict[str, object]]:
    rules = shared_or_skip("data", "continue", ".continue", "rules")
    cards = {}
    for path in _files(rules):
        card, _, _ = _load(path, rules)
        assert card is not None, path
        cards[card.id] = card
    return rules, cards


def test_continue_globs_normalise_to_the_readme_lists() -> None:
    _, cards = _continue_cards()
    assert len(cards) == 24
    scoped = {card_id: list(card.applies_to) for card_id, card in cards.items()
              if card.applies_to}
    assert scoped == CONTINUE_GLOBS
    assert all(card.format == "continue" for card in cards.values())


def _tasks(name: str) -> list[dict]:
    path = shared_or_skip("data", name, "tasks.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _expected(cards: dict[str, object], files: list[str]) -> set[str]:
    expected = set()
    for card_id, card in cards.items():
        patterns = list(card.applies_to)
        if patterns and any(wcglob.globmatch(f, patterns, flags=FLAGS) for f in files):
            expected.add(card_id)
    return expected


def test_continue_path_routing_equals_the_wcmatch_ground_truth(tmp_path: Path) -> None:
    rules, cards = _continue_cards()
    compiled = index.load_roots([rules])
    repo = tmp_path / "continue-repo"  # the touched paths are relative to the repository root
    repo.mkdir()
    tasks = _tasks("continue")
    assert len(tasks) == 300
    triggered = 0
    per_rule = {card_id: 0 for card_id in CONTINUE_TASK_COUNTS}
    for task in tasks:
        expected = _expected(cards, task["files"])
        triggered += bool(expected)
        for card_id in expected:
            per_rule[card_id] += 1
        result = route_request(compiled, repo, repo, "", task["files"], 100,
                               include_always=False)
        by_path = {s.id for s in result.selected if any(r.kind == "path" for r in s.reasons)}
        assert by_path == expected, task["commit"]
    assert triggered == 208  # the data README's reference value
    assert per_rule == CONTINUE_TASK_COUNTS


def test_continue_naive_comma_split_would_lose_tasks() -> None:
    _, cards = _continue_cards()
    naive = {card_id: [part.strip() for glob in card.applies_to for part in glob.split(",")]
             for card_id, card in cards.items() if card.applies_to}
    triggered = sum(
        1 for task in _tasks("continue")
        if any(wcglob.globmatch(f, patterns, flags=FLAGS)
               for patterns in naive.values() for f in task["files"]))
    assert triggered == 119


def test_inbox_zero_loads_and_its_glob_rule_matches_the_readme() -> None:
    rules = shared_or_skip("data", "inbox-zero", ".cursor", "rules")
    cards = {}
    for path in _files(rules):
        if path.suffix != ".mdc":
            continue
        card, _, _ = _load(path, rules)
        if card is not None:
            cards[card.id] = card
    scoped = {card_id: list(card.applies_to) for card_id, card in cards.items()
              if card.applies_to}
    assert scoped == {"e2e-testing": ["**/__tests__/e2e/**", ".github/workflows/e2e-flows.yml"]}
    assert [card_id for card_id, card in cards.items() if card.always] == ["notes"]
    triggered = sum(1 for task in _tasks("inbox-zero") if _expected(cards, task["files"]))
    assert triggered == 35


def test_awesome_copilot_apply_to_lists() -> None:
    folder = shared_or_skip("data", "awesome-copilot", "instructions")
    scoped = 0
    for path in _files(folder):
        card, _, _ = _load(path, folder)
        assert card is not None, path
        assert card.format == "copilot"
        if card.applies_to:
            scoped += 1
            for pattern in card.applies_to:
                # Split at every top-level comma; commas left are inside braces.
                assert globs.split_top_level(pattern) == [pattern], (path, pattern)
                assert pattern.count("{") == pattern.count("}")
                globs.translate(pattern)
    assert scoped == 184


@pytest.mark.parametrize("name", ["continue-specificity", "documentation-standards"])
def test_lint_flags_continues_broken_globs(name: str) -> None:
    from engram import lint

    rules, cards = _continue_cards()
    problems = lint.check_cards([cards[name]], None)
    assert any(p.severity == "error" and p.code == "glob" for p in problems)
    assert all(p.line is not None for p in problems if p.code == "glob")
