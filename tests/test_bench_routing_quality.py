"""The routing-quality benchmark runs (smoke mode) against ../shared/data, and its labels stay
consistent with the rule sets they name. Skips when the reference data is absent."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import shared_or_skip

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _quality():
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("bench_routing_quality", BENCH / "routing_quality.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _labels(name: str) -> list[dict]:
    return [json.loads(line) for line in (BENCH / "labels" / name).read_text(encoding="utf-8").splitlines()
            if line.strip()]


@pytest.mark.parametrize("name", ["inbox-zero.jsonl", "awesome-copilot.jsonl"])
def test_label_sets_have_the_required_shape(name: str) -> None:
    rows = [r for r in _labels(name) if not r.get("excluded")]
    assert len(rows) >= 40
    assert sum(1 for r in rows if not r.get("expected")) >= 8


def test_labels_are_well_formed() -> None:
    for name in ("inbox-zero.jsonl", "awesome-copilot.jsonl", "continue-dev.jsonl"):
        for row in _labels(name):
            assert isinstance(row["prompt"], str) and row["prompt"].strip()
            assert not set(row.get("expected") or []) & set(row.get("acceptable") or [])


@pytest.mark.parametrize("name", ["inbox-zero", "awesome-copilot", "continue-dev"])
def test_every_labelled_id_is_a_card_of_its_rule_set(name: str) -> None:
    quality = _quality()
    repo, rules, labels_file, _ = quality.LABELLED_SETS[name]
    folder = shared_or_skip("data", repo, *rules.split("/"))
    from engram import index

    ids = {card.id for card in index.load_roots([folder]).all_cards()}
    for row in _labels(labels_file.name):
        if row.get("excluded"):
            continue
        unknown = set(row.get("expected") or []) | set(row.get("acceptable") or [])
        assert unknown <= ids, (row["prompt"], unknown - ids)


def test_ground_truth_glob_split_is_brace_aware() -> None:
    quality = _quality()
    assert quality.glob_list('"**/*.{ts,tsx}, docs/**"') == ["**/*.{ts,tsx}", "docs/**"]
    assert quality.glob_list(["gui/**/*", "core/**/*"]) == ["gui/**/*", "core/**/*"]
    assert quality.glob_list(None) == [] and quality.glob_list("") == []
    assert quality.frontmatter("---\nglobs: **/*\nalwaysApply: true\n---\nbody\n") == {
        "globs": "**/*", "alwaysApply": "true"}


def test_quality_bench_quick_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = shared_or_skip("data")
    shared_or_skip("data", "continue", "tasks.jsonl")
    shared_or_skip("data", "inbox-zero", ".cursor", "rules")
    quality = _quality()
    out = tmp_path / "quality.json"
    assert quality.main(["--quick", "--data", str(data), "--json", str(out)]) == 0
    assert "bm25-top3" in capsys.readouterr().out
    figures = json.loads(out.read_text())
    for variant in ("subject", "scope stripped"):
        assert figures["glob"][variant]["precision"] == 1.0
        assert figures["glob"][variant]["recall"] == 1.0
    for labelled in figures["labelled"]:
        for scores in labelled["systems"].values():
            for metric in ("recall", "precision", "abstention"):
                assert 0.0 <= scores[metric] <= 1.0


def test_quality_bench_without_data_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    quality = _quality()
    assert quality.main(["--data", str(tmp_path / "absent")]) == 2
    assert "not found" in capsys.readouterr().err


def _inbox_zero_systems() -> dict:
    data = shared_or_skip("data", "inbox-zero", ".cursor", "rules").parents[2]
    return _quality().labelled(data, "inbox-zero", False, False)["systems"]  # state dir: tmp


def test_engram_is_not_worse_than_bm25_top3_on_the_held_out_labels() -> None:
    systems = _inbox_zero_systems()
    engram, baseline = systems["engram"], systems["bm25-top3"]
    assert engram["precision"] > baseline["precision"]
    assert engram["abstention"] > baseline["abstention"]
    assert engram["recall"] >= baseline["recall"]


def test_engram_beats_bm25_top3_on_all_three() -> None:
    systems = _inbox_zero_systems()
    engram, baseline = systems["engram"], systems["bm25-top3"]
    for metric in ("recall", "precision", "abstention"):
        assert engram[metric] > baseline[metric], metric


# The goal on each labelled set: precision >= 0.80 with recall >= 0.90 and abstention >= 0.90.
FLOORS = {
    "inbox-zero": {"precision": 0.80, "recall": 0.90, "abstention": 0.90},
    "awesome-copilot": {"precision": 0.80, "recall": 0.90, "abstention": 0.90},
}


@pytest.mark.parametrize("name", sorted(FLOORS))
def test_labelled_set_does_not_fall_below_its_goal(name: str) -> None:
    quality = _quality()
    repo, rules, _, _ = quality.LABELLED_SETS[name]
    data = shared_or_skip("data", repo, *rules.split("/")).parents[len(rules.split("/"))]
    engram = quality.labelled(data, name, False, False)["systems"]["engram"]
    for metric, floor in FLOORS[name].items():
        assert engram[metric] >= floor, (name, metric, engram[metric])
    assert set(quality.GOAL) == set(FLOORS[name])


SESSION_FILES = ["webapp-session.jsonl", "webapp-session-2.jsonl", "webapp-session-3.jsonl",
                 "webapp-session-4.jsonl"]


@pytest.mark.parametrize("session", SESSION_FILES)
def test_session_bench_labels_name_cards_of_its_store(session: str) -> None:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    import session_tokens

    from engram import index

    ids = {card.id for card in index.load_roots([session_tokens.WEBAPP]).all_cards()}
    steps = session_tokens.load_session(session_tokens.WEBAPP_SESSION.with_name(session))
    prompts = [s for s in steps if "prompt" in s]
    assert len(prompts) == 30 and sum(1 for s in steps if s.get("event") == "compact") == 1
    assert all(set(s["needed"]) <= ids for s in prompts)
    assert 40 <= len(ids) <= 50


@pytest.mark.parametrize("session", SESSION_FILES)
def test_every_touched_path_has_its_content_after_the_step(session: str) -> None:
    """The bench's repository: each (step, path) of a session has one edits entry, and a file
    a step creates is not in the repository before it."""
    session_tokens = _session_tokens()
    path = session_tokens.WEBAPP_SESSION.with_name(session)
    steps = session_tokens.load_session(path)
    edits = session_tokens.load_edits(path)
    assert edits is not None
    wanted = {(number, touched) for number, step in enumerate(steps)
              for touched in step.get("paths") or []}
    assert set(edits) == wanted


def _session_tokens() -> Any:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    import session_tokens

    return session_tokens


# Neither goal of the session bench (auto <= 50% of static's characters with >= 97% of the
# needed pairs in context) is met; each session is gated at its measured level, with routing
# on the code the agent writes and by paths and prompts alone, so that neither slips.
# Session 1: the store and session written before any ranking change; session 2: written after
# the ranking work, before any run on it; session 3 and the repository (with the per-step edits
# of all three): written blind, from the cards and unlabelled prompts, before any run; session 4
# likewise, after routing on written code was built, and first run with it as it is now.
SESSION_GATES = [
    # session, pairs, written code: share of static at most, pairs at least; paths only: same
    ("webapp-session.jsonl", 49, 0.557, 43, 0.53, 41),
    ("webapp-session-2.jsonl", 37, 0.452, 30, 0.40, 26),
    ("webapp-session-3.jsonl", 44, 0.536, 39, 0.49, 32),
    ("webapp-session-4.jsonl", 70, 0.722, 63, 0.616, 56),
]


@pytest.mark.parametrize(("session", "pairs", "code_share", "code_pairs", "paths_share",
                          "paths_pairs"), SESSION_GATES)
def test_session_bench_is_gated_at_its_measured_level(
        session: str, pairs: int, code_share: float, code_pairs: int, paths_share: float,
        paths_pairs: int) -> None:
    session_tokens = _session_tokens()
    report = session_tokens.webapp("claude", session_tokens.WEBAPP_SESSION.with_name(session))
    static, always, auto = report["static"], report["always"], report["auto"]
    assert static["chars"] == 2 * static["claude_md_chars"]  # loaded at start and after compaction
    assert 0 < auto["chars"] < always["chars"]
    assert report["code"] is True and auto["pairs"] == pairs
    assert auto["share_of_static"] <= code_share
    assert auto["pairs_in_context"] >= code_pairs
    paths_only = report["auto (paths only)"]
    assert paths_only["share_of_static"] <= paths_share
    assert paths_only["pairs_in_context"] >= paths_pairs
