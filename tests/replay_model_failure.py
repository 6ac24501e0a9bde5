"""Replay a failure of the model-based test (tests/test_model_based.py) from its printed report.

Hypothesis prints a failing stateful run as its steps (`state.hook_event(...)`) and the values
each drew (`Draw N: ...`). A run whose outcome depends on the real clock cannot be replayed by
Hypothesis itself ("inconsistent data generation"); fed back through the state machine in
order, the same steps and draws usually fail again, and then can be traced and shrunk by hand.

    python tests/replay_model_failure.py LOG [FIRST_LINE [LAST_LINE]]

LOG is the pytest output; FIRST_LINE and LAST_LINE (1-based) pick one failure when the report
holds several. Run from the checkout whose engram is to be tried (it goes first on sys.path).

With no lines given, a LOG printed with ENGRAM_MODEL_VERBOSE=1 (every case as it runs) is
replayed from its first failing case as it first ran, before any shrinking or replay.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import test_model_based as model  # noqa: E402


def steps_of(lines: list[str]) -> list[tuple[str, str, list[object]]]:
    """(rule name, its keyword arguments as printed, the draws before it) for each step."""
    steps: list[tuple[str, str, list[object]]] = []
    draws: list[object] = []
    unfinished = ""  # a drawn value printed over several lines (a long list)
    for raw in lines:
        line = re.sub(r"^\s*\|?\s*(E\s+)?", "", raw)
        drawn = re.match(r"Draw \d+: (.*)$", line)
        if drawn or unfinished:
            unfinished += drawn.group(1) if drawn else " " + line
            try:
                draws.append(ast.literal_eval(unfinished))
            except SyntaxError:
                continue
            unfinished = ""
            continue
        step = re.match(r"state\.(\w+)\((.*)\)$", line)
        if step and step.group(1) not in ("files_match_the_model", "teardown"):
            steps.append((step.group(1), step.group(2).replace("data=data(...)", "data=DRAWS"),
                          draws))
            draws = []
    return steps


def main(argv: list[str]) -> int:
    lines = Path(argv[1]).read_text(encoding="utf-8").splitlines()
    first = int(argv[2]) - 1 if len(argv) > 2 else 0
    last = int(argv[3]) if len(argv) > 3 else len(lines)
    failed = next((n for n, line in enumerate(lines) if "Status.INTERESTING" in line), None)
    if len(argv) == 2 and failed is not None:
        # A run printed with ENGRAM_MODEL_VERBOSE: the first failing case, as first run.
        first = max(n for n, line in enumerate(lines[:failed]) if line.startswith("Test case:"))
        last = failed
    machine = model.ExactlyOnce()
    done, name = 0, ""
    try:
        for name, arguments, draws in steps_of(lines[first:last]):
            # The arguments are the report's own text: literals and the draws object.
            keywords = eval(f"dict({arguments})", {"DRAWS": model.Draws(*draws)})  # noqa: S307
            getattr(machine, name)(**keywords)
            machine.files_match_the_model()
            done += 1
    except AssertionError as error:
        print(f"failed at step {done + 1} ({name}): {error}")
        return 1
    finally:
        machine.teardown()
    print(f"passed: {done} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
