"""Bundled data (hosts/, memories/, schemas/): inside the wheel as engram/<name>, or at the
top of a source checkout."""

from __future__ import annotations

from pathlib import Path
from typing import Final

_PACKAGE_DIR: Final = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """The folder of bundled data `name` ("hosts", "memories" or "schemas")."""
    installed = _PACKAGE_DIR / name
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent / name
