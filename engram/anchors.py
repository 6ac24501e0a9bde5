"""Touched paths and file paths named in a prompt, made relative to the workspace root.
Resolution uses the payload's cwd (never the process cwd); paths outside the workspace are
dropped, even when their tail would match a glob."""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Final

_PATHLIKE: Final = re.compile(r"[`'\"(<\[]?((?:~|\.{1,2})?/?[\w.@+-]+(?:/[\w.@+-]+)*/?)[`'\")>\].,:;!?]*")
MAX_PROMPT_PATHS: Final = 32


def relative_to_root(path: str, cwd: str, root: str) -> str | None:
    """`path` (absolute, or relative to `cwd`) as a '/'-separated path relative to `root`, or
    None when it lies outside the root. Backslashes (Windows payloads) are accepted."""
    if not path or "\x00" in path:
        return None
    candidate = path.replace("\\", "/") if os.sep == "/" else path
    if candidate.startswith("~"):
        candidate = os.path.expanduser(candidate)
    if not os.path.isabs(candidate):
        candidate = os.path.join(cwd, candidate)
    candidate = os.path.normpath(candidate)
    root_norm = os.path.normpath(root)
    if candidate == root_norm:
        return None
    prefix = root_norm.rstrip(os.sep) + os.sep
    if not candidate.startswith(prefix):
        real = os.path.realpath(candidate)
        if not real.startswith(os.path.realpath(root_norm).rstrip(os.sep) + os.sep):
            return None
        candidate, prefix = real, os.path.realpath(root_norm).rstrip(os.sep) + os.sep
    return candidate[len(prefix):].replace(os.sep, "/")


def touched(paths: list[str], cwd: str, root: str) -> tuple[list[str], list[str]]:
    """(relative paths inside the root, warnings for the ones ignored)."""
    inside: list[str] = []
    warnings: list[str] = []
    for path in paths:
        relative = relative_to_root(path, cwd, root)
        if relative is None:
            warnings.append("a touched path outside the workspace was ignored")
        elif relative not in inside:
            inside.append(relative)
    return inside, warnings


def named_in_prompt(prompt: str, cwd: str, root: str,
                    is_file: Callable[[str], bool] = os.path.isfile) -> list[str]:
    """Workspace files the prompt names (`src/app.py`, `./README.md`), checked on disk."""
    found: list[str] = []
    for match in _PATHLIKE.finditer(prompt):
        token = match.group(1).rstrip("/")
        if "/" not in token and "." not in token.strip("."):
            continue
        relative = relative_to_root(token, cwd, root)
        if relative is None or relative in found:
            continue
        if is_file(os.path.join(root, relative)):
            found.append(relative)
            if len(found) >= MAX_PROMPT_PATHS:
                break
    return found


# Folder names that say nothing about what a file is about.
_PLAIN_DIRS: Final = frozenset({"src", "lib", "app", "apps", "packages", "pkg", "internal", "test",
                                "tests", "spec", "source", "sources", "main", "java", "python",
                                "js", "ts", "dist", "build", "public", "static", "assets"})


def name_words(paths: list[str]) -> str:
    """The words in touched files' names (the file name without its extension, and its
    folder's name): a card that says what those files are about, without globs, still routes
    (`web/src/locales/de/tasks.json` -> "locales de tasks")."""
    words: list[str] = []
    for path in paths:
        parts = [p for p in path.replace("\\", "/").split("/") if p]
        if not parts:
            continue
        name = parts[-1]
        # `tasks.json` -> "tasks"; a dot file names itself: `.env.example` -> "env example".
        stem = name.split(".")[0] if not name.startswith(".") else name.strip(".").replace(".", " ")
        folder = parts[-2] if len(parts) > 1 and parts[-2].lower() not in _PLAIN_DIRS else ""
        words.extend(w for w in (folder, stem) if w)
    return " ".join(words).replace("-", " ").replace("_", " ")
