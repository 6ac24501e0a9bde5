"""What `engram import` saves: a monolithic instruction file loaded whole at every session
start (what Claude Code does with CLAUDE.md, Codex with AGENTS.md) against the characters
engram injects over a session of prompts once the file is imported as routed cards. Every
session is played through the real hook (`engram.session_sim`), Claude Code's budget.

Cases:
  fixture     tests/fixtures/adoption/CLAUDE.md (8 sections), the walkthrough's 6 prompts
  continue    the 24 real .continue/rules of continuedev/continue joined into one AGENTS.md
              (a heading per rule), its 300 real commits oldest first cut into sessions of 30
              (--session-length), subject as the prompt, changed files as reads
                                                                  [needs ../shared/data]
  convex      a real 30 KB .cursorrules (awesome-cursorrules, CC0), the 12 sample prompts
  gh-actions  a real 54 KB Copilot instructions file (awesome-copilot, MIT), 12 sample prompts

    python bench/adoption.py [--data ../shared/data] [--cases fixture continue] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
DEFAULT_DATA = Path(os.environ.get("ENGRAM_BENCH_DATA", REPO.parent / "shared" / "data"))
FIXTURE_PROMPTS = [
    "Why is the stripe webhook processed twice?",
    "Stripe webhook again: make it idempotent",
    "Add a react component for the cart badge",
    "Write a migration that renames the sku column",
    "How do we deploy a hotfix?",
    "thanks",
]
SESSIONS, SESSION_LENGTH = 10, 30


def continue_monolith(data: Path) -> str:
    """The continue rules as one file: a `##` heading per rule (its name, else its file
    name), its body under it; frontmatter dropped, as a team pasting them into AGENTS.md would."""
    from engram import frontmatter

    parts = ["# Continue: agent instructions\n"]
    for path in sorted((data / "continue" / ".continue" / "rules").glob("*.md")):
        parsed = frontmatter.parse(path.read_text(encoding="utf-8"))
        name = parsed.data.get("name") or path.stem.replace("-", " ").capitalize()
        body = parsed.body.strip()
        # A rule's own headings go one level down, under the rule's heading.
        body = "\n".join("#" + line if line.startswith("#") else line for line in body.split("\n"))
        parts.append(f"## {name}\n\n{body}\n")
    return "\n".join(parts)


def measure(text: str, source: str, sessions: list[list]) -> dict:
    from engram import importer, session_sim

    cards = importer.plan(text, source)
    with tempfile.TemporaryDirectory(prefix="engram-adoption-") as temp:
        folder = Path(temp) / "cards"
        folder.mkdir()
        for card in cards:
            (folder / f"{card.id}.md").write_text(card.render(), encoding="utf-8")
        results = [session_sim.play(folder, steps, "claude") for steps in sessions]
    totals = [r.total for r in results]
    return {
        "source": source, "source_chars": len(text), "cards": len(cards),
        "always_cards": sum(c.always for c in cards), "sessions": len(sessions),
        "prompts_per_session": len(sessions[0]) if sessions else 0,
        "engram_chars_mean": round(statistics.mean(totals)),
        "engram_chars_min": min(totals), "engram_chars_max": max(totals),
        "start_chars_mean": round(statistics.mean(r.start_chars for r in results)),
        "cards_sent_mean": round(statistics.mean(len(r.delivered) for r in results), 1),
        "saved_fraction": round(1 - statistics.mean(totals) / len(text), 3),
    }


def cases(data: Path, wanted: list[str], length: int = SESSION_LENGTH) -> dict[str, dict]:
    from engram import session_sim

    Step = session_sim.Step
    sample = [[Step(p) for p in session_sim.SAMPLE_PROMPTS]]
    found: dict[str, dict] = {}
    if "fixture" in wanted:
        text = (REPO / "tests" / "fixtures" / "adoption" / "CLAUDE.md").read_text(encoding="utf-8")
        found["fixture"] = measure(text, "CLAUDE.md", [[Step(p) for p in FIXTURE_PROMPTS]])
    if not data.is_dir():
        return found
    if "continue" in wanted:
        tasks = [json.loads(line) for line in
                 (data / "continue" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
        tasks.reverse()  # oldest first: a session works forward in time
        sessions = [[Step(t["subject"], tuple(t["files"][:5]))
                     for t in tasks[n * length:(n + 1) * length]]
                    for n in range(min(SESSIONS * SESSION_LENGTH // length, len(tasks) // length))]
        found["continue"] = measure(continue_monolith(data), "AGENTS.md", sessions)
    if "convex" in wanted:
        path = data / "awesome-cursorrules" / "rules" / "convex-cursorrules-prompt-file.mdc"
        found["convex"] = measure(path.read_text(encoding="utf-8"), ".cursorrules", sample)
    if "gh-actions" in wanted:
        path = (data / "awesome-copilot" / "instructions" /
                "github-actions-ci-cd-best-practices.instructions.md")
        found["gh-actions"] = measure(path.read_text(encoding="utf-8"),
                                      ".github/copilot-instructions.md", sample)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cases", nargs="+", default=["fixture", "continue", "convex",
                                                        "gh-actions"])
    parser.add_argument("--session-length", type=int, default=SESSION_LENGTH,
                        help="tasks per continue session (the 300 tasks are cut into sessions)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    state = tempfile.mkdtemp(prefix="engram-adoption-state-")
    os.environ.setdefault("XDG_CONFIG_HOME", state)  # no user config leaks into the figures
    os.environ["ENGRAM_CONFIG_DIR"] = str(Path(state) / "config")
    results = cases(args.data, args.cases, args.session_length)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'case':<11} {'file':<32} {'loaded whole':>12} {'cards':>5} {'sessions':>8} "
          f"{'engram/session':>14} {'(min-max)':>15} {'sent':>5} {'saved':>6}")
    for name, r in results.items():
        print(f"{name:<11} {r['source']:<32} {r['source_chars']:>12,} {r['cards']:>5} "
              f"{r['sessions']:>3} x {r['prompts_per_session']:<3} {r['engram_chars_mean']:>14,} "
              f"{r['engram_chars_min']:>7,}-{r['engram_chars_max']:<7,} "
              f"{r['cards_sent_mean']:>5} {r['saved_fraction']:>6.0%}")
    if not args.data.is_dir():
        print(f"(shared data not found at {args.data}: only the fixture case was measured)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
