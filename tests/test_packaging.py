"""The wheel carries hosts/, memories/ and schemas/ as package data, and the `engram` entry
point. Builds a real wheel (a few seconds); the build runs on a copy of the sources so the
checkout gets no build/ or egg-info changes."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
from conftest import REPO

SOURCES = ("pyproject.toml", "setup.py", "README.md", "engram", "hosts", "memories", "schemas", "scripts")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, src / name)
    dist = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                           "--wheel-dir", str(dist), str(src)],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "satisfies the requirement" in done.stderr:
        pytest.skip("the build backend could not be fetched (offline): " + done.stderr[-300:])
    assert done.returncode == 0, done.stderr
    wheels = list(dist.glob("engram-*.whl"))
    assert len(wheels) == 1
    return zipfile.ZipFile(wheels[0])


def _names(wheel: zipfile.ZipFile, folder: str, suffix: str) -> set[str]:
    prefix = f"engram/{folder}/"
    return {name[len(prefix):] for name in wheel.namelist()
            if name.startswith(prefix) and name.endswith(suffix)}


@pytest.mark.parametrize("folder, suffix", [("hosts", ".yaml"), ("memories", ".md"),
                                            ("schemas", ".json")])
def test_wheel_holds_the_bundled_data(wheel: zipfile.ZipFile, folder: str, suffix: str) -> None:
    expected = {p.name for p in (REPO / folder).glob(f"*{suffix}")}
    assert expected
    assert _names(wheel, folder, suffix) == expected


def test_wheel_holds_the_opencode_plugin_template(wheel: zipfile.ZipFile) -> None:
    assert _names(wheel, "hosts", ".js") == {p.name for p in (REPO / "hosts").glob("*.js")}


def test_wheel_entry_point_and_no_tests(wheel: zipfile.ZipFile) -> None:
    entry_points = next(n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt"))
    text = wheel.read(entry_points).decode("utf-8")
    assert "engram = engram.entry:main" in text
    assert "engram/__main__.py" in wheel.namelist()
    assert not any(name.startswith(("tests/", "bench/")) for name in wheel.namelist())


def test_wheel_carries_the_hook_launcher_for_installers_to_point_at_their_python(
        wheel: zipfile.ZipFile) -> None:
    launchers = [n for n in wheel.namelist() if n.endswith(".data/scripts/engram-hook")]
    assert len(launchers) == 1
    assert wheel.read(launchers[0]).startswith(b"#!python\n")


def test_wheel_metadata_requires_the_runtime_dependencies(wheel: zipfile.ZipFile) -> None:
    metadata = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    text = wheel.read(metadata).decode("utf-8")
    assert "Requires-Python: >=3.10" in text
    required = {line.split(":", 1)[1].strip().split(">")[0].split("=")[0].split(" ")[0].lower()
                for line in text.splitlines() if line.startswith("Requires-Dist:")
                and "extra ==" not in line}
    assert required == {"pyyaml", "xxhash", "typer", "tomli"}
    # tomli only where the standard library's tomllib reads no TOML 1.1 (Codex's config.toml)
    assert any(line.startswith("Requires-Dist: tomli>=2.4") and 'python_version < "3.15"' in line
               for line in text.splitlines())


# The import name of each runtime dependency.
RUNTIME_IMPORTS = {"yaml": "pyyaml", "xxhash": "xxhash", "typer": "typer", "tomli": "tomli"}


def test_the_dependency_list_is_true() -> None:
    """engram/ imports the standard library, itself and its declared dependencies, and every
    declared dependency is imported somewhere (portalocker and wcmatch were declared and
    unused)."""
    block = (REPO / "pyproject.toml").read_text(encoding="utf-8").split("dependencies = [", 1)[1]
    declared = set(re.findall(r'^\s*"([A-Za-z0-9_.-]+)', block.split("]", 1)[0], re.M))
    assert declared == set(RUNTIME_IMPORTS.values())
    imported: set[str] = set()
    for path in (REPO / "engram").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"engram", "__future__"}
    # msvcrt and typing_extensions: Windows-only stdlib, and a TYPE_CHECKING-only import.
    third_party -= {"msvcrt", "typing_extensions"}
    assert third_party == set(RUNTIME_IMPORTS), third_party


def test_installed_data_is_readable_with_importlib_resources(wheel: zipfile.ZipFile,
                                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    """engram.hosts, engram.memories and engram.schemas are packages of data: no module of the
    same name shadows them (importlib.resources.files raised TypeError on engram.hosts)."""
    site = tmp_path_factory.mktemp("site")
    wheel.extractall(site)
    code = ("import importlib.resources as r, json, sys\n"
            "from engram import host_registry\n"
            "print(json.dumps({\n"
            "  'hosts': r.files('engram.hosts').joinpath('claude.yaml').is_file(),\n"
            "  'schemas': r.files('engram.schemas').joinpath('host.schema.json').is_file(),\n"
            "  'memories': any(r.files('engram.memories').iterdir()),\n"
            "  'registry': host_registry.load_host('claude')['name'],\n"
            "  'from': host_registry.hosts_dir().as_posix()}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=site, env={"PYTHONPATH": str(site), "ENGRAM_STATE_DIR": str(site / "state"),
                                         "HOME": str(site), "PATH": "/usr/bin:/bin"},
                          timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found == {"hosts": True, "schemas": True, "memories": True, "registry": "claude",
                     "from": (site / "engram" / "hosts").as_posix()}
