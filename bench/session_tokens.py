"""What a realistic session costs in context, and whether the cards it needed reached the model.

The default sessions are the labelled web-app sessions in `bench/session/`: a 47-card store for
a React + Fastify + Prisma web app (`webapp/`, written for this bench) and two sessions of 30
prompts, each one feature's work (`webapp-session.jsonl`: a "due soon" badge and reminders;
`webapp-session-2.jsonl`: task comments), each prompt with the files the agent then edits and
the cards that prompt needs, with a compaction half way. The store and the first session were
written before any routing change was measured on them; the second was written later, before
any run on it, as a held-out check on changes tuned on the first. Every prompt fires
`UserPromptSubmit`, then a `PreToolUse` (Edit) per touched file (Claude with
`hooks.path_rules: hook`, so path cards arrive through the hook and are counted); the compaction
fires `PreCompact` and `SessionStart` (source `compact`).

Three ways to give the model its memory are compared:
  static   the habit engram replaces: every card pasted into CLAUDE.md (`## title`, body), loaded
           at session start and again after the compaction; every card is always in context.
  always   engram re-sending every routed body on every prompt (how peers inject).
  auto     engram's default: each card once per context (again after a compaction).
A fourth line, `needed`, is what a router that knew the labels would inject (each needed card
once per context): the floor under `auto`'s characters at 100% needed in context.
For each: characters injected, and "needed in context": of the (prompt, needed card) pairs, the
share where the card's full body was in the model's context (delivered since the last
compaction, up to and including that prompt's own tool calls); also the needed cards that never
reached the model at a prompt that needed them. Goal: auto <= 50% of static's characters with
>= 97% of needed pairs in context.

    python bench/session_tokens.py [--json]           # both sessions
    python bench/session_tokens.py --session bench/session/webapp-session-2.jsonl
    python bench/session_tokens.py --store bundled    # the older unlabelled session on the
                                                      # bundled memories: auto against always
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
WEBAPP = BENCH / "session" / "webapp"
WEBAPP_SESSION = BENCH / "session" / "webapp-session.jsonl"
WEBAPP_SESSION_2 = BENCH / "session" / "webapp-session-2.jsonl"
SESSIONS = (WEBAPP_SESSION, WEBAPP_SESSION_2)
HEADER = "### engram memory: "
GOAL_CHARS = 0.50
GOAL_NEEDED = 0.97

BUNDLED_PROMPTS = [
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


def load_session(path: Path = WEBAPP_SESSION) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _delivered_ids(text: str) -> list[str]:
    return [line[len(HEADER):].split(" — ")[0] for line in text.splitlines()
            if line.startswith(HEADER)]


def run_session(host: str, mode: str, memories: Path, steps: list[dict]) -> dict:
    """Fire the session's hook events in a temp workspace; what each answer delivered."""
    from engram import hook

    with tempfile.TemporaryDirectory(prefix="engram-tokens-") as temp:
        ws = Path(temp) / "proj"
        (ws / ".git").mkdir(parents=True)
        shutil.copytree(memories, ws / ".agents" / ".engram")
        (ws / ".agents" / "engram.json").write_text(
            json.dumps({"read": mode, "hooks": {"path_rules": "hook"}}))
        previous = os.environ.get("ENGRAM_STATE_DIR")
        os.environ["ENGRAM_STATE_DIR"] = str(Path(temp) / "state")
        try:
            def fire(event: str, **extra: object) -> str:
                raw = json.dumps({"session_id": "bench", "cwd": str(ws), "hook_event_name": event,
                                  **extra}).encode()
                answer = hook.handle(host, raw)
                doc = json.loads(answer) if answer.strip() else {}
                return (doc.get("hookSpecificOutput") or {}).get("additionalContext", "")

            total = 0
            context: set[str] = set()
            delivered: set[str] = set()
            rows = []
            start = fire("SessionStart", source="startup")
            total += len(start)
            context.update(_delivered_ids(start))
            for step in steps:
                if step.get("event") == "compact":
                    fire("PreCompact", trigger="auto")
                    context = set()
                    text = fire("SessionStart", source="compact")
                    total += len(text)
                    context.update(_delivered_ids(text))
                    continue
                chars = 0
                got: list[str] = []
                texts = [fire("UserPromptSubmit", prompt=step["prompt"])]
                for path in step.get("paths") or []:
                    texts.append(fire("PreToolUse", tool_name="Edit",
                                      tool_input={"file_path": str(ws / path)}))
                for text in texts:
                    chars += len(text)
                    got.extend(_delivered_ids(text))
                total += chars
                context.update(got)
                delivered.update(got)
                needed = step.get("needed") or []
                rows.append({"prompt": step["prompt"], "chars": chars, "delivered": got,
                             "needed": needed, "missing": [c for c in needed if c not in context]})
        finally:
            if previous is None:
                os.environ.pop("ENGRAM_STATE_DIR", None)
            else:
                os.environ["ENGRAM_STATE_DIR"] = previous
    return {"mode": mode, "chars": total, "start_chars": len(start), "prompts": rows,
            "delivered": sorted(delivered)}


def static_habit(memories: Path, steps: list[dict]) -> dict:
    """Every card pasted into CLAUDE.md: loaded at start and after each compaction."""
    from engram import index

    compiled = index.load_roots([memories])
    pasted = "\n\n".join(f"## {card.title}\n\n{card.body}" for card in compiled.all_cards())
    loads = 1 + sum(1 for step in steps if step.get("event") == "compact")
    return {"mode": "static", "chars": loads * len(pasted), "claude_md_chars": len(pasted),
            "cards": len(compiled.active)}


def needed_only(memories: Path, steps: list[dict]) -> int:
    """What a router that knew the labels would inject: the always cards at start and after
    each compaction, and each needed card once per context, at the first prompt that needs it,
    rendered the way the hook renders bodies (no `already loaded:` lines). The floor under
    `auto`'s characters at 100% of needed pairs in context."""
    from engram import index, render

    compiled = index.load_roots([memories])
    cards = {card.id: card for card in compiled.all_cards()}

    def text(ids: list[str]) -> int:
        items = [render.Item(id=i, title=cards[i].title, card=cards[i].card, body=cards[i].body,
                             priority=cards[i].priority, rank=rank) for rank, i in enumerate(ids)]
        return len(render.compose(items, [], "", "")) if items else 0

    always = [card.id for card in cards.values() if card.always]
    total, context = text(always), set(always)
    for step in steps:
        if step.get("event") == "compact":
            total += text(always)
            context = set(always)
            continue
        new = [i for i in dict.fromkeys(step.get("needed") or []) if i not in context]
        total += text(new)
        context.update(new)
    return total


def coverage(rows: list[dict]) -> dict:
    pairs = sum(len(r["needed"]) for r in rows)
    missing = sum(len(r["missing"]) for r in rows)
    needed_cards = {c for r in rows for c in r["needed"]}
    # A card "never reached the model" when it was missing at every prompt that needed it.
    reached = {c for r in rows for c in r["needed"] if c not in r["missing"]}
    return {"pairs": pairs, "pairs_in_context": pairs - missing,
            "needed_in_context": round((pairs - missing) / pairs, 4) if pairs else 1.0,
            "needed_cards": len(needed_cards), "never_reached": sorted(needed_cards - reached),
            "missing": [(r["prompt"], r["missing"]) for r in rows if r["missing"]]}


def webapp(host: str, session: Path = WEBAPP_SESSION) -> dict:
    steps = load_session(session)
    static = static_habit(WEBAPP, steps)
    report = {"host": host, "session": session.name, "cards": static["cards"],
              "prompts": sum(1 for s in steps if "prompt" in s),
              "compactions": sum(1 for s in steps if s.get("event") == "compact"),
              "static": {"chars": static["chars"], "claude_md_chars": static["claude_md_chars"],
                         "needed_in_context": 1.0}}
    floor = needed_only(WEBAPP, steps)
    report["needed_only"] = {"chars": floor, "share_of_static": round(floor / static["chars"], 4),
                             "needed_in_context": 1.0}
    for mode in ("always", "auto"):
        run = run_session(host, mode, WEBAPP, steps)
        report[mode] = {"chars": run["chars"],
                        "share_of_static": round(run["chars"] / static["chars"], 4),
                        **coverage(run["prompts"]), "per_prompt": run["prompts"]}
    auto = report["auto"]
    report["goal_met"] = (auto["share_of_static"] <= GOAL_CHARS
                          and auto["needed_in_context"] >= GOAL_NEEDED)
    return report


def render_webapp(report: dict, verbose: bool) -> str:
    lines = [f"{report['session']}: {report['prompts']}-prompt web-app session, {report['cards']} cards, "
             f"{report['compactions']} compaction ({report['host']}, path cards through the hook):",
             f"  {'':<8} {'characters':>10} {'of static':>9} {'needed in context':>18}  never reached"]
    static = report["static"]
    lines.append(f"  {'static':<8} {static['chars']:>10,} {1:>9.0%} {'100.0%':>18}  -  "
                 f"(CLAUDE.md of {static['claude_md_chars']:,} chars, loaded twice)")
    floor = report["needed_only"]
    lines.append(f"  {'needed':<8} {floor['chars']:>10,} {floor['share_of_static']:>9.1%} "
                 f"{'100.0%':>18}  -  (only the labelled cards, once per context: the floor)")
    for mode in ("always", "auto"):
        r = report[mode]
        lines.append(f"  {mode:<8} {r['chars']:>10,} {r['share_of_static']:>9.1%} "
                     f"{r['needed_in_context']:>12.1%} ({r['pairs_in_context']}/{r['pairs']})  "
                     f"{', '.join(r['never_reached']) or 'none'}")
    lines.append(f"  goal (auto <= {GOAL_CHARS:.0%} of static, >= {GOAL_NEEDED:.0%} needed in "
                 f"context): {'met' if report['goal_met'] else 'NOT met'}")
    for prompt, missing in report["auto"]["missing"]:
        lines.append(f"    auto missed {', '.join(missing)} at {prompt!r}")
    if verbose:
        for row in report["auto"]["per_prompt"]:
            extra = sorted(set(row["delivered"]) - set(row["needed"]))
            lines.append(f"    {row['chars']:>6} {row['prompt'][:60]!r}: delivered "
                         f"{row['delivered']}; not needed {extra}")
    return "\n".join(lines)


def bundled(host: str) -> dict:
    from engram.resources import data_dir

    memories = data_dir("memories")
    steps = [{"prompt": p} for p in BUNDLED_PROMPTS]
    auto = run_session(host, "auto", memories, steps)
    always = run_session(host, "always", memories, steps)
    saved = 1 - auto["chars"] / always["chars"] if always["chars"] else 0.0
    missing = sorted(set(always["delivered"]) - set(auto["delivered"]))
    return {"host": host, "prompts": len(steps), "auto_chars": auto["chars"],
            "always_chars": always["chars"], "saved_fraction": round(saved, 3),
            "cards_routed": len(always["delivered"]), "routed_never_delivered_in_auto": missing}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="claude")
    parser.add_argument("--store", choices=("webapp", "bundled"), default="webapp")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--session", type=Path, action="append",
                        help="a labelled session of the webapp store (repeatable; default: "
                             + ", ".join(path.name for path in SESSIONS) + ")")
    parser.add_argument("--verbose", action="store_true", help="per-prompt deliveries (webapp)")
    args = parser.parse_args(argv)
    saved_state = os.environ.get("ENGRAM_STATE_DIR")
    if args.store == "bundled":
        summary = bundled(args.host)
        if args.json:
            print(json.dumps(summary, indent=2))
        else:
            print(f"{summary['prompts']}-prompt session on the bundled memories ({args.host}):")
            print(f"  always mode: {summary['always_chars']:,} characters injected")
            print(f"  auto mode:   {summary['auto_chars']:,} characters injected "
                  f"({summary['saved_fraction']:.1%} fewer)")
            print(f"  cards routed: {summary['cards_routed']}; routed but never delivered in "
                  f"auto: {summary['routed_never_delivered_in_auto'] or 'none'}")
        return 0 if not summary["routed_never_delivered_in_auto"] else 1
    reports = [webapp(args.host, session) for session in args.session or SESSIONS]
    assert os.environ.get("ENGRAM_STATE_DIR") == saved_state
    if args.json:
        print(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2))
    else:
        print("\n\n".join(render_webapp(report, args.verbose) for report in reports))
    return 0 if all(report["goal_met"] for report in reports) else 1


if __name__ == "__main__":
    raise SystemExit(main())
