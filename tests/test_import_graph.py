"""engram's modules import each other in one direction only: no import cycle, counting
imports inside functions and under TYPE_CHECKING (a back-import hidden in a function is a
cycle that only works until someone moves it). docs/architecture.md draws the layers."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "engram"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """module -> the engram modules it imports anywhere in its source."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = name.split(".") if is_package else name.split(".")[:-1]
                    anchor = anchor[: len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]  # `from engram.x import name`
                if target and target not in (name, "engram"):
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    graph = import_graph()
    assert len(graph) > 50  # the walk saw the package
    found = cycles(graph)
    detail = [{m: sorted(graph[m] & set(c)) for m in c} for c in found]
    assert found == [], detail


def test_the_cycle_finder_finds_cycles() -> None:
    """Positive control: a planted cycle, direct or through a third module, is reported."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_function_level_and_relative_imports_are_edges(tmp_path: Path) -> None:
    graph = import_graph()
    assert "engram.index_compile" in graph["engram.index"]  # imported inside a function
    assert "engram.transcripts.claude" in graph["engram.transcripts"]
    assert "engram.installer.merge" in graph["engram.installer.plan"]


def test_pure_modules_import_no_io_module() -> None:
    """The pure core (routing, delta, budget, render, globs, text, event, patch paths) reads
    no file and takes no lock: it imports none of the modules that do."""
    io_modules = {"engram.fileio", "engram.delivery", "engram.store", "engram.workspace",
                  "engram.log", "engram.firing_log", "engram.index_compile", "engram.hook"}
    graph = import_graph()
    for pure in ("engram.router", "engram.delta", "engram.budget", "engram.render",
                 "engram.globs", "engram.text", "engram.event", "engram.patch_paths"):
        assert not graph[pure] & io_modules, (pure, graph[pure] & io_modules)
