"""hosts/, memories/ and schemas/ live at the top of the repository but ship inside the
wheel as engram.hosts, engram.memories and engram.schemas (read with importlib.resources).
pyproject.toml cannot map top-level folders into the package and find packages at once,
so this file does that; and it ships scripts/engram-hook, the launcher host configs run (see
engram/installer/command.py), as a plain script: pip, pipx and uv point its `#!python` line
at the installing interpreter. Windows gets no launcher for it (only entry points get .exe
files), so there the hook keeps running through the `engram` entry point."""

from setuptools import find_packages, setup

DATA_PACKAGES = {"engram.hosts": "hosts", "engram.memories": "memories", "engram.schemas": "schemas"}

setup(
    packages=find_packages(include=["engram", "engram.*"]) + list(DATA_PACKAGES),
    package_dir=DATA_PACKAGES,
    scripts=["scripts/engram-hook"],
    package_data={
        "engram.hosts": ["*.yaml", "*.js", "*.json"],
        "engram.memories": ["**/*.md", "*.md"],
        "engram.schemas": ["*.json"],
    },
)
