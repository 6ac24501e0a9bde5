"""What a team commits travels: the hook commands in shared project files name no machine's
path, a teammate with engram installed elsewhere (another HOME, another folder on PATH) runs
them unchanged, a clone without engram sees nothing (no error, exit 0), and the teammate's
doctor and upgrade leave the shared files alone. Personal files (--global, --local) keep the
fast absolute form."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_payload
from installer_helpers import engram

from engram import config
from engram.installer import command

VENV_ENGRAM = Path(sys.executable).parent / "engram"
PROJECT_FILES = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
                 "gemini": ".gemini/settings.json", "cursor": ".cursor/hooks.json",
                 "windsurf": ".windsurf/hooks.json"}
CARD = """---
id: zebra-notes
title: Zebrafish notes
tags: [zebrafish]
priority: 60
---
ZEBRA-BODY: the tank log lives in lab/tanks.md.
"""

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the POSIX shell form")


@pytest.fixture(autouse=True)
def unpinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENGRAM_HOOK_EXECUTABLE", raising=False)
    if not (VENV_ENGRAM.exists() and VENV_ENGRAM.with_name("engram-hook").exists()):
        pytest.skip("no console script and launcher in this environment")


def commands_in(path: Path) -> list[str]:
    document = json.loads(path.read_text())
    out = []
    for items in document["hooks"].values():
        for item in items:
            out += [h["command"] for h in item.get("hooks", [item])]
    return out


def test_shared_project_files_hold_no_machine_path(workspace: Path) -> None:
    assert engram("link", "all", cwd=workspace) == 0
    for host, rel in PROJECT_FILES.items():
        text = (workspace / rel).read_text()
        assert str(VENV_ENGRAM.parent) not in text and str(Path.home()) not in text
        assert set(commands_in(workspace / rel)) == {command.hook_command(host, "path")}
    plugin = (workspace / ".opencode/plugins/engram.js").read_text()
    assert json.dumps(command.hook_command("opencode", "path")) in plugin
    assert str(VENV_ENGRAM.parent) not in plugin


def test_personal_files_name_this_installation(workspace: Path) -> None:
    assert engram("link", "claude", "--local", cwd=workspace) == 0
    assert engram("link", "codex", "--global", cwd=workspace) == 0
    local = commands_in(workspace / ".claude/settings.local.json")
    assert local and all(c.startswith(str(VENV_ENGRAM.parent)) for c in local)
    assert all(c.startswith(str(VENV_ENGRAM.parent))
               for c in commands_in(Path.home() / ".codex/hooks.json"))


def test_hooks_command_setting_picks_the_form(workspace: Path) -> None:
    assert engram("link", "codex", cwd=workspace) == 0
    assert engram("config", "set", "hooks.command", "/opt/tools/engram", cwd=workspace) == 0
    assert set(commands_in(workspace / ".codex/hooks.json")) == {"/opt/tools/engram hook codex"}
    assert engram("config", "set", "hooks.command", "relative/engram", cwd=workspace) == 1
    assert engram("config", "unset", "hooks.command", cwd=workspace) == 0
    assert set(commands_in(workspace / ".codex/hooks.json")) == {
        command.hook_command("codex", "path")}


def teammate_env(tmp_path: Path, with_engram: bool,
                 scripts: tuple[str, ...] = ("engram", "engram-hook")) -> dict[str, str]:
    """Another user: own HOME and state, engram's `scripts` (if any) in a pipx-like bin folder,
    and the short PATH of a desktop launcher besides it. No venv activated, no engram
    variables. `scripts=("engram",)` is an engram from before the `engram-hook` launcher."""
    home = tmp_path / "teammate"
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in scripts if with_engram else ():
        if not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(VENV_ENGRAM.with_name(name))  # what pipx and uv tool put on PATH
    path = os.pathsep.join(([str(bin_dir)] if with_engram else []) + ["/usr/bin", "/bin"])
    return {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8"}


def run_committed(cmd: str, payload: dict, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    # Hosts hand the command string to a POSIX shell, as this does.
    return subprocess.run(["/bin/sh", "-c", cmd], input=json.dumps(payload), text=True,
                          capture_output=True, env=env, cwd=cwd, timeout=60)


def payload_for(client: str, name: str, workspace: Path, prompt: str = "") -> dict:
    payload = load_payload(client, name)
    payload["cwd"] = str(workspace)
    if "prompt" in payload:
        payload["prompt"] = prompt
    return payload


@pytest.mark.parametrize("scripts", [("engram", "engram-hook"), ("engram-hook",), ("engram",)],
                         ids=["both", "launcher-only", "older-engram"])
@pytest.mark.parametrize("host, event", [("claude", "UserPromptSubmit.json"),
                                         ("codex", "UserPromptSubmit.json"),
                                         ("gemini", "BeforeAgent.json")])
def test_a_teammates_clone_runs_the_committed_hooks_unchanged(
        host: str, event: str, scripts: tuple[str, ...], workspace: Path, tmp_path: Path) -> None:
    (workspace / ".agents/.engram/zebra-notes.md").write_text(CARD)
    assert engram("link", host, cwd=workspace) == 0
    shared = workspace / PROJECT_FILES[host]
    committed = shared.read_bytes()
    cmd = commands_in(shared)[0]
    env = teammate_env(tmp_path, with_engram=True, scripts=scripts)
    done = run_committed(cmd, payload_for(host, event, workspace, "zebrafish tank"), env,
                         workspace)
    assert done.returncode == 0, done.stderr
    assert "ZEBRA-BODY" in done.stdout
    assert "hookSpecificOutput" in json.loads(done.stdout)
    # engram ran as the teammate: its state lives under the teammate's HOME
    assert (Path(env["HOME"]) / ".local" / "state" / "engram").is_dir()
    assert shared.read_bytes() == committed


def test_a_teammate_runs_the_committed_opencode_plugin_command(workspace: Path,
                                                              tmp_path: Path) -> None:
    (workspace / ".agents/.engram/zebra-notes.md").write_text(CARD)
    assert engram("link", "opencode", cwd=workspace) == 0
    plugin = (workspace / ".opencode/plugins/engram.js").read_text()
    cmd = json.loads(plugin.split("const COMMAND = ", 1)[1].split(";\n", 1)[0])
    payload = {"event": "chat.message", "sessionID": "ses_1", "cwd": str(workspace),
               "prompt": "zebrafish tank"}
    done = run_committed(cmd, payload, teammate_env(tmp_path, with_engram=True), workspace)
    assert done.returncode == 0, done.stderr
    assert "ZEBRA-BODY" in json.loads(done.stdout)["text"]


@pytest.mark.parametrize("host", sorted(PROJECT_FILES))
def test_a_clone_without_engram_sees_nothing(host: str, workspace: Path, tmp_path: Path) -> None:
    assert engram("link", host, cwd=workspace) == 0
    env = teammate_env(tmp_path, with_engram=False)
    for cmd in set(commands_in(workspace / PROJECT_FILES[host])):
        done = run_committed(cmd, {"hook_event_name": "SessionStart", "cwd": str(workspace)},
                             env, workspace)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_teammates_doctor_and_upgrade_leave_the_shared_file_alone(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    assert engram("link", "all", cwd=workspace) == 0
    before = {rel: (workspace / rel).read_bytes() for rel in PROJECT_FILES.values()}
    env = teammate_env(tmp_path, with_engram=True)
    monkeypatch.setenv("HOME", env["HOME"])
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.setenv("ENGRAM_STATE_DIR", str(tmp_path / "teammate-state"))
    capsys.readouterr()
    assert engram("doctor", "--json", cwd=workspace) == 0
    report = json.loads(capsys.readouterr().out)
    for row in report["hosts"]:
        if row["host"] in PROJECT_FILES:
            project = row["configured"][0]
            assert project["state"] == "linked" and not project["broken"], project
    assert engram("upgrade", cwd=workspace) == 0
    assert {rel: (workspace / rel).read_bytes() for rel in PROJECT_FILES.values()} == before


def test_doctor_says_how_to_fix_engram_missing_from_path(
        workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    assert engram("link", "codex", cwd=workspace) == 0
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    capsys.readouterr()
    assert engram("doctor", cwd=workspace) == 1
    out = capsys.readouterr().out
    assert "`engram` is not on this user's PATH" in out
    assert "pipx install engram" in out and str(VENV_ENGRAM.parent) in out


def test_doctor_warns_about_a_shim_and_a_launchers_short_path(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    shims = tmp_path / ".pyenv" / "shims"
    shims.mkdir(parents=True)
    (shims / "engram").symlink_to(VENV_ENGRAM)
    monkeypatch.setenv("PATH", f"{shims}:/usr/bin:/bin")
    assert engram("link", "claude", cwd=workspace) == 0
    capsys.readouterr()
    assert engram("doctor", "--json", cwd=workspace) == 0  # warnings, not problems
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    text = " ".join(w["warning"] for w in warnings)
    assert "shim" in text and "desktop launcher" in text
    # The personal-file links named are the ones that exist: --local only where the host
    # definition has a local file (Claude's).
    fixes = [w["fix"] for w in warnings]
    assert fixes[0].endswith("`engram link claude --local` / `engram link HOST --global`")
    assert fixes[1].endswith("`engram link HOST --global` (or `engram link claude --local`)")


@pytest.mark.parametrize("path", ["/opt/tools/engram-dev", "/opt/tools/my-wrapper"])
def test_hooks_command_names_an_engram_executable_or_is_refused(workspace: Path, path: str) -> None:
    """engram finds its own entries by the program's name (`engram`): a path named otherwise
    was written, then never found again, so each link added the entries once more and unlink
    left them all. Such a path is refused, and the file stays as it was."""
    assert engram("link", "codex", cwd=workspace) == 0
    before = (workspace / ".codex/hooks.json").read_text()
    assert engram("config", "set", "hooks.command", path, cwd=workspace) == 1
    assert engram("link", "codex", cwd=workspace) == 0
    assert (workspace / ".codex/hooks.json").read_text() == before
    for name in ("/opt/tools/engram", "/opt/tools/engram.exe", "C:/Tools/engram.cmd"):
        if os.path.isabs(name):
            assert config.coerce("hooks.command", name) == name
