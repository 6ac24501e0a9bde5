"""Shared by the installer tests: run the CLI in-process, compare with golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import typer

from engram.cli import app
from engram.errors import EngramError

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "installer"
PINNED = "/opt/engram/bin/engram"
UPDATE = os.environ.get("ENGRAM_UPDATE_GOLDENS") == "1"  # regenerate: ENGRAM_UPDATE_GOLDENS=1 pytest


def engram(*args: str, cwd: Path) -> int:
    """The CLI in-process, with its exit code. (engram.cli.run currently drops the code that
    typer returns in non-standalone mode, so read it from app() directly.)"""
    try:
        result = app(args=[*args, "--cwd", str(cwd)], prog_name="engram", standalone_mode=False)
    except typer.Exit as done:
        return int(done.exit_code or 0)
    except EngramError as exc:
        typer.echo(f"engram: error: {exc}", err=True)
        return 1
    return int(result or 0)


def check_golden(actual: str, name: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
    if not path.exists():
        pytest.fail(f"golden {name} missing: run with ENGRAM_UPDATE_GOLDENS=1 and review it")
    assert actual == path.read_text(encoding="utf-8"), f"differs from golden {name}"
