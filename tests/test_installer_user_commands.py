"""A hook entry is engram's to edit or remove only when its command is exactly one engram
writes: `<engram> hook <host>`, `[<python> -I -S] <engram-hook> <host>`, `<python> -m engram
hook <host>`, the shared guard form, and the predecessor's `engram agent-hook --host <host>`.
Anything the user put around such a command makes the entry theirs: an environment
assignment (`GITHUB_TOKEN=... engram hook claude`), a runner (`timeout 5`, `nice`, `env -u
X`, `exec`), extra arguments, a redirection, a `&&`/`;`/`||` chain, a background `&`. Such an
entry still runs engram's hook, so `link` adds no second one beside it on its event, and
`link`, `upgrade` and `unlink` leave it byte for byte (nor do they delete a file that holds
only it)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from installer_helpers import PINNED, engram

from engram import host_registry
from engram.installer import command
from engram.installer.merge import FORMATS
from engram.installer.plan import Options, ours_for


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


OURS = f"{PINNED} hook claude"
USERS = [
    f"GITHUB_TOKEN=ghp_example {OURS}",
    "GITHUB_TOKEN=ghp_example engram hook claude",
    f"A=1 B=2 {OURS}",
    f"timeout 5 {OURS}",
    f"nice {OURS}",
    f"env -u HTTP_PROXY {OURS}",
    f"exec {OURS}",
    f"{OURS} --verbose",
    f"{OURS} 2>/dev/null",
    f"{OURS} >>/tmp/engram.log 2>&1",
    f'cd "$CLAUDE_PROJECT_DIR" && {OURS}',
    f"{OURS} && echo done",
    f"{OURS}; true",
    f"{OURS} || true",
    f"{OURS} &",
    "$HOME/.local/bin/engram hook claude",
    "~/.local/bin/engram hook claude",
    "/usr/bin/python3 -X importtime -m engram hook claude",
    "/v/bin/python3 -I -S /v/bin/engram-hook claude 2>/dev/null",
    "command -v engram >/dev/null 2>&1 && exec engram hook claude --quiet || true",
    "command -v engram-hook >/dev/null 2>&1 && exec engram-hook claude; true",
    "engram hook claude 'unbalanced",
    'set "GITHUB_TOKEN=x" && C:\\venv\\Scripts\\engram.exe hook claude',
    '"C:/Program Files/engram/Scripts/engram.exe" hook claude 2>NUL',
]


@pytest.mark.parametrize("cmd", USERS)
def test_a_users_command_around_engrams_is_theirs(cmd: str) -> None:
    assert not command.is_ours(cmd, ("claude",))
    assert command.runs_engram_hook(cmd, ("claude",))  # still engram's hook: none added beside


@pytest.mark.parametrize("cmd", USERS)
def test_link_upgrade_unlink_leave_a_users_entry_byte_for_byte(workspace: Path, cmd: str) -> None:
    settings_file = workspace / ".claude" / "settings.json"
    settings_file.parent.mkdir()
    original = json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": cmd}]}]}}, indent=2) + "\n"
    settings_file.write_text(original)
    assert engram("unlink", "claude", cwd=workspace) == 0  # nothing of engram's in it
    assert settings_file.read_text() == original
    assert engram("link", "claude", cwd=workspace) == 0
    linked = json.loads(settings_file.read_text())
    assert linked["hooks"]["UserPromptSubmit"] == [{"hooks": [{"type": "command", "command": cmd}]}]
    assert engram("upgrade", cwd=workspace) == 0
    assert json.loads(settings_file.read_text()) == linked
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert settings_file.read_text() == original


def _engram_forms(host: str) -> list[str]:
    """Every command engram writes or wrote for `host`."""
    return [f"{PINNED} hook {host}", f"engram hook {host}", f"'/a b/bin/engram' hook {host}",
            f"/v/bin/engram-hook {host}", f"/v/bin/python3 -I -S /v/bin/engram-hook {host}",
            f"/usr/bin/python3 -m engram hook {host}", f"engram agent-hook --host {host}",
            command.hook_command(host, "path"),
            # Windows: a path with backslashes, and one `quote` puts in double quotes
            f"C:\\venv\\Scripts\\engram.exe hook {host}",
            f'"C:/Program Files/engram/Scripts/engram.exe" hook {host}',
            f"command -v engram >/dev/null 2>&1 && exec engram hook {host} || true"]


@pytest.mark.parametrize("cmd", _engram_forms("claude"))
def test_engrams_own_forms_are_its_own(cmd: str) -> None:
    assert command.is_ours(cmd, ("claude",))


_WORD = st.text(alphabet="abcXYZ_019-./$~'\" ", min_size=1, max_size=8)
_ASSIGNMENT = st.builds(lambda name, value: f"{name}={shlex.quote(value)}",
                        st.sampled_from(["GITHUB_TOKEN", "FOO", "PATH", "A"]), _WORD)
_PREFIX = st.one_of(
    _ASSIGNMENT,
    st.sampled_from(["timeout 5", "nice", "nice -n 5", "env", "env -u X", "exec", "command",
                     "nohup", "time", "sudo", "cd /tmp &&", "true;", "false ||", "echo hi &&",
                     "cd \"$CLAUDE_PROJECT_DIR\" &&", "uvx", "set -e;"]))
_SUFFIX = st.one_of(
    st.builds(shlex.quote, _WORD),
    st.sampled_from(["2>/dev/null", ">/dev/null", ">>log", "2>&1", "&", "&& echo done",
                     "; true", "|| true", "| tee log", "--verbose", "< /dev/null", ";",
                     "# note"]))


@settings(max_examples=150, derandomize=True, deadline=None)
@given(core=st.sampled_from(_engram_forms("claude")), prefixes=st.lists(_PREFIX, max_size=3),
       suffixes=st.lists(_SUFFIX, max_size=3), data=st.data())
def test_engram_edits_or_removes_only_entries_exactly_in_its_own_form(
        core: str, prefixes: list[str], suffixes: list[str], data: st.DataObject) -> None:
    cmd = " ".join([*prefixes, core, *suffixes])
    if cmd == core:
        cmd = data.draw(st.sampled_from([f"X=1 {core}", f"{core} ", f" {core}", f"{core} x"]))
    assert not command.is_ours(cmd, ("claude",))
    host = host_registry.get("claude")
    fmt = FORMATS["matcher_groups"]
    user = {"type": "command", "command": cmd}
    for event in ("UserPromptSubmit", "PostToolUse"):
        group = {"matcher": "Read|Edit|Write|MultiEdit", "hooks": [user]} \
            if event == "PostToolUse" else {"hooks": [user]}
        document = {"hooks": {event: [group]}}
        for options in (Options(), Options(global_scope=True), Options(command="path")):
            ours = ours_for(host, options)
            merged = fmt.merge(document, ours)
            assert merged["hooks"][event][0] == group  # kept, and first, as it was
            assert fmt.strip(merged, ours) == document
            assert fmt.strip(document, ours) == document
