"""The real clients the end-to-end suite drives: pinned npm versions, installed once into a
cache dir outside the repository and reused between runs.

`ensure(name)` returns the client's binary, installing it when the pinned version is not there
yet, or raises `Unavailable` with the reason (no node/npm, the registry cannot be reached, the
install failed). The tests turn that into a skip: a machine without node or network skips the
suite, it never fails it.

Environment:
  ENGRAM_E2E_CLIENTS        cache dir (default ~/.cache/engram-e2e/clients)
  ENGRAM_E2E_<NAME>_VERSION another version to pin (CLAUDE, CODEX, GEMINI), `latest` accepted
  ENGRAM_E2E_INSTALL_TIMEOUT seconds allowed for one npm install (default 600)
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Captured at import, before any test fixture points HOME at a temporary dir.
REAL_HOME = Path(os.environ.get("HOME") or os.path.expanduser("~"))
CACHE = Path(os.environ.get("ENGRAM_E2E_CLIENTS") or REAL_HOME / ".cache" / "engram-e2e" / "clients")
INSTALL_TIMEOUT = float(os.environ.get("ENGRAM_E2E_INSTALL_TIMEOUT") or 600)
VERSION_TIMEOUT = 60.0


class Unavailable(Exception):
    """The client cannot be run here; the message says why."""


@dataclass(frozen=True)
class Client:
    name: str        # claude | codex | gemini
    package: str     # npm package
    pinned: str      # the version the suite is verified with
    display: str

    @property
    def version(self) -> str:
        return os.environ.get(f"ENGRAM_E2E_{self.name.upper()}_VERSION") or self.pinned

    @property
    def prefix(self) -> Path:
        return CACHE / self.name

    @property
    def binary(self) -> Path:
        return self.prefix / "node_modules" / ".bin" / self.name

    def installed_version(self) -> str | None:
        manifest = self.prefix / "node_modules" / self.package / "package.json"
        try:
            return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
        except (OSError, ValueError, KeyError):
            return None


CLIENTS = {
    "claude": Client("claude", "@anthropic-ai/claude-code", "2.1.197", "Claude Code"),
    "codex": Client("codex", "@openai/codex", "0.171.0", "Codex CLI"),
    "gemini": Client("gemini", "@google/gemini-cli", "0.61.0", "Gemini CLI"),
}


def _npm_env() -> dict[str, str]:
    """npm with the real HOME (its cache and .npmrc), whatever the test fixtures set."""
    env = dict(os.environ)
    env["HOME"] = str(REAL_HOME)
    for key in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        env.pop(key, None)
    return env


def _tail(text: str, lines: int = 3) -> str:
    """The telling lines of npm's output: its error code and message, else the last lines."""
    rows = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [r for r in rows if r.startswith("npm error") and not r.endswith(("{", "}", "npm error"))]
    return " | ".join((errors or rows)[:lines] if errors else rows[-lines:])


_RESULTS: dict[str, tuple[Path, str] | Unavailable] = {}


def ensure(name: str) -> tuple[Path, str]:
    """(binary, version string the client prints) for a usable client, or raise Unavailable.
    Decided once per process: a failed install is not retried by every test."""
    if name not in _RESULTS:
        try:
            _RESULTS[name] = _ensure(CLIENTS[name])
        except Unavailable as exc:
            _RESULTS[name] = exc
    result = _RESULTS[name]
    if isinstance(result, Unavailable):
        raise result
    return result


def _ensure(client: Client) -> tuple[Path, str]:
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise Unavailable(f"{tool} not found on PATH: cannot install {client.package}")
    client.prefix.mkdir(parents=True, exist_ok=True)
    # One installer at a time per client (the CI runs the clients in parallel processes).
    with open(client.prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wanted = client.version
        have = client.installed_version()
        if not client.binary.exists() or have is None or (wanted != "latest" and have != wanted):
            _install(client, wanted)
    try:
        done = subprocess.run([str(client.binary), "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT, stdin=subprocess.DEVNULL,
                              env={"PATH": os.environ.get("PATH", ""), "HOME": str(client.prefix)})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{client.binary} --version failed: {exc}") from exc
    if done.returncode != 0:
        raise Unavailable(f"{client.binary} --version exited {done.returncode}: {_tail(done.stderr)}")
    printed = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if wanted != "latest" and wanted not in printed:
        raise Unavailable(f"{client.display}: wanted {wanted}, the binary says {printed!r}")
    return client.binary, printed


def _install(client: Client, version: str) -> None:
    log = client.prefix / "npm-install.log"
    command = ["npm", "install", "--prefix", str(client.prefix), "--save-exact", "--no-audit",
               "--no-fund", "--loglevel=error", f"{client.package}@{version}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
                              stdin=subprocess.DEVNULL, env=_npm_env())
    except subprocess.TimeoutExpired:
        raise Unavailable(f"npm install {client.package}@{version} took over {INSTALL_TIMEOUT:.0f} s "
                          "(registry unreachable?)") from None
    except OSError as exc:
        raise Unavailable(f"npm could not run: {exc}") from exc
    log.write_text(done.stdout + done.stderr, encoding="utf-8")
    if done.returncode != 0:
        raise Unavailable(f"npm install {client.package}@{version} failed (exit {done.returncode}; "
                          f"registry unreachable?): {_tail(done.stderr or done.stdout)} (log: {log})")
    if not client.binary.exists():
        raise Unavailable(f"npm installed {client.package}@{version} but {client.binary} is missing")
