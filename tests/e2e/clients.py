"""The real clients the end-to-end suite drives, each in the versions of the matrix: the
pinned one (what the suite is verified with) and the latest published one known when the suite
was last updated. Each version is installed once into its own folder of a cache dir outside
the repository (`<cache>/<name>/<version>/`), so versions live side by side and are reused.

`ensure(name, version)` returns the client's binary, installing it when that version is not
there yet, or raises `Unavailable` with the reason (no node/npm, the registry cannot be
reached, the install failed). The tests turn that into a skip: a machine without node or
network skips the suite, it never fails it.

Environment:
  ENGRAM_E2E_CLIENTS         cache dir (default ~/.cache/engram-e2e/clients)
  ENGRAM_E2E_<NAME>_VERSION  the versions to run instead of the matrix, comma-separated
                             (`ENGRAM_E2E_CLAUDE_VERSION=2.1.197`, `...=2.1.197,latest`);
                             `latest` asks npm for the newest published version
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
    name: str        # the client's binary and the suite's name for it
    package: str     # npm package
    pinned: str      # the version the suite is verified with
    latest: str      # the latest published version when the matrix was last updated
    display: str

    def versions(self) -> list[str]:
        """The versions to run, pinned first; the environment may replace them."""
        chosen = os.environ.get(f"ENGRAM_E2E_{self.name.upper()}_VERSION", "")
        wanted = [v.strip() for v in chosen.split(",") if v.strip()] or [self.pinned, self.latest]
        return list(dict.fromkeys(wanted))

    def prefix(self, version: str) -> Path:
        return CACHE / self.name / version

    def binary(self, version: str) -> Path:
        return self.prefix(version) / "node_modules" / ".bin" / self.name

    def installed_version(self, version: str) -> str | None:
        manifest = self.prefix(version) / "node_modules" / self.package / "package.json"
        try:
            return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
        except (OSError, ValueError, KeyError):
            return None


# One row per client; a new client is one more row here plus its test module.
CLIENTS = {
    "claude": Client("claude", "@anthropic-ai/claude-code", "2.1.197", "2.1.332", "Claude Code"),
    "codex": Client("codex", "@openai/codex", "0.171.0", "0.171.0", "Codex CLI"),
    "gemini": Client("gemini", "@google/gemini-cli", "0.61.0", "0.61.0", "Gemini CLI"),
    "opencode": Client("opencode", "opencode-ai", "1.18.33", "1.18.33", "OpenCode"),
}


def versions(name: str) -> list[str]:
    """The matrix of one client (for `pytest.fixture(params=...)`)."""
    return CLIENTS[name].versions()


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


_RESULTS: dict[tuple[str, str], tuple[Path, str] | Unavailable] = {}


def ensure(name: str, version: str | None = None) -> tuple[Path, str]:
    """(binary, version string the client prints) for a usable client in `version` (default:
    the first of its matrix), or raise Unavailable. Decided once per process and version: a
    failed install is not retried by every test."""
    client = CLIENTS[name]
    version = version or client.versions()[0]
    if (name, version) not in _RESULTS:
        try:
            _RESULTS[(name, version)] = _ensure(client, version)
        except Unavailable as exc:
            _RESULTS[(name, version)] = exc
    result = _RESULTS[(name, version)]
    if isinstance(result, Unavailable):
        raise result
    return result


def _resolve_latest(client: Client) -> str:
    """The newest published version, asked of npm (the one registry look-up the suite makes)."""
    try:
        done = subprocess.run(["npm", "view", client.package, "version"], capture_output=True,
                              text=True, timeout=VERSION_TIMEOUT, stdin=subprocess.DEVNULL,
                              env=_npm_env())
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"npm view {client.package} failed: {exc}") from exc
    found = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    if not found:
        raise Unavailable(f"npm view {client.package} version: {_tail(done.stderr) or 'no answer'}")
    return found[0].strip()


def _ensure(client: Client, wanted: str) -> tuple[Path, str]:
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise Unavailable(f"{tool} not found on PATH: cannot install {client.package}")
    if wanted == "latest":
        wanted = _resolve_latest(client)
    prefix = client.prefix(wanted)
    prefix.mkdir(parents=True, exist_ok=True)
    # One installer at a time per client version (the CI runs pytest processes in parallel).
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not client.binary(wanted).exists() or client.installed_version(wanted) != wanted:
            _install(client, wanted)
    binary = client.binary(wanted)
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT, stdin=subprocess.DEVNULL,
                              env={"PATH": os.environ.get("PATH", ""), "HOME": str(prefix)})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{binary} --version failed: {exc}") from exc
    if done.returncode != 0:
        raise Unavailable(f"{binary} --version exited {done.returncode}: {_tail(done.stderr)}")
    printed = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if wanted not in printed:
        raise Unavailable(f"{client.display}: wanted {wanted}, the binary says {printed!r}")
    return binary, printed


def _install(client: Client, version: str) -> None:
    prefix = client.prefix(version)
    log = prefix / "npm-install.log"
    command = ["npm", "install", "--prefix", str(prefix), "--save-exact", "--no-audit",
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
    if not client.binary(version).exists():
        raise Unavailable(f"npm installed {client.package}@{version} but {client.binary(version)} "
                          "is missing")
