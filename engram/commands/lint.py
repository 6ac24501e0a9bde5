"""`engram lint`: report card problems; exit 1 when there are errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from engram import lint as lint_module
from engram import workspace as workspace_module
from engram.errors import EngramError

JSON_VERSION = 1


def run(*, roots: list[Path], cwd: Path, as_json: bool) -> int:
    if roots:
        missing = [str(r) for r in roots if not r.is_dir()]
        if missing:
            raise EngramError(f"memory root not found: {', '.join(missing)}")
        problems = lint_module.lint_roots(roots)
        checked = [str(r) for r in roots]
    else:
        ws = workspace_module.load(cwd)
        if ws is None:
            raise EngramError(f"no workspace found at or above {cwd}",
                              "run inside a Git repository or pass --root DIR")
        problems = lint_module.lint_workspace(ws)
        checked = [str(r.path) for r in ws.roots]
        problems = [*(_config_problem(w, ws.config_path) for w in ws.warnings), *problems]
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity != "error"]
    if as_json:
        sys.stdout.write(json.dumps({
            "version": JSON_VERSION, "roots": checked,
            "errors": len(errors), "warnings": len(warnings),
            "problems": [p.to_json() for p in problems],
        }, ensure_ascii=False) + "\n")
    else:
        for problem in problems:
            sys.stdout.write(problem.render() + "\n")
        sys.stdout.write(f"{len(errors)} error(s), {len(warnings)} warning(s) in "
                         f"{', '.join(checked) or 'no memory roots'}\n")
    return 1 if errors else 0


def _config_problem(message: str, path: Path):  # noqa: ANN202 - a Problem
    from engram.problems import Problem

    return Problem(str(path), None, "warning", message, "config")
