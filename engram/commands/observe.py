"""`engram observe`: drain the session transcript queue, or ingest one file."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

from engram import observe, output, workspace
from engram.errors import EngramError

PROGRESS_FROM: Final = 10  # show progress when a run has more entries than this
_VERBS: Final = {"saved": "SAVED", "would-save": "WOULD SAVE", "skipped": "SKIPPED",
                 "kept": "KEPT", "duplicate": "ALREADY OBSERVED"}


def _progress(index: int, total: int) -> None:
    if total > PROGRESS_FROM:
        end = "\n" if index == total or not sys.stderr.isatty() else ""
        output.progress(f"\robserve: {index}/{total}{end}")
        sys.stderr.flush()


def _line(outcome: observe.Outcome) -> str:
    verb = _VERBS.get(outcome.status, outcome.status.upper())
    if outcome.status in ("saved", "would-save"):
        safety = []
        if outcome.secrets:
            safety.append(f"{outcome.secrets} secret(s) redacted")
        if outcome.injections:
            safety.append(f"{outcome.injections} injection-like line(s) removed")
        summary = f", {outcome.summaries} model-written summary" if outcome.summaries else ""
        detail = f"{outcome.turns} turns{summary}" + (f"; {'; '.join(safety)}" if safety else "")
        return f"{verb} {outcome.inbox} (trace {outcome.trace}; {detail})"
    return f"{verb} {outcome.source}: {outcome.reason}"


def run(*, queue: bool, file: Path | None, dry_run: bool, limit: int | None, as_json: bool,
        cwd: Path) -> int:
    if queue == (file is not None):
        raise EngramError("pass either --queue or --file PATH",
                          "engram observe --queue drains the SessionEnd queue")
    if limit is not None and limit < 0:
        raise EngramError("--limit must be 0 or more")
    space = workspace.load(cwd)
    if space is None:
        raise EngramError("no workspace here (no .agents/.engram, .agents/engram.json or .git)",
                          "run it inside a repository or pass --cwd")
    if queue:
        report = observe.drain_queue(space, dry_run=dry_run, limit=limit,
                                     progress=None if as_json else _progress)
    else:
        assert file is not None  # the command requires --queue or a FILE
        target = file if file.is_absolute() else cwd / file
        report = observe.observe_file(space, target, dry_run=dry_run)
    if as_json:
        output.emit_json("observe", {"dry_run": report.dry_run,
                                     "results": [o.to_json() for o in report.outcomes],
                                     "remaining": report.remaining, "invalid": report.invalid})
        return 0
    if not report.outcomes:
        output.write("nothing queued\n" if queue else "nothing observed\n")
    for outcome in report.outcomes:
        output.write(_line(outcome) + "\n")
    if report.invalid:
        output.write(f"DROPPED {report.invalid} malformed queue entr"
                         f"{'y' if report.invalid == 1 else 'ies'}\n")
    if queue:
        output.write(f"{'would leave' if dry_run else 'left'} {report.remaining} in the "
                         "queue\n")
    saved = [o.inbox for o in report.outcomes if o.status == "saved" and o.inbox]
    if saved:
        output.write(f"Next: review, then engram save-session --file {saved[0]}\n")
    return 0
