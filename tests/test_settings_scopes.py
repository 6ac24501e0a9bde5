"""Personal settings stay personal: set-read and set-proof write the user's config unless
--project; `config view --global` shows only the user scope; the words for each mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.cli import run


def engram(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def user_config(home: Path) -> dict:
    path = home / ".config" / "engram" / "config.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def test_set_read_and_proof_write_the_user_scope_by_default(
        workspace: Path, isolated_dirs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "set-read", "startup", "--cwd", str(workspace))
    assert code == 0 and "(user scope)" in out
    code, out = engram(capsys, "set-proof", "compact", "--cwd", str(workspace))
    assert code == 0
    assert user_config(isolated_dirs) == {"read": "startup", "proof": "compact"}
    assert not (workspace / ".agents" / "engram.json").exists()


def test_project_shares_the_setting_and_wins_over_the_user_scope(
        workspace: Path, isolated_dirs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "set-read", "always", "--project", "--cwd", str(workspace))
    assert code == 0 and "(workspace scope)" in out
    assert json.loads((workspace / ".agents" / "engram.json").read_text()) == {"read": "always"}
    code, out = engram(capsys, "set-read", "startup", "--cwd", str(workspace))
    assert "which wins here" in out and "engram config unset read" in out
    code, out = engram(capsys, "set-read", "status", "--cwd", str(workspace))
    assert out.startswith("read: always (workspace)")


def test_the_words_for_each_mode(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = engram(capsys, "set-proof", "off", "--cwd", str(workspace))
    assert "memory is still injected" in out and "no proof line" in out
    code, out = engram(capsys, "set-read", "manual", "--cwd", str(workspace))
    assert "hooks inject nothing" in out and "engram route" in out
    code, out = engram(capsys, "set-read", "--help")
    assert "manual" in out and "--project" in out


def test_config_view_global_shows_only_the_user_scope(
        workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert engram(capsys, "config", "set", "load.limit", "4", "--cwd", str(workspace))[0] == 0
    code, out = engram(capsys, "config", "view", "--global", "--cwd", str(workspace))
    assert code == 0 and "nothing set" in out and "load.limit" not in out
    engram(capsys, "set-proof", "compact", "--cwd", str(workspace))
    code, out = engram(capsys, "config", "view", "--global", "--cwd", str(workspace))
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    assert len(lines) == 1 and lines[0].startswith('proof  "compact"')
    code, out = engram(capsys, "config", "view", "--cwd", str(workspace))
    assert "load.limit" in out and "(workspace)" in out


USERS_FILE = ('{\n    "$schema": "https://example.com/engram.schema.json",\n'
              '    "team": {},\n    "my.note": "ask Ana first",\n'
              '    "load": {"limit": 4, "code": false},\n    "roots": ["docs/mem"]\n}\n')


@pytest.mark.parametrize("scope", [[], ["--global"]], ids=["workspace", "user"])
def test_config_set_and_unset_change_only_the_setting_they_name(
        workspace: Path, capsys: pytest.CaptureFixture[str], scope: list[str]) -> None:
    """`config set` wrote the file back from its flattened settings: the user's `"team": {}`
    was dropped, `"my.note"` became `"my": {"note": ...}`, every key sorted and the whole
    file re-indented (a committed `.agents/engram.json` got a diff of every line). Now the
    setting it names is edited in place and every other byte stays; unset gives back the
    file."""
    from engram import paths

    path = paths.user_config_path() if scope else workspace / ".agents" / "engram.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(USERS_FILE, encoding="utf-8")
    assert engram(capsys, "config", "set", "proof", "compact", *scope,
                  "--cwd", str(workspace))[0] == 0
    text = path.read_text(encoding="utf-8")
    assert text == USERS_FILE.replace('"docs/mem"]\n', '"docs/mem"],\n    "proof": "compact"\n')
    assert engram(capsys, "config", "set", "load.limit", "6", *scope,
                  "--cwd", str(workspace))[0] == 0
    assert path.read_text(encoding="utf-8") == text.replace('"limit": 4', '"limit": 6')
    assert engram(capsys, "config", "unset", "proof", *scope, "--cwd", str(workspace))[0] == 0
    assert engram(capsys, "config", "set", "load.limit", "4", *scope,
                  "--cwd", str(workspace))[0] == 0
    assert path.read_text(encoding="utf-8") == USERS_FILE


SETTINGS = {"proof": "compact", "read": "manual", "load.limit": 6, "load.code": False,
            "hooks.path_rules": "native", "lint.ignore": ["glob-unmatched"]}
USERS_OWN = {"$schema": "https://example.com/s.json", "team": {}, "my.note": "é \u2028",
             "list": [1, {"a": {}}], "x": {"y": {"z": None}}}


@st.composite
def settings_file(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A settings file as people write it: some settings (nested, or as a dotted key), keys
    of their own among them, in any order and indentation."""
    flat = {key: SETTINGS[key] for key in draw(st.lists(st.sampled_from(sorted(SETTINGS)),
                                                          unique=True, max_size=3))}
    document: dict[str, Any] = {}
    for key, value in flat.items():
        if "." in key and draw(st.booleans()):
            head, tail = key.split(".", 1)
            document.setdefault(head, {})[tail] = value
        else:
            document[key] = value
    for key in draw(st.lists(st.sampled_from(sorted(USERS_OWN)), unique=True, max_size=3)):
        document[key] = USERS_OWN[key]
    order = draw(st.permutations(list(document)))
    document = {key: document[key] for key in order}
    indent = draw(st.sampled_from([None, 2, 4, "\t"]))
    return json.dumps(document, indent=indent, ensure_ascii=draw(st.booleans())) + "\n", flat


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_config_set_and_unset_keep_every_key_of_the_users(
        workspace: Path, capsys: pytest.CaptureFixture[str], data: st.DataObject) -> None:
    """Any file, any sequence of sets and unsets: the settings read back are the ones asked
    for, each key of the user's own keeps its value and place, and once every setting is
    back as it was, so is every byte (unless one of the file's was unset on the way: set
    again, it is written nested, whatever form it had)."""
    from engram import config

    text, flat = data.draw(settings_file())
    path = workspace / ".agents" / "engram.json"
    path.write_text(text, encoding="utf-8")
    expected = config.read_file(path)
    own = [k for k in json.loads(text) if k in USERS_OWN]
    steps = data.draw(st.lists(st.tuples(st.sampled_from(sorted(SETTINGS)), st.booleans()),
                               max_size=4))
    for key, setting in steps:
        args = ["set", key, json.dumps(SETTINGS[key]) if isinstance(SETTINGS[key], list)
                else str(SETTINGS[key]).lower()] if setting else ["unset", key]
        assert engram(capsys, "config", *args, "--cwd", str(workspace))[0] == 0, args
        if setting:
            expected[key] = config.coerce(key, SETTINGS[key])
        else:
            expected.pop(key, None)
        now = json.loads(path.read_text(encoding="utf-8"))
        assert config.read_file(path) == expected
        assert [k for k in now if k in USERS_OWN] == own
        assert all(now[k] == USERS_OWN[k] for k in own)
    for key in sorted((set(expected) | set(flat)) & set(SETTINGS)):  # back as they were
        args = ["unset", key] if key not in flat else [
            "set", key, json.dumps(flat[key]) if isinstance(flat[key], list)
            else str(flat[key]).lower()]
        assert engram(capsys, "config", *args, "--cwd", str(workspace))[0] == 0, args
    if not any(key in flat and not setting for key, setting in steps):
        assert path.read_text(encoding="utf-8") == text
