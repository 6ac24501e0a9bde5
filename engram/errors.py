"""The one small error taxonomy: user-fixable errors carry what to do."""

from __future__ import annotations


class EngramError(Exception):
    """A problem the user can fix. Exit code 1; the message says what to do."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\nhint: {self.hint}"
        return self.message
