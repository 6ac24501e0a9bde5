"""The CLI's one output layer: human lines on stdout, messages on stderr, and the one
versioned JSON envelope every `--json` command prints (schemas/cli-output.schema.json):

    {"engram": "<command>", "version": 1, ...the command's own fields...}

`version` changes only when a field changes meaning or goes away; new fields may appear in
any release. Library modules return values; only engram/commands/ and engram/cli.py print,
and they print through here.

Everything printed here is redacted first (`engram.secrets.redact`): a command may show a
card's title, body, globs or ids, a prompt's words or an error about a value, and whatever
value-shaped secret any of them holds leaves as `[REDACTED:<kind>]`, never as itself. JSON is
redacted string by string before it is encoded, so the document stays valid."""

from __future__ import annotations

import json
import sys
from typing import Any, Final, Mapping

JSON_VERSION: Final = 1
COMMANDS: Final = ("doctor", "import", "link", "lint", "observe", "route", "show", "unlink",
                   "upgrade")


def envelope(command: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The envelope around one command's fields (`engram` and `version` come first)."""
    if command not in COMMANDS:
        raise ValueError(f"no JSON output is defined for {command!r}")
    document: dict[str, Any] = {"engram": command, "version": JSON_VERSION}
    for key, value in fields.items():
        if key not in document:
            document[key] = value
    return document


def redacted(text: str) -> str:
    """`text` with every value-shaped secret replaced by its marker."""
    from engram import secrets

    return secrets.redact(text)


def _redacted_json(value: Any) -> Any:
    if isinstance(value, str):
        return redacted(value)
    if isinstance(value, Mapping):
        return {redacted(k) if isinstance(k, str) else k: _redacted_json(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted_json(item) for item in value]
    return value


def write_json(document: Mapping[str, Any], *, one_line: bool = False) -> None:
    """A finished envelope: indented, or on one line for JSON-lines output (`route --batch`)."""
    text = json.dumps(_redacted_json(document), ensure_ascii=False, indent=None if one_line else 2)
    sys.stdout.write(text + "\n")


def emit_json(command: str, fields: Mapping[str, Any]) -> None:
    write_json(envelope(command, fields))


def write(text: str) -> None:
    """Human output (the caller supplies the line breaks)."""
    sys.stdout.write(redacted(text))


def line(text: str = "") -> None:
    """One line of human output."""
    sys.stdout.write(redacted(text) + "\n")


def message(text: str = "") -> None:
    """A line for the person at the terminal (errors, refusals, progress), on stderr."""
    sys.stderr.write(redacted(text) + "\n")


def progress(text: str) -> None:
    """A progress update on stderr (`\\r` redraws the line)."""
    sys.stderr.write(redacted(text))
    sys.stderr.flush()
