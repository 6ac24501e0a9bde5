"""Model-based test of "each memory exactly once per session, current, gated, whole".

Random sequences of hook events (session start / resume / clear / compact, run once or twice as
two engram entries run it, prompts, file
touches, subagents, compaction, session end, a prompt another hook blocks) for several
sessions of Claude Code, Codex and Gemini CLI, through the hook's own entry (`hook.handle`,
what `engram hook` runs), each from a cwd the host might report (the workspace, a sub-folder,
spelled with a trailing slash, `..` or through a symlink, a nested repository with memory of
its own, a folder outside any workspace; a card of the user's global memory routes in both
workspaces), interleaved with card edits (in place, same length, rename, add, delete, a secret
planted, an edit of what the model never reads: a tag, the scope, `always`). The index's
large-store paths are forced with lowered thresholds: the deferred freshness check (the
stored index answers, the per-file check runs after; here when the test says so), the
background rebuild of many changed files (likewise), and a first build left to the
background.

The oracle, after every answer:
- every body sent is its card's current file content, whole;
- no secret ever leaves;
- a session (one context: host, session id, subagent; whatever cwd its events report) never
  gets a body twice without a reset of that session or an edit of that card's title or
  body in between;
- `already loaded:` names only cards this session was sent since its last reset (and that
  reached the model: not with a prompt the host dropped), and only while the body the model
  holds is the card's current one (an edit since is sent, not listed).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import load_payload
from hookkit import already, context
from hypothesis import HealthCheck, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from engram import delivery, hook, host_registry, index, render, workspace
from engram import event as event_module

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
FILLER = ("keep", "tests", "green", "review", "every", "change", "carefully", "before", "merge",
          "ship", "small", "steps", "document", "decisions", "often")
HOSTS = ("claude", "codex", "gemini")
SESSIONS = ("s1", "s2")
START_SOURCES = ("startup", "resume", "clear", "compact")
# Workspace settings a run draws: the defaults; the proof line on; a Gemini budget so small
# that bodies are folded to one line or dropped (never cut, never marked sent); Claude's
# native path rules (its session starts write the rule files, Claude loads one by itself when
# a matching file is read and reports it with InstructionsLoaded).
CONFIGS = ({}, {"proof": "compact"}, {"load": {"max_tokens": 100}},
           {"hooks": {"path_rules": "native"}})
# The folders a session's events come from, as the host spells them (relative to the test's
# base folder; `proj` is the workspace): mostly the workspace itself.
CWDS = ("proj",) * 6 + ("proj/src", "proj/src/", "proj/src/../", "link", "link/src",
                         "proj/vendor/lib", "proj/vendor/lib/docs", "elsewhere")
# The nested repository's own card (its workspace's memory, not the outer one's), and a card
# of the user's global memory, which every workspace routes.
INNER = "inner rule 0: vendored code keeps its own conventions."
GOLF = "golf rule 0: the user's own habits go everywhere."
# How a session start is run: once (one engram entry), or twice (linked in the project and
# with --global), on Claude Code with its load of CLAUDE.md between the two runs or not.
RUNS = {"claude": ("rule load between", "twice", "once"), "codex": ("twice", "once")}
STATS = {"calls": 0, "bodies": 0, "already": 0, "compactions": 0, "cancelled": 0,
         "evicted": 0, "restored": 0, "blocked": 0, "starts_twice": 0,
         "rule_loads_between": 0, "same_tick": 0, "older_records": 0,
         "rule_loads": 0, "prompt_cards_checked": 0, "path_cards_checked": 0}  # printed with -s
# How far the clock the delivery records read moves at once: a minute, past the cache's TTL
# (records evicted), back (a clock set right), past the age records are kept at all, and
# back as far (a clock that ran ahead while a hook swept old reset markers, set right).
CLOCK_STEPS = (61.0, 8 * 86400.0, -3 * 86400.0, delivery.EVICTED_MAX_AGE + 2 * 86400.0,
               -delivery.EVICTED_MAX_AGE - 2 * 86400.0)


class Clock:
    """The `time` module as engram.delivery and engram.hook see it: the wall clock moved by
    the test, everything else the real module's."""

    def __init__(self) -> None:
        import time

        self.real = time
        self.offset = 0.0

    def time(self) -> float:
        return self.real.time() + self.offset

    def time_ns(self) -> int:
        return self.real.time_ns() + int(self.offset * 1e9)

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


def card_text(word: str, body: str, always: bool, scoped: bool, extra: str = "") -> str:
    # Two package names: written code importing both selects the card (engram.code_names).
    lines = ["---", f"title: {word.title()} notes",
             f"tags: [{word}, {word}_sdk, {word}_io{extra}]"]
    if scoped:
        lines.append(f'applies_to: ["src/{word}/**"]')
    if always:
        lines.append("always: true")
    return "\n".join(lines + ["---", body, ""])


def bodies(text: str) -> dict[str, list[str]]:
    """{id: [body, ...]} of the bodies in an injected text (bodies here are one line)."""
    found: dict[str, list[str]] = {}
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if line.startswith(render.HEADER_PREFIX):
            card_id = line[len(render.HEADER_PREFIX):].split(" — ")[0]
            found.setdefault(card_id, []).append(lines[number + 1] if number + 1 < len(lines)
                                                 else "")
    return found


def _payload(host: str, name: str, cwd: Path | str, session: str, **changes: object) -> dict:
    document = load_payload(host, name)
    document["cwd"] = str(cwd)
    document["session_id"] = session
    document.update(changes)
    return document


_STAMPS = itertools.count(1)


def _stamp(host: str) -> dict[str, str]:
    """What makes each prompt's payload its own: the time Gemini CLI stamps it with, the
    prompt_id Claude Code gives it (no two prompts share one)."""
    serial = next(_STAMPS)
    if host == "gemini":
        return {"timestamp": f"2026-12-01T00:00:00.{serial:06d}Z"}
    return {"prompt_id": f"00000000-0000-4000-8000-{serial:012d}"} if host == "claude" else {}


class ExactlyOnce(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="engram-model-"))
        self.ws = self.base / "proj"
        (self.ws / ".git").mkdir(parents=True)
        self.memory = self.ws / ".agents" / ".engram"
        self.memory.mkdir(parents=True)
        inner = self.ws / "vendor" / "lib"
        (inner / ".git").mkdir(parents=True)
        (inner / "docs").mkdir()
        (inner / ".agents" / ".engram").mkdir(parents=True)
        (inner / ".agents" / ".engram" / "inner.md").write_text(
            card_text("inner", INNER, False, False), encoding="utf-8")
        (self.base / "global").mkdir()
        (self.base / "global" / "golf.md").write_text(card_text("golf", GOLF, False, False),
                                                      encoding="utf-8")
        self.saved_global = os.environ.get("ENGRAM_GLOBAL_DIR")
        os.environ["ENGRAM_GLOBAL_DIR"] = str(self.base / "global")
        (self.ws / "src").mkdir()
        (self.base / "elsewhere").mkdir()
        os.symlink(self.ws, self.base / "link")
        self.saved_env = os.environ.get("ENGRAM_STATE_DIR")
        os.environ["ENGRAM_STATE_DIR"] = str(self.base / "state")
        self.saved = {name: getattr(index, name) for name in (
            "DEFER_MIN_FILES", "BACKGROUND_MIN_CHANGES", "FIRST_BUILD_MAX",
            "_refresh_in_background")}
        self.background: list[tuple] = []

        def later(*args: object) -> bool:  # the "detached child": run when the test says
            self.background.append(args)
            return True

        index._refresh_in_background = later  # type: ignore[assignment]
        # Records are evicted often (a cap of 3 sessions and 1 subagent per workspace, the
        # clock moved past the TTL) and must come back when their session calls again.
        self.clock = Clock()
        self.saved_delivery = {name: getattr(delivery, name) for name in (
            "MAX_SESSIONS", "MAX_SUBAGENTS", "set_aside", "restore", "sweep_reset_markers")}
        delivery.MAX_SESSIONS, delivery.MAX_SUBAGENTS = 3, 1

        def set_aside(evicted: dict) -> None:
            STATS["evicted"] += len(evicted)
            self.saved_delivery["set_aside"](evicted)

        def restore(key: str, now: float) -> dict | None:
            found = self.saved_delivery["restore"](key, now)
            STATS["restored"] += found is not None
            return found

        delivery.set_aside, delivery.restore = set_aside, restore  # type: ignore[assignment]
        # A hook sweeps at random (one cache write in 32): here only when the machine draws
        # it (`another_hook_sweeps`), so a printed failure replays.
        delivery.sweep_reset_markers = lambda now: None  # type: ignore[assignment]
        delivery.time = hook.time = self.clock  # type: ignore[assignment]
        self.cards: dict[str, dict] = {}  # file stem (= id) -> {"body", "always", "scoped", "secret"}
        # Per cache key: id -> body last sent since the last reset / edit of that card; and
        # the ids sent since the last reset.
        self.last_sent: dict[str, dict[str, str]] = {}
        # When each context last called in each workspace: the record of a workspace no call
        # used for EVICTED_MAX_AGE is no longer trusted, however the time went by (a reset
        # since may have lost its marker), even while the session works in another one.
        self.last_use: dict[tuple[str, str], float] = {}
        self.sent_ever: dict[str, set[str]] = {}
        # Per cache key: id -> the body the model holds (the last one it was sent since the
        # last reset, whatever edits came since).
        self.holds: dict[str, dict[str, str]] = {}
        self.serial = 0
        # Contexts whose record here an older engram wrote and no call has renamed since.
        self.not_renamed: set[str] = set()
        self.native = False  # Claude's native path rules (`start_store` draws it)
        self.prompts: list[tuple[str, str, list[str]]] = []
        # Per cache key: the always cards of this workspace sent with a prompt the host
        # dropped; the next prompt here that reaches the model must bring each (unless the
        # model holds it, or it was deleted, renamed, is no longer always or holds a secret).
        self.lost_always: dict[str, set[str]] = {}
        self.budgeted = False
        # Each always card is context for the whole session: one that is always (and holds no
        # secret) must be in a context after its next prompt in this workspace, once the
        # index knows of it. `owed_from` (a card's state) is the store change since which it
        # has been so; `synced`, the last store change the index has seen (the per-file
        # check before the answer, or the deferred one or the background build when they
        # ran).
        self.changes = 0
        self.synced = 0
        # Cache keys whose host dropped an answer (a blocked prompt or tool result) with no
        # prompt since: the hook learns it at the next prompt, so until then a tool call may
        # take the dropped cards for delivered (a card comes late, not twice or never). On
        # Claude Code and Gemini CLI a blocked prompt starts no turn, so no tool call
        # follows it; Gemini goes on with the turn after a blocked tool result.
        self.unconfirmed: set[str] = set()
        # Per (cache key, workspace root): the raw payload of its last call, and when.
        self.last_call: dict[tuple[str, str], tuple[str, float]] = {}

    def teardown(self) -> None:
        if os.environ.get("ENGRAM_MODEL_STATS"):
            print("model-based run so far:", STATS)
        for name, value in self.saved.items():
            setattr(index, name, value)
        for name, value in self.saved_delivery.items():
            setattr(delivery, name, value)
        delivery.time = hook.time = self.clock.real  # type: ignore[assignment]
        index._deferred.clear()
        index.close_connections()
        for name, value in (("ENGRAM_STATE_DIR", self.saved_env),
                            ("ENGRAM_GLOBAL_DIR", self.saved_global)):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(self.base, ignore_errors=True)

    # --- the store ------------------------------------------------------------------------
    def _write(self, word: str, path: Path | None = None, in_place: bool = False) -> None:
        state = self.cards[word]
        text = card_text(word, state["body"], state["always"], state["scoped"],
                         state.get("extra", ""))
        path = path or self.memory / f"{word}.md"
        if in_place and path.exists():
            with open(path, "r+", encoding="utf-8") as handle:  # the folder's mtime stays
                handle.write(text)
                handle.truncate()
        else:
            path.write_text(text, encoding="utf-8")

    def _forget(self, word: str) -> None:
        """An edit: sending the card again is allowed in every session."""
        for sent in self.last_sent.values():
            sent.pop(word, None)

    def _body(self, word: str, data: st.DataObject, secret: bool = False) -> str:
        self.serial += 1
        words = data.draw(st.lists(st.sampled_from(FILLER), min_size=1, max_size=8))
        body = f"{word} rule {self.serial}: " + " ".join(words) + "."
        return body.replace(".", f" token {GITHUB}.") if secret else body

    @initialize(thresholds=st.sampled_from([(1, 1, 2), (1, 300, 2000), (1000, 1, 2000),
                                            (1000, 300, 2)]),
                config=st.sampled_from(CONFIGS), n=st.integers(min_value=1, max_value=4),
                data=st.data())
    def start_store(self, thresholds: tuple[int, int, int], config: dict, n: int,
                    data: st.DataObject) -> None:
        index.DEFER_MIN_FILES, index.BACKGROUND_MIN_CHANGES, index.FIRST_BUILD_MAX = thresholds
        self.budgeted = "load" in config
        if config:
            (self.ws / ".agents" / "engram.json").write_text(json.dumps(config))
        self.native = config == {"hooks": {"path_rules": "native"}}
        for word in WORDS[:n]:
            self.cards[word] = {"body": "", "always": data.draw(st.booleans()),
                                "scoped": data.draw(st.booleans()), "secret": False}
            self.cards[word]["body"] = self._body(word, data)
            self._write(word)
            self._owed(word)
        if self.native:
            # `engram link claude` writes a rule file per scoped card; starts keep them in step.
            from engram import index_compile, native_rules

            rules = self.ws / ".claude" / "rules" / "engram"
            rules.mkdir(parents=True)
            cards = [index_compile.reparse(str(path), str(self.memory), path.read_bytes())[0]
                     for path in sorted(self.memory.glob("*.md"))]
            native_rules.sync_rules(rules, [card for card in cards if card is not None],
                                    root=str(self.ws))

    # The store changes, one rule drawing the kind of change.
    CHANGES = ("edit",) * 3 + ("same_length",) * 2 + ("add", "rename", "delete") + ("unseen",) * 3 \
        + ("same_tick",) * 2 + ("older_records",) * 3

    @rule(kind=st.sampled_from(CHANGES), data=st.data())
    def store_change(self, kind: str, data: st.DataObject) -> None:
        if not self.cards:
            kind = "add"
        self.changes += 1
        before = {word: json.dumps(state, sort_keys=True) for word, state in self.cards.items()}
        getattr(self, "_" + kind)(data)
        for word, state in self.cards.items():
            self._owed(word)
            if json.dumps(state, sort_keys=True) != before.get(word):
                state["changed_at"] = self.changes

    def _owed(self, word: str) -> None:
        state = self.cards[word]
        if not state["always"] or state["secret"]:
            state["owed_from"] = None
        elif state.get("owed_from") is None:
            state["owed_from"] = self.changes

    def _add(self, data: st.DataObject) -> None:
        secret = data.draw(st.booleans())
        free = [w for w in WORDS if w not in self.cards]
        if not free:
            return
        word = data.draw(st.sampled_from(free))
        self.cards[word] = {"body": "", "always": data.draw(st.booleans()),
                            "scoped": data.draw(st.booleans()), "secret": secret}
        self.cards[word]["body"] = self._body(word, data, secret)
        self._forget(word)
        self._write(word)

    def _edit(self, data: st.DataObject) -> None:
        in_place, secret = data.draw(st.booleans()), data.draw(st.booleans())
        word = data.draw(st.sampled_from(sorted(self.cards)))
        self.cards[word]["body"] = self._body(word, data, secret)
        self.cards[word]["secret"] = secret
        self._forget(word)
        self._write(word, in_place=in_place)

    def _same_length(self, data: st.DataObject, word: str = "") -> None:
        """One character of the body changes: same size, possibly the same mtime tick."""
        word = word or data.draw(st.sampled_from(sorted(self.cards)))
        body = self.cards[word]["body"]
        digit = next((i for i, c in enumerate(body) if c.isdigit()), None)
        if digit is None:
            return
        self.cards[word]["body"] = body[:digit] + str((int(body[digit]) + 1) % 10) + body[digit + 1:]
        self._forget(word)
        self._write(word, in_place=True)

    def _same_tick(self, data: st.DataObject) -> None:
        """A same-length edit of a card whose current body a context holds, which the file
        system stamps with the mtime the file had: both saves fell in one tick of its
        timestamps (2 s on FAT, 1 s on HFS+ and ext3). The mtime is kept only for a file
        saved less than a second ago, as such a file system could (the draws never depend on
        the clock: hypothesis replays them)."""
        held = sorted({word for holds in self.holds.values() for word, body in holds.items()
                       if word in self.cards and body == self.cards[word]["body"]})
        if not held:
            self._same_length(data)
            return
        word = data.draw(st.sampled_from(held))
        path = self.memory / f"{word}.md"
        before = path.stat().st_mtime_ns
        self._same_length(data, word)
        if time.time_ns() - before < 1_000_000_000:
            STATS["same_tick"] += 1
            os.utime(path, ns=(before, before))

    def _rename(self, data: st.DataObject) -> None:
        """A rename changes the id (the file name is the id)."""
        free = [w for w in WORDS if w not in self.cards]
        if not free:
            return
        old = data.draw(st.sampled_from(sorted(self.cards)))
        new = data.draw(st.sampled_from(free))
        state = self.cards.pop(old)
        state["body"] = state["body"].replace(old, new, 1)
        state["owed_from"] = None
        self.cards[new] = state
        self._forget(old)
        self._forget(new)
        self._write(new, path=self.memory / f"{old}.md")  # the old file holds the new text
        os.replace(self.memory / f"{old}.md", self.memory / f"{new}.md")

    def _unseen(self, data: st.DataObject) -> None:
        """An edit of what the model never reads of a card (a tag, its scope, `always`): the
        body block stays the same, so no session may be sent it again. Except one whose
        record an older engram wrote and the new hook has not renamed yet (no call since the
        upgrade): its key of the file's bytes names content no file holds after the edit, and
        a second copy is allowed (never a loss)."""
        word = data.draw(st.sampled_from(sorted(self.cards)))
        for key in self.not_renamed:
            self.last_sent.get(key, {}).pop(word, None)
        field = data.draw(st.sampled_from(("extra", "scoped", "always")))
        state = self.cards[word]
        if field == "extra":
            state["extra"] = "" if state.get("extra") else f", {word}_extra"
        else:
            state[field] = not state[field]
        self._write(word, in_place=data.draw(st.booleans()))

    def _delete(self, data: st.DataObject) -> None:
        word = data.draw(st.sampled_from(sorted(self.cards)))
        del self.cards[word]
        self._forget(word)
        (self.memory / f"{word}.md").unlink()

    @rule(deferred=st.booleans())
    def index_catches_up(self, deferred: bool) -> None:
        """The after-answer freshness checks of the calls so far finish, or the background
        build does."""
        if not deferred:
            self._background_build_finishes()
            return
        pending, index._deferred[:] = list(index._deferred), []
        for path, roots, follow, allowed in pending:
            index._load_healing(path, roots, follow, allowed)
        if self._of_the_workspace(pending) and not self.background:
            self.synced = self.changes

    def _background_build_finishes(self) -> None:
        pending, self.background = self.background, []
        for path, roots, follow, allowed in pending[-1:]:  # one builder at a time
            index._load_healing(path, roots, follow, allowed)
        if self._of_the_workspace(pending[-1:]):
            self.synced = self.changes

    def _of_the_workspace(self, checks: list[tuple]) -> bool:
        """Whether one of these index checks or builds is the workspace's store's: a call
        from the nested repository checks that repository's index, not this one's."""
        ours = os.path.realpath(self.memory)
        return any(os.path.realpath(root) == ours for _path, roots, *_ in checks
                   for root, _scope in roots)

    # --- hook events ----------------------------------------------------------------------
    def _call(self, host: str, document: dict, resets: bool | None = None,
              reaches_model: bool = True, stopped: bool = False, transcribe: bool = True,
              asked: tuple[str, ...] = ()) -> str:
        """One hook call and the oracle's checks; the answer's text. `resets`: whether the
        event empties the model's context, when the test knows it better than the event's
        kind. `reaches_model`: False when the host drops the answer (a prompt another hook
        blocks). `transcribe`: False when the caller writes the transcript itself."""
        if host in ("claude", "gemini") and "transcript_path" in document:
            path = self._transcript(host, str(document["session_id"]))
            document["transcript_path"] = str(path)
            if host == "gemini" and not path.exists():  # Gemini starts it with the session
                path.parent.mkdir(exist_ok=True)
                path.write_text(json.dumps({"sessionId": document["session_id"]}) + "\n",
                                encoding="utf-8")
        runtime = host_registry.load_host(host)["runtime"]
        event = event_module.normalize(host, runtime, json.loads(json.dumps(document)))
        if event is None:  # an event this host's definition does not use
            assert context(hook.handle(host, json.dumps(document).encode(), defer=True)) == ""
            return
        event = event.replace(cwd=os.path.realpath(event.cwd))
        # One context per host session (or subagent of it), from whatever folder.
        key = f"{host}|{event.session}" + (f"#agent:{event.agent}" if event.agent else "")
        sent_ever = self.sent_ever.setdefault(key, set())
        last = self.last_sent.setdefault(key, {})
        self.last_use[(key, workspace.find_root_str(event.cwd) or event.cwd)] = \
            self.clock.time()
        holds = self.holds.setdefault(key, {})
        # A host's every real start differs (startup and /clear bring a new session id,
        # compact follows a PreCompact); this test reuses session ids, so a start drawn
        # again with the same payload, in the same workspace, with nothing of that context
        # in between and within the hook timeout, is what a second engram entry's run of
        # one start looks like: not a second reset, on a host whose every real start has a
        # payload of its own (`same_payload_once`: Claude Code, Codex). Gemini CLI's starts
        # each reset (its payloads are stamped, so a repeated one is a run of one start,
        # which prints nothing: it is the next prompt's). (A rule load is part of the start
        # it comes with.)
        root = workspace.find_root_str(event.cwd) or event.cwd
        raw = json.dumps(document, sort_keys=True)
        previous = self.last_call.get((key, root))
        same = previous is not None and previous[0] == raw
        if event.kind != "rule_loaded":
            # Timed from the first of such runs, as the record's reset is.
            self.last_call[(key, root)] = (raw, previous[1] if same and previous else self.clock.time())
        once = (runtime["events"].get(document.get("hook_event_name")) or {}).get("same_payload_once")
        if resets is None and event.kind == "start" and once and same and previous \
                and self.clock.time() - previous[1] < hook.SAME_START_NS / 1e9:
            resets = False
        resets = event.resets if resets is None else resets
        if resets and event.kind != "reset":
            sent_ever.clear()
            last.clear()
            holds.clear()
        if resets:
            self.lost_always.pop(key, None)
        text = context(hook.handle(host, json.dumps(document).encode(), defer=True))
        if event.kind != "end" and workspace.find_root_str(event.cwd) == str(self.ws.resolve()):
            self.not_renamed.discard(key)
        if resets and event.kind == "reset":
            sent_ever.clear()
            last.clear()
            holds.clear()
        assert GITHUB not in text, "a secret left"
        if host == "claude" and text and transcribe:
            self._transcribe(document, text if reaches_model else None)
        if host == "gemini" and event.kind in ("prompt", "path") and transcribe:
            self._transcribe_gemini(document, event.kind, text, reaches_model, stopped)
        in_workspace = workspace.find_root_str(event.cwd) == str(self.ws.resolve())
        if not reaches_model:
            STATS["blocked"] += 1
            self.unconfirmed.add(key)
            if in_workspace:
                self.lost_always.setdefault(key, set()).update(
                    card_id for card_id in bodies(text)
                    if self.cards.get(card_id, {}).get("always"))
            return text
        listed = already(text)
        assert set(listed) <= sent_ever, f"already loaded names {listed}, sent {sent_ever}"
        cards = {**self.cards, "inner": {"body": INNER}, "golf": {"body": GOLF}}
        for card_id in listed:
            # The model's copy is the card's current title and body (titles never change here).
            assert card_id in cards and holds.get(card_id) == cards[card_id]["body"], \
                f"already loaded names {card_id}: the model holds {holds.get(card_id)!r}, " \
                f"the file {cards.get(card_id, {}).get('body')!r}"
        for card_id, sent in bodies(text).items():
            assert len(sent) == 1, f"{card_id} twice in one answer"
            assert card_id in cards, f"{card_id} sent but its file is gone"
            assert sent[0] == cards[card_id]["body"], \
                f"{card_id}: sent {sent[0]!r}, the file holds {cards[card_id]['body']!r}"
            assert card_id not in last, f"{card_id} sent twice to {key} with no reset or edit"
            last[card_id] = holds[card_id] = sent[0]
            sent_ever.add(card_id)
            STATS["bodies"] += 1
        checked = in_workspace and not self.budgeted and not self.background
        if checked and event.kind in ("prompt", "path", "subagent") \
                and len(self.cards) + 2 < index.DEFER_MIN_FILES:  # checked before the answer
            self.synced = self.changes
        if event.kind in ("prompt", "subagent") and checked:
            # (A subagent's context starts with the always cards, as a session's does.)
            owed = [word for word, state in self.cards.items()
                    if state.get("owed_from") is not None and state["owed_from"] <= self.synced]
            missing = [word for word in owed if word not in holds]
            assert not missing, f"always cards {missing} not in {key}'s context after a {event.kind}"
        if event.kind == "prompt" or resets:
            self.unconfirmed.discard(key)
        if event.kind in ("prompt", "path") and checked and key not in self.unconfirmed:
            # A card the prompt names (its tag and title word), or whose files the tool call
            # touches or whose packages the code written imports, is in the context after
            # the answer, as the file holds it now, once the index has seen its last change.
            expected = [word for word in asked if word in self.cards
                        and not self.cards[word]["secret"]
                        and self.cards[word].get("changed_at", 0) <= self.synced]
            STATS[f"{event.kind}_cards_checked"] += len(expected)
            unheld = [word for word in expected if holds.get(word) != self.cards[word]["body"]]
            assert not unheld, f"{unheld} not in {key}'s context after the {event.kind} event"
        if event.kind == "prompt" and in_workspace:
            for card_id in self.lost_always.pop(key, set()):
                state = self.cards.get(card_id)
                assert self.budgeted or not state or not state["always"] or state["secret"] \
                    or card_id in holds, \
                    f"always card {card_id} dropped with a blocked prompt, never sent again"
        STATS["calls"] += 1
        STATS["already"] += bool(listed)
        return text

    def _transcript(self, host: str, session: str) -> Path:
        return self.base / "transcripts" / f"{host}-{session}.jsonl"

    def _transcribe_gemini(self, document: dict, kind: str, text: str, reaches_model: bool,
                           stopped: bool) -> None:
        """What Gemini CLI writes (observed on 0.61.0) for a prompt: one line with the prompt
        and every hook's context when kept; nothing when another hook denied it; the prompt
        alone when another hook stopped it (`continue: false`). For a tool call: its result
        with every hook's context, or, when another AfterTool hook blocked the result, the
        hook's reason alone."""
        if kind == "path":
            response = {"output": f"the file\n\n<hook_context>{text}</hook_context>"} \
                if reaches_model else {"error": "that file is off limits"}
            content: list[dict] = [{"functionResponse": {"name": "read_file", "response": response}}]
        elif not reaches_model and not stopped:
            return
        else:
            content = [{"text": document.get("prompt", "")}]
            if reaches_model and text:
                content.append({"text": f"<hook_context>{text}</hook_context>"})
        path = self._transcript("gemini", str(document["session_id"]))
        with path.open("a", encoding="utf-8") as transcript:
            transcript.write(json.dumps({"type": "user", "content": content}, ensure_ascii=False,
                                        separators=(",", ":")) + "\n")

    def _transcribe(self, document: dict, text: str | None) -> None:
        """What Claude Code writes to the session's transcript after the hooks of an event:
        their context, or (`text` None) its note that another hook blocked the prompt. A
        subagent's context goes to the subagent's own file, beside the session's (observed on
        2.1.197), its lines marked as a sidechain."""
        path = self._transcript("claude", str(document["session_id"]))
        sidechain = {}
        if document.get("hook_event_name") == "SubagentStart":
            path = path.with_suffix("") / "subagents" / f"agent-{document['agent_id']}.jsonl"
            sidechain = {"isSidechain": True, "agentId": document["agent_id"]}
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            line = {"type": "system", "subtype": "informational",
                    "content": "UserPromptSubmit operation blocked by hook:\n[guard]: no\n\n"
                               f"Original prompt: {document.get('prompt', '')}"}
        else:
            line = {**sidechain, "type": "attachment", "attachment": {
                "type": "hook_additional_context", "content": [text],
                "hookEvent": document.get("hook_event_name", "")}}
        with path.open("a", encoding="utf-8") as transcript:
            transcript.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")

    # One rule draws the event, weighted the way sessions go (prompts most often), so that
    # no kind of event crowds out the others.
    EVENTS = ("prompt",) * 5 + ("prompt_again",) * 4 + ("start",) * 2 + ("path",) * 2 + (
        "subagent", "compact", "end", "blocked", "tool_blocked")

    @rule(kind=st.sampled_from(EVENTS), host=st.sampled_from(HOSTS),
          session=st.sampled_from(SESSIONS), data=st.data())
    def hook_event(self, kind: str, host: str, session: str, data: st.DataObject) -> None:
        if kind == "prompt_again" and self.prompts:
            # A later prompt on the same topic in the same session: what was sent is listed,
            # not sent again.
            host, session, words = data.draw(st.sampled_from(self.prompts))
            kind = "prompt"
        else:
            known = sorted(self.cards) or list(WORDS)
            words = data.draw(st.lists(st.sampled_from(known + ["zulu", "inner", "golf"]), min_size=1,
                                       max_size=3))
        getattr(self, "_" + ("prompt" if kind == "prompt_again" else kind))(
            host, session, words, data)

    @rule(kind=st.sampled_from(EVENTS), host=st.sampled_from(HOSTS),
          session=st.sampled_from(SESSIONS), data=st.data())
    def another_hook_event(self, kind: str, host: str, session: str, data: st.DataObject) -> None:
        self.hook_event(kind, host, session, data)  # hook calls outnumber store changes

    def _cwd(self, data: st.DataObject) -> str:
        """The cwd this event reports: spelled as a host might, not always the workspace."""
        return f"{self.base}/{data.draw(st.sampled_from(CWDS))}"

    def _prompt(self, host: str, session: str, words: list[str], data: st.DataObject) -> None:
        name = "BeforeAgent.json" if host == "gemini" else "UserPromptSubmit.json"
        text = "tell me about the " + " and ".join(f"{w} notes" for w in words)
        self.prompts.append((host, session, words))
        document = _payload(host, name, self._cwd(data), session, prompt=text, **_stamp(host))
        asked = tuple(words)
        if host == "codex" or not data.draw(st.booleans()):
            self._call(host, document, asked=asked)
            return
        # engram linked in the project and with --global: Gemini and Claude Code run both
        # entries on the same payload, then write the prompt once, with both answers.
        answers = [self._call(host, json.loads(json.dumps(document)), transcribe=False,
                              asked=asked) for _ in range(2)]
        joined = "\n\n".join(a for a in answers if a)
        if host == "gemini":
            self._transcribe_gemini(document, "prompt", joined, True, False)
        elif joined:
            self._transcribe(document, joined)

    def _blocked(self, host: str, session: str, words: list[str], data: st.DataObject) -> None:
        """A prompt the user's own prompt hook blocks: Claude Code drops it with every hook's
        context (observed on 2.1.197 and 2.1.332), Gemini CLI drops a denied one and keeps a
        stopped one without any hook's context (0.61.0), so nothing engram answered reaches
        the model. (Codex keeps the context of a prompt it blocks: an ordinary prompt.)"""
        text = "tell me about the " + " and ".join(f"{w} notes" for w in words)
        if host == "gemini":
            self._call(host, _payload(host, "BeforeAgent.json", self._cwd(data), session,
                                      prompt=text, **_stamp(host)), reaches_model=False,
                       stopped=data.draw(st.booleans()))
            return
        document = _payload("claude", "UserPromptSubmit.json", self._cwd(data), session,
                            prompt=text, **_stamp("claude"))
        # Run by one engram entry or by two (a project and a --global link), the prompt is
        # dropped with every hook's context; the note comes once.
        for _ in range(data.draw(st.sampled_from((2, 1)))):
            self._call("claude", json.loads(json.dumps(document)), reaches_model=False,
                       transcribe=False)
        self._transcribe(document, None)

    def _start(self, host: str, session: str, words: list[str], data: st.DataObject) -> None:
        source = data.draw(st.sampled_from(START_SOURCES))
        self._run_start(host, _payload(host, "SessionStart.json", self._cwd(data), session,
                                       source=source), data)

    def _run_start(self, host: str, document: dict, data: st.DataObject) -> None:
        """A session start, run once, or twice where engram is linked in the project and with
        --global (Claude Code and Codex run both entries on the same payload at once), with
        Claude's load of CLAUDE.md in between when the delivery lock lets it in first (it
        fires with the start). The second run is the same start: it empties nothing more."""
        runs = "once" if host == "gemini" else data.draw(st.sampled_from(RUNS[host]))
        self._call(host, document)
        if runs == "once":
            return
        STATS["starts_twice"] += 1
        if runs == "rule load between":
            STATS["rule_loads_between"] += 1
            self._call(host, _payload(host, "InstructionsLoaded.json", document["cwd"],
                                      str(document["session_id"]),
                                      file_path=str(self.ws / "CLAUDE.md")))
        self._call(host, json.loads(json.dumps(document)), resets=False)

    def _tool_blocked(self, host: str, session: str, words: list[str], data: st.DataObject) -> None:
        """A tool call whose result the user's own hook blocks: Gemini CLI drops every hook's
        context with it (observed on 0.61.0). Claude Code's PostToolUse `decision: block` and
        Codex's PreToolUse deny keep engram's (observed on 2.1.197, 2.1.332, 0.171.0): there
        it is an ordinary tool call."""
        self._path(host, session, words, data, reaches_model=host != "gemini")
        if data.draw(st.booleans()):
            # The next prompt is about the file: the card must come with it, not be listed.
            self._prompt(host, session, words[:1], data)

    def _path(self, host: str, session: str, words: list[str], data: st.DataObject,
              reaches_model: bool = True) -> None:
        """A read of a scoped file, or code written into it that imports another card's two
        packages (that card is then routed by code)."""
        word = words[0]
        target = str(self.ws / "src" / word / "main.py")
        written = data.draw(st.sampled_from((None, *sorted(self.cards), *WORDS)))
        code = f"import {written}_sdk\nimport {written}_io\n" if written else ""
        if host == "claude":
            document = _payload(host, "PostToolUse.json", self._cwd(data), session,
                                tool_name="Write" if written else "Read",
                                tool_input={"file_path": target, **({"content": code} if written else {})})
        elif host == "codex":
            added = "".join(f"+{line}\n" for line in code.splitlines()) or "+b\n"
            patch = f"*** Begin Patch\n*** Update File: src/{word}/main.py\n@@\n-a\n{added}*** End Patch"
            document = _payload(host, "PreToolUse.json", self._cwd(data), session,
                                tool_name="apply_patch", tool_input={"command": patch})
        else:
            document = _payload(host, "AfterTool.json", self._cwd(data), session,
                                tool_name="write_file" if written else "read_file",
                                tool_input={"file_path": target, **({"content": code} if written else {})})
        # The cards this call must bring (`_call`'s oracle): the scoped card of the file
        # touched, where the host names it from the workspace, and the card whose packages
        # the code written imports. Not with Claude's native path rules: its rule files are
        # what brings a scoped card then.
        brings: list[str] = []
        if not (host == "claude" and self.native) and (
                host != "codex" or os.path.realpath(document["cwd"]) == str(self.ws.resolve())):
            if self.cards.get(word, {}).get("scoped"):
                brings.append(word)
            if written:
                brings.append(written)
        self._call(host, document, reaches_model=reaches_model, asked=tuple(brings))
        if host == "claude" and self.native:
            self._rule_load(document, word)

    def _rule_load(self, document: dict, word: str) -> None:
        """Claude Code with native path rules loads the rule file of a scoped card by itself
        when the agent reads a file it names (from the workspace: its rules are the
        project's), as the file is now (written at a session's start, so possibly before an
        edit), and runs InstructionsLoaded. The model then holds the file's body."""
        rule = self.ws / ".claude" / "rules" / "engram" / f"{word}.md"
        cwd = os.path.realpath(str(document["cwd"]))
        if not rule.exists() or workspace.find_root_str(cwd) != str(self.ws.resolve()):
            return
        body = rule.read_text(encoding="utf-8").rstrip("\n").split("\n")[-1]
        STATS["rule_loads"] += 1
        self._call("claude", _payload("claude", "InstructionsLoaded.json", document["cwd"],
                                      str(document["session_id"]), file_path=str(rule),
                                      load_reason="path_glob_match"))
        key = f"claude|{document['session_id']}"
        self.sent_ever.setdefault(key, set()).add(word)
        self.holds.setdefault(key, {})[word] = body
        if word in self.cards and body == self.cards[word]["body"]:
            # Loaded as it is: the hook sending it again with nothing changed is a duplicate.
            self.last_sent.setdefault(key, {})[word] = body

    def _subagent(self, host: str, session: str, words: list[str], data: st.DataObject) -> None:
        if host == "gemini":
            host = "claude"  # Gemini CLI has no subagent event
        agent = data.draw(st.sampled_from(("agent-1", "agent-2")))
        self._call(host, _payload(host, "SubagentStart.json", self._cwd(data), session, agent_id=agent))

    def _compact(self, host: str, session: str, words: list[str], data: st.DataObject) -> None:
        trigger = data.draw(st.sampled_from(("auto", "manual")))
        if host == "gemini":
            # Nothing follows a compression on Gemini CLI: a manual one resets when announced.
            self._call(host, _payload(host, "PreCompress.json", self._cwd(data), session,
                                      trigger=trigger))
            return
        # Claude Code and Codex announce a compaction that may not happen (nothing to compact,
        # blocked by another hook, a failed request): then the model keeps every body. A
        # completed one is followed by a `compact` session start, which Codex sends after
        # PostCompact and Claude Code before it (observed on Codex 0.171.0, Claude Code
        # 2.1.197 and 2.1.332).
        self._call(host, _payload(host, "PreCompact.json", self._cwd(data), session,
                                  trigger=trigger), resets=False)
        STATS["compactions"] += 1
        if not data.draw(st.booleans()):
            STATS["cancelled"] += 1
            return
        # The model's context is the summary now, whatever engram concluded.
        self.sent_ever.pop(f"{host}|{session}", None)
        self.last_sent.pop(f"{host}|{session}", None)
        self.holds.pop(f"{host}|{session}", None)
        post = _payload(host, "PostCompact.json", self._cwd(data), session, trigger=trigger)
        start = _payload(host, "SessionStart.json", self._cwd(data), session, source="compact")
        if host == "codex":
            self._call(host, post)
        self._run_start(host, start, data)
        if host == "claude":
            self._call(host, post)

    def _end(self, host: str, session: str, words: list[str], data: st.DataObject) -> None:
        if host == "codex":
            host = "claude"
        self._call(host, _payload(host, "SessionEnd.json", self._cwd(data), session))

    def _older_records(self, data: st.DataObject) -> None:
        """engram upgraded mid-session (`pip install -U`): every delivery record, in the
        caches and set aside, is as an engram before `view_keys` wrote it, each key of a
        card's current content the hash of its file's bytes. Sessions go on with the new
        hook, and the unseen edits that follow must still send nothing again."""
        from engram import index_compile

        files = {"inner": (self.ws / "vendor" / "lib" / ".agents" / ".engram" / "inner.md"),
                 "golf": self.base / "global" / "golf.md"}

        def by_file(key: str) -> str:
            card_id, _, view = key.partition("@")
            path = files.get(card_id, self.memory / f"{card_id}.md")
            try:
                raw = path.read_bytes()
            except OSError:
                return key
            card, _secret = index_compile.reparse(str(path), str(path.parent), raw)
            return f"{card_id}@{card.content_hash}" if card and card.view_hash == view else key

        STATS["older_records"] += 1
        # Each context's record here is renamed at its next call in this workspace.
        self.not_renamed = set(self.last_sent)
        folder = self.base / "state" / "delivery"
        for path in [*folder.glob("*.json"), *folder.glob("evicted/*")]:
            document = json.loads(path.read_text())
            entries = document["entries"].values() if "entries" in document \
                else [document["entry"]]
            for entry in entries:
                entry.pop("view_keys", None)
                entry.pop("start_always", None)
                held = [entry.get("unconfirmed") or {}, *(entry.get("unconfirmed_tools") or ())]
                for keys in (entry, *held):
                    for name in ("delivered", "resume_drops", "keys"):
                        if name in keys:
                            keys[name] = [by_file(key) for key in keys[name]]
                entry["delivered"] = sorted(set(entry["delivered"]))
            # As that engram left it: a set-aside record's file dated by its last use.
            stat = path.stat()
            path.write_text(json.dumps(document))
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    @rule(step=st.sampled_from(CLOCK_STEPS))
    def time_passes(self, step: float) -> None:
        self.clock.offset += step
        now = self.clock.time()
        for (key, _), used in self.last_use.items():
            if now - used > delivery.EVICTED_MAX_AGE:
                # No record is trusted this long after its last use, in one step or over
                # several: that context may be sent its bodies again (a second copy, never
                # a loss).
                self.last_sent[key].clear()

    @rule()
    def another_hook_sweeps(self) -> None:
        """Another workspace's hook sweeps old reset markers, session lists and set-aside
        records (about one cache write in 32 does), by the clock it reads."""
        self.saved_delivery["sweep_reset_markers"](delivery.clock())

    @invariant()
    def files_match_the_model(self) -> None:
        on_disk = sorted(p.stem for p in self.memory.glob("*.md"))
        assert on_disk == sorted(self.cards)


# A fixed, CI-sized budget (examples x steps); a soak run raises it and draws new sequences:
# ENGRAM_MODEL_EXAMPLES=500 ENGRAM_MODEL_STEPS=60 ENGRAM_MODEL_RANDOM=1 pytest tests/test_model_based.py
# (ENGRAM_MODEL_VERBOSE=1 prints every run's steps and draws as they go: -s, to a file.)
EXAMPLES = int(os.environ.get("ENGRAM_MODEL_EXAMPLES", "80"))
STEPS = int(os.environ.get("ENGRAM_MODEL_STEPS", "30"))
TestExactlyOnce = ExactlyOnce.TestCase
TestExactlyOnce.settings = settings(max_examples=EXAMPLES, stateful_step_count=STEPS,
                                    deadline=None, database=None,
                                    derandomize=not os.environ.get("ENGRAM_MODEL_RANDOM"),
                                    suppress_health_check=list(HealthCheck),
                                    # Every step of every run printed as it goes, so a
                                    # failure Hypothesis cannot replay (the clock decided it)
                                    # can still be fed to tests/replay_model_failure.py.
                                    verbosity=Verbosity.debug
                                    if os.environ.get("ENGRAM_MODEL_VERBOSE") else Verbosity.normal)


class Draws:
    """The values a replayed sequence draws, in order (for `st.data()`)."""

    def __init__(self, *values: object) -> None:
        self.values = list(values)

    def draw(self, strategy: object) -> object:
        return self.values.pop(0)


# (A failure a random run prints can be fed back the same way: tests/replay_model_failure.py.)
# Sequences replayed as drawn: (whether alpha is always, [step]) after a store of alpha (not
# scoped) and bravo (neither); a step is a hook event (host, kind, session, its draws: the
# prompt's words, then what its kind draws, see `_blocked`, `_prompt`, `_start`,
# `_subagent`) or a store change ("change", kind, its draws, see `_add`).
SEQUENCES = {
    # Found by a random run: a subagent started after a blocked prompt; its context (bravo)
    # is the subagent's. It failed because this test wrote the subagent's context to the
    # session's transcript, where the client does not (`_transcribe`);
    # tests/test_blocked_prompt.py has engram's side of it.
    "subagent after a blocked prompt": (False, [
        ("claude", "blocked", "s2", (["bravo"], "proj", 1)),
        ("claude", "subagent", "s2", (["alpha"], "agent-1", "proj")),
        ("claude", "prompt", "s2", (["bravo"], "proj", False))]),
    # The rest failed on the code before their fixes. A session's first call, a blocked
    # prompt, carried the always card alpha.
    "claude: the always card of a blocked first prompt": (True, [
        ("claude", "blocked", "s1", (["bravo"], "proj", 1)),
        ("claude", "prompt", "s1", (["bravo"], "proj", False))]),
    # Gemini's start prints nothing: its first prompt, denied, carried alpha.
    "gemini: the always card of a blocked first prompt": (True, [
        ("gemini", "start", "s1", (["bravo"], "startup", "proj")),
        ("gemini", "blocked", "s1", (["bravo"], "proj", False)),
        ("gemini", "prompt", "s1", (["bravo"], "proj", False))]),
    # An always card (charlie) added mid-session.
    "an always card added mid-session": (False, [
        ("codex", "start", "s1", (["alpha"], "startup", "proj", "once")),
        ("codex", "prompt", "s1", (["alpha"], "proj")),
        ("change", "add", (False, "charlie", True, False, ["keep"])),
        ("codex", "prompt", "s1", (["alpha"], "proj"))]),
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_a_replayed_sequence(name: str) -> None:
    always, steps = SEQUENCES[name]
    machine = ExactlyOnce()
    try:
        machine.start_store((1000, 1, 2000), {}, 2,
                            Draws(always, False, ["keep"], False, False, ["keep"]))  # type: ignore[arg-type]
        for step in steps:
            if step[0] == "change":
                machine.store_change(step[1], Draws(*step[2]))  # type: ignore[arg-type]
            else:
                host, kind, session, draws = step
                machine.hook_event(kind, host, session, Draws(*draws))  # type: ignore[arg-type]
            machine.files_match_the_model()
    finally:
        machine.teardown()


def test_scripted_upgrade_over_an_index_that_has_not_seen_the_edit() -> None:
    """A random soak failed once with `alpha sent twice to codex|s1 with no reset or edit` on
    a Codex tool call after edits of alpha, and Hypothesis could not replay it (the same-tick
    edits depend on the clock). These steps, through the same machine and oracle, fail that
    way every time on the engram before the fix: a record an older engram wrote, renamed at
    a call answered from a stored index that had not seen the card's last edit, then a tag
    edit."""
    machine = ExactlyOnce()
    try:
        machine.start_store(thresholds=(1, 300, 2000), config={}, n=1,
                            data=Draws(False, False, ["keep"]))
        machine.hook_event("prompt", "codex", "s1", Draws(["alpha"], "proj"))
        # In place (no folder changes: the stored index answers, unchecked), no secret.
        machine.store_change("edit", Draws(True, False, "alpha", ["merge"]))
        machine.hook_event("prompt", "codex", "s1", Draws(["alpha"], "proj"))
        machine.store_change("older_records", Draws())
        machine.hook_event("prompt", "codex", "s1", Draws(["zulu"], "proj"))
        machine.store_change("unseen", Draws("alpha", "extra", True))
        # Code written that imports alpha's two packages routes alpha.
        machine.hook_event("path", "codex", "s1", Draws(["alpha"], "alpha", "proj"))
    finally:
        machine.teardown()


# --- the same promises through real processes -------------------------------------------

def test_process_level_run_with_lowered_thresholds(tmp_path: Path) -> None:
    """A scripted run through `engram hook` processes with the deferral and background paths
    forced by environment: an in-place edit, a secret planted, a rename."""
    ws = tmp_path / "proj"
    (ws / ".git").mkdir(parents=True)
    memory = ws / ".agents" / ".engram"
    memory.mkdir(parents=True)
    (memory / "alpha.md").write_text(card_text("alpha", "alpha rule 1: keep tests green.",
                                               False, False))
    (memory / "bravo.md").write_text(card_text("bravo", "bravo rule 2: ship small steps.",
                                               True, False))
    env = {**os.environ, "ENGRAM_DEFER_MIN_FILES": "1", "ENGRAM_BACKGROUND_MIN_CHANGES": "1",
           "ENGRAM_FIRST_BUILD_MAX": "2000"}

    def run(host: str, name: str, session: str, **changes: object) -> str:
        document = _payload(host, name, ws, session, **changes)
        done = subprocess.run([sys.executable, "-m", "engram", "hook", host], env=env,
                              input=json.dumps(document).encode(), capture_output=True,
                              timeout=60)
        assert done.returncode == 0
        return context(done.stdout.decode())

    first = run("claude", "SessionStart.json", "p1", source="startup")
    assert bodies(first) == {"bravo": ["bravo rule 2: ship small steps."]}
    assert bodies(run("claude", "UserPromptSubmit.json", "p1", prompt="alpha notes")) == {
        "alpha": ["alpha rule 1: keep tests green."]}
    with open(memory / "alpha.md", "r+", encoding="utf-8") as handle:  # in place, deferred
        handle.write(card_text("alpha", "alpha rule 3: review every change.", False, False))
        handle.truncate()
    text = run("codex", "UserPromptSubmit.json", "p2", prompt="alpha notes")
    assert bodies(text)["alpha"] == ["alpha rule 3: review every change."]
    again = run("codex", "UserPromptSubmit.json", "p2", prompt="alpha notes")
    assert "alpha" not in bodies(again) and "alpha" in already(again)
    with open(memory / "alpha.md", "r+", encoding="utf-8") as handle:
        handle.write(card_text("alpha", f"alpha rule 4: token {GITHUB}.", False, False))
        handle.truncate()
    leaked = run("gemini", "BeforeAgent.json", "p3", prompt="alpha notes")
    assert GITHUB not in leaked and "alpha" not in bodies(leaked)
    os.replace(memory / "bravo.md", memory / "charlie.md")
    (memory / "charlie.md").write_text(card_text("charlie", "charlie rule 5: merge often.",
                                                 True, False))
    restarted = run("claude", "SessionStart.json", "p1", source="clear")
    assert "bravo" not in bodies(restarted)
    assert bodies(restarted).get("charlie") in (None, ["charlie rule 5: merge often."])
