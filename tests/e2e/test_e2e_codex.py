"""Codex CLI, headless (`codex exec`, `codex exec resume --last`), against the fake model's
Responses API, after a real `engram link codex`.

Conversation: (1) a prompt routing alpha, whose turn spawns a subagent and waits for it;
(2) resume with a prompt routing alpha and beta, whose turn edits the ledger with apply_patch
(gamma applies to ledger/**: PreToolUse on apply_patch); (3) resume with a prompt routing
nothing, where the server reports 150k input tokens once so Codex auto-compacts mid-turn;
(4) resume with a prompt routing alpha again.

Another conversation, `code`: a card routed only by the code written (a shell `cat` of a file
using its code names, then an apply_patch Update File adding lines that use them, then a
resume; a new session's Add File; a new session with a model offered no apply_patch tool
applying an Add File through the shell; a new session whose one patch adds a note, then a
source file).

Two Codex details shape the run: `--dangerously-bypass-hook-trust` (headless `codex exec` runs
no project hook without persisted trust), and the model name: a name Codex does not know gets
fallback metadata that offers the multi-agent tools directly but no apply_patch, while the
catalog model gpt-5.5 offers apply_patch and defers the agent tools behind tool_search. So
run 2 is made with gpt-5.5, the others with the unknown name.
"""

from __future__ import annotations

from typing import Iterator

import pytest
from installer_helpers import host_accepts

from .harness import (
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
    delta_problems,
    doctor_problems,
    link_problems,
    path_problems,
    run_problems,
    subagent_problems,
    timing_problems,
    verdict,
)

CLIENT = "codex"
MODEL = "gpt-5.1-codex"      # unknown to 0.171.0: fallback metadata, multi_agent_v1 tools
PATCH_MODEL = "gpt-5.5"      # in 0.171.0's catalog: freeform apply_patch
PATCH = (f"*** Begin Patch\n*** Update File: {LEDGER}\n@@\n 2024-01-01 entry 00000 amount 0\n"
         "+2024-01-01 entry 99999 amount 5\n*** End Patch\n")


# An Update File of CART whose added lines use both of delta's code names (so do the removed
# ones, which must not count), and an Add File of a new source file that does.
CART_PATCH = (f"*** Begin Patch\n*** Update File: {CART}\n@@\n"
              + "".join(f"-{line}\n" for line in CART_OLD.splitlines())
              + "".join(f"+{line}\n" for line in CART_NEW.splitlines()) + "*** End Patch\n")
RECEIPT_PATCH = (f"*** Begin Patch\n*** Add File: {RECEIPT}\n"
                 + "".join(f"+{line}\n" for line in RECEIPT_TEXT.splitlines()) + "*** End Patch\n")
# One patch, two files: a note first, then a source file whose lines use both names.
INVOICE, INVOICE_TEXT = "src/invoice.ts", RECEIPT_TEXT.replace("receiptLine", "invoiceLine")
TWO_FILE_PATCH = ("*** Begin Patch\n*** Add File: notes/invoices.md\n+Invoice lines, one per item.\n"
                  f"*** Add File: {INVOICE}\n"
                  + "".join(f"+{line}\n" for line in INVOICE_TEXT.splitlines()) + "*** End Patch\n")
# The same kind of Add File applied through the shell, as a model Codex offers no apply_patch
# tool (any model outside its catalog, MODEL here) does: Codex runs it, the hook sees a Bash call.
REFUND, REFUND_TEXT = "src/refund.ts", RECEIPT_TEXT.replace("receiptLine", "refundLine")
SHELL_PATCH = (f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {REFUND}\n"
               + "".join(f"+{line}\n" for line in REFUND_TEXT.splitlines()) + "*** End Patch\nEOF\n")


def setup(c: Conversation) -> None:
    codex_home = c.home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(f"""model = "{MODEL}"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{c.server.url}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"

[features]
hooks = true

[analytics]
enabled = false

[projects."{c.workspace}"]
trust_level = "trusted"
""", encoding="utf-8")
    c.env.update({"CODEX_HOME": str(codex_home), "FAKE_API_KEY": "dummy"})


def exec_args(text: str, *extra: str, resume: bool = False) -> list[str]:
    return ["exec", *(["resume", "--last"] if resume else []), "--dangerously-bypass-hook-trust",
            "--skip-git-repo-check", *extra, text]


@pytest.fixture(scope="module")
def convo(version: str) -> Iterator[Conversation]:
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        plan1 = c.server.plan("codex1", [("agent", SUBAGENT_TASK), ("wait",)])
        c.run("prompt1", exec_args(f"{plan1} Tell me about zebrafish."))
        plan2 = c.server.plan("codex2", [("patch", PATCH)])
        c.run("prompt2", exec_args(f"{plan2} Now zebrafish and quokka, please.", "-c",
                                   f'model="{PATCH_MODEL}"', resume=True))
        c.run("prompt2b", exec_args("Tell me about ledgerkeeping.", resume=True))
        plan3 = c.server.plan("codex3", [("bash", "echo scripted-tool-ran")])
        c.server.big_usage(150_000, count=1)
        c.run("compact", exec_args(f"{plan3} Keep going.", "-c",
                                   "model_auto_compact_token_limit=100000", resume=True))
        c.run("after", exec_args("More on zebrafish.", resume=True))
        yield c


@pytest.fixture(scope="module")
def guarded(version: str) -> Iterator[Conversation]:
    """Prompts the user's own UserPromptSubmit hook blocks, each asked again after."""
    with conversation(CLIENT, version) as c:
        setup(c)
        c.link()
        add_prompt_guard(c.workspace / ".codex" / "hooks.json", "UserPromptSubmit", "block")
        c.run("hello", exec_args("Hello there."))
        c.run("blocked", exec_args("BLOCKME Tell me about zebrafish.", resume=True))
        c.run("after", exec_args("Tell me about zebrafish.", resume=True))
        c.run("again", exec_args("Zebrafish once more.", resume=True))
        c.run("denied", exec_args("DENYME Tell me about quokka.", resume=True))
        c.run("after_denied", exec_args("Tell me about quokka.", resume=True))
        yield c


@pytest.fixture(scope="module")
def code(version: str) -> Iterator[Conversation]:
    """Code written through apply_patch routes the card naming what it uses: a shell `cat`
    of src/cart.ts (which uses both names) then an Update File of it, then a resume; a new
    session adding a new file."""
    with conversation(CLIENT, version) as c:
        setup(c)
        add_code_card(c.workspace)
        c.link()
        model = ("-c", f'model="{PATCH_MODEL}"')
        plan = c.server.plan("codex_edit", [("bash", f"cat {CART}"), ("patch", CART_PATCH)])
        c.run("read_edit", exec_args(f"{plan} Tidy the cart total, please.", *model))
        c.run("resumed", exec_args("Thanks, anything else?", *model, resume=True))
        plan = c.server.plan("codex_add", [("patch", RECEIPT_PATCH)])
        c.run("add", exec_args(f"{plan} Add a receipt line helper, please.", *model))
        plan = c.server.plan("codex_two", [("patch", TWO_FILE_PATCH)])
        c.run("two_files", exec_args(f"{plan} Add an invoice line helper, please.", *model))
        plan = c.server.plan("codex_shell", [("bash", SHELL_PATCH)])
        c.run("shell", exec_args(f"{plan} Add a refund line helper, please."))
        yield c


def test_link_writes_this_installations_hook(convo: Conversation) -> None:
    verdict(convo, "link (.codex/hooks.json)", link_problems(convo.workspace / ".codex" / "hooks.json", CLIENT))


def test_prompt_delivers_routed_card_once(convo: Conversation) -> None:
    requests = convo.requests("prompt1")
    problems = run_problems(convo, "prompt1") + check_memory(requests, "alpha") + \
        check_memory(requests, "overview") + check_absent(requests, "beta")
    verdict(convo, "SessionStart + UserPromptSubmit", problems, f"{len(requests)} requests")


def test_resumed_prompt_sends_only_the_delta(convo: Conversation) -> None:
    problems = run_problems(convo, "prompt2") + delta_problems(convo, "prompt2")
    verdict(convo, "resume: delta + already loaded", problems)


def test_apply_patch_under_applies_to_delivers_card(convo: Conversation) -> None:
    problems = path_problems(convo, "prompt2", "tool:apply_patch")
    if "entry 99999" not in (convo.workspace / LEDGER).read_text(encoding="utf-8"):
        problems.append("the patch was not applied")
    verdict(convo, "PreToolUse apply_patch", problems)


def test_patch_then_resumed_prompt_routing_the_card(convo: Conversation) -> None:
    """gamma came with the patch; a resumed prompt routing it sends it no more."""
    requests = convo.requests("prompt2b")
    problems = run_problems(convo, "prompt2b") + check_memory(requests, "gamma")
    if requests and not any("gamma" in ids for ids in already_lines(requests[0])):
        problems.append(f"no `already loaded:` line naming gamma in request #{requests[0].n}")
    verdict(convo, "apply_patch, then resume prompt routing gamma", problems)


def test_subagent_gets_session_context(convo: Conversation) -> None:
    problems = subagent_problems(convo, "prompt1")
    for req in convo.requests("prompt1", subagent=True):
        for ids in already_lines(req):
            if "overview" in ids:  # an always card is never listed after it was delivered
                problems.append(f"subagent request #{req.n} lists the always card: already loaded: {ids}")
    verdict(convo, "SubagentStart (+ subagent's UserPromptSubmit)", problems)


def test_memory_comes_back_after_compaction(convo: Conversation) -> None:
    problems = run_problems(convo, "compact", "after")
    compaction = convo.requests("compact", compaction=True)
    if not compaction:
        problems.append("no compaction request reached the model")
    else:
        later = [r for r in convo.requests("compact") if r.n > compaction[0].n]
        # SessionStart(source=compact) re-delivers the always card into the next request
        problems += check_memory(later[:1], "overview")
    after = convo.requests("after")
    problems += check_memory(after, "overview") + check_memory(after, "alpha")
    verdict(convo, "auto-compaction -> reset, memory back", problems)


def test_doctor_reports_configured_and_observed(convo: Conversation) -> None:
    problems = doctor_problems(convo, ["SessionStart", "UserPromptSubmit", "PreToolUse",
                                       "PreCompact", "SubagentStart"])
    verdict(convo, "doctor --json", problems)


def test_no_hook_timed_out(convo: Conversation) -> None:
    verdict(convo, "hook durations, no timeout", timing_problems(convo))


def test_patch_update_routes_on_the_lines_it_adds(code: Conversation) -> None:
    """A shell read of a file using both of delta's code names: nothing. An Update File
    adding lines that use them: delta once in every later request, and once after a resume."""
    problems = run_problems(code, "resumed") + code_problems(
        code, "read_edit", "tool:apply_patch", CART, CART_NEW, read_answer="tool:exec_command")
    problems += check_text(code.requests("resumed"), CODE_BODY, "delta (resumed)")
    verdict(code, "apply_patch Update File -> PreToolUse routes on added lines", problems)


def test_patch_add_file_routes_on_its_lines(code: Conversation) -> None:
    problems = code_problems(code, "add", "tool:apply_patch", RECEIPT, RECEIPT_TEXT)
    verdict(code, "apply_patch Add File -> PreToolUse routes on its lines", problems)


def test_patch_through_the_shell_routes_on_its_lines(code: Conversation) -> None:
    """exec_command `apply_patch <<'EOF'`: Codex applies it and fires PreToolUse as Bash."""
    problems = code_problems(code, "shell", "tool:exec_command", REFUND, REFUND_TEXT)
    verdict(code, "apply_patch through the shell -> PreToolUse (Bash) routes on its lines", problems)


def test_patch_of_two_files_routes_on_the_source_files_lines(code: Conversation) -> None:
    """A patch adding a note and then a source file: the source file's lines are code
    written, whatever file the patch names first."""
    problems = code_problems(code, "two_files", "tool:apply_patch", INVOICE, INVOICE_TEXT)
    verdict(code, "apply_patch of a note and a source file -> routes on the source's lines", problems)


def test_a_prompt_another_hook_blocks_loses_no_card(guarded: Conversation) -> None:
    """A prompt another UserPromptSubmit hook blocks (exit 2 with a reason, `decision: block`):
    Codex keeps what engram answered it with (observed on 0.171.0), so the card is in the
    conversation once by the next prompt, never lost and never twice."""
    c = guarded
    problems = run_problems(c, "hello", "blocked", "after", "again", "denied", "after_denied")
    for label in ("blocked", "denied"):
        if c.requests(label):
            problems.append(f"{label}: the blocked prompt reached the model")
    after, again = c.requests("after"), c.requests("again")
    problems += check_memory(after, "alpha") + check_memory(again, "alpha")
    problems += check_memory(c.requests("after_denied"), "beta")
    verdict(c, "a prompt the user's own hook blocks -> its card is there by the next", problems)


def test_a_global_link_goes_where_codex_home_points(version: str) -> None:
    """CODEX_HOME moved away from ~/.codex: `link --global` writes its hooks.json, which
    Codex reads, and the prompt gets its card."""
    with conversation(CLIENT, version) as c:
        setup(c)
        moved = c.home / "codex-elsewhere"
        (c.home / ".codex").rename(moved)
        c.env["CODEX_HOME"] = str(moved)
        c.link("--global")
        c.run("prompt", exec_args("Tell me about zebrafish."))
        problems = run_problems(c, "prompt") + check_memory(c.requests("prompt"), "alpha")
        if (c.home / ".codex").exists():
            problems.append("link --global wrote ~/.codex, which this Codex does not read")
        verdict(c, "link --global with CODEX_HOME moved", problems)


# hooks.json files Codex runs the hooks of, or none of them: what `installer_helpers.
# host_reads` (the unit tests' oracle) says of each must be what Codex does, and engram must
# link exactly those Codex reads.
_PROMPT_HOOK = '"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch %s"%s}]}]}'
HOOKS_SAMPLES = {
    "plain": "{" + _PROMPT_HOOK % ("{marker}", "") + "}\n",
    "a byte order mark": "\ufeff{" + _PROMPT_HOOK % ("{marker}", "") + "}\n",
    "half a surrogate pair": "{" + _PROMPT_HOOK % ("{marker}", ', "statusMessage": "\\udc00"') + "}\n",
    "a whole pair": "{" + _PROMPT_HOOK % ("{marker}", ', "statusMessage": "\\ud83d\\ude00"') + "}\n",
    # Codex reads the file into fixed types: the top level takes "hooks" and "description"
    "a key beside hooks": '{"x": 1, ' + _PROMPT_HOOK % ("{marker}", "") + "}\n",
    "a $schema": '{"$schema": "https://example.com/hooks.json", ' + _PROMPT_HOOK % ("{marker}", "")
    + "}\n",
    "a key after hooks": "{" + _PROMPT_HOOK % ("{marker}", "") + ', "model": "o4"}\n',
    "a description": '{"description": "mine", ' + _PROMPT_HOOK % ("{marker}", "") + "}\n",
    "a description of null": '{"description": null, ' + _PROMPT_HOOK % ("{marker}", "") + "}\n",
    "a description that is a number": '{"description": 1, ' + _PROMPT_HOOK % ("{marker}", "")
    + "}\n",
    "a handler type Codex does not know": "{" + _PROMPT_HOOK.replace(
        '"hooks": [{', '"hooks": [{"type": "Command", "command": "true"}, {', 1) % ("{marker}", "")
    + "}\n",
    "a command handler with no command": "{" + _PROMPT_HOOK.replace(
        '"hooks": [{', '"hooks": [{"type": "command"}, {', 1) % ("{marker}", "") + "}\n",
    "a timeout of 10.0": "{" + _PROMPT_HOOK % ("{marker}", ', "timeout": 10.0') + "}\n",
    "a timeout of -0": "{" + _PROMPT_HOOK % ("{marker}", ', "timeout": -0') + "}\n",
    "a timeout of 0": "{" + _PROMPT_HOOK % ("{marker}", ', "timeout": 0') + "}\n",
    "an async of null": "{" + _PROMPT_HOOK % ("{marker}", ', "async": null') + "}\n",
    "a statusMessage of null": "{" + _PROMPT_HOOK % ("{marker}", ', "statusMessage": null') + "}\n",
    "a matcher that is a number": "{" + _PROMPT_HOOK.replace(
        '[{"hooks"', '[{"matcher": 1, "hooks"', 1) % ("{marker}", "") + "}\n",
    "other keys of a group and a handler": "{" + _PROMPT_HOOK.replace(
        '[{"hooks"', '[{"description": 1, "note": [1e400], "hooks"', 1) % (
        "{marker}", ', "env": 1, "name": 1') + "}\n",
    "an event Codex does not know": '{"hooks": {"Later": [{"hooks": [{"type": "x"}]}], '
    + _PROMPT_HOOK[len('"hooks": {'):] % ("{marker}", "") + "}\n",
}


# `[features] hooks` in the config.toml of the project's layer or of CODEX_HOME (the nearer
# layer that sets it decides): with false Codex runs none of the project's hooks.
FEATURE_LAYERS = {
    "home off, project silent": (False, None),
    "home off, project on": (False, "[features]\nhooks = true\n"),
    "home on, project off": (True, "[features]\nhooks = false\n"),
    "home on, project silent": (True, None),
}
_USER_HOOK = ('{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", '
              '"command": "touch {marker}"}]}]}}')


def test_engram_links_exactly_where_codex_runs_the_projects_hooks(version: str) -> None:
    problems = []
    for name, (home_on, project) in FEATURE_LAYERS.items():
        with conversation(CLIENT, version) as c:
            setup(c)
            config = c.home / ".codex" / "config.toml"
            config.write_text(config.read_text(encoding="utf-8").replace(
                "hooks = true", f"hooks = {str(home_on).lower()}"), encoding="utf-8")
            marker = c.home / "the-users-hook-ran"
            folder = c.workspace / ".codex"
            folder.mkdir(exist_ok=True)
            (folder / "hooks.json").write_text(_USER_HOOK.replace("{marker}", str(marker)),
                                               encoding="utf-8")
            if project is not None:
                (folder / "config.toml").write_text(project, encoding="utf-8")
            c.run(name.replace(" ", "-").replace(",", ""), exec_args("Hello there."))
            ran = marker.exists()
            linked = c.engram("link", "codex", "--dry-run", check=False).returncode == 0
            if linked != ran:
                problems.append(f"{name}: Codex {'runs' if ran else 'skips'} the project's "
                                f"hooks, engram {'links' if linked else 'refuses'} it")
            verdict(c, f"[features] hooks, {name}: engram links exactly when Codex runs the "
                    "project's hooks", problems)


def test_engram_links_exactly_the_hooks_files_codex_reads(version: str) -> None:
    problems = []
    for name, text in HOOKS_SAMPLES.items():
        with conversation(CLIENT, version) as c:
            setup(c)
            marker = c.home / "the-users-hook-ran"
            hooks = c.workspace / ".codex" / "hooks.json"
            hooks.parent.mkdir(exist_ok=True)
            content = text.replace("{marker}", str(marker))
            hooks.write_text(content, encoding="utf-8")
            c.run(name.replace(" ", "-"), exec_args("Hello there."))
            ran = marker.exists()
            oracle = host_accepts("codex", content)
            linked = c.engram("link", "codex", "--dry-run", check=False).returncode == 0
            if oracle != ran:
                problems.append(f"{name}: Codex {'runs' if ran else 'ignores'} it, the unit "
                                "tests' oracle says otherwise")
            if linked != ran:
                problems.append(f"{name}: Codex {'runs' if ran else 'ignores'} it, engram "
                                f"{'links' if linked else 'refuses'} it")
            verdict(c, f"hooks.json with {name}: engram links it exactly when Codex reads it",
                    problems)


# Codex spills a hook's additionalContext over 10,000 UTF-8 bytes to a file and shows the
# model a path (measured on 0.171.0, tests/test_budget_render.py). Cards near engram's Codex
# budget (2,400 tokens: 9,600 bytes) in text of two, three and four bytes a character must
# reach the request whole, once; one past Codex's line is folded by engram, never spilled.
WIDE_CARDS = {
    "tapir": ("Tapir notes", "TAPIR-5a1 " + "é" * 4_400),         # 8,811 bytes
    "narwhal": ("Narwhal notes", "NARWHAL-3c7 " + "日本語" * 980),  # 8,832 bytes
    "walrus": ("Walrus notes", "WALRUS-8e4 " + "😀" * 2_200),       # 8,811 bytes
    "okapi": ("Okapi notes", "OKAPI-1d9 " + "日" * 3_400),          # 10,210 bytes
}
SPILLED = "Full hook output saved to"


def test_wide_text_near_the_budget_reaches_the_model_whole(version: str) -> None:
    with conversation(CLIENT, version) as c:
        setup(c)
        for card_id, (title, body) in WIDE_CARDS.items():
            (c.workspace / ".agents" / ".engram" / f"{card_id}.md").write_text(
                f"---\nid: {card_id}\ntitle: {title}\ntags: [{card_id}]\n---\n{body}\n",
                encoding="utf-8")
        c.link()
        for card_id in WIDE_CARDS:
            c.run(card_id, exec_args(f"Tell me about {card_id}."))
        problems = run_problems(c, *WIDE_CARDS)
        for card_id, (_, body) in WIDE_CARDS.items():
            requests = c.requests(card_id)
            problems += [f"{card_id}: Codex spilled a hook's text to a file in request #{r.n}"
                         for r in requests if r.count(SPILLED)]
            problems += check_text(requests, body, card_id, 0 if card_id == "okapi" else 1)
        if not any(r.count("- okapi: ") for r in c.requests("okapi")):
            problems.append("okapi: its one-line card is not in the request")
        verdict(c, "cards of é, CJK and emoji near the budget: whole, never spilled", problems)
