"""What a realistic session costs in context, and whether the cards it needed reached the model.

The default sessions are the labelled web-app sessions in `bench/session/`: a 47-card store for
a React + Fastify + Prisma web app (`webapp/`, written for this bench) and four sessions of 30
prompts, each one feature's work (`webapp-session.jsonl`: a "due soon" badge and reminders;
`webapp-session-2.jsonl`: task comments; `webapp-session-3.jsonl`: recurring tasks;
`webapp-session-4.jsonl`: CSV export and import), each
prompt with the files the agent then edits and the cards that prompt needs, with a compaction
half way. The store and the first session were written before any routing change was
measured on them; the second later, before any run on it; the third, with the repository the
sessions work in (`webapp-repo/`) and each step's edits (`<session>-edits.jsonl`), blind: from
the cards and the unlabelled prompts, before any run; the fourth likewise, later. Every prompt fires
`UserPromptSubmit`, then a `PostToolUse` (Write, Edit or MultiEdit) per touched file (Claude with
`hooks.path_rules: hook`, so path cards arrive through the hook and are counted); the compaction
fires `PreCompact` and `SessionStart` (source `compact`).

Three ways to give the model its memory are compared:
  static   the habit engram replaces: every card pasted into CLAUDE.md (`## title`, body), loaded
           at session start and again after the compaction; every card is always in context.
  always   engram re-sending every routed body on every prompt (how peers inject).
  auto     engram's default: each card once per context (again after a compaction).
When `bench/session/webapp-repo/` and the session's `-edits.jsonl` exist, the workspace is that
repository and each touched file is changed by the tool call Claude Code would make (a Write
of a new file, an Edit or MultiEdit with the old and new text of each changed region), so the
hook routes on the code written too (engram.code_names); `auto (paths only)` is the same
session without them.
A fourth line, `needed`, is what a router that knew the labels would inject (each needed card
once per context): the floor under `auto`'s characters at 100% needed in context.
For each: characters injected, and "needed in context": of the (prompt, needed card) pairs, the
share where the card's full body was in the model's context (delivered since the last
compaction, up to and including that prompt's own tool calls); also the needed cards that never
reached the model at a prompt that needed them. Goal: auto <= 50% of static's characters with
>= 97% of needed pairs in context.

    python bench/session_tokens.py [--json]           # all four sessions
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
WEBAPP_SESSION_3 = BENCH / "session" / "webapp-session-3.jsonl"
WEBAPP_SESSION_4 = BENCH / "session" / "webapp-session-4.jsonl"
SESSIONS = (WEBAPP_SESSION, WEBAPP_SESSION_2, WEBAPP_SESSION_3, WEBAPP_SESSION_4)
# The repository the sessions work in, before the first step, and per session the content of
# each touched file after each step (`<session>-edits.jsonl`).
WEBAPP_REPO = BENCH / "session" / "webapp-repo"
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


def load_edits(session: Path) -> dict[tuple[int, str], str] | None:
    """(step, path) -> the file's content after that step, from `<session>-edits.jsonl`; the
    step is the line's number in the session file, from 0. None when there is no such file."""
    path = session.with_name(session.stem + "-edits.jsonl")
    if not path.is_file():
        return None
    edits = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            edits[(entry["step"], entry["path"])] = entry["after"]
    return edits


def tool_call(file: Path, after: str | None) -> tuple[str, dict]:
    """The Claude Code tool call that turns `file` into `after`, done on disk: a Write for a
    new file, an Edit (one changed region) or MultiEdit (several) for an existing one, with
    the old and new text of each region; an Edit with the path alone when the bench has no
    content for it."""
    import difflib

    if after is None:
        return "Edit", {"file_path": str(file)}
    before = file.read_text(encoding="utf-8") if file.is_file() else None
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(after, encoding="utf-8")
    if before is None:
        return "Write", {"file_path": str(file), "content": after}
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    regions = [{"old_string": "".join(old[i1:i2]), "new_string": "".join(new[j1:j2])}
               for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes()
               if tag != "equal"]
    if len(regions) == 1:
        return "Edit", {"file_path": str(file), **regions[0]}
    return "MultiEdit", {"file_path": str(file), "edits": regions}


def run_session(host: str, mode: str, memories: Path, steps: list[dict],
                repo: Path | None = None, edits: dict[tuple[int, str], str] | None = None) -> dict:
    """Fire the session's hook events in a temp workspace; what each answer delivered. With
    `repo`, the workspace starts as a copy of it and each touched file holds its content after
    the step (`edits`) when its path event fires, so the hook can read its code."""
    from engram import hook

    with tempfile.TemporaryDirectory(prefix="engram-tokens-") as temp:
        ws = Path(temp) / "proj"
        if repo is not None:
            shutil.copytree(repo, ws, ignore=lambda folder, names: ["README.md"]
                            if Path(folder) == repo else [])
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
            for number, step in enumerate(steps):
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
                    after = (edits or {}).get((number, path)) if repo is not None else None
                    tool, tool_input = tool_call(ws / path, after)
                    # PostToolUse, the trigger `engram link claude` installs.
                    texts.append(fire("PostToolUse", tool_name=tool, tool_input=tool_input))
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
    edits = load_edits(session) if WEBAPP_REPO.is_dir() else None
    repo = WEBAPP_REPO if edits is not None else None
    report["code"] = repo is not None
    runs = [("always", "always", repo), ("auto", "auto", repo)]
    if repo is not None:
        runs.append(("auto (paths only)", "auto", None))
    for label, mode, where in runs:
        run = run_session(host, mode, WEBAPP, steps, where, edits)
        report[label] = {"chars": run["chars"],
                         "share_of_static": round(run["chars"] / static["chars"], 4),
                         **coverage(run["prompts"]), "per_prompt": run["prompts"]}
    auto = report["auto"]
    report["goal_met"] = (auto["share_of_static"] <= GOAL_CHARS
                          and auto["needed_in_context"] >= GOAL_NEEDED)
    return report


def render_webapp(report: dict, verbose: bool) -> str:
    code = "the code written into bench/session/webapp-repo" if report["code"] \
        else "no repository: paths only"
    lines = [f"{report['session']}: {report['prompts']}-prompt web-app session, {report['cards']} cards, "
             f"{report['compactions']} compaction ({report['host']}, path cards through the hook, "
             f"{code}):",
             f"  {'':<17} {'characters':>10} {'of static':>9} {'needed in context':>18}  never reached"]
    static = report["static"]
    lines.append(f"  {'static':<17} {static['chars']:>10,} {1:>9.0%} {'100.0%':>18}  -  "
                 f"(CLAUDE.md of {static['claude_md_chars']:,} chars, loaded twice)")
    floor = report["needed_only"]
    lines.append(f"  {'needed':<17} {floor['chars']:>10,} {floor['share_of_static']:>9.1%} "
                 f"{'100.0%':>18}  -  (only the labelled cards, once per context: the floor)")
    for mode in ("always", "auto", "auto (paths only)"):
        if mode not in report:
            continue
        r = report[mode]
        lines.append(f"  {mode:<17} {r['chars']:>10,} {r['share_of_static']:>9.1%} "
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
