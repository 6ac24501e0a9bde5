"""Gemini CLI, headless (`gemini -p`, `--resume latest`), against the fake model's Gemini API,
after a real `engram link gemini`; every conversation runs once per version of the matrix.

Conversation: (0) an opening prompt that routes nothing; (1) resume with a prompt routing
alpha; (2) resume with a prompt routing alpha and beta, whose turn reads the ledger with
read_file (gamma applies to ledger/**: AfterTool). Two more: cards edited mid-session, and
proof mode, each resumed twice, checking that no user turn is lost. And `code`: a card routed
only by the code written (read_file of a file using its code names, then replace; write_file).

Why nothing is printed at SessionStart: headless Gemini CLI 0.61.0 puts SessionStart's context
in front of the user's prompt, and on `--resume` drops every saved user message that starts with
injected context (the whole turn: prompt and memory). engram's SessionStart therefore prints
nothing on Gemini and the next BeforeAgent delivers what it would have; the always card rides
with the first prompt, and every turn survives a resume.

Compression is not exercised: in headless mode `/compress` starts the compression without
waiting for it (the command's action is fire-and-forget) and then sends "/compress" to the
model as a prompt, so whether the history gets replaced is a race; auto-compression needs a
context near the model's limit. See `test_memory_comes_back_after_compress`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Iterator

import pytest
from installer_helpers import host_accepts

from .harness import (
    BODY,
    CART,
    CART_NEW,
    CART_OLD,
    LEDGER,
    RECEIPT,
    RECEIPT_TEXT,
    Conversation,
    add_code_card,
    add_prompt_guard,
    already_lines,
    check_absent,
    check_memory,
    check_text,
    code_problems,
    conversation,
    delta_problems,
    doctor_problems,
    edit_card,
    link_problems,
    path_problems,
    report,
    run_problems,
    timing_problems,
    user_texts,
    verdict,
)

CLIENT = "gemini"
MODEL = "gemini-2.5-flash"


def setup(c: Conversation) -> None:
    settings = c.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }), encoding="utf-8")
    c.env.update({"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": c.server.url,
                  "GEMINI_CLI_TRUST_WORKSPACE": "true"})


def prompt(text: str, resume: bool = True) -> list[str]:
    # yolo: headless Gemini offers no tool that needs approval otherwise (throw-away workspace)
    return [*(["--resume", "latest"] if resume else []), "-p", text, "-m", MODEL,
            "--approval-mode", "yolo", "--output-format", "json"]


@pytest.fixture(scope="module")
def convo(version: str) -> Iterator[Conversation]:
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        c.run("opener", prompt("Hello there.", resume=False))
        c.run("prompt1", prompt("Tell me about zebrafish."))
        plan = c.server.plan("gemini2", [("read", LEDGER)])
        c.run("prompt2", prompt(f"{plan} Now zebrafish and quokka, please."))
        c.run("prompt3", prompt("Tell me about ledgerkeeping."))
        yield c


@pytest.fixture(scope="module")
def guarded(version: str) -> Iterator[Conversation]:
    """Prompts the user's own BeforeAgent hook blocks, each asked again after."""
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        add_prompt_guard(c.workspace / ".gemini" / "settings.json", "BeforeAgent", "deny",
                         name="guard", timeout=10000)
        c.run("opener", prompt("Hello there.", resume=False))
        c.run("blocked", prompt("BLOCKME Tell me about zebrafish."))
        c.run("after", prompt("Tell me about zebrafish."))
        c.run("again", prompt("Zebrafish once more."))
        c.run("denied", prompt("DENYME Tell me about quokka."))
        c.run("after_denied", prompt("Tell me about quokka."))
        c.run("stopped", prompt("STOPME Tell me about ledgerkeeping."))
        c.run("after_stopped", prompt("Tell me about ledgerkeeping."))
        yield c


# The user's own AfterTool hook that blocks every read_file result.
RESULT_BLOCKER = ("import sys, json; json.load(sys.stdin); print(json.dumps({'decision': 'deny', "
                  "'reason': 'that file is off limits'}))")


@pytest.fixture(scope="module")
def result_blocked(version: str) -> Iterator[Conversation]:
    """A read whose result the user's own AfterTool hook blocks, then two resumed prompts
    routing the card the read routed."""
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        settings = c.workspace / ".gemini" / "settings.json"
        config = json.loads(settings.read_text(encoding="utf-8"))
        config["hooks"]["AfterTool"].append({"matcher": "read_file", "hooks": [
            {"name": "blocker", "type": "command", "timeout": 10000,
             "command": f"{sys.executable} -c \"{RESULT_BLOCKER}\""}]})
        settings.write_text(json.dumps(config, indent=2), encoding="utf-8")
        plan = c.server.plan("gemini_rb", [("read", LEDGER)])
        c.run("read", prompt(f"{plan} Look at the data, please.", resume=False))
        c.run("after", prompt("Tell me about ledgerkeeping."))
        c.run("again", prompt("Ledgerkeeping again."))
        yield c


@pytest.fixture(scope="module")
def both_links(version: str) -> Iterator[Conversation]:
    """engram linked in the project and in the user's settings (`--global`): Gemini runs both
    entries on every event."""
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        c.link("--global")
        c.run("first", prompt("Tell me about zebrafish.", resume=False))
        c.run("second", prompt("Zebrafish again, please."))
        c.run("third", prompt("And quokka?"))
        yield c


@pytest.fixture(scope="module")
def prompt_then_read(version: str) -> Iterator[Conversation]:
    """A prompt routes gamma and its turn reads the ledger; then a resumed prompt."""
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        plan = c.server.plan("gemini_pr", [("read", LEDGER)])
        c.run("prompt_read", prompt(f"{plan} Tell me about ledgerkeeping.", resume=False))
        c.run("resumed", prompt("And quokka?"))
        yield c


@pytest.fixture(scope="module")
def code(version: str) -> Iterator[Conversation]:
    """Code written through replace and write_file routes the card naming what it uses: a
    read_file of src/cart.ts (which uses both names) then a replace in it; a new session
    writing a new file. (No resume: Gemini replays a resumed tool response, AfterTool's
    context inside it, twice; the read test above pins that.)"""
    with conversation(CLIENT, version) as c:
        setup(c)
        add_code_card(c.workspace)
        c.link()
        plan = c.server.plan("gemini_edit", [("read", CART), ("edit", CART, CART_OLD, CART_NEW)])
        c.run("read_edit", prompt(f"{plan} Tidy the cart total, please.", resume=False))
        plan = c.server.plan("gemini_write", [("write", RECEIPT, RECEIPT_TEXT)])
        c.run("write", prompt(f"{plan} Add a receipt line helper, please.", resume=False))
        yield c


LEDGER_TAIL = "entry 00399 amount"  # the last line of the ledger: once per copy of the read's output


def test_read_then_resumed_prompt_routing_the_card(convo: Conversation) -> None:
    """gamma came with the read (AfterTool, appended to the tool's output); a resumed prompt
    routing it sends it no more. Gemini CLI 0.61.0 replays a resumed session's tool response
    twice (the saved tool call and the saved function response), the whole output with the
    context in it: so gamma must appear exactly as often as the read's output does, never
    more (engram adds nothing) and never less."""
    requests = convo.requests("prompt3")
    problems = run_problems(convo, "prompt3")
    counts = []
    for req in requests:
        outputs, seen = req.count(LEDGER_TAIL), req.count(BODY["gamma"])
        counts.append((seen, outputs))
        if not seen or seen != outputs:
            problems.append(f"gamma found {seen}x in request #{req.n}, the read's output {outputs}x")
    if not requests:
        problems.append("no model request in run 'prompt3'")
    elif not any("gamma" in ids for ids in already_lines(requests[0])):
        problems.append(f"no `already loaded:` line naming gamma in request #{requests[0].n}")
    if any(outputs > 1 for _, outputs in counts):
        report(convo.label)["notes"].append(
            f"client: --resume replays the read_file response {counts[0][1]}x (gamma inside it)")
    verdict(convo, "read, then --resume prompt routing gamma", problems,
            f"gamma/output copies {counts}")


def test_prompt_then_read_then_resume(prompt_then_read: Conversation) -> None:
    c = prompt_then_read
    first, resumed = c.requests("prompt_read"), c.requests("resumed")
    problems = run_problems(c, "prompt_read", "resumed")
    if not any(r.answer == "tool:read_file" for r in first):
        problems.append("the model never called read_file in run 'prompt_read'")
    problems += check_memory(first, "gamma") + check_memory(resumed, "gamma")
    verdict(c, "prompt routes gamma, read_file, --resume: gamma once", problems)


def test_link_writes_this_installations_hook(convo: Conversation) -> None:
    verdict(convo, "link (.gemini/settings.json)",
            link_problems(convo.workspace / ".gemini" / "settings.json", CLIENT))


def test_first_prompt_delivers_always_card_once(convo: Conversation) -> None:
    requests = convo.requests("opener")
    problems = run_problems(convo, "opener") + check_memory(requests, "overview") + \
        check_absent(requests, "alpha")
    verdict(convo, "SessionStart (silent) -> first BeforeAgent", problems)


def test_prompt_delivers_routed_card_once(convo: Conversation) -> None:
    requests = convo.requests("prompt1")
    problems = run_problems(convo, "prompt1") + check_memory(requests, "alpha") + \
        check_absent(requests, "beta")
    verdict(convo, "BeforeAgent", problems, f"{len(requests)} requests")


def test_resumed_prompt_sends_only_the_delta(convo: Conversation) -> None:
    problems = run_problems(convo, "prompt2") + delta_problems(convo, "prompt2")
    verdict(convo, "--resume: delta + already loaded", problems)


def test_read_file_under_applies_to_delivers_card(convo: Conversation) -> None:
    verdict(convo, "AfterTool read_file", path_problems(convo, "prompt2", "tool:read_file"))


def test_memory_comes_back_after_compress(convo: Conversation) -> None:
    reason = ("Gemini CLI 0.61.0 cannot be made to compress headless reliably: `-p /compress` "
              "fires PreCompress(manual) and starts the compression without awaiting it, then "
              "sends '/compress' to the model as a prompt, so the history may or may not be "
              "replaced (on this machine it was not, and engram's reset re-sent alpha: 2 copies)")
    report(convo.label)["events"]["compression"] = "SKIPPED (not reliably reachable headless)"
    pytest.skip(reason)


def test_resumed_history_keeps_first_turn(convo: Conversation) -> None:
    """The opener's turn (prompt and the always card delivered with it) survives the resume."""
    requests = convo.requests("prompt1")
    problems = check_memory(requests, "overview") + turn_problems(requests, ["Hello there."])
    verdict(convo, "--resume keeps the first turn and its memory", problems)


def turn_problems(requests: list, prompts: list[str]) -> list[str]:
    """Every earlier prompt is in every request exactly once: no user turn lost on resume."""
    problems = []
    for req in requests:
        for text in prompts:
            seen = sum(t.count(text) for t in user_texts(req))
            if seen != 1:
                problems.append(f"user turn {text!r} found {seen}x in request #{req.n}, expected 1x")
    return problems or ([] if requests else ["no model request to check"])


EDITED = {"alpha": "ALPHA-EDITED-5f3 Zebrafish records are validated three times now.",
          "overview": "OVERVIEW-EDITED-8a1 The orchard service moved its data to vault/."}


@pytest.fixture(scope="module")
def edited(version: str) -> Iterator[Conversation]:
    """Cards edited mid-session, then two resumes: the resume after the edit delivers the new
    always card (printed at SessionStart before, which made Gemini drop that turn)."""
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        c.run("first", prompt("Tell me about zebrafish.", resume=False))
        for card_id, body in EDITED.items():
            edit_card(c.workspace, card_id, body)
        c.run("second", prompt("Zebrafish again, please."))
        c.run("third", prompt("And quokka?"))
        yield c


@pytest.fixture(scope="module")
def proof(version: str) -> Iterator[Conversation]:
    with conversation(CLIENT, version) as c:
        setup(c)
        c.engram("config", "set", "proof", "compact")
        c.link()
        c.run("first", prompt("Hello there.", resume=False))
        c.run("second", prompt("Tell me about zebrafish."))
        c.run("third", prompt("And quokka?"))
        yield c


def test_resume_after_edit_keeps_every_turn(edited: Conversation) -> None:
    problems = run_problems(edited, "first", "second", "third")
    second, third = edited.requests("second"), edited.requests("third")
    for card_id, body in EDITED.items():
        problems += check_text(second + third, body, f"{card_id} (edited)")
    problems += check_memory(second + third, "overview") + check_memory(second + third, "alpha")
    problems += turn_problems(second, ["Tell me about zebrafish."])
    problems += turn_problems(third, ["Tell me about zebrafish.", "Zebrafish again, please."])
    verdict(edited, "--resume with an edited always card: no turn lost", problems)


def test_resume_in_proof_mode_keeps_every_turn(proof: Conversation) -> None:
    problems = run_problems(proof, "first", "second", "third")
    second, third = proof.requests("second"), proof.requests("third")
    problems += turn_problems(second, ["Hello there."])
    problems += turn_problems(third, ["Hello there.", "Tell me about zebrafish."])
    problems += check_memory(second + third, "overview") + check_memory(third, "alpha")
    if third and "Engram proof" not in third[0].body:
        problems.append(f"no proof line in request #{third[0].n}")
    verdict(proof, "--resume in proof mode: no turn lost", problems)


def test_replace_routes_on_the_code_it_writes(code: Conversation) -> None:
    """read_file of a file using both of delta's code names: nothing. replace whose new text
    uses them: delta once in every later request."""
    problems = code_problems(code, "read_edit", "tool:replace", CART, CART_NEW,
                             read_answer="tool:read_file")
    verdict(code, "read_file (no card), replace -> AfterTool routes on new_string", problems)


def test_write_file_routes_on_the_code_it_writes(code: Conversation) -> None:
    problems = code_problems(code, "write", "tool:write_file", RECEIPT, RECEIPT_TEXT)
    verdict(code, "write_file -> AfterTool routes on content", problems)


def test_doctor_reports_configured_and_observed(convo: Conversation) -> None:
    problems = doctor_problems(convo, ["SessionStart", "BeforeAgent", "AfterTool", "PreCompress"])
    verdict(convo, "doctor --json", problems)


def test_no_hook_timed_out(convo: Conversation, edited: Conversation, proof: Conversation,
                           prompt_then_read: Conversation) -> None:
    verdict(convo, "hook durations, no timeout",
            timing_problems(convo, edited, proof, prompt_then_read))


@pytest.fixture(scope="module")
def legacy(version: str) -> Iterator[Conversation]:
    """A project settings file with `enabled`, `disabled` and `notifications` inside `hooks`
    (their place before `hooksConfig`, which Gemini skips when it reads the events): link
    keeps them and Gemini runs engram's hooks beside them."""
    with conversation(CLIENT, version) as c:
        setup(c)
        settings = c.workspace / ".gemini" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps({"hooks": {"enabled": True, "disabled": [],
                                                  "notifications": False}}), encoding="utf-8")
        c.link()
        c.run("legacy", prompt("Hello there.", resume=False))
        yield c


def test_settings_inside_hooks_are_kept_and_the_hooks_run(legacy: Conversation) -> None:
    hooks = json.loads((legacy.workspace / ".gemini" / "settings.json").read_text())["hooks"]
    problems = [f"{key} not kept" for key, value in
                (("enabled", True), ("disabled", []), ("notifications", False))
                if hooks.get(key) != value]
    problems += run_problems(legacy, "legacy") + check_memory(legacy.requests("legacy"), "overview")
    verdict(legacy, "hooks.enabled/disabled/notifications kept, hooks run", problems)


def test_a_prompt_another_hook_blocks_loses_no_card(guarded: Conversation) -> None:
    """A prompt another BeforeAgent hook denies (not kept) or stops (kept without any hook's
    context): the card engram answered it with comes with the next prompt, once."""
    c = guarded
    problems = run_problems(c, "opener", "blocked", "after", "again", "denied", "after_denied",
                            "stopped", "after_stopped")
    for label in ("denied", "stopped"):
        if c.requests(label):
            problems.append(f"{label}: the blocked prompt reached the model")
    # Exit 2 is a failed hook to Gemini CLI 0.61.0, not a deny: the prompt goes on with alpha.
    problems += check_memory(c.requests("blocked"), "alpha")
    problems += check_memory(c.requests("after"), "alpha") + check_memory(c.requests("again"), "alpha")
    problems += check_memory(c.requests("after_denied"), "beta")
    problems += check_memory(c.requests("after_stopped"), "gamma")
    verdict(c, "a prompt the user's own hook blocks -> its card is there by the next", problems)


def test_a_tool_result_another_hook_blocks_loses_no_card(result_blocked: Conversation) -> None:
    """Gemini drops every hook's context with a tool result another AfterTool hook blocks:
    the card engram answered the read with comes with the next prompt routing it, once."""
    c = result_blocked
    problems = run_problems(c, "read", "after", "again")
    if "entry 00000" in "".join(t for r in c.requests("read") for t in user_texts(r)):
        problems.append("read: the blocked result reached the model")
    problems += check_absent(c.requests("read"), "gamma")  # dropped with the result
    problems += check_memory(c.requests("after"), "gamma") + check_memory(c.requests("again"), "gamma")
    verdict(c, "a tool result the user's own hook blocks -> its card comes with the next prompt",
            problems)


def test_project_and_global_link_each_body_once(both_links: Conversation) -> None:
    """Both entries answer each prompt; the second run's check of the first's answer (not yet
    written to the transcript) is no drop: each body once."""
    c = both_links
    problems = run_problems(c, "first", "second", "third")
    for label in ("first", "second", "third"):
        problems += check_memory(c.requests(label), "alpha") + check_memory(c.requests(label), "overview")
    problems += check_memory(c.requests("third"), "beta")
    verdict(c, "project and --global link: each body once", problems)


# Settings files Gemini CLI reads or stops on ("Please fix the configuration file(s)"): what
# `installer_helpers.host_reads` (the unit tests' oracle) says of each must be what Gemini
# does, and engram must link exactly those Gemini reads.
SETTINGS_SAMPLES = {
    "comments": '{\n  // mine "x"\n  "ui": {"hideTips": true} /* and // this */\n}\n',
    "a large number": '{"ui": {"hideTips": true}, "x": 1e400}\n',
    "a trailing comma": '{\n  "ui": {"hideTips": true},\n}\n',
    "a trailing comma in a list": '{"ui": {"hideTips": true}, "x": [1,]}\n',
    "a byte order mark": '\ufeff{"ui": {"hideTips": true}}\n',
    "NaN": '{"ui": {"hideTips": true}, "x": NaN}\n',
}


def test_engram_links_exactly_the_settings_gemini_reads(version: str) -> None:
    with conversation(CLIENT, version) as c:
        setup(c)
        # Not trusted: Gemini loads the settings, then stops at the trust check (no model call).
        env = {k: v for k, v in c.env.items() if k != "GEMINI_CLI_TRUST_WORKSPACE"}
        settings = c.workspace / ".gemini" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        problems = []
        for name, text in SETTINGS_SAMPLES.items():
            settings.write_bytes(text.encode("utf-8"))
            done = subprocess.run([str(c.binary), "-p", "hi"], cwd=c.workspace, env=env,
                                  capture_output=True, text=True, timeout=120,
                                  stdin=subprocess.DEVNULL)
            said = done.stdout + done.stderr
            rejected = "Please fix the configuration file" in said
            if not rejected and "trusted directory" not in said:
                problems.append(f"{name}: Gemini said neither: {said[-300:]!r}")
                continue
            oracle = host_accepts("gemini", text)
            linked = c.engram("link", "gemini", "--dry-run", check=False).returncode == 0
            if oracle == rejected:
                problems.append(f"{name}: Gemini {'rejects' if rejected else 'reads'} it, "
                                "the unit tests' oracle says otherwise")
            if linked == rejected:
                problems.append(f"{name}: Gemini {'rejects' if rejected else 'reads'} it, "
                                f"engram {'links' if linked else 'refuses'} it")
        verdict(c, "engram links exactly the settings files Gemini reads", problems)


# Settings files whose hooks Gemini CLI runs or not: engram links exactly those where the
# user's own hook beside engram's would run (Gemini reads past a setting of another type, but
# `hooksConfig` can turn every hook, or hooks of one name, off).
_HOOK = ('"hooks": {"BeforeAgent": [{"hooks": [{"type": "command", "name": "mine", '
         '"command": "touch {marker}"}]}]}')
HOOKS_OFF_SAMPLES = {
    "plain": ("{" + _HOOK + "}\n", True),
    "hooksConfig.enabled false": ('{"hooksConfig": {"enabled": false}, ' + _HOOK + "}\n", False),
    "hooksConfig.enabled as text": ('{"hooksConfig": {"enabled": "no"}, ' + _HOOK + "}\n", True),
    "a general of 1": ('{"general": 1, ' + _HOOK + "}\n", True),
}


def test_engram_links_exactly_the_settings_whose_hooks_gemini_runs(version: str) -> None:
    problems = []
    for name, (text, linkable) in HOOKS_OFF_SAMPLES.items():
        with conversation(CLIENT, version) as c:
            setup(c)
            marker = c.home / "the-users-hook-ran"
            settings = c.workspace / ".gemini" / "settings.json"
            settings.parent.mkdir(exist_ok=True)
            settings.write_text(text.replace("{marker}", str(marker)), encoding="utf-8")
            c.run(name.replace(" ", "-"), prompt("Hello there.", resume=False))
            ran = marker.exists()
            linked = c.engram("link", "gemini", "--dry-run", check=False).returncode == 0
            if ran != linkable:
                problems.append(f"{name}: Gemini {'runs' if ran else 'skips'} the user's hook")
            if linked != ran:
                problems.append(f"{name}: engram {'links' if linked else 'refuses'} it, Gemini "
                                f"{'runs' if ran else 'skips'} its hooks")
            # a hook named in hooksConfig.disabled is skipped: engram's are named engram
            settings.write_text('{"hooksConfig": {"disabled": ["engram"]}}\n', encoding="utf-8")
            if c.engram("link", "gemini", "--dry-run", check=False).returncode == 0:
                problems.append("a file disabling hooks named engram: engram links it")
    verdict(f"{CLIENT} {version}", "engram links exactly the settings whose hooks Gemini runs",
            problems)


STRIP_DRIVER = """
const __commonJS = (defs) => () => {
  const m = {exports: {}};
  Object.values(defs)[0](m.exports, m);
  return m.exports;
};
%s
const strip = require_strip_json_comments();
const inputs = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(inputs.map((text) => strip(text))));
"""


def test_the_unit_tests_reader_strips_comments_as_gemini_does(version: str) -> None:
    """`installer_helpers.host_reads` ports the strip-json-comments Gemini CLI bundles: on
    20,000 random texts of quotes, backslashes, slashes, stars and line breaks, the port and
    the bundled function (run by node) give the same text."""
    import random

    from installer_helpers import _strip_json_comments

    from . import clients

    try:
        binary, _printed = clients.ensure(CLIENT, version)
    except clients.Unavailable as exc:
        pytest.skip(f"e2e gemini {version}: {exc}")
    bundle = binary.resolve().parent
    start = "var require_strip_json_comments = __commonJS({"
    source = next((text for path in sorted(bundle.glob("*.js"))
                   for text in [path.read_text(encoding="utf-8")] if start in text), None)
    if source is None:
        pytest.fail(f"no strip-json-comments in {bundle}: Gemini CLI reads its settings "
                    "another way; check host_reads and hosts/gemini.yaml's syntax")
    begin = source.index(start)
    module = source[begin:source.index("\n});\n", begin) + 5]
    rng = random.Random(7)
    alphabet = ['"', "\\", "/", "*", "\n", "\r", " ", "a", "{", ",", "\u2028", "\x1c", "\ufeff"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
             for _ in range(20000)]
    done = subprocess.run(["node", "-e", STRIP_DRIVER % module], input=json.dumps(texts),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout)
    wrong = [(t, g) for t, g in zip(texts, theirs, strict=True) if _strip_json_comments(t) != g]
    assert not wrong, f"{len(wrong)} texts stripped otherwise, e.g. {wrong[:2]!r}"
