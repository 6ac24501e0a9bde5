"""`engram lint`: every problem of every card in one run, each with its file, line and code;
exit 1 on errors (on warnings too with --strict)."""

from __future__ import annotations

import os
from pathlib import Path

from engram import lint as lint_module
from engram import output
from engram import workspace as workspace_module
from engram.errors import EngramError
from engram.problems import Problem


def _codes(values: list[str]) -> set[str]:
    return {part.strip() for value in values for part in value.split(",") if part.strip()}


def _shown(path: str, cwd: Path) -> str:
    """A path relative to where the user stands, when it lies below it (clickable, short)."""
    try:
        relative = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def run(*, roots: list[Path], cwd: Path, as_json: bool, strict: bool = False,
        ignore: list[str] | None = None) -> int:
    ignored = _codes(ignore or [])
    if roots:
        missing = [str(r) for r in roots if not r.is_dir()]
        if missing:
            raise EngramError(f"memory root not found: {', '.join(missing)}")
        problems, cards = lint_module.report_roots(roots)
        checked = [str(r) for r in roots]
    else:
        ws = workspace_module.load(cwd)
        if ws is None:
            raise EngramError(f"no workspace found at or above {cwd}",
                              "run inside a Git repository or pass --root DIR")
        ignored |= set(ws.settings.get("lint.ignore") or ())
        problems, cards = lint_module.report_workspace(ws)
        checked = [str(r.path) for r in ws.roots]
        problems = [*(_config_problem(w, ws.config_path) for w in ws.warnings), *problems]
        if not cards and not any(p.severity == "error" for p in problems):
            where = ", ".join(checked) or str(ws.memory_dir)
            problems.append(Problem(where, None, "error",
                                    "no memory cards found: engram has nothing to route; run "
                                    "`engram init` (and `engram import CLAUDE.md`) to start",
                                    "no-cards"))
    skipped = [p for p in problems if p.code in ignored]
    problems = [p for p in problems if p.code not in ignored]
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity != "error"]
    if as_json:
        output.emit_json("lint", {
            "roots": checked, "cards": cards,
            "errors": len(errors), "warnings": len(warnings), "ignored": len(skipped),
            "problems": [p.to_json() for p in problems],
        })
    else:
        prefix = str(cwd).rstrip(os.sep) + os.sep
        for problem in problems:
            shown = Problem(problem.path, problem.line, problem.severity,
                            problem.message.replace(prefix, ""), problem.code)
            output.write(shown.render(_shown(problem.path, cwd)) + "\n")
        where = ", ".join(_shown(c, cwd) for c in checked) or "no memory roots"
        extra = f", {len(skipped)} ignored" if skipped else ""
        output.write(f"{len(errors)} error(s), {len(warnings)} warning(s){extra} in "
                         f"{cards} card(s) under {where}\n")
        if problems:
            output.write("hint: skip a check with --ignore CODE (the [code] after each "
                             "problem), or list codes under lint.ignore in .agents/engram.json\n")
    return 1 if errors or (strict and warnings) else 0


def _config_problem(message: str, path: Path) -> Problem:
    return Problem(str(path), None, "warning", message, "config")
