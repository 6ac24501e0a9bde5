"""Every test runs with HOME, XDG dirs and engram's own dirs in tmp_path: no test reads or
writes the developer's real config."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `load` time the machine as much as engram: they run only on request
    (`pytest -m load`, or ENGRAM_LOAD_TESTS=1), on a machine with nothing else to do."""
    if "load" in (config.getoption("-m") or "") or os.environ.get("ENGRAM_LOAD_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="load test: run with `pytest -m load` on a quiet machine")
    for item in items:
        if item.get_closest_marker("load"):
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("ENGRAM_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ENGRAM_CONFIG_DIR", str(home / ".config" / "engram"))
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("ENGRAM_LOCK_TIMEOUT", raising=False)
    return home


def shared_or_skip(*parts: str) -> Path:
    """A path in the read-only reference kit (../shared), or skip when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference kit not present: {path}")
    return path


def load_payload(client: str, name: str) -> dict:
    """A real client payload from tests/fixtures/payloads (copied from the reference kit)."""
    return json.loads((FIXTURES / "payloads" / client / name).read_text(encoding="utf-8"))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty git-style workspace with a memory folder."""
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".agents" / ".engram").mkdir(parents=True)
    return root


def write_card(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


os.environ.setdefault("ENGRAM_TESTING", "1")


def deny_reading(patch: pytest.MonkeyPatch, path: Path) -> None:
    """Make `path` unreadable for this process the way chmod 000 is for a non-root user:
    `open` and `os.open` (engram's bounded reads) raise PermissionError for it."""
    import builtins

    real_open, real_os_open = builtins.open, os.open

    def guarded(real):  # noqa: ANN001, ANN202
        def opener(file, *args, **kwargs):  # noqa: ANN001, ANN202
            if os.fspath(file) == str(path):
                raise PermissionError(13, "Permission denied", str(path))
            return real(file, *args, **kwargs)
        return opener

    patch.setattr("builtins.open", guarded(real_open))
    patch.setattr("os.open", guarded(real_os_open))
