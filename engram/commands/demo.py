"""`engram demo`: a scripted session against the bundled memories, in a temporary workspace
and state dir, showing every step a real host would trigger."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from engram import demo_script as script
from engram import output
from engram.errors import EngramError
from engram.render import FOLDED_HEADER
from engram.resources import data_dir


def _put(document: dict[str, Any], dotted: str, value: object) -> None:
    """document["a"]["b"] = value for "a.b"; a numeric part makes a one-item list."""
    *parents, leaf = dotted.split(".")
    node: dict[str, Any] = document
    for part in parents:
        node = node.setdefault(part, {})
    if leaf.isdigit():
        raise ValueError(dotted)
    node[leaf] = value


def _payload(runtime: dict[str, Any], event: str, cwd: Path, session: str, **extra: str) -> bytes:
    """A payload in the host's own dialect, built from its field map (hosts/<host>.yaml)."""
    fields = runtime.get("fields") or {}
    body: dict[str, Any] = {"transcript_path": ""}
    _put(body, fields.get("event", "hook_event_name"), event)
    _put(body, fields.get("session", "session_id"), session)
    cwd_field = fields.get("cwd", "cwd")
    if cwd_field.endswith(".0"):  # Cursor: workspace_roots[0]
        _put(body, cwd_field[: -len(".0")], [str(cwd)])
    else:
        _put(body, cwd_field, str(cwd))
    aliases = {"agent_id": "agent"}
    for key, value in extra.items():
        _put(body, fields.get(aliases.get(key, key), key), value)
    return json.dumps(body).encode("utf-8")


def _context(answer: str) -> str:
    if not answer.strip():
        return ""
    try:
        document = json.loads(answer)
    except ValueError:
        return answer
    return (document.get("hookSpecificOutput") or {}).get("additionalContext") \
        or document.get("additional_context") or document.get("text") or ""


def run(*, host: str) -> int:
    from engram import hook, host_registry, index, workspace
    from engram.budget import measure
    from engram.query import route_request

    try:
        definition = host_registry.load_host(host)
    except LookupError:
        raise EngramError(f"unknown host {host!r}", "try --host claude or --host codex") from None
    runtime = definition["runtime"]
    events = runtime.get("events") or {}
    names = {spec.get("kind"): name for name, spec in events.items()}
    if "reset" not in names and "compaction" in names:
        # A host that resets after a completed compaction: its pre-compaction event is the
        # demo's compaction step (the `compact` start that follows does the reset).
        names["reset"] = names["compaction"]
    for kind in ("start", "prompt"):
        if kind not in names:
            raise EngramError(f"host {host!r} has no {kind} event to demo (see docs/hosts.md)",
                              "try --host claude, codex, gemini or opencode")
    unit = runtime["budget"]["unit"]
    out = output.write
    with tempfile.TemporaryDirectory(prefix="engram-demo-") as temp:
        temp_path = Path(temp)
        ws_root = temp_path / "project"
        (ws_root / ".git").mkdir(parents=True)
        shutil.copytree(data_dir("memories"), ws_root / ".agents" / ".engram")
        (ws_root / ".agents" / "engram.json").write_text(json.dumps({"proof": "compact"}))
        for relative in script.FILES:
            target = ws_root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("# demo file\n")
        previous_state = os.environ.get("ENGRAM_STATE_DIR")
        os.environ["ENGRAM_STATE_DIR"] = str(temp_path / "state")
        try:
            ws = workspace.load(ws_root)
            assert ws is not None
            compiled = index.load_or_build(ws)
            limit = runtime["budget"]["limit"]
            if not isinstance(limit, int):
                limit = int(ws.settings["load.max_tokens"])
            out(f"engram demo: {definition['display_name']} session over the bundled memories "
                f"({len(compiled.active)} cards), budget {limit:,} {unit}\n")
            out(f"workspace: {ws_root} (temporary)\n\n")
            session = "demo-session"
            for number, step in enumerate(script.steps(names), 1):
                out(f"── step {number}: {step.title}\n")
                extra = dict(step.extra)
                if step.prompt is not None:
                    extra["prompt"] = step.prompt
                    out(f"   prompt: {step.prompt!r}\n")
                    result = route_request(compiled, ws.location, ws.location, step.prompt, [],
                                           int(ws.settings["load.limit"]), include_always=False)
                    if result.selected:
                        out("   routed:\n")
                        for selection in result.selected:
                            why = "; ".join(f"{r.kind}: {r.detail}" for r in selection.reasons)
                            out(f"     - {selection.id} (score {selection.score:g}) {why}\n")
                    else:
                        out("   routed: nothing relevant (abstained)\n")
                answer = hook.handle(host, _payload(runtime, step.event, ws_root, session, **extra))
                text = _context(answer)
                if not answer.strip():
                    out("   answer: (nothing printed: this event takes no output)\n\n")
                    continue
                if not text:
                    out(f"   answer: {answer.strip()}  (nothing to inject)\n\n")
                    continue
                sent = [line.split(": ", 1)[1].split(" — ")[0] for line in text.splitlines()
                        if line.startswith("### engram memory: ")]
                out(f"   bodies sent: {', '.join(sent) if sent else 'none'}\n")
                folded = text.split(FOLDED_HEADER, 1)[1].split("\n\n", 1)[0] \
                    if FOLDED_HEADER in text else ""
                for line in folded.strip().splitlines():
                    out(f"   folded: {line[2:]}\n")
                for line in text.splitlines():
                    if line.startswith(("already loaded:", "Engram proof:")):
                        out(f"   {line}\n")
                out(f"   size: {measure(text, unit):,} of {limit:,} {unit}\n\n")
        finally:
            if previous_state is None:
                os.environ.pop("ENGRAM_STATE_DIR", None)
            else:
                os.environ["ENGRAM_STATE_DIR"] = previous_state
    out("Each body went out once; repeats got only the `already loaded:` line, and the\n"
        "compaction reset brought memory back. Try `engram route \"<prompt>\" --explain`.\n")
    return 0
