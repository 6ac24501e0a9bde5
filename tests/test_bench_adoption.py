"""bench/adoption.py runs and reports the saving against the file loaded whole; the continue
case (real rules, real commits) runs when the reference kit is present."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conftest import REPO, shared_or_skip


def _bench():  # noqa: ANN202 - a module
    spec = importlib.util.spec_from_file_location("adoption_bench", REPO / "bench" / "adoption.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fixture_case_reports_the_session_against_the_whole_file() -> None:
    result = _bench().cases(Path("/nonexistent"), ["fixture"])["fixture"]
    assert result["cards"] == 9 and result["always_cards"] == 2
    assert 0 < result["engram_chars_mean"] < result["source_chars"]
    assert result["cards_sent_mean"] <= result["cards"]


def test_continue_case_on_real_rules_and_commits() -> None:
    data = shared_or_skip("data")
    result = _bench().cases(data, ["continue"], length=30)["continue"]
    assert result["sessions"] == 10 and result["prompts_per_session"] == 30
    assert result["source_chars"] > 20_000
    assert result["engram_chars_max"] < result["source_chars"]
