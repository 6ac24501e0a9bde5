"""The pure core: merge/strip per format, the JSON text patch, the command and its marker."""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path

import pytest

from engram.installer import command, jsonc
from engram.installer.merge import FORMATS, Entry, Ours, ShapeError

CMD = "/opt/engram/bin/engram hook claude"
OURS = Ours(names=("claude",), entries=(
    Entry("SessionStart", (("type", "command"), ("command", CMD), ("timeout", 10))),
    Entry("SubagentStart", (("type", "command"), ("command", CMD), ("timeout", 10)), "*"),
))
GROUPS = FORMATS["matcher_groups"]
FLAT = FORMATS["flat_versioned"]


def test_merge_appends_own_groups_and_keeps_foreign_ones() -> None:
    doc = {"x": 1, "hooks": {"SessionStart": [{"hooks": [{"command": "foreign"}]}]}}
    frozen = copy.deepcopy(doc)
    merged = GROUPS.merge(doc, OURS)
    assert doc == frozen  # inputs are never mutated
    assert merged["hooks"]["SessionStart"] == [
        {"hooks": [{"command": "foreign"}]},
        {"hooks": [{"type": "command", "command": CMD, "timeout": 10}]}]
    assert merged["hooks"]["SubagentStart"] == [
        {"matcher": "*", "hooks": [{"type": "command", "command": CMD, "timeout": 10}]}]
    assert GROUPS.merge(merged, OURS) == merged
    assert GROUPS.strip(merged, OURS) == doc


def test_strip_without_our_entries_changes_nothing() -> None:
    for doc in ({}, {"hooks": {}}, {"hooks": {"Stop": []}}, {"a": [1]}):
        assert GROUPS.strip(doc, OURS) == doc
        assert FLAT.strip(doc, OURS) == doc


def test_our_entry_in_a_foreign_group_is_updated_in_place_keeping_user_keys() -> None:
    doc = {"hooks": {"SessionStart": [{"matcher": "", "sequential": True, "hooks": [
        {"command": "foreign"},
        {"command": "engram hook claude", "timeout": 10000, "statusMessage": "memory"}]}]}}
    merged = GROUPS.merge(doc, OURS)
    assert merged["hooks"]["SessionStart"] == [{"matcher": "", "sequential": True, "hooks": [
        {"command": "foreign"},
        {"type": "command", "command": CMD, "timeout": 10, "statusMessage": "memory"}]}]


def test_events_no_longer_wanted_and_duplicates_are_removed() -> None:
    doc = {"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"command": CMD}]}],
                     "SessionStart": [{"hooks": [{"command": CMD}]}, {"hooks": [{"command": CMD}]}]}}
    merged = GROUPS.merge(doc, OURS)
    assert "PreToolUse" not in merged["hooks"]
    assert len(merged["hooks"]["SessionStart"]) == 1


def test_other_hosts_entries_are_not_ours() -> None:
    doc = {"hooks": {"SessionStart": [{"hooks": [{"command": "/x/engram hook codex"}]}]}}
    assert GROUPS.strip(doc, OURS) == doc


@pytest.mark.parametrize("doc, key", [({"hooks": []}, "hooks"), ({"hooks": {"A": 1}}, "hooks.A"),
                                      ({"hooks": {"A": ["x"]}}, "hooks.A[0]")])
def test_wrong_shapes_raise_with_the_key(doc: dict, key: str) -> None:
    with pytest.raises(ShapeError) as info:
        GROUPS.merge(doc, OURS)
    assert info.value.key == key and info.value.fix


def test_flat_versioned_adds_the_wrapper_first_and_strips_to_empty() -> None:
    ours = Ours(names=("cursor",), entries=(Entry("sessionStart", (("command", "e hook cursor"),)),),
                wrapper=(("version", 1),))
    cursor = Ours(names=("cursor",), entries=(
        Entry("sessionStart", (("command", "/bin/engram hook cursor"),)),), wrapper=(("version", 1),))
    merged = FLAT.merge({}, cursor)
    assert list(merged) == ["version", "hooks"]
    assert FLAT.strip(merged, cursor) == {"version": 1}
    assert FLAT.render("{}", {"version": 1}, cursor) is None  # nothing left: remove the file
    assert ours.names == ("cursor",)


@pytest.mark.parametrize("text", [
    '{"a": 1}', '{\n  "a": [1, 2],\n  "b": {"c": null}\n}\n', '// c\n{\n\t"a": 1, /* x */\n}\n',
    '{"hooks": {"A": [{"hooks": [{"command": "x"}]}]}}', '{}', '\ufeff{"a": "ü"}\r\n'])
def test_patch_round_trips_bytes(text: str) -> None:
    before = jsonc.parse(text)
    after = GROUPS.merge(before, OURS)
    patched = jsonc.patch(text, before, after)
    assert jsonc.parse(patched) == after
    assert jsonc.patch(patched, after, GROUPS.strip(after, OURS)) == text


def test_patch_keeps_crlf_newlines() -> None:
    text = '{\r\n  "a": 1\r\n}\r\n'
    patched = jsonc.patch(text, {"a": 1}, {"a": 1, "b": [1]})
    assert "\n" not in patched.replace("\r\n", "")


@pytest.mark.parametrize("text", ['{"a": 1,, }', '{"a": /* open', '{"a": "x\n"}', "{'a': 1}"])
def test_invalid_jsonc_raises(text: str) -> None:
    with pytest.raises(jsonc.JsoncError):
        jsonc.parse(text)


@pytest.mark.parametrize("cmd, names, expected", [
    ("/v/bin/engram hook claude", ("claude",), True),
    ("'/path with space/engram' hook claude", ("claude",), True),
    ("C:\\venv\\Scripts\\engram.exe hook claude", ("claude",), True),
    ("/usr/bin/python3 -m engram hook claude", ("claude",), True),
    ("engram agent-hook --host claude", ("claude",), True),
    ("engram hook cascade", ("windsurf", "cascade"), True),
    ("engram hook codex", ("claude",), False),
    ("engram-lint hook claude", ("claude",), False),
    ("echo engram hook", ("claude",), False),
    ("echo engram hook claude", ("claude",), False),
    # runs engram's hook, in the user's own form: theirs, never engram's to edit
    ("FOO=1 /v/engram hook claude", ("claude",), False),
    ('cd "$CLAUDE_PROJECT_DIR" && engram hook claude', ("claude",), False),
    ("/bin/notengram hook claude", ("claude",), False),
    (None, ("claude",), False),
    ("engram hook claude 'unbalanced", ("claude",), False),
    ("/v/bin/python3 -I -S /v/bin/engram-hook claude", ("claude",), True),
    ("'/a b/bin/python' -I -S '/a b/bin/engram-hook' claude", ("claude",), True),
    ("/v/bin/engram-hook claude", ("claude",), True),
    ("/v/bin/engram-hook cascade", ("windsurf", "cascade"), True),
    ("/v/bin/python3 -I -S /v/bin/engram-hook codex", ("claude",), False),
    ("echo /v/bin/engram-hook claude", ("claude",), False),
    ("echo -n engram-hook claude", ("claude",), False),
    ("/v/bin/engram-hooks claude", ("claude",), False),
    ("command -v engram-hook >/dev/null 2>&1 && exec engram-hook claude; "
     "command -v engram >/dev/null 2>&1 && exec engram hook claude || true", ("claude",), True),
    ("command -v engram-hook >/dev/null 2>&1 && exec engram-hook claude; true", ("claude",), False),
    ("command -v engram >/dev/null 2>&1 && exec engram hook claude || true", ("claude",), True),
    ("command -v engram-hook >/dev/null 2>&1 && exec engram-hook claude; "
     "command -v engram >/dev/null 2>&1 && exec engram hook claude || true", ("codex",), False),
    ("command -v engram-hook >/dev/null && echo engram-hook claude", ("claude",), False),
])
def test_is_ours(cmd: object, names: tuple[str, ...], expected: bool) -> None:
    assert command.is_ours(cmd, names) is expected


def test_hook_command_uses_this_installations_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(command.EXECUTABLE_ENV, raising=False)
    monkeypatch.setattr(command, "launcher", lambda: None)
    cmd = command.hook_command("gemini")
    assert cmd.endswith(" hook gemini")
    assert command.is_ours(cmd, ("gemini",))
    program = command.executable_of(cmd)
    assert program and os.path.isabs(program)
    assert command.is_resolvable(cmd)
    script = Path(sys.executable).parent / "engram"
    if script.exists():
        assert cmd == f"{script} hook gemini" or os.path.realpath(program) == os.path.realpath(script)


def test_without_a_console_script_it_falls_back_to_the_interpreter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(command.EXECUTABLE_ENV, raising=False)
    monkeypatch.setattr(command, "console_script", lambda: None)
    monkeypatch.setattr(command, "launcher", lambda: None)
    assert command.hook_command("codex") == f"{command.quote(sys.executable)} -m engram hook codex"


def test_shims_are_never_used(tmp_path: Path) -> None:
    shim = tmp_path / ".pyenv" / "shims" / "engram"
    shim.parent.mkdir(parents=True)
    shim.write_text("#!/bin/sh\nexec pyenv exec engram \"$@\"\n")
    shim.chmod(0o755)
    assert not command._belongs_here(shim)


def test_a_script_of_another_interpreter_is_not_ours(tmp_path: Path) -> None:
    other = tmp_path / "engram"
    other.write_text("#!/usr/bin/some-other-python\n")
    other.chmod(0o755)
    assert not command._belongs_here(other)


def test_pinned_executable_with_spaces_is_quoted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(command.EXECUTABLE_ENV, "/Users/a b/venv/bin/engram")
    cmd = command.hook_command("claude")
    assert cmd == "'/Users/a b/venv/bin/engram' hook claude"
    assert command.executable_of(cmd) == "/Users/a b/venv/bin/engram"
    assert json.dumps(cmd)


def _beside_python(name: str) -> list[Path]:
    """Where engram looks for its scripts, narrowed to the venv of `sys.executable` (the real
    list also names this interpreter's scripts folders, which hold the developer's launcher)."""
    return [Path(sys.executable).parent / name]


def _installation(root: Path, version_folder: str = "") -> Path:
    """A venv as pip lays it out (bin/python is this interpreter), with the launcher in bin/."""
    venv = root / version_folder / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python3"
    python.symlink_to(sys.executable)
    script = venv / "bin" / command.LAUNCHER
    script.write_text(f"#!{python}\nimport sys\n")
    script.chmod(0o755)
    return venv


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(command.EXECUTABLE_ENV, raising=False)
    monkeypatch.setattr(command, "_candidates", _beside_python)
    venv = _installation(tmp_path)
    monkeypatch.setattr(sys, "executable", str(venv / "bin" / "python3"))
    return venv


def test_personal_command_runs_the_launcher_without_site(installed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(command, "_without_site_finds_all", lambda script: True)
    cmd = command.hook_command("claude")
    assert cmd == f"{installed}/bin/python3 -I -S {installed}/bin/engram-hook claude"
    assert command.is_ours(cmd, ("claude",))
    assert command.executable_of(cmd) == f"{installed}/bin/engram-hook"
    assert command.is_resolvable(cmd)
    assert not command.is_portable(cmd)
    (installed / "bin" / "python3").unlink()  # the venv's Python is gone: so is the hook
    assert not command.is_resolvable(cmd)


def test_personal_command_runs_the_launcher_by_its_shebang_when_packages_live_elsewhere(
        installed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(command, "_without_site_finds_all", lambda script: False)
    cmd = command.hook_command("gemini")
    assert cmd == f"{installed}/bin/engram-hook gemini"
    assert command.is_ours(cmd, ("gemini",)) and command.is_resolvable(cmd)


def test_the_shared_form_runs_the_launcher_from_path_else_the_engram_script(
        installed: Path, tmp_path: Path) -> None:
    cmd = command.hook_command("codex", "path")
    assert cmd == ("command -v engram-hook >/dev/null 2>&1 && exec engram-hook codex; "
                   "command -v engram >/dev/null 2>&1 && exec engram hook codex || true")
    assert command.is_portable(cmd) and command.executable_of(cmd) == "engram-hook"
    launcher_only, engram_only, neither = (tmp_path / n for n in ("a", "b", "c"))
    for folder, name in ((launcher_only, "engram-hook"), (engram_only, "engram"), (neither, "x")):
        folder.mkdir()
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    assert command.locate(cmd, str(launcher_only)) == str(launcher_only / "engram-hook")
    assert command.locate(cmd, str(engram_only)) == str(engram_only / "engram")  # an older engram
    assert command.locate(cmd, str(neither)) is None


def test_a_launcher_in_a_versioned_folder_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Homebrew's Cellar/engram/<version>, the Nix store's <hash>-engram-<version>: the next
    upgrade moves the folder, so the command would break."""
    from engram import __version__

    monkeypatch.delenv(command.EXECUTABLE_ENV, raising=False)
    monkeypatch.setattr(command, "_candidates", _beside_python)
    for folder in (f"Cellar/engram/{__version__}", f"store/abc-engram-{__version__}"):
        venv = _installation(tmp_path, folder)
        monkeypatch.setattr(sys, "executable", str(venv / "bin" / "python3"))
        assert command.launcher() is None
    venv = _installation(tmp_path, "Cellar/engram/stable")
    monkeypatch.setattr(sys, "executable", str(venv / "bin" / "python3"))
    assert command.launcher() == venv / "bin" / command.LAUNCHER


def test_a_launcher_of_another_interpreter_is_not_ours(installed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (installed / "bin" / command.LAUNCHER).write_text("#!/usr/bin/some-other-python\n")
    assert command.launcher() is None


def test_without_site_finds_all_needs_every_hook_package_in_the_prefix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv = _installation(tmp_path)
    site_packages = command.site_packages(venv / "bin" / command.LAUNCHER)[0]
    elsewhere = tmp_path / "elsewhere"
    for folder, name in ((site_packages, "launcher_probe_a"), (site_packages, "launcher_probe_b"),
                         (elsewhere, "launcher_probe_c")):
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(site_packages))
    monkeypatch.syspath_prepend(str(elsewhere))
    script = venv / "bin" / command.LAUNCHER
    monkeypatch.setattr(command, "_HOOK_PACKAGES", ("launcher_probe_a", "launcher_probe_b"))
    assert command._without_site_finds_all(script)
    monkeypatch.setattr(command, "_HOOK_PACKAGES", ("launcher_probe_a", "launcher_probe_c"))
    assert not command._without_site_finds_all(script)
    monkeypatch.setattr(command, "_HOOK_PACKAGES", ("launcher_probe_a", "launcher_probe_missing"))
    assert not command._without_site_finds_all(script)
