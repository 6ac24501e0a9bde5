"""Finding the workspace from a cwd, its memory roots, and the layered config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import write_card

from engram import config
from engram import workspace as ws_module
from engram.errors import EngramError


def test_root_is_the_nearest_marker_walking_up(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / ".git").mkdir(parents=True)
    inner = outer / "packages" / "inner"
    (inner / ".agents" / ".engram").mkdir(parents=True)
    deep = inner / "src" / "deep"
    deep.mkdir(parents=True)
    assert ws_module.find_root(deep) == inner.resolve()
    assert ws_module.find_root(outer / "packages") == outer.resolve()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert ws_module.find_root(plain) is None
    assert ws_module.load(plain) is None


def test_a_workspace_config_alone_marks_a_root(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".agents").mkdir(parents=True)
    (root / ".agents" / "engram.json").write_text("{}", encoding="utf-8")
    assert ws_module.find_root(root / ".agents") == root.resolve()


def test_default_root_config_roots_and_global_root_in_order(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (workspace / "memories").mkdir()
    (workspace / ".agents" / "engram.json").write_text(
        json.dumps({"roots": ["memories"]}), encoding="utf-8")
    global_dir = tmp_path / "global"
    global_dir.mkdir()
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(global_dir))
    loaded = ws_module.load(workspace / "memories")
    assert loaded is not None
    assert [(Path(r.location), r.scope) for r in loaded.roots] == [
        (workspace.resolve() / ".agents" / ".engram", "workspace"),
        (workspace.resolve() / "memories", "config"),
        (global_dir.resolve(), "global"),
    ]
    assert loaded.warnings == ()


def test_config_roots_outside_the_workspace_or_missing_are_skipped_with_warnings(
        workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (workspace / ".agents" / "engram.json").write_text(
        json.dumps({"roots": ["../elsewhere", "not-there"]}), encoding="utf-8")
    loaded = ws_module.load(workspace)
    assert loaded is not None
    assert [r.scope for r in loaded.roots] == ["workspace"]
    assert len(loaded.warnings) == 2
    assert "outside the workspace" in loaded.warnings[0]
    assert "not a folder" in loaded.warnings[1]


def test_workspace_config_overrides_user_config_and_bad_values_fall_back(
        workspace: Path) -> None:
    from engram import paths

    user_file = Path(paths.user_config_file())
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text(json.dumps({"load": {"limit": 5, "max_tokens": 900}}), encoding="utf-8")
    (workspace / ".agents" / "engram.json").write_text(
        json.dumps({"load": {"limit": 3, "max_tokens": "lots"}, "unknown": {"key": 1}}),
        encoding="utf-8")
    loaded = ws_module.load(workspace)
    assert loaded is not None
    assert loaded.settings["load.limit"] == 3
    assert loaded.settings["load.max_tokens"] == 900  # invalid workspace value: user's stays
    assert any("load.max_tokens" in warning for warning in loaded.warnings)


def test_user_only_and_workspace_only_keys_stay_in_their_scope(workspace: Path) -> None:
    merged = config.effective({"roots": ["x"], "transcripts.allowed_dirs": ["/t"]},
                              {"transcripts.allowed_dirs": ["/evil"], "roots": ["y"]})
    assert merged["roots"] == ["y"]
    assert merged["transcripts.allowed_dirs"] == ["/t"]


@pytest.mark.parametrize("key, raw, expected", [
    ("load.limit", "4", 4),
    ("security.follow_symlinks", "yes", True),
    ("roots", "a, b", ["a", "b"]),
    ("read", "auto", "auto"),
])
def test_coerce_valid(key: str, raw: object, expected: object) -> None:
    assert config.coerce(key, raw) == expected


@pytest.mark.parametrize("key, raw", [
    ("load.limit", "0"), ("load.limit", True), ("load.limit", "many"),
    ("security.follow_symlinks", "maybe"), ("read", "sometimes"), ("nope", "1"),
    ("roots", [1, 2]),
])
def test_coerce_invalid_is_a_user_error(key: str, raw: object) -> None:
    with pytest.raises(EngramError):
        config.coerce(key, raw)


def test_invalid_json_config_is_a_clear_error(workspace: Path) -> None:
    (workspace / ".agents" / "engram.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(EngramError) as caught:
        ws_module.load(workspace)
    assert "not valid JSON" in str(caught.value) and "line 1" in str(caught.value)


def test_load_limit_from_config_caps_route(workspace: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from engram.cli import run

    mem = workspace / ".agents" / ".engram"
    for n in range(5):
        write_card(mem, f"p{n}.md", f"---\napplies_to: [src/**]\n---\nP{n}.\n")
    (workspace / ".agents" / "engram.json").write_text(json.dumps({"load": {"limit": 2}}),
                                                       encoding="utf-8")
    assert run(["route", "--path", "src/a.py", "--cwd", str(workspace), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["selected"]) == 2


def test_workspace_key_is_stable_and_distinct(tmp_path: Path) -> None:
    from engram import paths

    assert paths.workspace_key(str(tmp_path / "a")) == paths.workspace_key(str(tmp_path / "a"))
    assert paths.workspace_key(str(tmp_path / "a")) != paths.workspace_key(str(tmp_path / "b"))


def test_state_dir_follows_the_environment(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from engram import paths

    monkeypatch.setenv("ENGRAM_STATE_DIR", str(tmp_path / "s"))
    assert paths.state_dir() == tmp_path / "s"
    monkeypatch.delenv("ENGRAM_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "x"))
    assert paths.state_dir() == tmp_path / "x" / "engram"


def test_config_set_and_unset_leave_no_file_of_engrams_in_the_repository(
        workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from engram.cli import run

    before = {p.relative_to(workspace) for p in workspace.rglob("*")}
    assert run(["config", "set", "load.limit", "5", "--cwd", str(workspace)]) == 0
    config_file = workspace / ".agents" / "engram.json"
    assert json.loads(config_file.read_text())["load"]["limit"] == 5
    assert run(["config", "unset", "load.limit", "--cwd", str(workspace)]) == 0
    after = {p.relative_to(workspace) for p in workspace.rglob("*")}
    assert after - before == {Path(".agents/engram.json")}  # the config itself, nothing else
    assert list((tmp_path / "state" / "locks").glob("*.lock"))  # the lock lives in the state dir
