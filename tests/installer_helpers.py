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


# ---- a host's file as the host itself reads it (an oracle apart from engram's own reader) ----

def _strip_json_comments(text: str) -> str:
    """strip-json-comments 3.x as Gemini CLI 0.61.0 bundles it, step for step: each comment's
    characters but blanks become spaces. A quote toggles a string unless an odd run of
    backslashes precedes it (inside a string or not, as there). Nothing else: a trailing
    comma stays for JSON.parse to reject."""
    import re

    def escaped(pos: int) -> bool:
        count = 0
        while pos - count - 1 >= 0 and text[pos - count - 1] == "\\":
            count += 1
        return count % 2 == 1

    def blank(part: str) -> str:  # JavaScript's /\S/g, its own idea of a blank
        return re.sub("[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f"
                      "\u3000\ufeff]", " ", part)

    out: list[str] = []
    in_string, comment, offset, i = False, "", 0, 0
    while i < len(text):
        pair = text[i:i + 2]
        if not comment and text[i] == '"' and not escaped(i):
            in_string = not in_string
        if in_string:
            i += 1
            continue
        if not comment and pair == "//":
            out.append(text[offset:i])
            offset, comment = i, "line"
            i += 1
        elif comment == "line" and pair == "\r\n":
            i += 1
            out.append(blank(text[offset:i]))
            offset, comment = i, ""
        elif comment == "line" and text[i] == "\n":
            out.append(blank(text[offset:i]))
            offset, comment = i, ""
        elif not comment and pair == "/*":
            out.append(text[offset:i])
            offset, comment = i, "block"
            i += 1
        elif comment == "block" and pair == "*/":
            i += 1
            out.append(blank(text[offset:i + 1]))
            offset, comment = i + 1, ""
        i += 1
    return "".join(out) + (blank(text[offset:]) if comment else text[offset:])


def _refuse_constant(name: str) -> None:
    raise ValueError(f"JSON.parse and serde_json reject {name}")


def host_reads(host: str, text: str) -> object:
    """The value the host's own parser gets from `text`, or ValueError where it rejects the
    file whole: JSON.parse after strip-json-comments for Gemini CLI (no trailing comma, no
    byte order mark: Gemini 0.61.0 stops at start on either); serde_json for Codex (no byte
    order mark, no escape of half a surrogate pair: Codex 0.171.0 runs none of the file's
    hooks); strict JSON after one byte order mark for the others (Claude Code skips one).
    Python's json module is JSON.parse but for `NaN`, `Infinity` and `-Infinity`, which no
    host reads."""
    import json

    from engram import host_registry

    syntax = host_registry.get(host).install.get("syntax", "json")
    if syntax == "jsonc":
        return json.loads(_strip_json_comments(text), parse_constant=_refuse_constant)
    if syntax == "serde_json":
        value = json.loads(text, parse_constant=_refuse_constant)
        if any("\ud800" <= ch <= "\udfff" for part in _strings(value) for ch in part):
            raise ValueError("serde_json rejects an escape of half a surrogate pair")
        return value
    return json.loads(text.removeprefix("\ufeff"), parse_constant=_refuse_constant)


def host_accepts(host: str, text: str) -> bool:
    try:
        host_reads(host, text)
    except ValueError:
        return False
    return True


def _strings(value: object) -> list[str]:
    """Every string of a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
