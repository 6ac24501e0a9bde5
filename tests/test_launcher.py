"""scripts/engram-hook, the launcher personal host configs run: under `-I -S` it finds engram in
its own prefix's site-packages without `site`, falls back to `site` where engram lives
elsewhere, runs by its shebang too, and imports nothing before engram but what Python starts
with."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from hookkit import make_workspace, payload, run_process, sent_ids

pytestmark = pytest.mark.skipif(os.name == "nt", reason="Windows runs the entry point, not the launcher")

LAUNCHER = REPO / "scripts" / "engram-hook"
VERSION = f"python{sys.version_info[0]}.{sys.version_info[1]}"


def _install(prefix: Path, with_packages: bool) -> Path:
    """A prefix as pip lays it out: bin/engram-hook (its `#!python` line pointed at this
    interpreter) and, with `with_packages`, engram, xxhash and yaml in its site-packages."""
    (prefix / "bin").mkdir(parents=True)
    script = prefix / "bin" / "engram-hook"
    text = LAUNCHER.read_text(encoding="utf-8")
    assert text.startswith("#!python\n")
    script.write_text(f"#!{sys.executable}\n" + text.split("\n", 1)[1], encoding="utf-8")
    script.chmod(0o755)
    if with_packages:
        site_packages = prefix / "lib" / VERSION / "site-packages"
        site_packages.mkdir(parents=True)
        import xxhash
        import yaml

        for module, name in ((None, "engram"), (xxhash, "xxhash"), (yaml, "yaml")):
            source = REPO / "engram" if module is None else Path(module.__file__).parent
            (site_packages / name).symlink_to(source, target_is_directory=True)
    return script


def _run(argv: list[str], stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=stdin, capture_output=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": ""})


def _imported(stderr: bytes) -> list[str]:
    """Module names, in import order, from `-X importtime` output."""
    names = []
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:") and "|" in line and "imported package" not in line:
            names.append(line.rsplit("|", 1)[1].strip())
    return names


@pytest.fixture
def prompt(tmp_path: Path) -> bytes:
    ws = make_workspace(tmp_path / "proj")
    return json.dumps(payload("claude", "UserPromptSubmit.json", ws, prompt="release checklist")).encode()


def _answer_ids(stdout: bytes) -> list[str]:
    return sent_ids(json.loads(stdout)["hookSpecificOutput"]["additionalContext"])


def test_isolated_launcher_finds_engram_in_its_prefix_without_site(tmp_path: Path, prompt: bytes) -> None:
    script = _install(tmp_path / "venv", with_packages=True)
    done = _run([sys.executable, "-I", "-S", "-X", "importtime", str(script), "claude"], prompt)
    assert done.returncode == 0, done.stderr
    assert _answer_ids(done.stdout) == ["overview", "release"]
    imported = _imported(done.stderr)
    assert "site" not in imported and "re" not in imported[:imported.index("engram")]


def test_isolated_launcher_run_by_a_relative_path_finds_its_prefix(tmp_path: Path, prompt: bytes) -> None:
    script = _install(tmp_path / "venv", with_packages=True)
    for cwd, relative in ((script.parent, "engram-hook"), (tmp_path, "venv/bin/engram-hook")):
        done = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", relative, "claude"],
                              input=prompt, capture_output=True, timeout=60, cwd=cwd)
        assert done.returncode == 0, done.stderr
        assert "site" not in _imported(done.stderr)
        shutil.rmtree(os.environ["ENGRAM_STATE_DIR"])  # the next run is a first delivery again
        assert _answer_ids(done.stdout) == ["overview", "release"]


def test_launcher_imports_nothing_before_engram(tmp_path: Path, prompt: bytes) -> None:
    script = _install(tmp_path / "venv", with_packages=True)
    bare = _run([sys.executable, "-I", "-S", "-X", "importtime", "-c", "pass"], b"")
    done = _run([sys.executable, "-I", "-S", "-X", "importtime", str(script), "claude"], prompt)
    before = _imported(done.stderr)
    assert set(before[:before.index("engram")]) <= set(_imported(bare.stderr))


def test_isolated_launcher_falls_back_to_site_when_its_prefix_lacks_engram(
        tmp_path: Path, prompt: bytes) -> None:
    """An editable install or a distribution's own layout: the prefix's site-packages does not
    hold engram, so site runs after all (and finds it as the `engram` command would)."""
    script = _install(tmp_path / "venv", with_packages=False)
    done = _run([sys.executable, "-I", "-S", "-X", "importtime", str(script), "claude"], prompt)
    assert done.returncode == 0, done.stderr
    assert _answer_ids(done.stdout) == ["overview", "release"]
    assert "site" in _imported(done.stderr)


def test_launcher_runs_by_its_shebang_and_answers_like_engram_hook(tmp_path: Path, prompt: bytes) -> None:
    script = _install(tmp_path / "venv", with_packages=False)
    done = _run([str(script), "claude"], prompt)
    assert done.returncode == 0, done.stderr
    shutil.rmtree(os.environ["ENGRAM_STATE_DIR"])  # the same prompt again, as a first delivery
    assert done.stdout == run_process("claude", prompt).stdout


def test_launcher_fails_open_like_engram_hook(tmp_path: Path) -> None:
    script = _install(tmp_path / "venv", with_packages=True)
    done = _run([sys.executable, "-I", "-S", str(script), "claude"], b"not json")
    assert done.returncode == 0 and done.stdout.strip() in (b"{}", b"")


def test_launcher_ends_without_teardown_and_with_the_index_closed(tmp_path: Path,
                                                                  prompt: bytes) -> None:
    """The launcher leaves like `engram hook` (engram.hook_entry.leave): no module cleanup
    (`-v` reports none), and SQLite's -wal and -shm files gone as after a normal exit."""
    script = _install(tmp_path / "venv", with_packages=True)
    done = _run([sys.executable, "-I", "-S", "-v", str(script), "claude"], prompt)
    assert done.returncode == 0 and _answer_ids(done.stdout) == ["overview", "release"]
    assert b"# cleanup[" not in done.stderr and b"# destroy " not in done.stderr
    index_dir = Path(os.environ["ENGRAM_STATE_DIR"]) / "index"
    assert [p.suffix for p in index_dir.iterdir()] == [".sqlite"]
