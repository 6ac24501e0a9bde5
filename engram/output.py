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
import re
import sys
from typing import Any, Final, Mapping, Sequence

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


def redacted_quoting(text: str, quoted: Sequence[str]) -> str:
    """`text`, which may quote any of `quoted` (the command line, in a usage error), redacted
    with what each of them holds: a value that is a secret where it was given (an argument
    `AWS_SECRET_ACCESS_KEY=...`, a pasted config block) may not look like one inside the
    message's own words (`Got unexpected extra argument(s) (...)`), nor once its line breaks
    are shown as `\\x0a`."""
    from engram import secrets

    values: dict[str, str] = {}
    for argument in quoted:
        for hit in secrets.find_secrets(argument):
            values.setdefault(argument[hit.start:hit.end], hit.kind)
    joined = " ".join(quoted)
    for hit in secrets.find_secrets(joined):
        # A secret given as two arguments (`--password X`): hidden argument by argument.
        for piece in joined[hit.start:hit.end].split(" "):
            if len(piece) >= 8:
                values.setdefault(piece, hit.kind)
    for value in sorted(values, key=len, reverse=True):
        for form in dict.fromkeys((value, _CONTROL.sub(_escape, value), repr(value)[1:-1])):
            text = text.replace(form, secrets.marker(values[value]))
    return redacted(text)


_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match[0]):02x}"


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


def message(text: str = "", quoting: Sequence[str] = ()) -> None:
    """A line for the person at the terminal (errors, refusals, progress), on stderr;
    `quoting`: what it may quote (`redacted_quoting`)."""
    sys.stderr.write((redacted_quoting(text, quoting) if quoting else redacted(text)) + "\n")


def progress(text: str) -> None:
    """A progress update on stderr (`\\r` redraws the line)."""
    sys.stderr.write(redacted(text))
    sys.stderr.flush()
