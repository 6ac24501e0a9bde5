"""Hook latency: the hook command `engram link claude --global` writes for this installation
(`<python> -I -S <bin>/engram-hook claude` from a regular install), as a whole process the way
a host runs it, next to `python -c pass` with the same interpreter in the same run; and the
first prompt through the form a team commits (`command -v engram-hook ... && exec engram-hook
claude; ...`, run by /bin/sh with this installation's folder first on PATH).

For each store size (100, 1,000, 10,000 synthetic cards) it measures the median of at least 20
runs of: a first prompt in a new session (new bodies to send), a repeat prompt in a session
that already has them, and a path event: Claude's PostToolUse for a Write of a 4.9 KB
TypeScript file (`bench/session/webapp-repo/api/src/services/tasks.ts`) in a new session, which
routes the touched path against the globs and the code written against the cards' code names.
The index is compiled once before timing (a warm store, as in daily use).

Run it from a regular (non-editable) install: an editable install's import finder adds ~15 ms
to every interpreter start and measures the wrong thing.

    python -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install .
    /tmp/bench-venv/bin/python bench/hook_latency.py            # full run
    /tmp/bench-venv/bin/python bench/hook_latency.py --quick    # 100 cards, 5 runs (smoke)
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic  # noqa: E402

PROMPT = "please review the api handler retry timeout and cache session token rules"
CODE_FILE = "api/src/services/tasks.ts"
CODE = (Path(__file__).resolve().parent / "session" / "webapp-repo" / CODE_FILE).read_text("utf-8")


def _engram_script() -> str:
    candidate = Path(sys.executable).with_name("engram")
    return str(candidate) if candidate.exists() else ""


def hook_commands() -> tuple[list[str], list[str] | None]:
    """The personal command as argv, and the shared one (POSIX only) as a /bin/sh call."""
    from engram.installer import command

    personal = shlex.split(command.hook_command("claude", "absolute"))
    shared = ["/bin/sh", "-c", command.hook_command("claude", "path")] if os.name != "nt" else None
    return personal, shared


def _is_editable() -> bool:
    import site

    for folder in site.getsitepackages():
        if any(p.name.startswith("__editable__") and "engram" in p.name
               for p in Path(folder).glob("__editable__*")):
            return True
    return False


# Pause after every timed command (python -c pass included): a hook of a large store checks
# its card files in a detached process after answering, and prompts come seconds apart, not
# back to back; without the pause that check would run on the CPU the next timing uses.
SETTLE_SECONDS = 0.15


def _run(command: list[str], stdin: bytes, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, capture_output=True,
                          env=env, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command} failed: {done.stderr.decode()[:500]}")
    time.sleep(SETTLE_SECONDS)
    return elapsed * 1000


def _payload(ws: Path, session: str, prompt: str) -> bytes:
    return json.dumps({"session_id": session, "transcript_path": "", "cwd": str(ws),
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt}).encode()


def _write_payload(ws: Path, session: str) -> bytes:
    return json.dumps({"session_id": session, "transcript_path": "", "cwd": str(ws),
                       "hook_event_name": "PostToolUse", "tool_name": "Write",
                       "tool_input": {"file_path": str(ws / CODE_FILE), "content": CODE},
                       "tool_response": {}}).encode()


def measure(cards: int, runs: int, engram: list[str], state: Path,
            shared: list[str] | None = None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix=f"engram-latency-{cards}-") as temp:
        ws = Path(temp) / "proj"
        (ws / ".git").mkdir(parents=True)
        synthetic.generate(ws / ".agents" / ".engram", cards)
        env = {**os.environ, "ENGRAM_STATE_DIR": str(state / str(cards)),
               "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
        # Compile the index first, synchronously: a hook facing a whole new store would hand
        # the build to a background process, and the timings would race it.
        script = _engram_script()
        cli = [script] if script else [sys.executable, "-m", "engram"]
        compile_ms = _run(cli + ["route", "warm up", "--cwd", str(ws)], b"", env)
        _run(engram, _payload(ws, "warm-up", PROMPT), env)
        bare, first, repeat, shared_first, path = [], [], [], [], []
        _run(engram, _payload(ws, "repeat-session", PROMPT), env)
        for i in range(runs):
            bare.append(_run([sys.executable, "-c", "pass"], b"", env))
            first.append(_run(engram, _payload(ws, f"first-{i}", PROMPT), env))
            repeat.append(_run(engram, _payload(ws, "repeat-session", PROMPT), env))
            path.append(_run(engram, _write_payload(ws, f"path-{i}"), env))
            if shared:
                shared_first.append(_run(shared, _payload(ws, f"shared-{i}", PROMPT), env))
        answer = subprocess.run(engram, input=_payload(ws, "probe", PROMPT), capture_output=True,
                                env=env).stdout
        text = json.loads(answer or b"{}").get("hookSpecificOutput", {}).get("additionalContext", "")
        return {"cards": cards, "runs": runs, "cold_compile_ms": round(compile_ms, 1),
                "python_pass_ms": round(statistics.median(bare), 1),
                "first_prompt_ms": round(statistics.median(first), 1),
                "repeat_prompt_ms": round(statistics.median(repeat), 1),
                "first_ratio": round(statistics.median(first) / statistics.median(bare), 2),
                "repeat_ratio": round(statistics.median(repeat) / statistics.median(bare), 2),
                "path_write_ms": round(statistics.median(path), 1),
                "path_ratio": round(statistics.median(path) / statistics.median(bare), 2),
                "shared_first_prompt_ms": round(statistics.median(shared_first), 1) if shared_first else None,
                "shared_first_ratio": round(statistics.median(shared_first) / statistics.median(bare), 2)
                if shared_first else None,
                "bodies_sent": text.count("### engram memory: ")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--quick", action="store_true", help="100 cards, 5 runs (smoke test)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sizes = [100] if args.quick else [int(s) for s in args.sizes.split(",")]
    runs = 5 if args.quick else max(args.runs, 20)
    engram, shared = hook_commands()
    if _is_editable() and not args.quick:
        print("warning: engram is installed editable here; figures include the editable "
              "finder's start-up cost", file=sys.stderr)
    results = []
    with tempfile.TemporaryDirectory(prefix="engram-latency-state-") as state:
        for size in sizes:
            results.append(measure(size, runs, engram, Path(state), shared))
    if args.json:
        print(json.dumps({"command": shlex.join(engram),
                          "shared_command": shared[-1] if shared else None,
                          "python": sys.version.split()[0], "results": results}, indent=2))
        return 0
    print(f"hook command: {shlex.join(engram)}  (python {sys.version.split()[0]}, {runs} runs each)")
    if shared:
        print(f"shared form:  {shared[-1]}  (through /bin/sh)")
    print("| cards | python -c pass | first prompt | repeat prompt | first / pass | repeat / pass "
          "| shared first prompt | shared first / pass | path event (Write) | path / pass |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['cards']:,} | {r['python_pass_ms']} ms | {r['first_prompt_ms']} ms | "
              f"{r['repeat_prompt_ms']} ms | {r['first_ratio']}x | {r['repeat_ratio']}x | "
              f"{r['shared_first_prompt_ms']} ms | {r['shared_first_ratio']}x | "
              f"{r['path_write_ms']} ms | {r['path_ratio']}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
