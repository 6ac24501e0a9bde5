"""Touched paths and file paths named in a prompt, made relative to the workspace root.
Resolution uses the payload's cwd (never the process cwd); paths outside the workspace are
dropped, even when their tail would match a glob."""

from __future__ import annotations

import os

from engram.text import WordChars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Final, Iterator

# The characters of a path part (`[\w.@+-]`), with `/` and `~`; any other becomes a space.
_PATH_CHARS: Final = WordChars(".@+-/~")
# Closing quotes, brackets and punctuation: skipped after a path, never the start of the next.
_CLOSERS: Final = frozenset("`'\")>].,:;!?")
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


def pathlike(prompt: str) -> Iterator[str]:
    """The path-like tokens of a prompt, in order: group 1 of each match of the regex
    `[`'"(<\\[]?((?:~|\\.{1,2})?/?[\\w.@+-]+(?:/[\\w.@+-]+)*/?)[`'")>\\].,:;!?]*`,
    found without `re`. A token is a run of path parts joined by single slashes, after an
    optional `~` and `/`, with an optional trailing slash; the closers after one are passed
    over (so `a/).b` gives `a/` and `b`). An opening quote or bracket never changes a token."""
    marked = prompt.translate(_PATH_CHARS)
    resume = 0  # where the regex would search next: past the closers after the last token
    end = -1
    for piece in marked.split(" "):
        start, end = end + 1, end + 1 + len(piece)
        if not piece or end <= resume:  # nothing, or passed over as closers
            continue
        size = len(piece)
        i = max(resume - start, 0)
        last = -1  # where the piece's last token ended
        if i == 0 and "/" not in piece and "~" not in piece:
            yield piece  # the common case: one word, one token
            i = last = size
        while i < size:
            body = i + 1 if piece[i] in "/~" else i
            if piece[i] == "~" and piece[body:body + 1] == "/" and \
                    piece[body + 1:body + 2] not in ("", "/", "~"):
                body += 1
            if piece[body:body + 1] in ("", "/", "~"):
                i += 1  # a lone `~` or `/`: no token starts here
                continue
            j = body
            while True:  # parts joined by single slashes
                while j < size and piece[j] not in "/~":
                    j += 1
                if piece[j:j + 1] == "/" and piece[j + 1:j + 2] not in ("", "/", "~"):
                    j += 1
                    continue
                break
            if piece[j:j + 1] == "/":
                j += 1
            yield piece[i:j]
            i = last = j
        if last == size:
            resume = end
            while resume < len(prompt) and prompt[resume] in _CLOSERS:
                resume += 1


def named_in_prompt(prompt: str, cwd: str, root: str,
                    is_file: Callable[[str], bool] = os.path.isfile) -> list[str]:
    """Workspace files the prompt names (`src/app.py`, `./README.md`), checked on disk."""
    found: list[str] = []
    for token in pathlike(prompt):
        token = token.rstrip("/")
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
