"""Claude Code, headless (`claude -p`), against the fake model, after a real `engram link claude`;
every conversation runs once per version of the matrix (pinned 2.1.197, latest 2.1.332).

Conversations, each in its own workspace and HOME:
- `convo` (default `hooks.path_rules: hook`): (1) a prompt routing alpha, whose turn spawns a
  subagent; (2) `--continue` with a prompt routing alpha and beta, whose turn reads a ledger
  file (gamma applies to ledger/**: PostToolUse); (3) a resumed prompt (gamma must still be
  there once); (4) `/compact`; (5) a prompt routing alpha again.
- `prompt_then_read`: a prompt routing gamma whose turn reads a ledger file, then a resumed
  prompt; `read_then_prompt`: one process reads the ledger and then gets a prompt routing
  gamma (two user messages on stdin, no resume between).
- `edited`: alpha and the always card edited between two prompts of one session.
- `parallel`: two sessions in one workspace at once.
- `global_link`: `link --global`: a read first, then, resumed, a prompt routing gamma.
- `both_links`: the project file and `--global` both linked (a team's committed link and the
  user's own): Claude runs engram twice per event; each body still arrives once.
- `guarded_twice`: both linked beside the user's own slow prompt guard: a blocked prompt's card
  comes with the next prompt, once.
- `code`: a card routed only by the code written: a Read of a file using its code names (nothing),
  an Edit whose new text uses them (the card once, also after `--continue`), a new session's Write.
- `native`: `hooks.path_rules: native` (opt-in rule files): a prompt routing gamma then a read;
  a new session reading first, then a resumed prompt routing gamma. Claude loads the rule file
  itself whatever a hook sent, so this mode is at least once, not exactly once (docs/hosts.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterator

import pytest
from installer_helpers import host_accepts

from .harness import (
    BODY,
    CART,
    CART_NEW,
    CART_OLD,
    CODE_BODY,
    LEDGER,
    RECEIPT,
    RECEIPT_TEXT,
    SUBAGENT_TASK,
    Conversation,
    add_code_card,
    add_prompt_guard,
    already_lines,
    check_absent,
    check_memory,
    check_text,
    code_problems,
    conversation,
    copies,
    delta_problems,
    doctor_host,
    doctor_problems,
    edit_card,
    link_problems,
    linked_twice,
    path_problems,
    report,
    run_problems,
    subagent_problems,
    timing_problems,
    user_texts,
    verdict,
)

CLIENT = "claude"


def setup(c: Conversation) -> None:
    (c.home / ".claude.json").write_text('{"hasCompletedOnboarding": true}', encoding="utf-8")
    c.env.update({
        "ANTHROPIC_BASE_URL": c.server.url,
        "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
    })


STREAM = ["--output-format", "stream-json", "--verbose", "--include-hook-events"]
TOOLS = ["--allowedTools", "Read", "Agent"]
CODE_TOOLS = ["--allowedTools", "Read", "Edit", "Write"]


def prompt(text: str, resume: bool = False, tools: list[str] = TOOLS) -> list[str]:
    # stream-json with hook events: every hook call's outcome, timed as it streams
    return ["-p", text, *(["--continue"] if resume else []), *tools, *STREAM]


def prompts_on_stdin(*texts: str, tools: list[str] = TOOLS) -> tuple[list[str], list[str]]:
    """One process, several user turns (stream-json input, each sent once the previous turn
    has its result): no resume between."""
    turns = [json.dumps({"type": "user", "message": {"role": "user", "content": t}}) + "\n"
             for t in texts]
    return ["-p", "--input-format", "stream-json", *tools, *STREAM], turns


@pytest.fixture(scope="module")
def convo(version: str) -> Iterator[Conversation]:
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        plan1 = c.server.plan("claude1", [("agent", SUBAGENT_TASK)])
        c.run("prompt1", prompt(f"{plan1} Tell me about zebrafish."))
        plan2 = c.server.plan("claude2", [("read", str(c.workspace / LEDGER))])
        c.run("prompt2", prompt(f"{plan2} Now zebrafish and quokka, please.", resume=True))
        c.run("prompt3", prompt("Quokka again.", resume=True))
        c.run("compact", ["-p", "/compact", "--continue", *STREAM])
        c.run("after", prompt("More on zebrafish.", resume=True))
        yield c


BLOCKER = "import sys; sys.stderr.write('not now'); sys.exit(2)"


@pytest.fixture(scope="module")
def guarded_twice(version: str) -> Iterator[Conversation]:
    """The project and --global both linked (Claude runs engram twice per prompt) beside the
    user's own UserPromptSubmit guard, a slow one (a policy service, a model asked): both
    engram runs answer before the guard blocks the prompt. Then the same topic again."""
    with linked_twice(CLIENT, version, setup) as c:
        settings = c.workspace / ".claude" / "settings.json"
        add_prompt_guard(settings, "UserPromptSubmit", "block")
        config = json.loads(settings.read_text(encoding="utf-8"))
        guard = config["hooks"]["UserPromptSubmit"][-1]["hooks"][0]
        guard["command"] = f"sleep 3; {guard['command']}"
        settings.write_text(json.dumps(config, indent=2), encoding="utf-8")
        c.run("hello", prompt("Hello there."))
        c.run("blocked", prompt("BLOCKME Tell me about zebrafish.", resume=True))
        c.run("after", prompt("Tell me about zebrafish.", resume=True))
        c.run("again", prompt("Zebrafish once more.", resume=True))
        yield c


@pytest.fixture(scope="module")
def cancelled(version: str) -> Iterator[Conversation]:
    """A compaction that does not happen: the user's own PreCompact hook blocks it (exit 2).
    The model keeps alpha's body. (`/compact` with too little to compact is another such case
    on 2.1.197, but what is too little differs by version: 2.1.332 compacts one prompt.)"""
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        c.run("prompt", prompt("Tell me about zebrafish."))
        settings = c.workspace / ".claude" / "settings.json"
        config = json.loads(settings.read_text(encoding="utf-8"))
        blocker = f"{sys.executable} -c \"{BLOCKER}\""
        config["hooks"]["PreCompact"].append({"hooks": [{"type": "command", "command": blocker}]})
        settings.write_text(json.dumps(config, indent=2), encoding="utf-8")
        c.run("compact_blocked", ["-p", "/compact", "--continue", *STREAM])
        c.run("after_blocked", prompt("Zebrafish once more.", resume=True))
        yield c


@pytest.fixture(scope="module")
def guarded(version: str) -> Iterator[Conversation]:
    """Prompts the user's own UserPromptSubmit hook blocks, each asked again after."""
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        add_prompt_guard(c.workspace / ".claude" / "settings.json", "UserPromptSubmit", "block")
        c.run("hello", prompt("Hello there."))
        c.run("blocked", prompt("BLOCKME Tell me about zebrafish.", resume=True))
        c.run("after", prompt("Tell me about zebrafish.", resume=True))
        c.run("again", prompt("Zebrafish once more.", resume=True))
        c.run("denied", prompt("DENYME Tell me about quokka.", resume=True))
        c.run("after_denied", prompt("Tell me about quokka.", resume=True))
        yield c


@pytest.fixture(scope="module")
def paths(version: str) -> Iterator[Conversation]:
    """Prompt then read (then a resume), and read then prompt in one process."""
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        plan = c.server.plan("claude_pr", [("read", str(c.workspace / LEDGER))])
        c.run("prompt_read", prompt(f"{plan} Tell me about ledgerkeeping."))
        c.run("resumed", prompt("And quokka?", resume=True))
        plan = c.server.plan("claude_rp", [("read", str(c.workspace / LEDGER))])
        argv, turns = prompts_on_stdin(f"{plan} Look at the data, please.",
                                       "Tell me about ledgerkeeping.")
        c.run("read_prompt", argv, turns=turns)
        yield c


EDITED = {"alpha": "ALPHA-EDITED-5f3 Zebrafish records are validated three times now.",
          "overview": "OVERVIEW-EDITED-8a1 The orchard service moved its data to vault/."}


@pytest.fixture(scope="module")
def edited(version: str) -> Iterator[Conversation]:
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        c.run("before", prompt("Tell me about zebrafish."))
        for card_id, body in EDITED.items():
            edit_card(c.workspace, card_id, body)
        c.run("after", prompt("Zebrafish again, please.", resume=True))
        yield c


LIVE_OVERVIEW = "OVERVIEW-LIVE-3d9 The orchard service now keeps its data under archive/."


@pytest.fixture(scope="module")
def edited_live(version: str) -> Iterator[Conversation]:
    """One process, two turns, no session start between: the first turn's model edits the
    always card (a Bash `cp` over it), the second turn's prompt routes only alpha."""
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        card = c.workspace / ".agents" / ".engram" / "overview.md"
        staged = c.workspace.parent / "overview-edited.md"
        staged.write_text(card.read_text(encoding="utf-8").replace(BODY["overview"], LIVE_OVERVIEW),
                          encoding="utf-8")
        plan = c.server.plan("claude_live", [("bash", f"cp {staged} {card}")])
        argv, turns = prompts_on_stdin(f"{plan} Tidy the overview, please.",
                                       "LIVE-TWO Tell me about zebrafish.",
                                       tools=["--allowedTools", "Read", "Bash"])
        c.run("live", argv, turns=turns)
        yield c


@pytest.fixture(scope="module")
def parallel(version: str) -> Iterator[Conversation]:
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        c.run_together({"one": prompt("SESSION-ONE Tell me about zebrafish."),
                        "two": prompt("SESSION-TWO Tell me about zebrafish and quokka.")})
        yield c


@pytest.fixture(scope="module")
def global_link(version: str) -> Iterator[Conversation]:
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link("--global")
        plan = c.server.plan("claude_g", [("read", str(c.workspace / LEDGER))])
        c.run("read", prompt(f"{plan} Look at the data, please."))
        c.run("prompt", prompt("Tell me about ledgerkeeping.", resume=True))
        yield c


@pytest.fixture(scope="module")
def both_links(version: str) -> Iterator[Conversation]:
    with linked_twice(CLIENT, version, setup) as c:
        c.run("first", prompt("Tell me about zebrafish."))
        c.run("again", prompt("Zebrafish again.", resume=True))
        yield c


@pytest.fixture(scope="module")
def native(version: str) -> Iterator[Conversation]:
    with conversation(CLIENT, version) as c:
        setup(c)
        # A CLAUDE.md fires InstructionsLoaded on every version; it must not pass for a rule load.
        (c.workspace / "CLAUDE.md").write_text("Project notes for the agent.\n", encoding="utf-8")
        c.engram("config", "set", "hooks.path_rules", "native")
        c.link()
        c.run("hello", prompt("Hello there."))  # loads CLAUDE.md, no rule file
        c.notes.append(json.dumps((doctor_host(c) or {}).get("observed") or {}))
        plan = c.server.plan("claude_n1", [("read", str(c.workspace / LEDGER))])
        c.run("prompt_read", prompt(f"{plan} Tell me about ledgerkeeping."))
        plan = c.server.plan("claude_n2", [("read", str(c.workspace / LEDGER))])
        c.run("read", prompt(f"{plan} Look at the data, please."))
        c.run("prompt", prompt("Tell me about ledgerkeeping.", resume=True))
        yield c


@pytest.fixture(scope="module")
def code(version: str) -> Iterator[Conversation]:
    """Code written through Write and Edit routes the card naming what it uses: a read of
    src/cart.ts (which uses both names) then an Edit of it; a new session writing a new file;
    each session's turn then ends, and a resumed prompt must not bring the card again."""
    with conversation(CLIENT, version) as c:
        setup(c)
        add_code_card(c.workspace)
        c.link()
        cart = str(c.workspace / CART)
        plan = c.server.plan("claude_edit", [("read", cart), ("edit", cart, CART_OLD, CART_NEW)])
        c.run("read_edit", prompt(f"{plan} Tidy the cart total, please.", tools=CODE_TOOLS))
        c.run("resumed", prompt("Thanks, anything else?", resume=True, tools=CODE_TOOLS))
        plan = c.server.plan("claude_write", [("write", str(c.workspace / RECEIPT), RECEIPT_TEXT)])
        c.run("write", prompt(f"{plan} Add a receipt line helper, please.", tools=CODE_TOOLS))
        yield c


# --------------------------------------------------------------------------- default mode
def test_link_writes_this_installations_hook(convo: Conversation) -> None:
    settings = convo.workspace / ".claude" / "settings.json"
    problems = link_problems(settings, CLIENT)
    entries = json.loads(settings.read_text(encoding="utf-8")).get("hooks", {})
    if "PostToolUse" not in entries or "PreToolUse" in entries:
        problems.append(f"the path trigger is not PostToolUse alone: {sorted(entries)}")
    if (convo.workspace / ".claude" / "rules" / "engram").exists():
        problems.append("native rules folder written in the default (hook) mode")
    verdict(convo, "link (project settings, PostToolUse path trigger)", problems)


def test_prompt_delivers_routed_card_once(convo: Conversation) -> None:
    requests = convo.requests("prompt1")
    problems = run_problems(convo, "prompt1") + check_memory(requests, "alpha") + \
        check_memory(requests, "overview") + check_absent(requests, "beta")
    verdict(convo, "SessionStart + UserPromptSubmit", problems, f"{len(requests)} requests")


def test_resumed_prompt_sends_only_the_delta(convo: Conversation) -> None:
    problems = run_problems(convo, "prompt2") + delta_problems(convo, "prompt2")
    verdict(convo, "--continue: delta + already loaded", problems)


def test_read_under_applies_to_delivers_card(convo: Conversation) -> None:
    verdict(convo, "Read -> PostToolUse", path_problems(convo, "prompt2", "tool:Read"))


def test_path_card_survives_resume(convo: Conversation) -> None:
    requests = convo.requests("prompt3")
    problems = run_problems(convo, "prompt3") + check_memory(requests, "gamma") + \
        check_memory(requests, "beta") + check_memory(requests, "alpha")
    verdict(convo, "--continue after a read: path card kept once", problems)


def test_subagent_gets_session_context(convo: Conversation) -> None:
    verdict(convo, "SubagentStart", subagent_problems(convo, "prompt1"))


def test_a_subagents_context_is_written_to_its_own_transcript(convo: Conversation) -> None:
    """Where the client writes the subagent's context: its own file, its lines marked as a
    sidechain; the session's transcript, which engram reads to learn whether a blocked
    prompt's cards reached the model, holds none of it (tests/test_model_based.py writes
    it so)."""
    problems: list[str] = []
    files = sorted((convo.home / ".claude" / "projects").rglob("*.jsonl"))
    own = [f for f in files if f.parent.name == "subagents"]
    main = [f for f in files if f.parent.name != "subagents"]

    def subagent_contexts(path: Path) -> list[dict]:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip()]
        return [line for line in lines
                if (line.get("attachment") or {}).get("hookEvent") == "SubagentStart"]

    if not own:
        problems.append(f"no subagent transcript among {[str(f) for f in files]}")
    found = [line for f in own for line in subagent_contexts(f)]
    if not found:
        problems.append("the subagent's transcript holds no SubagentStart context")
    elif not all(line.get("isSidechain") is True and line.get("agentId") for line in found):
        problems.append("a subagent's context line is not marked isSidechain with its agentId")
    problems += [f"{f.name} (the session's) holds the subagent's context"
                 for f in main if subagent_contexts(f)]
    verdict(convo, "SubagentStart context: the subagent's own transcript", problems)


def test_memory_comes_back_after_compaction(convo: Conversation) -> None:
    problems = run_problems(convo, "compact", "after")
    if not convo.requests("compact", compaction=True):
        problems.append("no compaction request reached the model")
    after = convo.requests("after")
    problems += check_memory(after, "overview") + check_memory(after, "alpha")
    verdict(convo, "/compact -> PreCompact reset, memory back", problems)


def test_a_compaction_that_does_not_happen_resets_nothing(cancelled: Conversation) -> None:
    """PreCompact fires, the compaction does not happen ("Compaction blocked by PreCompact
    hook"), no SessionStart(compact) follows: the model still holds alpha, which is listed,
    not sent again."""
    c = cancelled
    problems = run_problems(c, "prompt", "compact_blocked", "after_blocked")
    for label in ("compact_blocked",):
        if c.requests(label, compaction=True):
            problems.append(f"{label}: a compaction request reached the model")
        fired = [row.get("event") for row in c.runs[label].hooks]
        if "PreCompact" not in fired:
            problems.append(f"{label}: PreCompact did not fire ({fired})")
    for label in ("after_blocked",):
        requests = c.requests(label)
        problems += check_memory(requests, "alpha") + check_memory(requests, "overview")
        if requests and ["alpha"] not in already_lines(requests[-1]):
            problems.append(f"{label}: alpha not listed as already loaded")
    verdict(c, "cancelled /compact -> no reset, nothing sent twice", problems)


def test_a_prompt_another_hook_blocks_loses_no_card(guarded: Conversation) -> None:
    """Claude drops a blocked prompt with every hook's context: the card engram answered it
    with comes with the next prompt, once, and is listed after that."""
    c = guarded
    problems = run_problems(c, "hello", "after", "again", "after_denied")
    for label in ("blocked", "denied"):
        if c.requests(label):
            problems.append(f"{label}: the blocked prompt reached the model")
    problems += check_memory(c.requests("after"), "alpha")
    again = c.requests("again")
    problems += check_memory(again, "alpha")
    if again and ["alpha"] not in already_lines(again[-1]):
        problems.append("again: alpha not listed as already loaded")
    problems += check_memory(c.requests("after_denied"), "beta")
    verdict(c, "a prompt the user's own hook blocks -> its card comes with the next", problems)


def test_a_prompt_blocked_beside_two_engram_entries_loses_no_card(
        guarded_twice: Conversation) -> None:
    """Both engram entries answer the blocked prompt; the second must not take the first's
    answer for one the host kept: the card comes with the next prompt, once."""
    c = guarded_twice
    problems = run_problems(c, "hello", "after", "again")
    if c.requests("blocked"):
        problems.append("blocked: the blocked prompt reached the model")
    problems += check_memory(c.requests("after"), "alpha") + check_memory(c.requests("again"), "alpha")
    problems += check_memory(c.requests("after"), "overview")
    verdict(c, "a prompt the user's hook blocks, engram linked twice -> its card comes next", problems)


def test_doctor_reports_configured_and_observed(convo: Conversation) -> None:
    problems = doctor_problems(convo, ["SessionStart", "UserPromptSubmit", "PostToolUse",
                                       "PreCompact", "SubagentStart"])
    verdict(convo, "doctor --json", problems)


def test_no_hook_timed_out(convo: Conversation, paths: Conversation, edited: Conversation,
                           parallel: Conversation, global_link: Conversation,
                           native: Conversation) -> None:
    verdict(convo, "hook durations, no timeout",
            timing_problems(convo, paths, edited, parallel, global_link, native))


# --------------------------------------------------------------------------- prompt + path
def test_prompt_then_read_then_resume(paths: Conversation) -> None:
    """The prompt delivers gamma; the read under its applies_to adds nothing; the resumed
    prompt still sees it once."""
    first, resumed = paths.requests("prompt_read"), paths.requests("resumed")
    problems = run_problems(paths, "prompt_read", "resumed")
    if not any(r.answer == "tool:Read" for r in first):
        problems.append("the model never called Read in run 'prompt_read'")
    problems += check_memory(first, "gamma") + check_memory(resumed, "gamma")
    verdict(paths, "prompt routes gamma, Read, --continue: gamma once", problems,
            f"copies {copies(first + resumed, 'gamma')}")


def test_read_then_prompt_in_one_process(paths: Conversation) -> None:
    """Read first (PostToolUse delivers gamma), then a prompt routing gamma without a resume:
    not sent again, listed as already loaded."""
    requests = paths.requests("read_prompt")
    problems = run_problems(paths, "read_prompt")
    problems += path_problems(paths, "read_prompt", "tool:Read")
    second = [r for r in requests if any("ledgerkeeping" in t for t in user_texts(r))]
    if not second:
        problems.append("the second user message never reached the model")
    elif not any("gamma" in ids for ids in already_lines(second[0])):
        problems.append(f"no `already loaded:` line naming gamma in request #{second[0].n}")
    verdict(paths, "Read, then prompt routing gamma (no resume)", problems,
            f"copies {copies(requests, 'gamma')}")


def test_read_then_resumed_prompt_global(global_link: Conversation) -> None:
    c = global_link
    settings = c.home / ".claude" / "settings.json"
    problems = run_problems(c, "read", "prompt") + link_problems(settings, CLIENT, personal=True)
    if (c.workspace / ".claude" / "settings.json").exists():
        problems.append("--global link wrote a project settings file")
    problems += path_problems(c, "read", "tool:Read")
    later = c.requests("prompt")
    problems += check_memory(later, "gamma") + check_memory(later, "overview")
    if later and not any("gamma" in ids for ids in already_lines(later[0])):
        problems.append(f"no `already loaded:` line naming gamma in request #{later[0].n}")
    problems += doctor_problems(c, ["SessionStart", "UserPromptSubmit", "PostToolUse"], scope="global")
    verdict(c, "--global: Read, --continue prompt routing gamma", problems)


def test_project_and_global_link_each_body_once(both_links: Conversation) -> None:
    """Both entries run on every event with the same payload; the second run of the session
    start is not a second reset (before: overview twice in every request of the session)."""
    c = both_links
    problems = run_problems(c, "first", "again")
    for label in ("first", "again"):
        problems += check_memory(c.requests(label), "overview") + check_memory(c.requests(label), "alpha")
    verdict(c, "project and --global link: every body once", problems)


# --------------------------------------------------------------------------- edits, sessions
def test_edited_cards_arrive_once_in_their_new_form(edited: Conversation) -> None:
    after = edited.requests("after")
    problems = run_problems(edited, "before", "after")
    for card_id, body in EDITED.items():
        problems += check_text(after, body, f"{card_id} (edited)")
    # the old text stays in the history once (it was sent before the edit), never twice
    problems += check_memory(after, "alpha") + check_memory(after, "overview")
    verdict(edited, "routed + always card edited mid-session", problems)


def test_an_always_card_edited_mid_session_arrives_with_the_next_prompt(
        edited_live: Conversation) -> None:
    """No session start between the edit and the next prompt (one process): the prompt
    brings the always card's new body, once; the old one stays in the history, once."""
    requests = edited_live.requests("live")
    problems = run_problems(edited_live, "live")
    if not any(r.answer == "tool:Bash" for r in requests):
        problems.append("the model never called Bash in run 'live'")
    second = edited_live.requests("live", tagged="LIVE-TWO")
    problems += check_text(second, LIVE_OVERVIEW, "overview (edited)")
    problems += check_memory(second, "overview") + check_memory(second, "alpha")
    verdict(edited_live, "always card edited mid-session, no start between", problems)


def test_parallel_sessions_each_get_their_memory(parallel: Conversation) -> None:
    problems = run_problems(parallel, "one", "two")
    one = parallel.requests("one", tagged="SESSION-ONE")
    two = parallel.requests("two", tagged="SESSION-TWO")
    problems += check_memory(one, "alpha") + check_memory(one, "overview") + check_absent(one, "beta")
    problems += check_memory(two, "alpha") + check_memory(two, "beta") + check_memory(two, "overview")
    verdict(parallel, "two sessions at once in one workspace", problems)


# --------------------------------------------------------------------------- native mode
def test_native_mode_is_at_least_once(native: Conversation) -> None:
    """Native rule files: Claude loads the rule whenever a matching file is read, whatever a
    hook already sent, and 2.1.332 no longer tells the hook (no InstructionsLoaded for a rule
    in a sub-folder). Never lost; at most one extra copy (documented in docs/hosts.md)."""
    c = native
    problems = run_problems(c, "hello", "prompt_read", "read", "prompt")
    counts = {}
    for label in ("prompt_read", "read", "prompt"):
        requests = c.requests(label)
        counts[label] = copies(requests, "gamma")
        reads = [r for r in requests if r.answer == "tool:Read"]
        after = [r for r in requests if not reads or r.n > reads[0].n]
        problems += [f"gamma lost in request #{r.n} ({label})" for r in after if not r.count(BODY["gamma"])]
        problems += [f"gamma {n}x in one request ({label})" for n in counts[label] if n > 2]
    report(c.label)["notes"].append(f"native mode gamma copies per request: {counts}")
    verdict(c, "path_rules: native: never lost, at most 2 copies", problems, json.dumps(counts))


def test_native_doctor_counts_only_rule_loads(native: Conversation) -> None:
    """doctor shows InstructionsLoaded observed only when an engram rule file loaded; a
    CLAUDE.md load fires the same event and must not pass for one (checked after a first
    session that loaded CLAUDE.md and no rule, then at the end)."""
    early = json.loads(native.notes[0]).get("InstructionsLoaded") or {}
    problems = [f"after a session that loaded only CLAUDE.md, doctor shows InstructionsLoaded "
                f"observed: {early}"] if early.get("count") else []
    host = doctor_host(native)
    problems += [] if host else ["doctor --json has no claude entry"]
    fired = ((host or {}).get("observed") or {}).get("InstructionsLoaded") or {}
    usage = native.state_dir / "logs" / "usage.log"
    loaded = usage.exists() and "native rule loaded" in usage.read_text(encoding="utf-8")
    if bool(fired.get("count")) != loaded:
        problems.append(f"doctor InstructionsLoaded observed={fired} but an engram rule "
                        f"{'did' if loaded else 'did not'} load")
    verdict(native, "doctor: InstructionsLoaded per rule file", problems,
            "rule loads seen" if loaded else "no rule load fired")



# --------------------------------------------------------------------------- written code
def test_edit_routes_on_the_code_it_writes(code: Conversation) -> None:
    """Read of a file using both of delta's code names: nothing. Edit whose new text uses
    them: delta once in every later request, and once after a resume."""
    problems = run_problems(code, "resumed") + code_problems(
        code, "read_edit", "tool:Edit", CART, CART_NEW, read_answer="tool:Read")
    problems += check_text(code.requests("resumed"), CODE_BODY, "delta (resumed)")
    verdict(code, "Read (no card), Edit -> PostToolUse routes on new_string", problems)


def test_write_routes_on_the_code_it_writes(code: Conversation) -> None:
    problems = code_problems(code, "write", "tool:Write", RECEIPT, RECEIPT_TEXT)
    verdict(code, "Write -> PostToolUse routes on content", problems)


# settings.json files whose hooks Claude Code runs, or none of them (it checks the settings'
# types): what `installer_helpers.host_reads` (the unit tests' oracle) says of each must be
# what Claude Code does, and engram must link exactly those it reads. Where the two versions
# of the matrix differ (2.1.332 reads past a handler 2.1.197 rejects), the oracle and engram
# follow the stricter: a file one supported version ignores is refused.
_PROMPT_HOOK = ('"hooks": {"UserPromptSubmit": [{%s"hooks": [{"type": "command", '
                '"command": "touch {marker}"%s}]}]%s}')


def _settings(top: str = "", group: str = "", handler: str = "", other: str = "") -> str:
    return "{" + top + _PROMPT_HOOK % (group, handler, other) + "}\n"


def _beside(handler: str) -> str:
    return _settings(other=', "Stop": [{"hooks": [' + handler + ']}]')


SETTINGS_SAMPLES = {
    "plain": _settings(),
    "a key Claude Code does not know": _settings('"x": 1, "general": {"a": [1e400]}, '),
    "a $schema": _settings('"$schema": "https://json.schemastore.org/claude-code-settings.json", '),
    "a model that is a number": _settings('"model": 1, '),
    "a model of null": _settings('"model": null, '),
    "a permission rule that is no list": _settings('"permissions": {"allow": "Bash"}, '),
    "a matcher of null": _settings(group='"matcher": null, '),
    "a matcher that is a number": _settings(group='"matcher": 1, '),
    "other keys of a group and a handler": _settings(group='"x": [1], "description": 1, ',
                                                     handler=', "name": 1, "env": {"A": 1}'),
    "a timeout of 10.5": _settings(handler=', "timeout": 10.5'),
    "a timeout of 0": _settings(handler=', "timeout": 0'),
    "a timeout of null": _settings(handler=', "timeout": null'),
    "a timeout as text": _settings(handler=', "timeout": "10"'),
    "an async as text": _settings(handler=', "async": "yes"'),
    "a statusMessage of null": _settings(handler=', "statusMessage": null'),
    "a prompt handler": _beside('{"type": "prompt", "prompt": "x"}'),
    "a handler type Claude Code does not know": _beside('{"type": "Command", "command": "true"}'),
    "a command handler with no command": _beside('{"type": "command"}'),
    "env as text": _settings('"env": "x", '),
    "env values that are no strings": _settings('"env": {"A": 1}, '),
    "cleanupPeriodDays of 0": _settings('"cleanupPeriodDays": 0, '),
    "cleanupPeriodDays of 10.0": _settings('"cleanupPeriodDays": 10.0, '),
    "includeCoAuthoredBy as text": _settings('"includeCoAuthoredBy": "yes", '),
    "verbose of null": _settings('"verbose": null, '),
    "statusLine with no command": _settings('"statusLine": {"type": "command"}, '),
    "a permission mode Claude Code does not know": _settings(
        '"permissions": {"defaultMode": "bogus"}, '),
    "a forceLoginMethod it does not know": _settings('"forceLoginMethod": "x", '),
    "disableAllHooks": _settings('"disableAllHooks": true, '),
    "a handler's if that is a number": _settings(handler=', "if": 1'),
    "a handler's shell it does not know": _settings(handler=', "shell": "fish"'),
}
# What 2.1.332 reads and 2.1.197 ignores (the oracle and engram refuse them).
STRICTER_BEFORE = {"a handler type Claude Code does not know", "a command handler with no command"}


def test_engram_links_exactly_the_settings_claude_reads(version: str) -> None:
    problems = []
    for name, text in SETTINGS_SAMPLES.items():
        with conversation(CLIENT, version) as c:
            setup(c)
            marker = c.home / "the-users-hook-ran"
            settings = c.workspace / ".claude" / "settings.json"
            settings.parent.mkdir(exist_ok=True)
            content = text.replace("{marker}", str(marker))
            settings.write_text(content, encoding="utf-8")
            c.run(name.replace(" ", "-"), prompt("Hello there."))
            ran = marker.exists()
            oracle = host_accepts("claude", content)
            linked = c.engram("link", "claude", "--dry-run", check=False).returncode == 0
            if oracle != ran and not (ran and name in STRICTER_BEFORE):
                problems.append(f"{name}: Claude Code {'runs' if ran else 'ignores'} its hooks, "
                                "the unit tests' oracle says otherwise")
            if linked != oracle:
                problems.append(f"{name}: engram {'links' if linked else 'refuses'} it, the "
                                f"oracle says Claude Code {'reads' if oracle else 'ignores'} it")
            verdict(c, f"settings.json with {name}: engram links it exactly when Claude Code "
                    "reads it", problems)
