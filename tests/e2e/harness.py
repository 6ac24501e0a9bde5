"""What every end-to-end conversation needs: a workspace with memory cards, a throw-away HOME,
`engram link` and `engram doctor` run as this installation's `engram` script, the client run
headless against the fake model with a timeout, and the checks on what reached the model.

The checks read the model requests the fake server recorded, never engram's own answers: a
hook that answers perfectly in a wrong envelope, file or unit must fail them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from . import clients
from .fakemodel import FakeModel, Request

ENGRAM = Path(sys.executable).parent / "engram"  # the console script of this installation
RUN_TIMEOUT = float(os.environ.get("ENGRAM_E2E_TIMEOUT") or 120)
ENGRAM_TIMEOUT = 60.0
HOOK_TIMEOUT_MS = 10_000  # what `engram link` writes for claude, codex and gemini (10 s)
SUBAGENT_TASK = "SUBAGENT-TASK reply with the single word ok."
ALREADY = "already loaded: "

# The memory cards of every conversation. Each body is one line with a unique tag, so a count
# in a request body is exact. Tags route the prompts; nothing else overlaps.
CARDS = {
    "overview": ("Orientation notes", "always: true\npriority: 90",
                 "OVERVIEW-7c1 The orchard service keeps its sources under src/ and its data under ledger/."),
    "alpha": ("Zebrafish handling", "tags: [zebrafish]",
              "ALPHA-4e2 Zebrafish records are validated twice before they are stored."),
    "beta": ("Quokka conventions", "tags: [quokka]",
             "BETA-9d5 Quokka exports are written atomically through a temporary file."),
    "gamma": ("Ledger file rules", 'tags: [ledgerkeeping]\napplies_to: ["ledger/**"]',
              "GAMMA-2b8 Ledger entries are append-only; never rewrite an existing line."),
}
BODY = {card_id: body for card_id, (_, _, body) in CARDS.items()}
LEDGER = "ledger/entries.txt"

# The card of the conversations that write code (`add_code_card`, not in every workspace: a
# fifth card would change how the others' prompts score). It routes on no prompt word and no
# path: only on code that uses two of the names it gives as code, `toMinorUnits` and
# `formatMinorUnits`. CART already uses both: reading it must not bring the card, writing code
# that uses them must, once.
CODE_CARD = ("delta", "Currency rules",
             "DELTA-6f1 Amounts are integers of minor units: convert with `toMinorUnits`, "
             "print with `formatMinorUnits`.")
CODE_BODY = CODE_CARD[2]
CART = "src/cart.ts"
CART_TEXT = ('import { toMinorUnits, formatMinorUnits } from "./money";\n\n'
             "export function cartTotal(prices: number[]): string {\n"
             "  return formatMinorUnits(prices.reduce((sum, p) => sum + toMinorUnits(p), 0));\n"
             "}\n")
# An edit of CART whose new text uses both names, and a new file that does.
CART_OLD = "  return formatMinorUnits(prices.reduce((sum, p) => sum + toMinorUnits(p), 0));\n"
CART_NEW = ("  const cents = prices.reduce((sum, p) => sum + toMinorUnits(p), 0);\n"
            "  return formatMinorUnits(cents);\n")
RECEIPT = "src/receipt.ts"
RECEIPT_TEXT = ('import { toMinorUnits, formatMinorUnits } from "./money";\n\n'
                "export function receiptLine(label: string, price: number): string {\n"
                "  return `${label}: ${formatMinorUnits(toMinorUnits(price))}`;\n"
                "}\n")


def card_text(card_id: str) -> str:
    title, extra, body = CARDS[card_id]
    return f"---\nid: {card_id}\ntitle: {title}\n{extra}\n---\n{body}\n"


def make_workspace(root: Path, ledger_lines: int = 3) -> Path:
    """A git repository with the cards in .agents/.engram and a file under gamma's applies_to."""
    memory = root / ".agents" / ".engram"
    memory.mkdir(parents=True)
    for card_id in CARDS:
        (memory / f"{card_id}.md").write_text(card_text(card_id), encoding="utf-8")
    (root / "ledger").mkdir()
    rows = [f"2024-01-{1 + i % 28:02d} entry {i:05d} amount {i * 7 % 1000}" for i in range(ledger_lines)]
    (root / LEDGER).write_text("\n".join(rows) + "\n", encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "notes.txt").write_text("plain notes\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30,
                   capture_output=True)
    return root


# --------------------------------------------------------------------------- request reading
def strings(value: Any) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def user_texts(req: Request) -> list[str]:
    """The text of every user-role message (Anthropic `messages`, Responses `input`, Gemini
    `contents`)."""
    body = req.json if isinstance(req.json, dict) else {}
    items = body.get("messages") or body.get("contents") or body.get("input") or []
    if isinstance(items, str):
        return [items]
    return ["\n".join(strings(item.get("content") if "content" in item else item.get("parts")))
            for item in items if isinstance(item, dict) and item.get("role") == "user"]


def is_subagent(req: Request) -> bool:
    texts = user_texts(req)
    return any(SUBAGENT_TASK in t for t in texts) and not any("PLAN-" in t for t in texts)


def already_lines(req: Request) -> list[list[str]]:
    """Every `already loaded:` line in the request, as lists of ids."""
    found = []
    for text in req.strings():
        for line in text.splitlines():
            at = line.find(ALREADY)
            if at != -1:
                rest = line[at + len(ALREADY):].split("<", 1)[0]
                found.append([part.strip() for part in rest.split(",") if part.strip()])
    return found


def check_memory(requests: list[Request], card_id: str, times: int = 1) -> list[str]:
    """The suite's checker: problems (empty = fine) with card `card_id`'s body in `requests`.
    Every request must carry the body exactly `times` times: 0 is "missing", more is
    "duplicated"."""
    return check_text(requests, BODY[card_id], card_id, times)


def check_text(requests: list[Request], body: str, name: str, times: int = 1) -> list[str]:
    """`check_memory` for any body (an edited card's new text, say)."""
    if not requests:
        return [f"{name}: no model request to check"]
    problems = []
    for req in requests:
        seen = req.count(body)
        if seen != times:
            what = "missing" if seen < times else "duplicated"
            problems.append(f"{name} {what} in request #{req.n} ({req.answer}): "
                            f"body found {seen}x, expected {times}x")
    return problems


def copies(requests: list[Request], card_id: str) -> list[int]:
    """How often card `card_id`'s body is in each request (for the report)."""
    return [r.count(BODY[card_id]) for r in requests]


def add_code_card(workspace: Path) -> None:
    """CODE_CARD in the memory, CART in the sources."""
    card_id, title, body = CODE_CARD
    (workspace / ".agents" / ".engram" / f"{card_id}.md").write_text(
        f"---\nid: {card_id}\ntitle: {title}\n---\n{body}\n", encoding="utf-8")
    (workspace / CART).write_text(CART_TEXT, encoding="utf-8")


def code_problems(conversation: "Conversation", label: str, tool_answer: str, written: str,
                  text: str, read_answer: str = "") -> list[str]:
    """The run succeeded and the file `written` (workspace-relative) holds `text`; CODE_CARD is
    absent until the scripted tool call that writes that code (after a call `read_answer` of
    code using the same names, when given, which brings nothing), then present exactly once
    in every later request of the run."""
    problems = run_problems(conversation, label)
    requests = conversation.requests(label)
    if read_answer and not any(r.answer == read_answer for r in requests):
        problems.append(f"the model never called {read_answer} in run {label!r}")
    target = conversation.workspace / written
    if not target.exists() or text not in target.read_text(encoding="utf-8"):
        problems.append(f"{tool_answer} did not write its code into {written}")
    writes = [r for r in requests if r.answer == tool_answer][:1]
    if not writes:
        return problems + [f"the model never called {tool_answer} in run {label!r}"]
    before = [r for r in requests if r.n <= writes[0].n]
    after = [r for r in requests if r.n > writes[0].n]
    return problems + [f"{CODE_CARD[0]} present in request #{r.n} ({r.answer}) before the code "
                       "was written" for r in before if r.count(CODE_BODY)] + \
        check_text(after, CODE_BODY, CODE_CARD[0])


def edit_card(workspace: Path, card_id: str, body: str) -> str:
    """Rewrite card `card_id` with a new one-line body (same id, title and routing)."""
    title, extra, _ = CARDS[card_id]
    path = workspace / ".agents" / ".engram" / f"{card_id}.md"
    path.write_text(f"---\nid: {card_id}\ntitle: {title}\n{extra}\n---\n{body}\n", encoding="utf-8")
    return body


def check_absent(requests: list[Request], card_id: str) -> list[str]:
    return [f"{card_id} present in request #{r.n} ({r.answer}) but should not be"
            for r in requests if r.count(BODY[card_id])]


# --------------------------------------------------------------------------- running things
@dataclass
class Run:
    """One client invocation of the conversation."""

    label: str
    argv: list[str]
    returncode: int | None
    seconds: float
    stdout: str
    stderr: str
    first: int   # the fake server's request numbers this run produced: first < n <= last
    last: int
    hooks: list[dict[str, Any]] = field(default_factory=list)  # observed.jsonl rows
    lines: list[tuple[float, str]] = field(default_factory=list)  # (arrival, stdout line)


@dataclass
class Conversation:
    client: str
    version: str  # what the client printed for --version
    workspace: Path
    home: Path
    env: dict[str, str]
    server: FakeModel
    binary: Path
    runs: dict[str, Run] = field(default_factory=dict)
    link_output: str = ""
    doctor: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    label: str = ""  # the report's row: "<client> <version asked for>"

    # --- engram ---------------------------------------------------------------------------
    def engram(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([str(ENGRAM), *args], cwd=self.workspace, env=self.env,
                              capture_output=True, text=True, timeout=ENGRAM_TIMEOUT,
                              stdin=subprocess.DEVNULL)
        if check and done.returncode != 0:
            raise AssertionError(f"engram {' '.join(args)} exited {done.returncode}:\n"
                                 f"{done.stdout}\n{done.stderr}")
        return done

    def link(self, *extra: str) -> str:
        done = self.engram("link", self.client, *extra)
        self.link_output += done.stdout
        return done.stdout

    def run_doctor(self) -> dict[str, Any]:
        done = self.engram("doctor", "--json", check=False)
        self.doctor = json.loads(done.stdout)
        return self.doctor

    @property
    def state_dir(self) -> Path:
        return self.home / ".local" / "state" / "engram"

    def observed_rows(self) -> list[dict[str, Any]]:
        path = self.state_dir / "observed.jsonl"
        rows = []
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return rows
        for line in lines:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
        return rows

    # --- the client -----------------------------------------------------------------------
    def run(self, label: str, argv: list[str], timeout: float = RUN_TIMEOUT,
            turns: list[str] | None = None) -> Run:
        """Run the client once (cwd = the workspace, bounded in time; on timeout its process
        group is killed). Each stdout line is timestamped on arrival, so streamed client events
        (Claude's hook_started/hook_response) give client-side durations. stdin is closed, or,
        with `turns`, fed one line at a time: the first at once, each next one when the client
        reports the previous turn's result (Claude's stream-json `{"type": "result"}`), then
        closed: several user turns in one process, no resume between."""
        before_rows = len(self.observed_rows())
        first = self.server.mark()
        started = time.monotonic()
        proc = subprocess.Popen([str(self.binary), *argv], cwd=self.workspace, env=self.env,
                                stdin=subprocess.DEVNULL if turns is None else subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        feed = _Feeder(proc.stdin, turns) if turns is not None else None
        lines: list[tuple[float, str]] = []
        errors: list[str] = []
        readers = [threading.Thread(target=_pump, args=(proc.stdout, lines, True, feed), daemon=True),
                   threading.Thread(target=_pump, args=(proc.stderr, errors, False), daemon=True)]
        for reader in readers:
            reader.start()
        try:
            code: int | None = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this call started, nothing else
            proc.wait(timeout=30)
            code = None
            errors.append(f"[e2e] killed after {timeout:.0f} s\n")
        for reader in readers:
            reader.join(timeout=10)
        time.sleep(0.2)  # let the server finish logging the last streamed answer
        run = Run(label, argv, code, time.monotonic() - started,
                  "".join(line for _, line in lines), "".join(errors), first,
                  self.server.mark(), self.observed_rows()[before_rows:], lines)
        self.runs[label] = run
        return run

    def run_together(self, runs: dict[str, list[str]]) -> list[Run]:
        """Several client runs at once, each in its own thread (parallel sessions in one
        workspace). Their request ranges overlap: select each one's requests with `tagged`."""
        done: dict[str, Run] = {}
        threads = [threading.Thread(target=lambda lab=lab, argv=argv: done.__setitem__(lab, self.run(lab, argv)))
                   for lab, argv in runs.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return [done[lab] for lab in runs if lab in done]

    def requests(self, label: str, *, subagent: bool | None = False,
                 compaction: bool | None = False, tagged: str = "") -> list[Request]:
        """The model-turn requests run `label` produced. By default the main thread only:
        `subagent=True` selects the subagent's, `compaction=True` the compaction requests,
        None either; `tagged` keeps those whose user messages contain that text."""
        run = self.runs[label]
        out = []
        for req in self.server.model_calls(since=run.first):
            if req.n > run.last or _side_request(req):
                continue
            if tagged and not any(tagged in t for t in user_texts(req)):
                continue
            if subagent is not None and is_subagent(req) != subagent:
                continue
            if compaction is not None and req.is_compaction != compaction:
                continue
            out.append(req)
        return out

    def all_hook_rows(self) -> list[dict[str, Any]]:
        return [row for run in self.runs.values() for row in run.hooks]


class _Feeder:
    """Writes a client's stdin one turn at a time (see `Conversation.run`)."""

    def __init__(self, stdin: Any, turns: list[str]) -> None:
        self.stdin, self.left = stdin, list(turns)
        self.next()

    def next(self) -> None:
        try:
            if self.left:
                self.stdin.write(self.left.pop(0))
                self.stdin.flush()
            else:
                self.stdin.close()
        except (OSError, ValueError):
            pass  # the client is gone; its exit status tells the test

    def saw(self, line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        if isinstance(event, dict) and event.get("type") == "result":
            self.next()


def _pump(stream: Any, sink: list[Any], stamp: bool, feed: _Feeder | None = None) -> None:
    for line in iter(stream.readline, ""):
        sink.append((time.monotonic(), line) if stamp else line)
        if feed is not None:
            feed.saw(line)
    stream.close()


def client_hook_calls(run: Run) -> list[dict[str, Any]]:
    """Hook calls as Claude's stream-json reports them (`--include-hook-events`): event,
    outcome, and the time between hook_started and hook_response as seen on its stdout."""
    started: dict[str, tuple[float, dict[str, Any]]] = {}
    calls = []
    for at, line in run.lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("type") != "system":
            continue
        if event.get("subtype") == "hook_started":
            started[str(event.get("hook_id"))] = (at, event)
        elif event.get("subtype") == "hook_response":
            begun = started.pop(str(event.get("hook_id")), None)
            calls.append({"event": event.get("hook_event"), "outcome": event.get("outcome"),
                          "exit_code": event.get("exit_code"),
                          "ms": round((at - begun[0]) * 1000, 1) if begun else None})
    calls += [{"event": e.get("hook_event"), "outcome": "never answered", "ms": None}
              for _, e in started.values()]
    return calls


def _side_request(req: Request) -> bool:
    """Gemini's JSON side requests (next-speaker check and the like) are not turns."""
    return req.answer == "json"


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def base_env(home: Path, server: FakeModel) -> dict[str, str]:
    """A clean environment: nothing of the developer's leaks in (no API keys, no engram or
    XDG overrides), and every HTTP(S) request that is not for 127.0.0.1 goes to the fake
    server acting as a refusing proxy, so nothing leaves the machine."""
    path = os.pathsep.join(p for p in (str(Path(sys.executable).parent), "/usr/local/bin",
                                       "/usr/bin", "/bin", os.environ.get("PATH", "")) if p)
    env = {
        "PATH": path,
        "HOME": str(home),
        "USER": os.environ.get("USER", "e2e"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        "SHELL": "/bin/bash",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HTTP_PROXY": server.proxy_url, "HTTPS_PROXY": server.proxy_url,
        "http_proxy": server.proxy_url, "https_proxy": server.proxy_url,
        "ALL_PROXY": server.proxy_url,
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return env


def hook_summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """{event: {"calls", "max_ms", "mean_ms"}} from observed.jsonl rows."""
    summary: dict[str, dict[str, float]] = {}
    for row in rows:
        if "ms" not in row:
            continue
        item = summary.setdefault(row["event"], {"calls": 0, "max_ms": 0.0, "total": 0.0})
        item["calls"] += 1
        item["max_ms"] = max(item["max_ms"], float(row["ms"]))
        item["total"] += float(row["ms"])
    for item in summary.values():
        item["mean_ms"] = round(item.pop("total") / item["calls"], 1)
    return summary


TIMEOUT_WORDS = ("timed out", "timeout", "time out")


def hook_timeouts(conversation: Conversation) -> list[str]:
    """Evidence of a hook that timed out: a call at or over the limit in engram's records,
    or a client message about a hook timing out."""
    found = [f"{row['event']} took {row['ms']} ms (limit {HOOK_TIMEOUT_MS} ms)"
             for row in conversation.all_hook_rows() if float(row.get("ms", 0)) >= HOOK_TIMEOUT_MS]
    for run in conversation.runs.values():
        for line in (run.stdout + "\n" + run.stderr).splitlines():
            low = line.lower()
            if "hook" in low and any(word in low for word in TIMEOUT_WORDS) and "clamping" not in low:
                found.append(f"{run.label}: {line.strip()[:200]}")
    return found


# --------------------------------------------------------------------------- the report
REPORT: dict[str, dict[str, Any]] = {}


def report(client: str, version: str = "") -> dict[str, Any]:
    entry = REPORT.setdefault(client, {"version": "", "events": {}, "hooks": {}, "client_hooks": {},
                                       "notes": [], "stray": []})
    if version:
        entry["version"] = version
    return entry


def verdict(who: "Conversation | str", event: str, problems: list[str], detail: str = "") -> None:
    """Record one event's result for the summary (under the conversation's client and
    version), then fail the test when it has problems."""
    label = who.label if isinstance(who, Conversation) else who
    report(label)["events"][event] = ("PASS" if not problems else "FAIL") + (f" ({detail})" if detail else "")
    assert not problems, f"{label} {event}:\n  " + "\n  ".join(problems)


def run_problems(conversation: Conversation, *labels: str) -> list[str]:
    problems = []
    for label in labels:
        run = conversation.runs.get(label)
        if run is None:
            problems.append(f"run {label!r} did not happen")
        elif run.returncode != 0:
            problems.append(f"run {label!r} exited {run.returncode}: {run.stderr.strip()[-600:]}")
    return problems



# --------------------------------------------------------------------------- shared checks
def linked_commands(config_file: Path) -> list[str]:
    """Every hook command in a host's JSON config file."""
    document = json.loads(config_file.read_text(encoding="utf-8"))
    return [h.get("command", "") for groups in (document.get("hooks") or {}).values()
            for group in groups for h in group.get("hooks", [])]


def personal_commands(client: str) -> set[str]:
    """What `engram link --global` writes for this installation: its `engram-hook` launcher,
    run by this Python under `-I -S` (a regular install: engram in the venv's site-packages) or
    by its shebang (an editable install, whose engram site must find)."""
    launcher = ENGRAM.parent / "engram-hook"
    with open(launcher, encoding="utf-8") as script:
        python = script.readline()[2:].strip()  # the interpreter pip wrote into its #! line
    return {f"{python} -I -S {launcher} {client}", f"{launcher} {client}"}


def link_problems(config_file: Path, client: str, personal: bool = False) -> list[str]:
    """The config `engram link` wrote runs engram from PATH for this host (the portable form a
    team commits: the launcher, else the `engram` script; the client's PATH finds this
    installation first), or, in a personal file
    (`--global`), this installation's launcher by absolute path."""
    if not config_file.exists():
        return [f"{config_file} was not written"]
    commands = linked_commands(config_file)
    want = (personal_commands(client) if personal
            else {f"command -v engram-hook >/dev/null 2>&1 && exec engram-hook {client}; "
                  f"command -v engram >/dev/null 2>&1 && exec engram hook {client} || true"})
    wrong = [c for c in commands if c not in want]
    return ([f"no hook command in {config_file}"] if not commands else []) + \
        [f"hook command {c!r} is not one of {sorted(want)!r}" for c in wrong]


def delta_problems(conversation: Conversation, label: str) -> list[str]:
    """The second prompt routes alpha and beta: beta arrives once, alpha is not sent again
    (still exactly once, from the history), and an `already loaded:` line names alpha."""
    requests = conversation.requests(label)
    problems = check_memory(requests, "beta") + check_memory(requests, "alpha")
    if requests and not any("alpha" in ids for ids in already_lines(requests[0])):
        problems.append(f"no `already loaded:` line naming alpha in request #{requests[0].n}: "
                        f"{already_lines(requests[0])}")
    return problems


def path_problems(conversation: Conversation, label: str, tool_answer: str) -> list[str]:
    """gamma (applies_to ledger/**) is absent until the scripted tool call touches the ledger,
    then present exactly once in every later request of the run."""
    requests = conversation.requests(label)
    before = [r for r in requests if r.answer == tool_answer][:1]
    if not before:
        return [f"the model never called {tool_answer} in run {label!r}"]
    after = [r for r in requests if r.n > before[0].n]
    return check_absent(before, "gamma") + check_memory(after, "gamma")


def subagent_problems(conversation: Conversation, label: str) -> list[str]:
    """The subagent's own request carries the session's context: the always card and the
    card of the last prompt that routed anything."""
    requests = conversation.requests(label, subagent=True)
    if not requests:
        return [f"no subagent request in run {label!r}"]
    return check_memory(requests[:1], "overview") + check_memory(requests[:1], "alpha")


def doctor_host(conversation: Conversation) -> dict[str, Any] | None:
    doctor = conversation.run_doctor()
    return next((h for h in doctor.get("hosts", []) if h.get("host") == conversation.client), None)


def doctor_problems(conversation: Conversation, must_fire: list[str],
                    scope: str = "project") -> list[str]:
    host = doctor_host(conversation)
    if host is None:
        return [f"doctor --json has no {conversation.client} entry"]
    problems = []
    project = next((c for c in host.get("configured", []) if c.get("scope") == scope), {})
    if project.get("state") != "linked" or project.get("broken"):
        problems.append(f"doctor: {scope} config not reported linked: {project}")
    observed = host.get("observed") or {}
    for event in must_fire:
        if not (observed.get(event) or {}).get("count"):
            problems.append(f"doctor: {event} not reported as observed firing "
                            f"(observed: {sorted(observed)})")
    return problems


def timing_problems(*conversations: Conversation) -> list[str]:
    """Every hook call's duration goes to the report; a timed-out hook fails. engram's own
    records time each call inside the hook; where the client reports its hook calls (Claude's
    stream-json), their outcome must be success and their client-side time is reported too."""
    rows = [row for c in conversations for row in c.all_hook_rows()]
    entry = report(conversations[0].label)
    entry["hooks"] = hook_summary(rows)
    entry["calls"] = [f"{run.label}: " + ", ".join(f"{row['event']} {row.get('ms', '?')}" for row in run.hooks)
                      for c in conversations for run in c.runs.values() if run.hooks]
    problems = [p for c in conversations for p in hook_timeouts(c)]
    calls = [call for c in conversations for run in c.runs.values() for call in client_hook_calls(run)]
    if calls:
        entry["client_hooks"] = hook_summary([c for c in calls if c["ms"] is not None])
        problems += [f"client reports {c['event']} hook outcome {c['outcome']!r} (exit {c.get('exit_code')})"
                     for c in calls if c["outcome"] != "success"]
        problems += [f"{c['event']} took {c['ms']} ms on the client's clock (limit {HOOK_TIMEOUT_MS} ms)"
                     for c in calls if c["ms"] is not None and c["ms"] >= HOOK_TIMEOUT_MS]
    if not rows:
        problems.append("engram recorded no hook call at all")
    return problems


# --------------------------------------------------------------------------- a conversation
def _capture_payloads(env: dict[str, str], root: Path, folder: Path) -> None:
    """`ENGRAM_E2E_PAYLOADS=DIR`: every payload a client gives the hook is also kept, byte for
    byte, as DIR/<client>/<arrival ns>.<argument>.json (a `engram-hook` first on PATH saves
    stdin, then runs this installation's). How tests/fixtures/payloads were captured; the
    copies need their temp paths rewritten (that folder's README) before they are kept."""
    folder.mkdir(parents=True, exist_ok=True)
    shim = root / "capture-bin"
    shim.mkdir()
    script = shim / "engram-hook"
    script.write_text("#!/bin/sh\n"
                      f'f="{folder}/$(date +%s%N).$1.json"\n'
                      'cat > "$f"\n'
                      f'exec "{ENGRAM.parent / "engram-hook"}" "$@" < "$f"\n', encoding="utf-8")
    script.chmod(0o755)
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"


@contextlib.contextmanager
def conversation(client: str, version: str | None = None) -> Iterator[Conversation]:
    """A client installed in `version` (default: the first of its matrix; or the module
    skipped with the reason), a fresh workspace and HOME in a temp dir, the fake model
    running; everything removed afterwards."""
    version = version or clients.versions(client)[0]
    label = f"{client} {version}"
    try:
        binary, printed = clients.ensure(client, version)
    except clients.Unavailable as exc:
        report(label)["skipped"] = str(exc)
        pytest.skip(f"e2e {label}: {exc}")
    report(label, printed)
    keep = os.environ.get("ENGRAM_E2E_KEEP") == "1"
    root = Path(tempfile.mkdtemp(prefix=f"engram-e2e-{client}-")).resolve()
    server = FakeModel(str(root / "requests.jsonl")).start()
    try:
        home = root / "home"
        home.mkdir()
        workspace = make_workspace(root / "proj", ledger_lines=400)
        env = base_env(home, server)
        if os.environ.get("ENGRAM_E2E_PAYLOADS"):
            _capture_payloads(env, root, Path(os.environ["ENGRAM_E2E_PAYLOADS"]) / client)
        yield Conversation(client, printed, workspace, home, env, server, binary, label=label)
    finally:
        server.stop()
        stray = sorted({f"{r.method} {r.path}" for r in server.stray()})
        report(label)["stray"] = sorted(set(report(label)["stray"]) | set(stray))
        if keep:
            print(f"\n[e2e] {label} work dir kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def linked_twice(client: str, version: str | None,
                 setup: Callable[[Conversation], None]) -> Iterator[Conversation]:
    """A conversation where the project file is linked (what a team commits) and so is the
    user's own global config (`link --global`): the client runs engram from both."""
    with conversation(client, version) as c:
        setup(c)
        c.link()
        c.link("--global")
        yield c


# The user's own prompt guard, the way one is written: exit 2 with its reason on stderr for a
# prompt holding BLOCKME, the host's JSON decision for DENYME, `continue: false` (a stop) for
# STOPME, and nothing to say otherwise.
PROMPT_GUARD = ("import sys, json; p = json.load(sys.stdin).get('prompt', ''); "
                "print(json.dumps({'decision': %r, 'reason': 'no'}) if 'DENYME' in p else "
                "json.dumps({'continue': False, 'stopReason': 'no'}) if 'STOPME' in p else '{}'); "
                "sys.stderr.write('blocked by policy' if 'BLOCKME' in p else ''); "
                "sys.exit(2 if 'BLOCKME' in p else 0)")


def add_prompt_guard(settings: Path, event: str, decision: str, **entry: object) -> None:
    """PROMPT_GUARD, answering DENYME with `decision`, as the user's own hook on `event` in a
    host's settings file beside engram's entries."""
    config = json.loads(settings.read_text(encoding="utf-8"))
    command = f"{sys.executable} -c \"{PROMPT_GUARD % decision}\""
    config["hooks"][event].append({"hooks": [{**entry, "type": "command", "command": command}]})
    settings.write_text(json.dumps(config, indent=2), encoding="utf-8")
