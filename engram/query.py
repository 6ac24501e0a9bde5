"""Routing at the I/O edge: turn raw paths and a prompt into a router Query (checking the
disk for prompt-named files), then route."""

from __future__ import annotations

import os

from engram import anchors, router
from engram.index import CompiledIndex


def route_request(index: CompiledIndex, workspace_root: "str | os.PathLike[str]",
                  cwd: "str | os.PathLike[str]", prompt: str,
                  raw_paths: list[str], limit: int, include_always: bool = True,
                  name_words: bool = False) -> router.RouteResult:
    """`name_words`: the touched files' names join the prompt text (a path event has no
    prompt; a card about "migrations" with no globs still routes for a migration file)."""
    root = os.fspath(workspace_root)
    relative, warnings = anchors.touched(raw_paths, os.fspath(cwd), root)
    if name_words and relative:
        prompt = (prompt + " " + anchors.name_words(relative)).strip()
    named = anchors.named_in_prompt(prompt, os.fspath(cwd), root) if prompt else []
    query = router.Query(prompt=prompt, paths=tuple(relative), prompt_paths=tuple(named),
                         include_always=include_always, limit=limit)
    result = router.route(index, query)
    if warnings:
        return result.with_warnings(tuple(warnings))
    return result
