"""Index and routing latency on synthetic stores (100, 1,000 and 10,000 cards).

For each size, in one process (the way a hook process would, minus interpreter start-up):

- cold compile: `index.load_or_build(workspace)` with no stored index and an empty term cache:
  scan, parse every card, term statistics, globs, dependency order, marshal write;
- warm load: a fresh `load_or_build` over an unchanged store, i.e. reading the stored index
  (marshal) plus the freshness check (stat every card file; nothing re-parsed). Both parts are
  also timed alone: `read` = opening the index database (`index._open`), `check` =
  `index.check(db, roots, ...)` (read the stored stats, stat every card file, compare);
- route: `query.route_request` on an already loaded index (median over many queries);
- load+route: a fresh `load_or_build` followed by one `route_request`, per query: what one hook
  call pays in-process. The targets (2 ms at 1,000 cards, 15 ms at 10,000) apply to this;
- refresh: one card's content changes, then `load_or_build` (read, stat scan, re-parse of that
  card, derived data, marshal write). Also `touch`: mtime changes, content does not (xxhash path).

Optionally (`--cli`) the wall time of `engram route PROMPT --json` as a subprocess, which adds
interpreter start-up and CLI imports.

    /work/venv/bin/python bench/index_bench.py                 # 100, 1000, 10000 cards
    /work/venv/bin/python bench/index_bench.py --sizes 1000 --json out.json
    /work/venv/bin/python bench/index_bench.py --quick         # 50 cards, a smoke run
    /work/venv/bin/python bench/index_bench.py --cold-only --sizes 1000 2000 10000
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic  # noqa: E402

TARGETS_MS = {1000: {"load_route": 2.0}, 10000: {"load_route": 15.0, "refresh": 50.0}}


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"median_ms": _ms(statistics.median(ordered)), "p95_ms": _ms(p95),
            "min_ms": _ms(ordered[0]), "n": len(ordered)}


def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"python": platform.python_version(), "implementation": platform.python_implementation(),
            "platform": platform.platform(), "cpu": cpu, "cores": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M %Z"),
            "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None}


def _routed(selection: Any) -> bool:
    """Selected for this query (text, tag or path), not only as an always card or one's
    prerequisite."""
    return any(reason.kind in ("text", "tag", "path") for reason in selection.reasons)


def _cold(ws: Any, idx_path: Path, runs: int) -> tuple[list[float], list[float], Any]:
    """Cold compile: nothing stored, empty term cache (as in a fresh process). Wall and CPU
    seconds (this process and the parsers a large first build forks): on a shared machine
    the CPU time is the steadier figure."""
    from engram import index, text

    wall: list[float] = []
    cpu: list[float] = []
    compiled = None
    for _ in range(runs):
        for suffix in ("", "-wal", "-shm"):
            Path(str(idx_path) + suffix).unlink(missing_ok=True)
        text._TERM_CACHE.clear()
        gc.collect()
        # A large first build forks parsers: their CPU counts too (reaped before it returns).
        before = os.times()
        seconds, compiled = _timed(lambda: index.load_or_build(ws))
        after = os.times()
        cpu.append(sum(after[:4]) - sum(before[:4]))
        wall.append(seconds)
    return wall, cpu, compiled


def bench_cold(n: int, base: Path, runs: int) -> dict[str, Any]:
    """`--cold-only`: the first build of a fresh store of `n` cards, nothing else."""
    from engram import index, workspace

    ws_root = base / f"cold-{n}"
    (ws_root / ".git").mkdir(parents=True)
    synthetic.generate(ws_root / ".agents" / ".engram", n)
    os.environ["ENGRAM_STATE_DIR"] = str(base / f"cold-state-{n}")
    ws = workspace.load(ws_root)
    assert ws is not None and ws.roots
    wall, cpu, compiled = _cold(ws, Path(index.index_path(ws.key)), runs)
    return {"cards": n, "routable": len(compiled.active), "cold_compile": _summary(wall),
            "cold_compile_cpu": _summary(cpu)}


def bench_size(n: int, base: Path, n_queries: int, repeats: int, refreshes: int,
               cli: bool) -> dict[str, Any]:
    from engram import index, query, workspace

    if n >= 5000:  # keep a 10,000-card run to minutes, not hours, while loads are slow
        repeats, refreshes = max(3, repeats // 3), max(3, refreshes // 3)
    ws_root = base / f"ws-{n}"
    (ws_root / ".git").mkdir(parents=True)
    store = ws_root / ".agents" / ".engram"
    t_gen, files = _timed(lambda: synthetic.generate(store, n))
    os.environ["ENGRAM_STATE_DIR"] = str(base / f"state-{n}")
    ws = workspace.load(ws_root)
    assert ws is not None and ws.roots
    roots = index.roots_of(ws)
    follow = bool(ws.settings.get("security.follow_symlinks"))
    idx_path = Path(index.index_path(ws.key))

    cold, cold_cpu, compiled = _cold(ws, idx_path, 1 if n >= 5000 else 3)
    cards = len(compiled.active)
    compiled.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = idx_path.stat().st_size  # one SQLite database: nothing is loaded whole any more
    cold_size = 0

    # Warm load, and its two parts.
    reads: list[float] = []
    checks: list[float] = []
    loads: list[float] = []
    for _ in range(repeats):
        gc.collect()
        seconds, data = _timed(lambda: index._open(str(idx_path)))
        reads.append(seconds)
        seconds, fresh_now = _timed(lambda: index.check(data, roots, follow, (str(ws.root),)))  # noqa: B023
        assert fresh_now, "the freshness check found a change in an unchanged store"
        checks.append(seconds)
        seconds, _ = _timed(lambda: index.load_or_build(ws))
        loads.append(seconds)

    queries = synthetic.queries(n, n_queries)
    loaded = index.load_or_build(ws)
    selected_counts: list[int] = []
    routes: list[float] = []
    for prompt, paths in queries:  # one pass to fill lazy caches, as a long session would
        query.route_request(loaded, ws.root, ws.root, prompt, list(paths), 8)
    for prompt, paths in queries:
        seconds, result = _timed(
            lambda: query.route_request(loaded, ws.root, ws.root, prompt, list(paths), 8))  # noqa: B023
        routes.append(seconds)
        selected_counts.append(sum(1 for s in result.selected if _routed(s)))
    abstained = sum(1 for r in selected_counts if r == 0)

    load_routes: list[float] = []
    for prompt, paths in queries[: max(5, min(len(queries), repeats * 3))]:
        gc.collect()
        start = time.perf_counter()
        fresh = index.load_or_build(ws)
        query.route_request(fresh, ws.root, ws.root, prompt, list(paths), 8)
        load_routes.append(time.perf_counter() - start)

    # One card changes (content), then one card is only touched (mtime, same content).
    refresh: list[float] = []
    touch: list[float] = []
    step = max(1, len(files) // max(refreshes, 1))
    for k in range(refreshes):
        target = files[(k * step) % len(files)]
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(f"\nEdited for refresh run {k}: the retry budget changed.\n")
        gc.collect()
        seconds, refreshed = _timed(lambda: index.load_or_build(ws))
        refresh.append(seconds)
        assert len(refreshed.active) == cards
        stat = target.stat()
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
        gc.collect()
        seconds, _ = _timed(lambda: index.load_or_build(ws))
        touch.append(seconds)

    result: dict[str, Any] = {
        "cards": n, "routable": cards, "store_kib": round(sum(f.stat().st_size for f in files) / 1024),
        "index_kib": round(size / 1024), "cold_index_kib": round(cold_size / 1024), "generate_s": round(t_gen, 2),
        "cold_compile": _summary(cold), "cold_compile_cpu": _summary(cold_cpu),
        "warm_read": _summary(reads), "warm_check": _summary(checks), "warm_load": _summary(loads),
        "route": _summary(routes), "load_route": _summary(load_routes),
        "refresh_one_card": _summary(refresh), "touch_one_card": _summary(touch),
        "queries": len(queries), "abstained": abstained, "always_cards": len(loaded.data["always"]),
        "mean_selected": round(statistics.mean(selected_counts), 2),
    }
    if cli:
        result["cli_route"] = _cli(ws_root, queries[0][0])
    return result


def _cli(ws_root: Path, prompt: str, runs: int = 5) -> dict[str, float]:
    exe = Path(sys.executable).with_name("engram")
    command = [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else ["-m", "engram"]),
               "route", prompt, "--json"]
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=ws_root, check=True, capture_output=True, env=os.environ.copy())
        samples.append(time.perf_counter() - start)
    return _summary(samples)


def _verdicts(results: list[dict[str, Any]]) -> list[str]:
    lines = []
    for row in results:
        for key, limit in TARGETS_MS.get(row["cards"], {}).items():
            figure = row["load_route" if key == "load_route" else "refresh_one_card"]["median_ms"]
            label = "warm load+route" if key == "load_route" else "one-card refresh"
            verdict = "meets" if figure <= limit else "MISSES"
            lines.append(f"{row['cards']:>6} cards: {label} {figure:.2f} ms {verdict} the "
                         f"{limit:g} ms target")
            if key == "load_route":
                route = row["route"]["median_ms"]
                lines.append(f"{row['cards']:>6} cards: route alone (index in memory) {route:.3f} ms "
                             f"{'meets' if route <= limit else 'MISSES'} the {limit:g} ms target")
    return lines


def render(results: list[dict[str, Any]]) -> str:
    columns = [("cold compile", "cold_compile"), ("warm read", "warm_read"),
               ("warm check", "warm_check"), ("warm load", "warm_load"), ("route", "route"),
               ("load+route", "load_route"), ("refresh 1", "refresh_one_card"),
               ("touch 1", "touch_one_card")]
    header = f"{'cards':>6} {'index KiB':>9} " + " ".join(f"{name:>12}" for name, _ in columns)
    lines = ["median (p95) in ms", header]
    for row in results:
        cells = " ".join(f"{row[key]['median_ms']:>7.2f} ({row[key]['p95_ms']:.1f})".rjust(12)
                         if row[key]["median_ms"] < 1000 else f"{row[key]['median_ms'] / 1000:>10.2f} s"
                         for _, key in columns)
        lines.append(f"{row['cards']:>6} {row['index_kib']:>9} {cells}")
    for row in results:
        extra = f"{row['cards']:>6} cards: {row['queries']} queries, {row['abstained']} selected nothing, " \
                f"mean {row['mean_selected']} cards routed by text/tag/path ({row['always_cards']} always " \
                f"cards and their prerequisites come on top); " \
                f"store {row['store_kib']} KiB, cold index {row['cold_index_kib']} KiB"
        if "cli_route" in row:
            extra += f"; `engram route` subprocess {row['cli_route']['median_ms']:.0f} ms"
        lines.append(extra)
    return "\n".join(lines + [""] + _verdicts(results))


def render_cold(results: list[dict[str, Any]]) -> str:
    lines = ["cold compile (first build), median seconds", f"{'cards':>6} {'wall':>8} {'cpu':>8}"]
    for row in results:
        lines.append(f"{row['cards']:>6} {row['cold_compile']['median_ms'] / 1000:>8.2f} "
                     f"{row['cold_compile_cpu']['median_ms'] / 1000:>8.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="engram index and routing latency")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--queries", type=int, default=200, help="routing queries per size")
    parser.add_argument("--repeats", type=int, default=15, help="warm load repetitions")
    parser.add_argument("--refreshes", type=int, default=9, help="one-card refresh repetitions")
    parser.add_argument("--cli", action="store_true", help="also time `engram route` as a subprocess")
    parser.add_argument("--quick", action="store_true", help="smoke run: 50 cards, few repeats")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--cold-only", action="store_true",
                        help="only the cold compile (first build), wall and CPU seconds")
    parser.add_argument("--cold-runs", type=int, default=1, help="cold compiles per size")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.queries, args.repeats, args.refreshes = [50], 16, 3, 2
    results = []
    saved_env = {k: os.environ.get(k) for k in ("ENGRAM_STATE_DIR", "ENGRAM_CONFIG_DIR",
                                                "ENGRAM_GLOBAL_DIR")}
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as tmp:
        base = Path(tmp)
        os.environ["ENGRAM_CONFIG_DIR"] = str(base / "config")  # never the user's real config
        os.environ.pop("ENGRAM_GLOBAL_DIR", None)
        try:
            for n in args.sizes:
                results.append(bench_cold(n, base, args.cold_runs) if args.cold_only else
                               bench_size(n, base, args.queries, args.repeats, args.refreshes,
                                          args.cli))
                print(f"... {n} cards done", file=sys.stderr, flush=True)
        finally:
            for key, value in saved_env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    info = machine()
    print(f"engram index bench, {info['date']}; {info['cpu']} ({info['cores']} cores); "
          f"{info['implementation']} {info['python']}; {info['platform']}; load average at the end "
          f"{info['load_average']}")
    print(render_cold(results) if args.cold_only else render(results))
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "results": results}, indent=2) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
