"""OpenCode, headless, against the fake model's OpenAI chat completions (a custom
`@ai-sdk/openai-compatible` provider), after a real `engram link opencode` (the generated
plugin in `.opencode/plugins/engram.js`).

OpenCode has no hook answer that reaches the model: the plugin keeps one system-prompt slot
per session, in the OpenCode process's memory. So the conversation crosses processes:

  first      `opencode run` (its own process): a prompt routing alpha whose turn reads the
             ledger and starts a subagent (`task`) whose own prompt routes beta, plus
             OpenCode's title-generator request;
  serve1     `opencode serve` started, then `opencode run --attach` with `--session`: a
             process that never saw the session, a prompt routing beta;
  serve2     the same server, a prompt routing nothing (the slot is kept);
  compact    the server's own API compacts the session (`POST /session/ID/summarize`), then
  serve3     a prompt after the compaction;
  continued  the server stopped, `opencode run --session`: a new process again.

And `both_links`: the project's plugin and the user's global one, both loaded by one OpenCode.

Every agent request must carry the always card and the cards of the latest prompt that routed
anything exactly once (the slot replaces alpha by beta); the title request carries none.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from typing import Iterator

import pytest

from .fakemodel import Request
from .harness import (
    RUN_TIMEOUT,
    SUBAGENT_TASK,
    Conversation,
    Run,
    check_absent,
    check_memory,
    conversation,
    doctor_problems,
    linked_twice,
    report,
    run_problems,
    timing_problems,
    user_texts,
    verdict,
)

CLIENT = "opencode"
PROVIDER_PACKAGE = "@ai-sdk/openai-compatible"
TITLE_PROMPT = "You are a title generator"
SERVE_TIMEOUT = 90.0
FIRST_PROMPT = "Tell me about zebrafish."
AFTER_COMPACTION = "After the summary, go on."  # the compaction replaced what came before
# Quiet and offline: no models.dev catalogue, no default auth plugins, no LSP downloads, no
# self-update. OpenCode still tries to install @opencode-ai/plugin into the config folders in
# the background; the refusing proxy stops it (listed as stray, harmless).
OPENCODE_ENV = {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                "OPENCODE_DISABLE_SHARE": "1"}


def setup(c: Conversation) -> None:
    config = c.home / ".config"
    c.env.update({"XDG_CONFIG_HOME": str(config), "XDG_DATA_HOME": str(c.home / ".local" / "share"),
                  "XDG_STATE_HOME": str(c.home / ".local" / "state"),
                  "XDG_CACHE_HOME": str(c.home / ".cache"), **OPENCODE_ENV})
    (config / "opencode").mkdir(parents=True)
    (config / "opencode" / "opencode.json").write_text(json.dumps({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"fake": {"npm": PROVIDER_PACKAGE, "name": "Fake",
                              "options": {"baseURL": f"{c.server.url}/v1", "apiKey": "dummy"},
                              "models": {"gpt-fake": {"name": "gpt-fake"}}}},
        "model": "fake/gpt-fake", "small_model": "fake/gpt-fake",
        "autoupdate": False, "share": "disabled",
    }), encoding="utf-8")


def is_title(req: Request) -> bool:
    body = req.json if isinstance(req.json, dict) else {}
    system = [m.get("content") for m in body.get("messages") or []
              if isinstance(m, dict) and m.get("role") == "system"]
    return bool(system) and isinstance(system[0], str) and system[0].startswith(TITLE_PROMPT)


def agent_requests(c: Conversation, label: str) -> list[Request]:
    return [r for r in c.requests(label) if not is_title(r)]


def title_requests(c: Conversation, label: str) -> list[Request]:
    return [r for r in c.requests(label) if is_title(r)]


def session_id(stdout: str) -> str:
    for line in stdout.splitlines():
        found = re.search(r'"sessionID"\s*:\s*"([^"]+)"', line)
        if found:
            return found.group(1)
    return ""


def prompt(text: str, session: str = "", attach: str = "") -> list[str]:
    return ["run", "--format", "json", *(["--attach", attach] if attach else []),
            *(["--session", session] if session else []), text]


class Server:
    """`opencode serve` on a free loopback port, in its own process group (stopped by it)."""

    def __init__(self, c: Conversation) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.output: list[str] = []
        self.proc = subprocess.Popen([str(c.binary), "serve", "--port", str(port),
                                      "--hostname", "127.0.0.1"], cwd=c.workspace, env=c.env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        listening = threading.Event()

        def pump() -> None:
            for line in iter(self.proc.stdout.readline, ""):
                self.output.append(line)
                if "listening on" in line:
                    listening.set()

        threading.Thread(target=pump, daemon=True).start()
        # `.ci/run` bounds the suite with `timeout`, whose SIGTERM would end pytest without its
        # finally blocks and leave the server running: stop it first.
        self.previous = signal.signal(signal.SIGTERM, self._terminated)
        if not listening.wait(SERVE_TIMEOUT):
            self.stop()
            raise AssertionError(f"opencode serve did not listen within {SERVE_TIMEOUT:.0f} s: "
                                 f"{''.join(self.output)[-600:]}")

    def _terminated(self, signum: int, frame: object) -> None:
        self.stop()
        raise SystemExit(128 + signum)

    def stop(self) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the group this server started, nothing else
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)


def compact(c: Conversation, server: Server, session: str) -> None:
    """Compact the session through the server's API (what the TUI's /compact does), recorded
    as run `compact`."""
    before_rows, first, started = len(c.observed_rows()), c.server.mark(), time.monotonic()
    request = urllib.request.Request(
        f"{server.url}/session/{session}/summarize", method="POST",
        data=json.dumps({"providerID": "fake", "modelID": "gpt-fake"}).encode(),
        headers={"Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, no proxy
    try:
        with opener.open(request, timeout=RUN_TIMEOUT) as answer:
            code, body = (0 if answer.status == 200 else answer.status), answer.read().decode()
    except OSError as exc:
        code, body = 1, str(exc)
    time.sleep(1.0)  # the session.compacted event reaches the plugin after the answer
    c.runs["compact"] = Run("compact", ["POST", f"/session/{session}/summarize"], code,
                            time.monotonic() - started, body, "" if code == 0 else body, first,
                            c.server.mark(), c.observed_rows()[before_rows:])


def provider_unavailable(c: Conversation) -> str:
    """Why the first run reached no model, when OpenCode could not load the provider (a
    version that does not bundle it would install it from npm, which the proxy refuses)."""
    run = c.runs["first"]
    if c.server.model_calls(since=run.first):
        return ""
    logs = "".join(path.read_text(encoding="utf-8", errors="replace")
                   for path in (c.home / ".local" / "share" / "opencode" / "log").glob("*.log"))
    found = re.search(r"(Failed to initialize provider|ProviderInitError|"
                      + re.escape(PROVIDER_PACKAGE) + r")[^\n\"]{0,160}", run.stdout + run.stderr + logs)
    if not found:
        return ""
    return (f"OpenCode {c.version} could not load the {PROVIDER_PACKAGE} provider without "
            f"installing it from npm, which the suite's proxy refuses: {found.group(0)}")


@pytest.fixture(scope="module")
def convo(version: str) -> Iterator[Conversation]:
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        plan = c.server.plan("opencode1", [("read", str(c.workspace / "ledger" / "entries.txt")),
                                           ("agent", f"{SUBAGENT_TASK} About quokka exports.")])
        c.run("first", prompt(f"{plan} {FIRST_PROMPT}"))
        reason = provider_unavailable(c)
        if reason:
            report(c.label)["skipped"] = reason
            pytest.skip(f"e2e {c.label}: {reason}")
        session = session_id(c.runs["first"].stdout)
        report(c.label)["notes"].append(f"session {session or '(not found in the JSON events)'}")
        if session:
            server = Server(c)
            try:
                c.run("serve1", prompt("Now the quokka exports, please.", session, server.url))
                c.run("serve2", prompt("Thanks, go on.", session, server.url))
                compact(c, server, session)
                c.run("serve3", prompt(AFTER_COMPACTION, session, server.url))
            finally:
                server.stop()
            c.run("continued", prompt("Carry on.", session))
        yield c


@pytest.fixture(scope="module")
def both_links(version: str) -> Iterator[Conversation]:
    """The project's plugin and the user's global one (`link --global`): OpenCode loads both."""
    with linked_twice(CLIENT, version, setup) as c:
        c.run("first", prompt(FIRST_PROMPT))
        yield c


def test_project_and_global_plugin_add_the_slot_once(both_links: Conversation) -> None:
    """Each plugin added its slot (before: overview and alpha twice in every agent request)."""
    requests = agent_requests(both_links, "first")
    problems = run_problems(both_links, "first") + ([] if requests else ["no agent request"])
    problems += check_memory(requests, "overview") + check_memory(requests, "alpha")
    verdict(both_links, "project and --global plugin: every body once", problems)


def test_link_writes_the_plugin(convo: Conversation) -> None:
    plugin = convo.workspace / ".opencode" / "plugins" / "engram.js"
    problems = [] if plugin.exists() else [f"{plugin} was not written"]
    if plugin.exists() and "engram:opencode-plugin" not in plugin.read_text(encoding="utf-8"):
        problems.append(f"{plugin} lacks engram's marker")
    verdict(convo, "link (.opencode/plugins/engram.js)", problems)


def test_first_prompt_carries_always_and_routed_card_once(convo: Conversation) -> None:
    requests = agent_requests(convo, "first")
    problems = run_problems(convo, "first") + check_memory(requests, "overview") + \
        check_memory(requests, "alpha") + check_absent(requests, "beta")
    if len(requests) < 2:
        problems.append(f"expected the read step and the answer after it, got {len(requests)} "
                        "agent request(s)")
    verdict(convo, "chat.message (first prompt)", problems, f"{len(requests)} requests")


def test_subagent_session_gets_its_own_slot(convo: Conversation) -> None:
    """OpenCode runs a subagent as a child session in the same process: its own
    session.created and chat.message fill its own slot (the always card and what the task's
    prompt routes), and the parent's slot is untouched."""
    requests = convo.requests("first", subagent=True)
    problems = [] if requests else ["no subagent request in run 'first'"]
    problems += check_memory(requests, "overview") + check_memory(requests, "beta") + \
        check_absent(requests, "alpha")
    verdict(convo, "subagent (task) session", problems)


def test_title_request_carries_no_memory(convo: Conversation) -> None:
    titles = title_requests(convo, "first")
    problems = [] if titles else ["OpenCode sent no title-generator request"]
    for card in ("overview", "alpha"):
        problems += check_absent(titles, card)
    verdict(convo, "title request without memory", problems)


def continued_problems(requests: list[Request], label: str, earlier: str) -> list[str]:
    """The run continued the first session (an earlier prompt of it is in the history)."""
    if any(earlier in text for r in requests for text in user_texts(r)):
        return []
    return [f"run {label!r} did not continue the first session ({earlier!r} is not in the "
            "history)"]


def test_a_process_new_to_the_session_gets_the_slot(convo: Conversation) -> None:
    """`opencode serve` never saw the session: its plugin holds nothing and says so."""
    requests = agent_requests(convo, "serve1")
    problems = run_problems(convo, "serve1") + continued_problems(requests, "serve1", FIRST_PROMPT) + \
        check_memory(requests, "overview") + check_memory(requests, "beta") + \
        check_absent(requests, "alpha")
    verdict(convo, "new process (serve --attach)", problems)


def test_second_prompt_in_the_same_process_keeps_the_slot(convo: Conversation) -> None:
    requests = agent_requests(convo, "serve2")
    problems = run_problems(convo, "serve2") + check_memory(requests, "overview") + \
        check_memory(requests, "beta") + check_absent(requests, "alpha")
    verdict(convo, "second prompt, same process", problems)


def test_memory_after_compaction(convo: Conversation) -> None:
    """OpenCode's compaction request is an agent request too (the slot goes in, once); the
    session.compacted event refills the slot; the next prompt carries it once."""
    compaction = convo.requests("compact")
    requests = agent_requests(convo, "serve3")
    problems = run_problems(convo, "compact", "serve3")
    if not compaction:
        problems.append("the summarize call sent no model request")
    if not any(row.get("event") == "session.compacted" for row in convo.runs["compact"].hooks +
               convo.runs["serve3"].hooks):
        problems.append("the plugin never asked engram about session.compacted")
    problems += check_memory(compaction + requests, "overview") + \
        check_memory(compaction + requests, "beta")
    verdict(convo, "session.compacted (summarize)", problems)


def test_session_continued_in_a_new_process(convo: Conversation) -> None:
    requests = agent_requests(convo, "continued")
    problems = run_problems(convo, "continued") + continued_problems(requests, "continued", AFTER_COMPACTION) + \
        check_memory(requests, "overview") + check_memory(requests, "beta")
    verdict(convo, "run --session (new process)", problems)


def test_doctor_sees_the_plugin_fire(convo: Conversation) -> None:
    verdict(convo, "doctor", doctor_problems(convo, ["session.created", "chat.message",
                                                     "session.compacted"]))


def test_hook_calls_are_timed(convo: Conversation) -> None:
    verdict(convo, "hook timing", timing_problems(convo))
