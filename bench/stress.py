"""Stress: N `engram hook` processes at once on one workspace, across several sessions and
hosts, while another process keeps editing cards. Checks the concurrency promises and prints the
figures (docs/reliability.md quotes them):

- every call exits 0 and delivers what it routes (its own topic card, as a body or listed in
  `already loaded:`), none gives up on the lock;
- afterwards every delivery record is in the cache, the cache validates against
  schemas/delivery-cache.schema.json, and no body went out twice in one session;
- latency: wall time per process (what the host waits for, Python start-up included) and the
  hook's own time (observed.jsonl `ms`), p50/p99/max, against the 10 s host timeout.

    python bench/stress.py [--calls 50] [--sessions 5] [--json out.json]

`tests/test_reliability_stress.py` runs the same function: its correctness checks in every
run, its latency checks only on request (`pytest -m load`, a quiet machine)."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HOSTS = ("claude", "gemini")
PROMPT_EVENT = {"claude": "UserPromptSubmit", "gemini": "BeforeAgent", "codex": "UserPromptSubmit"}
HOST_TIMEOUT_S = 10.0


def topic_card(i: int) -> str:
    return (f"---\nid: topic{i}\ntitle: Topic {i} conventions\ntags: [topic{i}]\npriority: 50\n---\n"
            f"Everything about topic{i}: rule {i}-a, rule {i}-b, and the exception for topic{i}.\n")


def churn_card(k: int, version: int) -> str:
    return (f"---\nid: churn{k}\ntitle: Churn card {k}\ntags: [churnonly{k}]\n---\n"
            f"Edited body version {version} of churn card {k}.\n")


def make_workspace(root: Path, topics: int) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    memory = root / ".agents" / ".engram"
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "overview.md").write_text("---\nid: overview\ntitle: Project overview\nalways: true\n"
                                        "---\nThis is the stress workspace.\n", encoding="utf-8")
    for i in range(topics):
        (memory / f"topic{i}.md").write_text(topic_card(i), encoding="utf-8")
    return root


def hook_payload(host: str, ws: Path, session: str, prompt: str) -> bytes:
    return json.dumps({"session_id": session, "cwd": str(ws), "hook_event_name": PROMPT_EVENT[host],
                       "prompt": prompt, "transcript_path": f"/tmp/{session}.jsonl"}).encode()


def _editor(memory: Path, stop: threading.Event, edits: list[int]) -> None:
    """Rewrite, add and remove cards that no prompt routes to, so every hook sees a changed
    store and refreshes the index while the others read it."""
    version = 0
    rng = random.Random(7)
    while not stop.is_set():
        version += 1
        k = rng.randrange(8)
        path = memory / f"churn{k}.md"
        if version % 5 == 0 and path.exists():
            path.unlink()
        else:
            tmp = path.with_suffix(".md.tmp-edit")
            tmp.write_text(churn_card(k, version), encoding="utf-8")
            os.replace(tmp, path)
        edits[0] = version
        time.sleep(0.05)  # 20 edits a second: far more than any person or agent makes


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(0, min(len(ordered) - 1, int(round(q / 100 * len(ordered) + 0.5)) - 1))
    return ordered[rank]


def sent_ids(text: str) -> list[str]:
    return [line.split(": ", 1)[1].split(" — ")[0] for line in text.splitlines()
            if line.startswith("### engram memory: ")]


def already_ids(text: str) -> list[str]:
    for line in text.splitlines():
        if line.startswith("already loaded: "):
            return line[len("already loaded: "):].split(", ")
    return []


def run(base: Path, calls: int = 50, sessions: int = 5, hosts: tuple[str, ...] = HOSTS,
        edit: bool = True, timeout: float = 60.0,
        lock_timeout: float | None = None) -> dict[str, Any]:
    """One stress round in `base` (workspace and state dir inside it). Returns the figures
    and every check's findings; raises nothing on a failed check (the caller asserts).
    `lock_timeout` sets ENGRAM_LOCK_TIMEOUT for the hooks (None: the real 4 s)."""
    ws = make_workspace(base / "proj", calls)
    state = base / "state"
    env = {**os.environ, "ENGRAM_STATE_DIR": str(state), "HOME": str(base / "home"),
           "XDG_CONFIG_HOME": str(base / "home" / ".config"),
           "ENGRAM_CONFIG_DIR": str(base / "home" / ".config" / "engram")}
    env.pop("ENGRAM_LOCK_TIMEOUT", None)
    if lock_timeout is not None:
        env["ENGRAM_LOCK_TIMEOUT"] = str(lock_timeout)
    command = [sys.executable, "-m", "engram", "hook"]
    # Build the index once, as the first prompt of a day would.
    subprocess.run(command + ["claude"], input=hook_payload("claude", ws, "warm-up", "hello"),
                   capture_output=True, env=env, timeout=timeout, check=True)
    plan = [(i, hosts[i % len(hosts)], f"s{i % sessions}") for i in range(calls)]
    start_gate = threading.Barrier(calls)

    def fire(item: tuple[int, str, str]) -> dict[str, Any]:
        i, host, session = item
        data = hook_payload(host, ws, session, f"what are the topic{i} conventions?")
        start_gate.wait()
        started = time.perf_counter()
        done = subprocess.run(command + [host], input=data, capture_output=True, env=env,
                              timeout=timeout)
        wall = time.perf_counter() - started
        text = ""
        if done.stdout.strip() not in (b"", b"{}"):
            text = (json.loads(done.stdout).get("hookSpecificOutput") or {}).get(
                "additionalContext", "")
        return {"i": i, "host": host, "session": session, "code": done.returncode,
                "wall": wall, "sent": sent_ids(text), "already": already_ids(text),
                "stderr": done.stderr.decode(errors="replace")[-300:]}

    stop = threading.Event()
    edits = [0]
    editor = threading.Thread(target=_editor, args=(ws / ".agents" / ".engram", stop, edits),
                              daemon=True)
    if edit:
        editor.start()
    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=calls) as pool:
        results = list(pool.map(fire, plan))
    elapsed = time.perf_counter() - began
    stop.set()
    if edit:
        editor.join(timeout=5)

    failures: list[str] = []
    sent_per_entry: dict[tuple[str, str], list[str]] = {}
    for result in results:
        topic = f"topic{result['i']}"
        if result["code"] != 0:
            failures.append(f"call {result['i']} exited {result['code']}: {result['stderr']}")
        if topic not in result["sent"] and topic not in result["already"]:
            failures.append(f"call {result['i']} ({result['host']} {result['session']}) did not "
                            f"deliver {topic}: sent {result['sent']}")
        sent_per_entry.setdefault((result["host"], result["session"]), []).extend(result["sent"])
    duplicates = {f"{host}/{session}": sorted({x for x in ids if ids.count(x) > 1})
                  for (host, session), ids in sent_per_entry.items()
                  if len(ids) != len(set(ids))}

    from engram import paths

    cache_path = state / "delivery" / f"{paths.workspace_key(os.path.realpath(ws))}.json"
    document = json.loads(cache_path.read_text(encoding="utf-8"))
    schema_error = ""
    try:
        import jsonschema

        schema = json.loads((Path(__file__).resolve().parent.parent / "schemas"
                             / "delivery-cache.schema.json").read_text(encoding="utf-8"))
        jsonschema.validate(document, schema)
    except ImportError:  # pragma: no cover - jsonschema is a test dependency
        schema_error = "jsonschema not installed: not validated"
    except Exception as exc:  # noqa: BLE001
        schema_error = str(exc).split("\n")[0]
    recorded = {(e["host"], e["session"]): {k.split("@")[0] for k in e["delivered"]}
                for e in document["entries"].values()}
    missing = []
    for result in results:
        delivered = recorded.get((result["host"], result["session"]), set())
        for card in result["sent"]:
            if card not in delivered:
                missing.append(f"{card} sent to {result['host']}/{result['session']} not recorded")
    leftovers = [p.name for p in cache_path.parent.iterdir() if p.name.endswith(".tmp")]
    hook_ms: list[float] = []
    observed = state / "observed.jsonl"
    if observed.exists():
        for line in observed.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "ms" in row and row.get("bytes"):
                hook_ms.append(float(row["ms"]))
    hook_ms = hook_ms[-calls:]
    walls = [r["wall"] for r in results]
    log = state / "logs" / "hook.log"
    return {
        "calls": calls, "sessions": sessions, "hosts": list(hosts), "cores": os.cpu_count(),
        "card_edits_during_run": edits[0], "elapsed_s": round(elapsed, 2),
        "wall_s": {"p50": round(percentile(walls, 50), 3), "p99": round(percentile(walls, 99), 3),
                   "max": round(max(walls), 3)},
        "hook_ms": {"p50": round(percentile(hook_ms, 50), 1), "p99": round(percentile(hook_ms, 99), 1),
                    "max": round(max(hook_ms), 1) if hook_ms else 0.0, "n": len(hook_ms)},
        "host_timeout_s": HOST_TIMEOUT_S,
        "failures": failures, "duplicates": duplicates, "missing_records": missing,
        "schema_error": schema_error, "temp_leftovers": leftovers,
        "failed_open": log.read_text(encoding="utf-8").count("failed open") if log.exists() else 0,
        "entries": len(document["entries"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--no-edit", action="store_true", help="no concurrent card edits")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="engram-stress-") as folder:
        figures = run(Path(folder), args.calls, args.sessions, edit=not args.no_edit)
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    ok = not (figures["failures"] or figures["duplicates"] or figures["missing_records"]
              or figures["schema_error"] or figures["temp_leftovers"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
