"""A reported problem with a memory file: where, how bad, and what to do."""

from __future__ import annotations

from engram.record import Record, frozen


@frozen
class Problem(Record):
    path: str
    line: int | None
    severity: str  # "error" (the card is skipped) or "warning" (it loads, but check it)
    message: str
    code: str = ""

    def render(self, path: str | None = None) -> str:
        """`path:line: severity: message [code]`; `path` replaces the stored path (relative).
        A secret in the path or the message is redacted."""
        from engram import secrets

        shown = secrets.redact_path(self.path if path is None else path)
        where = f"{shown}:{self.line}" if self.line else shown
        code = f" [{self.code}]" if self.code else ""
        return f"{where}: {self.severity}: {secrets.redact(self.message)}{code}"

    def redacted(self) -> "Problem":
        """The problem safe to print: a secret in a file name, an id or a message (a
        dangling `depends_on` names the id it wanted) never reaches a terminal or a log."""
        from engram import secrets

        return Problem(secrets.redact_path(self.path), self.line, self.severity,
                       secrets.redact(self.message), self.code)

    def to_json(self) -> dict[str, object]:
        shown = self.redacted()
        return {"path": shown.path, "line": shown.line, "severity": shown.severity,
                "code": shown.code, "message": shown.message}
