"""Characters injected over a scripted 30-prompt session on the bundled memories, in `auto`
(delta) mode against `always` mode (every routed body re-sent on every prompt, as peers do),
and a check that every card routed in the session was delivered at least once in `auto`.

    python bench/session_tokens.py [--host claude] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

PROMPTS = [
    "How do I add a new host adapter?",
    "What does the hook do when it hits an error?",
    "Add a test for the new host using the real payloads",
    "What are our testing conventions for pytest fixtures?",
    "Make the hook path faster, it imports too much",
    "Which imports are allowed on the hook path?",
    "How is the delivery cache keyed and when does it reset?",
    "Fix the compaction reset for subagents in the delivery cache",
    "How do budgets work for Codex tokens?",
    "Why was this card folded to one line?",
    "Write the installer change for the Gemini settings file",
    "Does link keep the user's existing hooks?",
    "What exit code should a user-fixable error return?",
    "Add a --json flag to the doctor command",
    "How do we release a new version?",
    "Run the benchmarks and update the performance doc",
    "How does the router score tags and titles?",
    "Why did route abstain for this prompt?",
    "Add a new field to the card format",
    "What does lint check in a card?",
    "How are session transcripts kept private?",
    "Add a secret pattern to the transcript sanitizer",
    "How do I add a new host adapter for Cline?",
    "The hook failed open, where is the log?",
    "Add a property test that budgets are never exceeded",
    "Make the installer refuse a hooks list",
    "thanks, that looks good",
    "What is the commit convention here?",
    "Update the routing weights and rerun the quality benchmark",
    "Explain the project layout to a new contributor",
]


def run_session(host: str, mode: str, memories: Path) -> dict:
    from engram import hook

    with tempfile.TemporaryDirectory(prefix="engram-tokens-") as temp:
        ws = Path(temp) / "proj"
        (ws / ".git").mkdir(parents=True)
        shutil.copytree(memories, ws / ".agents" / ".engram")
        (ws / ".agents" / "engram.json").write_text(json.dumps({"read": mode}))
        previous = os.environ.get("ENGRAM_STATE_DIR")
        os.environ["ENGRAM_STATE_DIR"] = str(Path(temp) / "state")
        try:
            total = 0
            delivered: set[str] = set()
            routed: set[str] = set()
            per_prompt = []

            def fire(event: str, **extra: str) -> str:
                raw = json.dumps({"session_id": "bench", "cwd": str(ws), "hook_event_name": event,
                                  **extra}).encode()
                answer = hook.handle(host, raw)
                doc = json.loads(answer) if answer.strip() else {}
                return (doc.get("hookSpecificOutput") or {}).get("additionalContext", "")

            start = fire("SessionStart", source="startup")
            total += len(start)
            for prompt in PROMPTS:
                text = fire("UserPromptSubmit", prompt=prompt)
                per_prompt.append(len(text))
                total += len(text)
                for line in text.splitlines():
                    if line.startswith("### engram memory: "):
                        delivered.add(line.split(": ", 1)[1].split(" — ")[0])
                    if line.startswith("already loaded: "):
                        routed.update(line[len("already loaded: "):].split(", "))
                routed.update(l.split(": ", 1)[1].split(" — ")[0] for l in text.splitlines()
                              if l.startswith("### engram memory: "))
        finally:
            if previous is None:
                os.environ.pop("ENGRAM_STATE_DIR", None)
            else:
                os.environ["ENGRAM_STATE_DIR"] = previous
    return {"mode": mode, "chars": total, "start_chars": len(start), "per_prompt": per_prompt,
            "delivered": sorted(delivered), "routed": sorted(routed)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="claude")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from engram.resources import data_dir

    memories = data_dir("memories")
    auto = run_session(args.host, "auto", memories)
    always = run_session(args.host, "always", memories)
    saved = 1 - auto["chars"] / always["chars"] if always["chars"] else 0.0
    missing = sorted(set(always["routed"]) - set(auto["delivered"]))
    summary = {"host": args.host, "prompts": len(PROMPTS), "auto_chars": auto["chars"],
               "always_chars": always["chars"], "saved_fraction": round(saved, 3),
               "cards_routed": len(always["routed"]), "routed_never_delivered_in_auto": missing}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{len(PROMPTS)}-prompt session on the bundled memories ({args.host}):")
        print(f"  always mode: {always['chars']:,} characters injected")
        print(f"  auto mode:   {auto['chars']:,} characters injected "
              f"({saved:.1%} fewer)")
        print(f"  cards routed: {len(always['routed'])}; routed but never delivered in auto: "
              f"{missing or 'none'}")
    return 0 if not missing else 1


if __name__ == "__main__":
    raise SystemExit(main())
