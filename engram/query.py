"""Routing at the I/O edge: turn raw paths and a prompt into a router Query (checking the
disk for prompt-named files and for modules written code imports), then route."""

from __future__ import annotations

import os

from engram import anchors, router
from engram.index import CompiledIndex


def route_request(index: CompiledIndex, workspace_root: "str | os.PathLike[str]",
                  cwd: "str | os.PathLike[str]", prompt: str,
                  raw_paths: list[str], limit: int, include_always: bool = True,
                  name_words: bool = False, code: str | None = None) -> router.RouteResult:
    """`name_words`: the touched files' names join the prompt text (a path event has no
    prompt; a card about "migrations" with no globs still routes for a migration file).
    `code`: the code the event writes into the touched file (None: do not route on code);
    the names it uses and the modules it imports route too."""
    root = os.fspath(workspace_root)
    relative, warnings = anchors.touched(raw_paths, os.fspath(cwd), root)
    if name_words and relative:
        prompt = (prompt + " " + anchors.name_words(relative)).strip()
    named = anchors.named_in_prompt(prompt, os.fspath(cwd), root) if prompt else []
    names: tuple[str, ...] = ()
    imported: tuple[tuple[str, str], ...] = ()
    if code:
        names, imported = code_evidence(root, relative, code)
    query = router.Query(prompt=prompt, paths=tuple(relative), prompt_paths=tuple(named),
                         include_always=include_always, limit=limit, code_names=names,
                         imported=imported)
    result = router.route(index, query)
    if warnings:
        return result.with_warnings(tuple(warnings))
    return result


def code_evidence(root: str, relative: list[str],
                  written: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(the names the code an event writes uses, (imported path, importing file) for each of
    its relative imports that exists in the workspace). The code is what the event carries
    (a Write's content, an Edit's new text, the lines a patch adds to source files); its
    relative imports are resolved against the first touched source file. Nothing when no
    touched file is source (data or configuration)."""
    from engram import code_names

    source = next((path for path in relative if path.lower().endswith(code_names.SOURCE_SUFFIXES)),
                  None) if written else None
    if source is None:
        return (), ()
    used, groups = code_names.file_evidence(written, source)
    imported: dict[str, str] = {}
    for candidates in groups:
        for candidate in candidates:
            if os.path.isfile(os.path.join(root, *candidate.split("/"))):
                imported.setdefault(candidate, source)
                break
    return tuple(used), tuple(imported.items())
