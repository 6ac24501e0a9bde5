"""Cost bounds that hold on a busy machine: time is compared with a fixed reference workload
measured around it (both slow down together when other processes take the CPU), never with
seconds on a clock. Work that could hang runs in a child process with a hard timeout, so a
regression fails the test instead of stalling the suite."""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Callable, TypeVar

T = TypeVar("T")
HANG_LIMIT_S = 120.0  # a hang, not a slow run: catastrophic backtracking takes minutes


def reference_seconds() -> float:
    """One unit: a fixed pure-Python workload (~10 ms on a quiet 2-core machine)."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        sum(i * i for i in range(150_000))
        best = min(best, time.perf_counter() - started)
    return best


def units(seconds: float, before: float, after: float) -> float:
    return seconds / max(before, after, 1e-4)


def within(limit_units: float, work: Callable[[], T]) -> T:
    """Run `work` and assert it took at most `limit_units` reference units."""
    before = reference_seconds()
    started = time.perf_counter()
    result = work()
    elapsed = time.perf_counter() - started
    cost = units(elapsed, before, reference_seconds())
    assert cost <= limit_units, f"{cost:.0f} units (limit {limit_units}), {elapsed:.2f} s"
    return result


def run_bounded(code: str, limit: float = HANG_LIMIT_S) -> str:
    """Run `code` in a fresh interpreter killed after `limit` seconds; its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=limit)
    assert done.returncode == 0, done.stderr
    return done.stdout
