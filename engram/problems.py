"""A reported problem with a memory file: where, how bad, and what to do."""

from __future__ import annotations

from engram.record import frozen


@frozen
class Problem:
    path: str
    line: int | None
    severity: str  # "error" (the card is skipped) or "warning" (it loads, but check it)
    message: str
    code: str = ""

    def render(self, path: str | None = None) -> str:
        """`path:line: severity: message [code]`; `path` replaces the stored path (relative)."""
        shown = self.path if path is None else path
        where = f"{shown}:{self.line}" if self.line else shown
        code = f" [{self.code}]" if self.code else ""
        return f"{where}: {self.severity}: {self.message}{code}"

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "severity": self.severity,
                "code": self.code, "message": self.message}
