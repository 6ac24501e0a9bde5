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
    ("FOO=1 /v/engram hook claude", ("claude",), True),
    ('cd "$CLAUDE_PROJECT_DIR" && engram hook claude', ("claude",), True),
    ("/bin/notengram hook claude", ("claude",), False),
    (None, ("claude",), False),
    ("engram hook claude 'unbalanced", ("claude",), True),
])
def test_is_ours(cmd: object, names: tuple[str, ...], expected: bool) -> None:
    assert command.is_ours(cmd, names) is expected


def test_hook_command_uses_this_installations_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(command.EXECUTABLE_ENV, raising=False)
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
