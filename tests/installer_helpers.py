"""Shared by the installer tests: run the CLI in-process, compare with golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.cli import run

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "installer"
PINNED = "/opt/engram/bin/engram"
UPDATE = os.environ.get("ENGRAM_UPDATE_GOLDENS") == "1"  # regenerate: ENGRAM_UPDATE_GOLDENS=1 pytest


def engram(*args: str, cwd: Path) -> int:
    return run([*args, "--cwd", str(cwd)])


def check_golden(actual: str, name: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
    if not path.exists():
        pytest.fail(f"golden {name} missing: run with ENGRAM_UPDATE_GOLDENS=1 and review it")
    assert actual == path.read_text(encoding="utf-8"), f"differs from golden {name}"
