"""The index benchmark and the synthetic store generator run (tiny smoke mode), so they cannot
rot. No timing is asserted here: figures live in docs/performance.md."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load(name: str):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_synthetic_store_is_deterministic_and_loads(tmp_path: Path) -> None:
    synthetic = _load("synthetic")
    first = synthetic.generate(tmp_path / "a", 30, seed=3)
    second = synthetic.generate(tmp_path / "b", 30, seed=3)
    assert [p.read_text() for p in first] == [p.read_text() for p in second]
    from engram import index

    compiled = index.load_roots([tmp_path / "a"])
    assert len(compiled.active) == 30
    assert not [p for p in compiled.problems if p.severity == "error"]
    assert any(card.applies_to for card in compiled.all_cards())
    assert any(card.tags for card in compiled.all_cards())
    queries = synthetic.queries(30, 16)
    assert len(queries) == 16 and any(paths for _, paths in queries)


def test_index_bench_quick_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load("index_bench")
    out = tmp_path / "figures.json"
    assert bench.main(["--quick", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "cold compile" in printed and "load+route" in printed
    figures = json.loads(out.read_text())
    (row,) = figures["results"]
    assert row["cards"] == 50 and row["routable"] == 50
    for key in ("cold_compile", "warm_read", "warm_check", "warm_load", "route", "load_route",
                "refresh_one_card", "touch_one_card"):
        assert row[key]["median_ms"] > 0
    assert figures["machine"]["python"]


def test_index_bench_cold_only_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load("index_bench")
    out = tmp_path / "cold.json"
    assert bench.main(["--cold-only", "--sizes", "40", "--json", str(out)]) == 0
    assert "cold compile (first build)" in capsys.readouterr().out
    (row,) = json.loads(out.read_text())["results"]
    assert row["cards"] == 40 and row["routable"] == 40
    assert row["cold_compile"]["median_ms"] > 0 and row["cold_compile_cpu"]["median_ms"] > 0
