"""An engram hook entry the user already has in their own form: `engram link` adds no second
one (the host would run the hook twice per event), never edits the user's entry, and `doctor`
reports an event that runs the hook twice.

The forms: a runner or shell in front of engram (`uvx`, `uv run`, `pipx run`, `timeout`,
`bash -c`), a Python running the script, exec form (`command` + `args`), and Codex's
`[hooks]` tables in the config.toml it reads beside hooks.json. And the file a downgrade
leaves: a newer release's entry plus the one an older release added beside it, because the
older one did not know the newer command form."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from installer_helpers import PINNED, engram

from engram.commands import doctor
from engram.installer.command import runs_engram_hook


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


OWN_FORMS = [
    {"type": "command", "command": "uvx engram hook claude"},
    {"type": "command", "command": "uv run --with engram engram hook claude"},
    {"type": "command", "command": "pipx run engram hook claude"},
    {"type": "command", "command": "timeout 8 engram hook claude"},
    {"type": "command", "command": "bash -c 'engram hook claude 2>/dev/null'"},
    {"type": "command", "command": "/opt/py/bin/python3.12 /opt/engram/bin/engram hook claude"},
    {"type": "command", "command": "python3 -m engram.entry hook claude"},
    {"type": "command", "command": "/opt/engram/bin/engram", "args": ["hook", "claude"]},
    # Windows: Claude Code and others hand a command to cmd or PowerShell
    {"type": "command", "command": "cmd /c engram hook claude"},
    {"type": "command", "command": 'cmd.exe /d /s /C "C:\\Tools\\engram.exe hook claude"'},
    {"type": "command", "command": 'powershell -Command "engram hook claude"'},
    {"type": "command", "command": "powershell.exe -NoProfile -ExecutionPolicy Bypass -Command "
                                   "\"& engram hook claude\""},
    {"type": "command", "command": "pwsh -NoLogo -c 'engram hook claude; exit 0'"},
]


def engram_handlers(document: dict, event: str, host: str = "claude") -> list[dict]:
    return [h for group in document.get("hooks", {}).get(event, []) for h in group["hooks"]
            if runs_engram_hook(h.get("command"), [host], h.get("args"))]


def doctor_row(workspace: Path, host: str, scope: str = "project") -> dict:
    report = doctor.collect(workspace)
    row = next(r for r in report["hosts"] if r["host"] == host)
    return next(c for c in row["configured"] if c["scope"] == scope)


@pytest.mark.parametrize("own", OWN_FORMS, ids=lambda h: h["command"] + " ".join(h.get("args", [])))
def test_link_adds_no_second_entry_beside_the_users_own(workspace: Path, own: dict,
                                                        capsys: pytest.CaptureFixture) -> None:
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [own]}]}}, indent=2) + "\n"
    settings.write_text(original)
    assert engram("link", "claude", cwd=workspace) == 0
    document = json.loads(settings.read_text())
    assert engram_handlers(document, "UserPromptSubmit") == [own]  # one, the user's, untouched
    assert [len(engram_handlers(document, e)) for e in ("SessionStart", "PreCompact")] == [1, 1]
    assert "UserPromptSubmit" in capsys.readouterr().out  # said why it added none there
    row = doctor_row(workspace, "claude")
    assert row["own_entries"] == ["UserPromptSubmit"] and row["twice"] == []
    assert row["state"] == "linked" and "twice" not in row["problem"]  # (the pinned path
    # does not resolve on this machine: that is the one problem)
    assert engram("link", "claude", cwd=workspace) == 0  # again: nothing changes
    assert json.loads(settings.read_text()) == document
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert settings.read_text() == original


def test_doctor_reports_an_event_that_runs_the_hook_twice_and_link_keeps_one(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's own entry and engram's on one event (written by hand after a link, or by an
    older engram): doctor names it; link drops engram's, keeps the user's."""
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", str(Path(sys.executable).parent / "engram"))
    assert engram("link", "claude", cwd=workspace) == 0
    settings = workspace / ".claude" / "settings.json"
    document = json.loads(settings.read_text())
    own = {"type": "command", "command": "uvx engram hook claude"}
    document["hooks"]["UserPromptSubmit"].append({"hooks": [own]})
    settings.write_text(json.dumps(document, indent=2))
    row = doctor_row(workspace, "claude")
    assert row["twice"] == ["UserPromptSubmit"] and row["broken"]
    assert "runs twice per event for UserPromptSubmit" in row["problem"]
    assert row["fix"] == "engram link claude (keeps one entry per event)"
    assert engram("link", "claude", cwd=workspace) == 0
    assert engram_handlers(json.loads(settings.read_text()), "UserPromptSubmit") == [own]
    assert not doctor_row(workspace, "claude")["broken"]


def test_a_file_left_by_a_downgrade_is_reported_and_link_keeps_one_entry(
        workspace: Path) -> None:
    """A newer engram linked (`<venv>/bin/engram-hook claude`); an older one, which knew only
    `engram hook claude`, then linked again and added its own entry beside each. (The older
    release cannot be fixed from here; this one sees the double and undoes it.)"""
    newer = "/home/u/.venvs/engram/bin/engram-hook claude"
    older = "/home/u/.local/bin/engram hook claude"
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    events = ("SessionStart", "UserPromptSubmit", "PreCompact")
    settings.write_text(json.dumps({"hooks": {e: [
        {"hooks": [{"type": "command", "command": newer, "timeout": 10}]},
        {"hooks": [{"type": "command", "command": older, "timeout": 10}]}] for e in events}}))
    row = doctor_row(workspace, "claude")
    assert row["twice"] == list(events) and row["broken"]
    assert engram("link", "claude", cwd=workspace) == 0
    document = json.loads(settings.read_text())
    assert [len(engram_handlers(document, e)) for e in events] == [1, 1, 1]
    assert doctor_row(workspace, "claude")["twice"] == []


CONFIG_TOML = """model = "gpt-5.1-codex"

[[hooks.UserPromptSubmit]]
[[hooks.UserPromptSubmit.hooks]]
type = "command"
command = "engram hook codex"
timeout = 10

[hooks.state."x"]
trusted_hash = "sha256:00"
"""


@pytest.mark.parametrize("scope", ["project", "global"])
def test_codex_config_toml_entries_count_as_the_users_own(workspace: Path, tmp_path: Path,
                                                          scope: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex reads `[hooks]` in the config.toml beside each hooks.json and runs both."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    folder = (workspace if scope == "project" else home) / ".codex"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(CONFIG_TOML)
    args = ("link", "codex") + (("--global",) if scope == "global" else ())
    assert engram(*args, cwd=workspace) == 0
    document = json.loads((folder / "hooks.json").read_text())
    assert engram_handlers(document, "UserPromptSubmit", "codex") == []
    assert len(engram_handlers(document, "SessionStart", "codex")) == 1
    assert (folder / "config.toml").read_text() == CONFIG_TOML
    row = doctor_row(workspace, "codex", scope)
    assert "UserPromptSubmit" in row["own_entries"] and row["state"] == "linked", row
    # an entry of engram's for the same event (a link before the user's TOML entry): a double
    document["hooks"]["UserPromptSubmit"] = [{"hooks": [{"type": "command",
                                                         "command": f"{PINNED} hook codex"}]}]
    (folder / "hooks.json").write_text(json.dumps(document))
    assert doctor_row(workspace, "codex", scope)["twice"] == ["UserPromptSubmit"]
    assert engram(*args, cwd=workspace) == 0
    document = json.loads((folder / "hooks.json").read_text())
    assert engram_handlers(document, "UserPromptSubmit", "codex") == []


@pytest.mark.parametrize("command", ["echo engram hook claude", "engram hook codex",
                                     "my-logger engram hook claude", "npx engram hook claude",
                                     "bash -c 'echo engram hook claude'", "python3 -m engram hook",
                                     "cmd /c echo engram hook claude",
                                     'powershell -Command "Write-Host engram hook claude"',
                                     "pwsh -File engram hook claude",
                                     "cmd /c engram hook codex",
                                     "powershell -ExecutionPolicy engram hook claude"])
def test_a_command_that_only_mentions_engram_is_not_taken_for_its_hook(command: str) -> None:
    assert not runs_engram_hook(command, ["claude"])


def test_a_host_linked_globally_and_in_the_project_is_noted_and_reported(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    """Claude Code reads both files and runs both hooks on every event."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert engram("link", "claude", "--global", cwd=workspace) == 0
    capsys.readouterr()
    assert engram("link", "claude", cwd=workspace) == 0
    out = capsys.readouterr().out
    assert "runs both on every event" in out and "engram unlink claude --global" in out
    warnings = [w["warning"] for w in doctor.collect(workspace)["warnings"]]
    assert any(w.startswith("claude runs engram's hook once per file") and "global" in w
               and "project" in w for w in warnings), warnings
    assert engram("unlink", "claude", "--global", cwd=workspace) == 0
    assert not any("once per file" in w["warning"] for w in doctor.collect(workspace)["warnings"])


@pytest.mark.parametrize("command", ["git commit -m engram hook claude",
                                     "/usr/local/bin/notify -m engram hook claude",
                                     "echo x=1 engram hook claude",
                                     "notify --title=done engram hook claude",
                                     "echo RUN=1 /opt/engram/bin/engram-hook claude"])
def test_a_users_entry_with_engram_as_an_argument_survives_link_upgrade_unlink(
        workspace: Path, command: str) -> None:
    """`-m engram` runs engram's hook only after a Python, and a word with `=` before engram
    makes it the program only when it is an assignment where a command starts (`FOO=1 engram
    hook claude`): after any other program both are its arguments (a message, an option),
    and the entry is the user's, never engram's to rewrite (upgrade) or remove (unlink)."""
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": command}]}]}}, indent=2) + "\n"
    settings.write_text(original)
    assert engram("link", "claude", cwd=workspace) == 0
    document = json.loads(settings.read_text())
    commands = [h["command"] for g in document["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert commands == [command, f"{PINNED} hook claude"]  # the user's kept, engram's added
    assert engram("upgrade", cwd=workspace) == 0
    assert json.loads(settings.read_text()) == document
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert settings.read_text() == original


def test_a_codex_config_toml_nested_too_deep_to_read_is_left_alone(workspace: Path) -> None:
    """Python's TOML reader recurses once per nested array: 5,000 `[` (10 kB) exhaust the
    stack. Such a file is one engram cannot read, like one that does not parse: link and
    doctor go on without it, and it is never written."""
    folder = workspace / ".codex"
    folder.mkdir()
    deep = 'model = "gpt-5.1-codex"\nx = ' + "[" * 5000 + "]" * 5000 + "\n" + CONFIG_TOML
    (folder / "config.toml").write_text(deep)
    assert engram("link", "codex", cwd=workspace) == 0
    document = json.loads((folder / "hooks.json").read_text())
    assert len(engram_handlers(document, "UserPromptSubmit", "codex")) == 1
    assert doctor_row(workspace, "codex")["state"] == "linked"
    assert engram("unlink", "codex", cwd=workspace) == 0
    assert (folder / "config.toml").read_text() == deep


@pytest.mark.parametrize("matcher", ["Read", "Edit|Write"])
def test_a_users_own_entry_on_fewer_tools_leaves_engrams_entry_in_place(
        workspace: Path, matcher: str) -> None:
    """The user's own `uvx engram hook claude` on PostToolUse for `Read` alone stands in for
    engram's `Read|Edit|Write|MultiEdit` only on reads: without engram's entry the code an
    agent writes would never reach the hook, and doctor would say all is well."""
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    own = {"type": "command", "command": "uvx engram hook claude"}
    original = json.dumps({"hooks": {"PostToolUse": [{"matcher": matcher, "hooks": [own]}]}},
                          indent=2) + "\n"
    settings.write_text(original)
    assert engram("link", "claude", cwd=workspace) == 0
    groups = json.loads(settings.read_text())["hooks"]["PostToolUse"]
    assert [g["matcher"] for g in groups] == [matcher, "Read|Edit|Write|MultiEdit"]
    assert groups[0]["hooks"] == [own]
    assert "PostToolUse" not in doctor_row(workspace, "claude")["own_entries"]
    assert engram("link", "claude", cwd=workspace) == 0
    assert json.loads(settings.read_text())["hooks"]["PostToolUse"] == groups
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert settings.read_text() == original


def test_a_codex_config_toml_entry_on_fewer_tools_leaves_engrams_entry_in_place(
        workspace: Path) -> None:
    folder = workspace / ".codex"
    folder.mkdir()
    toml = ('[[hooks.PreToolUse]]\nmatcher = "apply_patch"\n[[hooks.PreToolUse.hooks]]\n'
            'type = "command"\ncommand = "engram hook codex"\n')
    (folder / "config.toml").write_text(toml)
    assert engram("link", "codex", cwd=workspace) == 0
    document = json.loads((folder / "hooks.json").read_text())
    assert [g.get("matcher") for g in document["hooks"]["PreToolUse"]] == ["apply_patch|Bash"]
    assert (folder / "config.toml").read_text() == toml


def test_codex_config_toml_is_read_where_python_has_no_tomllib(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.10 (which engram supports) has no tomllib: it reads Codex's config.toml with
    tomli, the library tomllib was made from. Without a reader, a user's engram entry there
    went unseen and link added a second one: the hook ran twice per event. (On 3.10 itself
    the other config.toml tests run the real tomli.)"""
    tomllib = pytest.importorskip("tomllib")
    monkeypatch.setitem(sys.modules, "tomllib", None)  # `import tomllib` fails, as on 3.10
    monkeypatch.setitem(sys.modules, "tomli", tomllib)  # the same reader, under its 3.10 name
    monkeypatch.setattr(sys, "version_info", (3, 10, 13, "final", 0))
    folder = workspace / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(CONFIG_TOML)
    assert engram("link", "codex", cwd=workspace) == 0
    document = json.loads((folder / "hooks.json").read_text())
    assert engram_handlers(document, "UserPromptSubmit", "codex") == []
    assert "UserPromptSubmit" in doctor_row(workspace, "codex")["own_entries"]


# What Codex 0.171.0 reads in its config.toml and Python's tomllib (TOML 1.0, until Python
# 3.15) does not: TOML 1.1's inline table over several lines with a trailing comma, and the
# `\e` escape (checked with `codex mcp list`, which stops on a config.toml it cannot read).
TOML_1_1 = ('model = "o4" # \\e: escape\nnotify_prefix = "\\e[1m"\n'
            'hooks = {\n  UserPromptSubmit = [\n    { hooks = [ { type = "command", '
            'command = "uvx engram hook codex" } ] },\n  ],\n}\n')


def test_a_codex_config_toml_in_toml_1_1_counts_as_the_users_own(workspace: Path) -> None:
    """engram read Codex's config.toml with tomllib, which knows TOML 1.0 only, and passed over
    a file it could not read: a user's own engram entry there, in TOML 1.1 (which Codex
    reads), went unseen, link added engram's beside it, and Codex ran the hook twice per
    event; doctor said nothing."""
    folder = workspace / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(TOML_1_1)
    assert engram("link", "codex", cwd=workspace) == 0
    document = json.loads((folder / "hooks.json").read_text())
    assert engram_handlers(document, "UserPromptSubmit", "codex") == []
    assert engram_handlers(document, "SessionStart", "codex") != []
    assert "UserPromptSubmit" in doctor_row(workspace, "codex")["own_entries"]
    assert (folder / "config.toml").read_text() == TOML_1_1


def test_the_toml_reader_is_declared_where_tomllib_reads_toml_1_0_only() -> None:
    from conftest import REPO

    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert "requires-python = \">=3.10\"" in text
    assert "\"tomli>=2.4; python_version < '3.15'\"" in text


@pytest.mark.parametrize("host, own_file, text", [
    ("codex", ".codex/config.toml", CONFIG_TOML),
    ("claude", ".claude/settings.json", json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "uvx engram hook claude"}]}]}}))])
def test_a_users_own_global_entry_beside_a_project_link_is_reported(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture, host: str, own_file: str, text: str) -> None:
    """The user's own engram entry in their global settings (Codex's ~/.codex/config.toml,
    Claude's ~/.claude/settings.json) and engram's project link: the host reads both layers
    and runs the hook twice for that event. The project file is the team's, so link still
    writes it; link and doctor say so, naming both files."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    own = home / own_file
    own.parent.mkdir(parents=True)
    own.write_text(text)
    capsys.readouterr()
    assert engram("link", host, cwd=workspace) == 0
    out = capsys.readouterr().out
    assert "UserPromptSubmit" in out and str(own_file.split("/")[0]) in out, out
    warnings = [w for w in doctor.collect(workspace)["warnings"] if host in w["warning"]]
    assert len(warnings) == 1, warnings
    assert "UserPromptSubmit" in warnings[0]["warning"] and str(own) in warnings[0]["warning"]
    assert own.read_text() == text  # never engram's to edit
    assert engram("unlink", host, cwd=workspace) == 0
    assert not [w for w in doctor.collect(workspace)["warnings"] if host in w["warning"]]
