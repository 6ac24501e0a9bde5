"""The installer's safety promises, each on real files: refuse what it cannot merge (bytes
untouched), follow symlinks, keep modes, back up, dry-run, concurrency, opt-in SessionEnd."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from installer_helpers import PINNED, engram

VENV_ENGRAM = Path(sys.executable).parent / "engram"


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


def settings(workspace: Path) -> Path:
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def events(path: Path, container: str = "hooks") -> dict[str, list]:
    return json.loads(path.read_text())[container]


def ours_count(path: Path) -> int:
    text = path.read_text()
    return text.count(f"{PINNED} hook")


@pytest.mark.parametrize("content, key", [
    ('{"hooks": [1, 2]}', "hooks"),
    ('{"hooks": {"SessionStart": {"hooks": []}}}', "hooks.SessionStart"),
    ('{"hooks": {"SessionStart": [{"hooks": "x"}]}}', "hooks.SessionStart[0].hooks"),
    ('{"hooks": {"SessionStart": [{"hooks": [3]}]}}', "hooks.SessionStart[0].hooks[0]"),
    ('[1, 2]', "(top level)"),
    ('{"model": "opus",', None),
    ('{"a": 1} trailing', None),
])
def test_malformed_or_wrongly_shaped_config_is_refused_untouched(
        content: str, key: str | None, workspace: Path, capsys: pytest.CaptureFixture) -> None:
    path = settings(workspace)
    path.write_bytes(content.encode())
    assert engram("link", "claude", cwd=workspace) == 1
    assert path.read_bytes() == content.encode()
    err = capsys.readouterr().err
    assert "REFUSED .claude/settings.json" in err and "fix:" in err
    assert "Traceback" not in err
    if key:
        assert key in err
    assert engram("unlink", "claude", cwd=workspace) == 1
    assert path.read_bytes() == content.encode()


def test_refusal_never_prints_the_users_config(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    path = settings(workspace)
    path.write_text('{"apiKey": "sk-secret-value", "hooks": []}')
    assert engram("link", "claude", cwd=workspace) == 1
    out = capsys.readouterr()
    assert "sk-secret-value" not in out.out + out.err


def test_link_all_refuses_one_file_and_still_links_the_others(workspace: Path) -> None:
    settings(workspace).write_text('{"hooks": []}')
    assert engram("link", "all", cwd=workspace) == 1
    assert (workspace / ".codex" / "hooks.json").exists()


def test_comment_next_to_our_entry_is_kept_when_it_is_updated(workspace: Path) -> None:
    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "hooks": {\n    "BeforeAgent": [\n      {"hooks": [\n'
                    '        {"command": "engram hook gemini"} // installed by hand\n'
                    '      ]}\n    ]\n  }\n}\n')
    assert engram("link", "gemini", cwd=workspace) == 0
    text = path.read_text()
    assert "// installed by hand" in text
    assert text.count("engram hook gemini") == 4


def _two_engram_handlers(workspace: Path, after_first: str, end_of_second: str) -> tuple[Path, str]:
    """A Gemini settings file whose BeforeAgent group holds two of engram's handlers (link
    keeps the first, removes the second), with the user's text after each."""
    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir()
    text = ('{\n  "hooks": {\n    "BeforeAgent": [\n      {"hooks": [\n'
            f'        {{"command": "/x/engram hook gemini"}}{after_first}\n'
            f'        {{"command": "/y/engram hook gemini"{end_of_second}\n'
            '      ]}\n    ]\n  }\n}\n')
    path.write_text(text)
    return path, text


def test_a_change_that_would_delete_a_comment_is_refused(workspace: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    """A comment inside what engram removes, on a line none of whose code stays, is that
    code's: refused, never dropped."""
    path, text = _two_engram_handlers(workspace, ",",
                                      ' /* the duplicate engram removes */}')
    assert engram("link", "gemini", cwd=workspace) == 1
    assert path.read_text() == text
    assert "comment near line 6" in capsys.readouterr().err


def test_comments_beside_what_engram_removes_are_kept_where_they_are(workspace: Path) -> None:
    """A comment after code on a line whose code stays (`// first` after the handler engram
    keeps), and one on a line after what engram removes: kept, byte for byte and in order,
    where link used to refuse the whole file."""
    from engram.installer import jsonc

    path, text = _two_engram_handlers(workspace, ", // first", "} // the duplicate engram removes")
    assert engram("link", "gemini", cwd=workspace) == 0
    linked = path.read_text()
    assert jsonc.comments(linked) == ["// first", "// the duplicate engram removes"]
    handlers = jsonc.parse(linked)["hooks"]["BeforeAgent"][0]["hooks"]
    assert len(handlers) == 1  # the duplicate went, its comment stayed
    assert engram("link", "gemini", cwd=workspace) == 0
    assert path.read_text() == linked


def test_symlinked_config_leading_outside_is_refused_unless_the_user_opts_in(
        workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n')
    link = settings(workspace)
    link.symlink_to(os.path.relpath(real, link.parent))
    assert engram("link", "claude", cwd=workspace) == 1
    assert real.read_text() == '{"model": "opus"}\n' and link.is_symlink()
    assert "leads outside the workspace" in capsys.readouterr().err
    # the opt-in is the user's own (user scope), never the repository's
    assert engram("config", "set", "install.follow_symlinks", "true", cwd=workspace) == 1
    assert engram("config", "set", "install.follow_symlinks", "true", "--global",
                  cwd=workspace) == 0
    assert engram("link", "claude", cwd=workspace) == 0
    assert link.is_symlink()
    assert "SessionStart" in events(real)
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert link.is_symlink() and real.read_text() == '{"model": "opus"}\n'


def test_symlink_inside_the_workspace_is_followed(workspace: Path) -> None:
    real = workspace / "config" / "claude.json"
    real.parent.mkdir()
    real.write_text("{}")
    link = settings(workspace)
    link.symlink_to(real)
    assert engram("link", "claude", cwd=workspace) == 0
    assert "SessionStart" in events(real) and link.is_symlink()
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert link.is_symlink() and real.read_text() == "{}"


def test_file_mode_is_kept(workspace: Path) -> None:
    path = settings(workspace)
    path.write_text("{}")
    path.chmod(0o600)
    assert engram("link", "claude", cwd=workspace) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_new_file_gets_the_umask_mode_not_a_temp_files_0600(workspace: Path) -> None:
    assert engram("link", "codex", cwd=workspace) == 0
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((workspace / ".codex/hooks.json").stat().st_mode) == 0o666 & ~mask


def test_backups_are_timestamped_and_only_the_last_five_kept(workspace: Path, tmp_path: Path) -> None:
    path = settings(workspace)
    for n in range(8):
        path.write_text(json.dumps({"n": n}))
        assert engram("link", "claude", cwd=workspace) == 0
    folders = list((tmp_path / "state" / "backups").iterdir())
    assert len(folders) == 1
    copies = sorted(folders[0].glob("2*.bak"))
    assert len(copies) == 5
    assert json.loads(copies[-1].read_text()) == {"n": 7}


def test_dry_run_writes_nothing_and_shows_the_change(workspace: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    path = settings(workspace)
    path.write_text('{"model": "opus"}')
    assert engram("link", "all", "--dry-run", cwd=workspace) == 0
    out = capsys.readouterr().out
    assert "WOULD UPDATE .claude/settings.json (+SessionStart" in out
    assert "WOULD CREATE .codex/hooks.json" in out
    assert path.read_text() == '{"model": "opus"}'
    assert not (workspace / ".codex").exists()
    assert not (tmp_path / "state" / "backups").exists()
    assert engram("link", "claude", cwd=workspace) == 0
    linked = path.read_bytes()
    assert engram("unlink", "claude", "--dry-run", cwd=workspace) == 0
    assert path.read_bytes() == linked


def test_link_json_envelope(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    assert engram("link", "cursor", "--json", cwd=workspace) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"engram", "version", "command", "dry_run", "ok", "changes"}
    assert payload["version"] == 1
    change = payload["changes"][0]
    assert set(change) == {"host", "scope", "path", "action", "entries", "events", "message",
                           "fix", "dry_run", "backup", "kind"}
    assert (change["host"], change["action"], change["entries"]) == ("cursor", "created", 1)


@pytest.mark.parametrize("host", ["copilot", "cline"])
def test_unsupported_hosts_exit_zero_write_nothing_and_say_why(
        host: str, workspace: Path, capsys: pytest.CaptureFixture) -> None:
    before = sorted(p for p in workspace.rglob("*"))
    assert engram("link", host, cwd=workspace) == 0
    assert engram("unlink", host, cwd=workspace) == 0
    assert sorted(p for p in workspace.rglob("*")) == before
    out = capsys.readouterr().out
    assert f"SKIPPED {host}:" in out and "engram writes nothing" in out or "Copilot CLI" in out


def test_link_all_skips_copilot_and_cline(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    assert engram("link", "all", cwd=workspace) == 0
    out = capsys.readouterr().out
    assert "SKIPPED copilot:" in out and "SKIPPED cline:" in out
    assert not (workspace / ".github").exists() and not (workspace / ".clinerules").exists()


def test_unknown_host_is_a_user_error(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    assert engram("link", "vim", cwd=workspace) == 1
    assert "unknown host 'vim'" in capsys.readouterr().err


@pytest.mark.parametrize("alias, path", [("cascade", ".windsurf/hooks.json"),
                                         ("antigravity", ".gemini/settings.json")])
def test_aliases(alias: str, path: str, workspace: Path) -> None:
    assert engram("link", alias, cwd=workspace) == 0
    assert (workspace / path).exists()


def test_user_entry_added_inside_our_group_survives_unlink(workspace: Path) -> None:
    path = settings(workspace)
    assert engram("link", "claude", cwd=workspace) == 0
    document = json.loads(path.read_text())
    mine = {"type": "command", "command": "~/bin/also-on-prompt.sh"}
    document["hooks"]["UserPromptSubmit"][0]["hooks"].append(mine)
    path.write_text(json.dumps(document, indent=2))
    assert engram("link", "claude", cwd=workspace) == 0  # re-link keeps it too
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert json.loads(path.read_text()) == {"hooks": {"UserPromptSubmit": [{"hooks": [mine]}]}}


def test_edited_command_and_duplicates_are_replaced_not_duplicated(workspace: Path) -> None:
    path = settings(workspace)
    stale = {"type": "command", "command": "/usr/bin/python3 -m engram hook claude", "timeout": 10000}
    path.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [stale, stale]}]}}))
    assert engram("link", "claude", cwd=workspace) == 0
    prompt = events(path)["UserPromptSubmit"]
    assert prompt == [{"hooks": [{"type": "command", "command": f"{PINNED} hook claude",
                                  "timeout": 10}]}]


def test_session_end_only_on_request_and_only_claude_and_codex(workspace: Path) -> None:
    assert engram("link", "all", cwd=workspace) == 0
    assert "SessionEnd" not in events(settings(workspace))
    assert engram("link", "all", "--session-end", cwd=workspace) == 0
    claude, codex = events(settings(workspace)), events(workspace / ".codex/hooks.json")
    assert claude["SessionEnd"][0]["hooks"][0]["timeout"] == 5
    assert codex["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    assert "SessionEnd" not in events(workspace / ".gemini/settings.json")
    assert engram("link", "claude", cwd=workspace) == 0  # re-link without the flag keeps it
    assert "SessionEnd" in events(settings(workspace))


def test_timeouts_in_each_hosts_unit(workspace: Path) -> None:
    assert engram("link", "all", cwd=workspace) == 0
    claude = events(settings(workspace))["SessionStart"][0]["hooks"][0]
    gemini = events(workspace / ".gemini/settings.json")["SessionStart"][0]["hooks"][0]
    codex = events(workspace / ".codex/hooks.json")["SessionStart"][0]["hooks"][0]
    cursor = events(workspace / ".cursor/hooks.json")["sessionStart"][0]
    windsurf = events(workspace / ".windsurf/hooks.json")["pre_user_prompt"][0]
    assert (claude["timeout"], codex["timeout"], gemini["timeout"]) == (10, 10, 10000)
    assert "timeout" not in cursor and "timeout" not in windsurf
    assert json.loads((workspace / ".cursor/hooks.json").read_text())["version"] == 1
    assert "version" not in json.loads((workspace / ".windsurf/hooks.json").read_text())


def test_claude_path_trigger_follows_path_rules_and_global(workspace: Path) -> None:
    assert engram("link", "claude", cwd=workspace) == 0  # default: hook mode, PostToolUse
    hooks = events(settings(workspace))
    assert "InstructionsLoaded" not in hooks and "PreToolUse" not in hooks
    assert hooks["PostToolUse"][0]["matcher"] == "Read|Edit|Write|MultiEdit"
    (workspace / ".agents" / "engram.json").write_text('{"hooks": {"path_rules": "native"}}')
    assert engram("link", "claude", cwd=workspace) == 0
    hooks = events(settings(workspace))
    assert "InstructionsLoaded" in hooks and "PostToolUse" not in hooks


def test_global_claude_link_uses_post_tool_use(workspace: Path, isolated_dirs: Path) -> None:
    (workspace / ".agents" / "engram.json").write_text('{"hooks": {"path_rules": "native"}}')
    assert engram("link", "claude", "--global", cwd=workspace) == 0
    hooks = events(isolated_dirs / ".claude" / "settings.json")
    assert "PostToolUse" in hooks and "InstructionsLoaded" not in hooks and "PreToolUse" not in hooks


def test_relink_replaces_an_old_pre_tool_use_entry(workspace: Path) -> None:
    path = settings(workspace)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = {"type": "command", "command": f"{PINNED} hook claude", "timeout": 10}
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Read|Edit|Write|MultiEdit",
                                                          "hooks": [old]}]}}))
    assert engram("link", "claude", cwd=workspace) == 0
    hooks = events(path)
    assert "PreToolUse" not in hooks and "PostToolUse" in hooks


def test_opencode_refuses_a_foreign_engram_js(workspace: Path) -> None:
    path = workspace / ".opencode" / "plugins" / "engram.js"
    path.parent.mkdir(parents=True)
    path.write_text("export const Mine = async () => ({});\n")
    assert engram("link", "opencode", cwd=workspace) == 1
    assert engram("unlink", "opencode", cwd=workspace) == 1
    assert path.read_text() == "export const Mine = async () => ({});\n"


def test_opencode_plugin_embeds_the_command_and_node_accepts_it(workspace: Path) -> None:
    assert engram("link", "opencode", cwd=workspace) == 0
    text = (workspace / ".opencode/plugins/engram.js").read_text()
    assert json.dumps(f"{PINNED} hook opencode") in text
    assert "__ENGRAM_HOOK_COMMAND__" not in text
    if not Path("/usr/bin/node").exists():
        pytest.skip("node not installed")
    subprocess.run(["/usr/bin/node", "--input-type=module", "--check"], input=text.encode(),
                   check=True)


def test_upgrade_replaces_old_entries_adds_missing_and_never_adds_session_end(
        workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = {"type": "command", "command": "/old/bin/engram hook codex", "timeout": 10000}
    codex = workspace / ".codex" / "hooks.json"
    codex.parent.mkdir()
    codex.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [old]}],
                                           "SessionEnd": [{"hooks": [dict(old, timeout=3)]}]}}))
    gemini = isolated_dirs / ".gemini" / "settings.json"
    gemini.parent.mkdir()
    gemini.write_text(json.dumps({"hooks": {"BeforeAgent": [{"hooks": [
        {"type": "command", "command": "engram hook antigravity", "timeout": 10}]}]}}))
    assert engram("upgrade", cwd=workspace) == 0
    hooks = events(codex)
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "PreCompact",
                          "SubagentStart", "SessionEnd"}
    assert hooks["SessionStart"][0]["hooks"] == [{"type": "command",
                                                  "command": f"{PINNED} hook codex", "timeout": 10}]
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    assert set(events(gemini)) == {"SessionStart", "BeforeAgent", "AfterTool", "PreCompress"}
    assert events(gemini)["BeforeAgent"][0]["hooks"][0]["timeout"] == 10000
    assert not settings(workspace).exists()  # claude was never linked: upgrade adds nothing
    claude_file = workspace / ".claude" / "settings.json"
    assert not claude_file.exists()
    # a second upgrade changes nothing
    before = codex.read_bytes(), gemini.read_bytes()
    assert engram("upgrade", cwd=workspace) == 0
    assert (codex.read_bytes(), gemini.read_bytes()) == before


def test_upgrade_with_nothing_linked(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    assert engram("upgrade", cwd=workspace) == 0
    assert "nothing to upgrade" in capsys.readouterr().out


@pytest.mark.skipif(not VENV_ENGRAM.exists(), reason="needs the installed engram script")
def test_two_concurrent_links_leave_exactly_one_set_of_entries(workspace: Path) -> None:
    path = settings(workspace)
    path.write_text('{"model": "opus"}')
    env = dict(os.environ)
    procs = [subprocess.Popen([str(VENV_ENGRAM), "link", "all", "--session-end", "--cwd",
                               str(workspace)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE) for _ in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    hooks = events(path)
    assert all(len(groups) == 1 for groups in hooks.values())
    assert ours_count(path) == 6
    assert json.loads(path.read_text())["model"] == "opus"
    assert ours_count(workspace / ".codex/hooks.json") == 6


@pytest.mark.skipif(not VENV_ENGRAM.exists(), reason="needs the installed engram script")
def test_the_real_cli_exits_1_on_a_refused_config(workspace: Path) -> None:
    settings(workspace).write_text('{"hooks": []}')
    done = subprocess.run([str(VENV_ENGRAM), "link", "claude", "--cwd", str(workspace)],
                          capture_output=True)
    assert done.returncode == 1
