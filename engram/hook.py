"""One hook call end to end (steps 1-9 of docs/architecture.md): normalize the payload, find the
workspace from the payload's cwd, load the compiled index, route, then under the delivery
cache's lock decide what is new, budget, render and record only what was sent, and encode the
host's own answer. Everything but the file steps is delegated to pure modules."""

from __future__ import annotations

import os
import time

from engram import delivery, delta, fileio, json_accel, paths
from engram import event as event_module
from engram.event import Event
from engram.index import CompiledIndex
from engram.render import Item

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Final, Iterable, Mapping

    from engram.card import Card

DEFAULT_MAX_TOKENS: Final = 1600
# All the waiting one call may do for locks (the index's SQLite write lock, the delivery
# cache's lock), together: well under the 10 s hook timeout Claude, Codex and Gemini get.
WAIT_BUDGET: Final = 6.0
# Every run of one start event (one per engram entry the event matches) is started at once
# and answers within the host's hook timeout (10 s): the same payload again within this time
# is that event, not a new start.
SAME_START_NS: Final = 10 * 1_000_000_000
# Tool answers held for the next prompt's check (`_hold_tool_answer`): a turn of more tool
# calls that sent bodies keeps the newest.
MAX_HELD_TOOLS: Final = 64
# A rule file engram writes holds one card, far below this.
MAX_RULE_BYTES: Final = 1024 * 1024
# A host definition without `answer:` gets the most common shape (Claude's, Codex's, Gemini's).
DEFAULT_ANSWER: Final[Mapping[str, Any]] = {
    "envelope": {"hookSpecificOutput": {"hookEventName": "$event", "additionalContext": "$text"}},
    "empty": "{}"}


def answer_spec(runtime: Mapping[str, Any]) -> Mapping[str, Any]:
    """The host's answer shape (hosts/<host>.yaml `runtime.answer`)."""
    spec: Mapping[str, Any] = runtime.get("answer") or DEFAULT_ANSWER
    return spec


def empty_answer(spec: Mapping[str, Any]) -> str:
    return str(spec.get("empty", "{}"))


def _fill(node: Any, values: Mapping[str, str]) -> Any:
    """The envelope template with `$event`, `$text`, `$action` and `$slot` put in."""
    if isinstance(node, str):
        return values.get(node, node)
    if isinstance(node, dict):
        return {key: _fill(value, values) for key, value in node.items()}
    if isinstance(node, list):
        return [_fill(value, values) for value in node]
    return node


def encode(spec: Mapping[str, Any], event_name: str, text: str, action: str = "replace",
           slot: str = "") -> str:
    """The host's own envelope around `text`; the empty answer when there is nothing. A
    single-slot host is also told to keep what its slot holds (`retain`: the empty answer) or
    to clear it (its `clear` answer); `slot` is the token its plugin keeps with the text."""
    if action == "clear" and "clear" in spec:
        return str(spec["clear"])
    if not text or action == "retain":
        return empty_answer(spec)
    filled = _fill(spec.get("envelope", "$text"),
                   {"$event": event_name, "$text": text, "$action": action, "$slot": slot})
    return filled if isinstance(filled, str) else json_accel.dumps(filled, ensure_ascii=False)


def _item(index: CompiledIndex, slot: int, rank: int) -> Item:
    """A card's render item without its body: bodies are read only for the cards sent."""
    row = index.row(slot)
    return Item(id=row.id, title=row.title, card=row.card, body="",
                priority=row.priority, rank=rank)


def _current(index: CompiledIndex, routed: list[delta.Routed],
             delivered: set[str]) -> tuple[list[delta.Routed], list[delta.Routed]]:
    """(cards to send, cards found already delivered): `routed` with the bodies their files
    hold now. A file still holding the content its key names gives its body by offset. A file
    changed since the index was compiled (a deferred or backgrounded freshness check, or an
    edit racing this call) is parsed again alone and checked for secrets: its current body
    goes out under its current key, or is found delivered under that key, or, when it no
    longer parses, names another id or holds a secret, is not sent (and the log says so).
    Never a new body under an old key, nor one the secret check has not seen."""
    send: list[delta.Routed] = []
    found: list[delta.Routed] = []
    for r in routed:
        body, raw = index.current_body(r.slot)
        if body is not None:
            send.append(r.replace(item=r.item.replace(body=body)))
            continue
        card, secret = None, False
        if raw is not None:
            from engram import index_compile

            row = index.row(r.slot)
            card, secret = index_compile.reparse(row.path, row.root, raw)
        if card is None or card.id != r.id or secret:
            from engram import log

            why = ("is gone or unreadable" if raw is None else "no longer parses" if card is None
                   else "now names another id" if card.id != r.id else "now holds a secret")
            log.note(f"card {r.id} changed since the index was compiled and {why}: not sent",
                     name="hook.log")
            continue
        fresh = r.replace(key=card.key, file_key=f"{card.id}@{card.content_hash}",
                          item=r.item.replace(title=card.title, card=card.card, body=card.body,
                                              priority=card.priority))
        (found if delta.is_delivered(fresh, delivered) else send).append(fresh)
    return send, found


def _name_views(index: CompiledIndex, entry: dict[str, Any]) -> None:
    """Rename the keys of a record an older engram wrote after what the model reads. Such a
    record keys a card by the hash of its file's bytes (`id@file hash`): that key counts while
    the file is unchanged, but after an edit of what the model never reads (a tag, `priority`)
    it counts for nothing, and the card the session holds would be sent again. Each key naming
    the content the index holds for its id becomes `id@view hash`, in every list of keys the
    record keeps (so a drop or a resume still finds what it names); once per record
    (`view_keys`, which every record the hook makes carries). A key of content the index has
    not seen yet is renamed from the card's file; one of content neither holds stays as it is."""
    lists = [entry.get("delivered"), entry.get("resume_drops"),
             (entry.get("unconfirmed") or {}).get("keys")]
    lists += [held.get("keys") for held in entry.get("unconfirmed_tools") or ()]
    renamed: dict[str, str] = {}
    for keys in lists:
        for key in keys or ():
            card_id, _, digest = key.partition("@")
            slot = index.slot_of(card_id)
            if key in renamed or slot is None:
                continue
            try:
                row = index.row(slot)
            except KeyError:
                continue
            if row.hash == digest:
                if row.view != digest:
                    renamed[key] = f"{card_id}@{row.view}"
            else:
                view = _view_of_file(index, slot, card_id, digest)
                if view:
                    renamed[key] = f"{card_id}@{view}"
    if renamed:
        entry["delivered"] = sorted({renamed.get(key, key) for key in entry["delivered"]})
        for keys in lists[1:]:
            if keys:
                keys[:] = list(dict.fromkeys(renamed.get(key, key) for key in keys))
    entry["view_keys"] = True


def _view_of_file(index: CompiledIndex, slot: int, card_id: str, digest: str) -> str:
    """The view hash of the card `card_id`'s file when its bytes now hash to `digest`, else
    ''. An index answering before its per-file check (or while a child rebuilds) may not have
    seen an edit an older engram already sent and keyed by the file: the file says what that
    key names."""
    _body, raw = index.current_body(slot)
    if raw is None:
        return ""
    import xxhash

    if xxhash.xxh64_hexdigest(raw) != digest:
        return ""
    card = _card_of_file(index, slot, raw)
    return card.view_hash if card is not None and card.id == card_id else ""


def _card_of_file(index: CompiledIndex, slot: int, raw: bytes) -> Card | None:
    """The card slot `slot`'s file holds now (`raw`, its bytes), parsed alone; None when it
    no longer parses."""
    from engram import index_compile

    row = index.row(slot)
    card, _secret = index_compile.reparse(row.path, row.root, raw)
    return card


def _held_by_id(delivered: Iterable[str]) -> dict[str, set[str]]:
    """The keys a record holds, by card id (a record keeps one key per id; one written
    before the key named what the model reads may hold the file's key)."""
    held: dict[str, set[str]] = {}
    for key in delivered:
        held.setdefault(key.split("@", 1)[0], set()).add(key)
    return held


def _routed(index: CompiledIndex, slots: list[int],
            native: tuple[tuple[str, ...], str] | None = None) -> list[delta.Routed]:
    """The routed cards to consider sending. `native` is (the host's `loads_natively` globs,
    the workspace folder): a card the host loads by itself is not this hook's to send, list
    or count."""
    routed: list[delta.Routed] = []
    blocked = set(index.data.get("secret_slots") or ())
    for rank, slot in enumerate(slots):
        if slot in blocked or index.holds_secret(slot):
            continue  # a card holding a secret is never injected; lint reports it
        row = index.row(slot)
        if native is not None and native[0]:
            from engram import native_loads

            if native_loads.native_file(native[0], native[1], row.path, row.provenance):
                continue
        routed.append(delta.Routed(row.id, f"{row.id}@{row.view}", _item(index, slot, rank),
                                   bool(row.always), slot, f"{row.id}@{row.hash}"))
    return routed


def _budget(runtime: Mapping[str, Any], settings: Mapping[str, Any]) -> tuple[str, int]:
    spec = runtime.get("budget") or {}
    unit = spec.get("unit", "tokens")
    limit = spec.get("limit", "setting")
    if limit == "setting" or not isinstance(limit, int):
        limit = int(settings.get("load.max_tokens", DEFAULT_MAX_TOKENS))
    return unit, limit


class HookCall:
    """The state of one call: host definition, event, workspace, index and settings."""

    def __init__(self, host_def: Mapping[str, Any], event: Event, workspace: Any,
                 index: CompiledIndex, write: Callable[[str], None] | None = None) -> None:
        self.runtime: Mapping[str, Any] = host_def.get("runtime") or {}
        self.answer = answer_spec(self.runtime)
        self.write = write
        self.written: str | None = None  # the host's answer, once handed to `write`
        # The project folder of native rule files (Claude's .claude/rules/engram), if any.
        self.rules_folder = str((host_def.get("install") or {}).get("native_rules") or "")
        # A rule-load event: the file relative to the workspace, and the card it is engram's
        # generated copy of ('' when it is another file).
        self.rule_file = _rule_file(workspace.location, event.rule_file) \
            if event.kind == "rule_loaded" else ""
        self.generated_rule = generated_rule_id(self.rules_folder, self.rule_file)
        self.event = event
        self.workspace = workspace
        self.index = index
        self.settings = workspace.settings
        self.mode: str = self.settings.get("read", "auto")
        self.proof: bool = self.settings.get("proof", "off") != "off"
        self.unit, self.limit = _budget(self.runtime, self.settings)
        self.spec: Mapping[str, Any] = (self.runtime.get("events") or {}).get(event.name) or {}
        # What the host writes to its transcript when another hook blocks a prompt.
        self.blocked_note = str(self.runtime.get("blocked_prompt_note") or "")
        # Whether the host writes each prompt it keeps, with every hook's context, to its
        # transcript (a prompt another hook blocks is not there, or there without it).
        self.context_transcribed = bool(self.runtime.get("prompt_context_transcribed"))
        self.host_def = host_def
        self._native: tuple[tuple[str, ...], str] | None = None
        self.reset_stamp = 0  # the session's last reset, from any folder (ns)
        self.now = 0.0  # the delivery clock (`delivery.clock`), read once the lock is held
        self.on_merit: set[str] = set()  # ids the prompt routed for themselves (`route`)
        self.dropped: set[str] = set()  # ids whose bodies the host dropped (`_forget_if_dropped`)
        self.payload_digest = ""  # xxh64 of the raw payload (`_start_seen`)

    @property
    def native(self) -> tuple[tuple[str, ...], str]:
        """(the host's `loads_natively` globs and own files, the workspace folder): cards of
        files this host loads by itself (its rule folders, an imported CLAUDE.md still in
        place, the user's own ~/.claude/CLAUDE.md) go to the other hosts only, or the model
        reads them twice. Worked out by the first call that routes, not by every event."""
        if self._native is None:
            from engram import native_loads

            self._native = (native_loads.patterns_of(self.host_def), self.workspace.location)
        return self._native

    def encoded(self, result: delta.Answer) -> str:
        if self.event.silent:
            return ""
        return encode(self.answer, self.event.name, result.text, result.action, result.slot)

    def emit(self, result: delta.Answer) -> None:
        """Write the answer (once). Called under the delivery lock, before the record: a
        write that raises leaves the transaction, and so the record, unwritten."""
        text = self.encoded(result)
        if result.withheld:
            from engram import log

            for pair in result.withheld:
                log.note(f"card {pair}: not sent, a secret runs from one into the other",
                         name="hook.log")
        if self.write is not None:
            self.write(text)
        self.written = text

    # --- routing ------------------------------------------------------------------------
    def route(self, prompt: str, paths: list[str], include_always: bool) -> list[int]:
        from engram.query import route_request

        limit = int(self.settings.get("load.limit", 8))
        result = route_request(self.index, self.workspace.location, self.event.cwd, prompt,
                               paths, limit, include_always=include_always)
        # The cards this prompt selected on their own merit (ranked, or a prerequisite of
        # one), as opposed to always cards added on top of every prompt.
        self.on_merit = set(result.ranked) | {
            s.id for s in result.selected if any(r.kind == "dependency" for r in s.reasons)}
        return [s.slot for s in result.selected]

    def path_slots(self) -> list[int]:
        from engram.query import route_request

        result = route_request(self.index, self.workspace.location, self.event.cwd, "",
                               list(self.event.paths), 10_000, include_always=False,
                               name_words=True,
                               code=self.event.code if self.settings.get("load.code", True) else None)
        # Glob matches first, then the cards the written code uses or imports, each after the
        # cards it depends on (`selected` is in that order); then cards whose title, tags or
        # description name the files.
        by_glob = self._with_prerequisites(result, ("path",), set())
        by_code = self._with_prerequisites(result, ("import", "code"), set(by_glob))
        by_name = [s.slot for s in result.selected if s.slot not in by_glob
                   and s.slot not in by_code and any(r.kind in ("tag", "text") for r in s.reasons)]
        return by_glob + by_code + by_name

    def _with_prerequisites(self, result: Any, kinds: tuple[str, ...], taken: set[int]) -> list[int]:
        """The selected cards with a reason of one of `kinds`, and the cards they depend on,
        in `selected` order (prerequisites first), leaving out `taken`."""
        wanted = {s.slot for s in result.selected if any(r.kind in kinds for r in s.reasons)}
        wanted -= taken
        stack = list(wanted)
        while stack:
            for dep in self.index.row(stack.pop()).depends_on:
                dep_slot = self.index.slot_of(dep)
                if dep_slot is not None and dep_slot not in wanted and dep_slot not in taken:
                    wanted.add(dep_slot)
                    stack.append(dep_slot)
        return [s.slot for s in result.selected if s.slot in wanted]

    def slots_for_keys(self, keys: list[str]) -> list[int]:
        slots: list[int] = []
        for key in keys:
            slot = self.index.slot_of(key.split("@", 1)[0])
            if slot is not None and slot not in slots:
                slots.append(slot)
        return slots

    # --- the call -----------------------------------------------------------------------
    def run(self) -> delta.Answer:
        event = self.event
        if event.kind == "end":
            self._enqueue_session_end()
        # The native rule file already carries the body (Claude path_rules: native): nothing
        # to route, yet a call of the session, which keeps its record in use.
        native_path = event.kind == "path" and self.spec.get("skip_when_path_rules") == \
            self.settings.get("hooks.path_rules")
        if event.kind == "start" and self.spec.get("sync_native_rules") \
                and not self.index.building:
            # While the whole index is built in the background the rule files keep what the
            # last complete index wrote: an index that knows no card would remove them all.
            self._sync_native_rules()
        cache = delivery.cache_path(self.workspace.key)
        self.reset_stamp = reset_stamp(event)
        transaction = delivery.transaction(cache)
        if self.runtime.get("delivery") == "slot":
            with transaction as document:
                self.now = transaction.now
                return self._fill_slot(document, self.now)
        # Routing and body reads need no cache state: done before taking the lock, so the
        # lock covers only the delta, budget, render and record (steps 5-8).
        routed = None if native_path else self._route_unlocked()
        with transaction as document:
            self.now = transaction.now
            return self._deliver(document, self.now, routed)

    def _route_unlocked(self) -> list[delta.Routed] | None:
        """The routed cards of a start, prompt or path event (None for other kinds). Prompts
        route with the always cards; `_deliver` drops them once the session has had them."""
        event = self.event
        if event.kind == "start":
            slots = list(self.index.data["always"])
        elif event.kind == "prompt":
            slots = self.route(event.prompt, [], include_always=True)
        elif event.kind == "path":
            slots = self.path_slots()
        else:
            return None
        return _routed(self.index, slots, self.native)

    def _deliver(self, document: dict[str, Any], now: float,
                 routed: list[delta.Routed] | None) -> delta.Answer:
        event = self.event
        entry = delivery.entry_for(document, event.cache_key(self.workspace.location), event.host,
                                   self.workspace.location, event.session, event.agent, now)
        if not entry.get("view_keys") and not self.index.building:
            _name_views(self.index, entry)
        if event.resets and event.kind == "start" and self.spec.get("same_payload_once") \
                and self._start_seen(entry):
            # The same start again, moments later: a second engram entry for the event (a
            # team's project file and the user's `--global` link both match it). Its reset was
            # applied and its always cards sent by the first run; a second reset would send
            # them again into the same context. Only where every real start has a payload of
            # its own (`same_payload_once`): Cursor's start is its only channel, and one lost
            # there is lost for the whole session.
            entry["reset_at"] = max(self.reset_stamp, int(entry.get("reset_at") or 0))
        else:
            delivery.apply_reset(entry, self.reset_stamp, now)
        # Every call of the session keeps its record in use, whatever it sends (a tool call
        # Claude answers from its rule files, a prompt in read mode `startup`, a session's
        # end): a record is trusted 30 days from its last use. At most one write a minute.
        delivery.touch(entry, now)
        if event.resets and event.kind == "start":
            entry["reset_by"] = self.payload_digest
        elif event.kind != "rule_loaded":
            # Anything else the session does (a prompt, a tool call, a PreCompact) comes after
            # every run of the start: a start after it is a new one. Not a rule load: the host
            # loads its instruction files as a session starts or compacts, and runs those
            # hooks at the same moment as the start's own runs.
            entry.pop("reset_by", None)
        places = self._join_session()
        if event.kind == "prompt" and ("unconfirmed" in entry or "unconfirmed_tools" in entry):
            self._forget_if_dropped(entry)
        if event.kind == "start" and entry.get("resume_drops"):
            # Bodies sent through an event whose context the client drops from a resumed
            # history (`dropped_on_resume`) are sent again rather than lost.
            gone = set(entry.pop("resume_drops"))
            entry["delivered"] = [k for k in entry.get("delivered") or [] if k not in gone]
        if event.kind in ("reset", "compaction"):
            # `compaction`: the host is about to compact, and may not (cancelled, blocked by
            # another hook, failed, nothing to compact); the reset comes with the event it
            # sends once it has (a `compact` session start).
            return delta.EMPTY
        if event.kind == "rule_loaded":
            self._record_rule_loaded(entry, now)
            return delta.EMPTY
        if event.kind == "start" and self.spec.get("defer_to_prompt"):
            # The host loses what a session start prints (Gemini drops a resumed user turn
            # that starts with injected context): the next prompt delivers it instead.
            entry["start_pending"] = True
            return delta.EMPTY
        pending = event.kind == "prompt" and bool(entry.get("start_pending"))

        list_already = event.kind == "prompt"
        if event.kind == "subagent":
            parent_key = event.replace(agent="").cache_key(self.workspace.location)
            parent = document["entries"].get(parent_key) or {}
            slots = list(self.index.data["always"])
            slots += [s for s in self.slots_for_keys(parent.get("last_routed") or []) if s not in slots]
            routed = _routed(self.index, slots, self.native)
        elif routed is None:
            return delta.EMPTY
        always_now = [r.id for r in routed if r.always]
        if event.kind == "prompt" and entry.get("start_done") and not pending:
            # Always-on cards are context for the whole session, not answers to a prompt:
            # after the start they come again only when the prompt routes them for
            # themselves (one the start folded or dropped over the budget is then sent, or
            # found delivered and not listed), or when the session holds an older version
            # of one (edited since it was sent: the model's copy is stale).
            held = _held_by_id(entry.get("delivered") or ())
            # An always card the session's start (or last prompt) did not know of (added,
            # renamed, made always or freed of a secret since) comes now, as the start would
            # have brought it; one dropped with a blocked prompt (the start's share that a
            # session's first prompt carried) never reached the model: it goes again. In a
            # record written before `start_always`, the start knew of what it delivered.
            known = set(entry["start_always"]) if "start_always" in entry else set(held)
            routed = [r for r in routed if not r.always or r.id in self.on_merit
                      or r.id in self.dropped or (r.id not in known and r.id not in held)
                      or (r.id in held and not {r.key, r.file_key} & held[r.id])]
        if pending and self.mode == "startup":
            routed = [r for r in routed if r.always]  # the session start's share only
        routed_keys = [r.key for r in routed]

        note = delta.silence_note(self.mode, "start" if pending else event.kind)
        if event.no_model_channel:
            note = "no channel to the model on this host: nothing delivered"
        if note:
            if not self.proof or event.silent:
                return delta.EMPTY
            return delta.answer([], [], routed_keys, True, self.unit, self.limit, note,
                                list_already=False)

        own = set(entry.get("delivered") or [])
        delivered = own | self._delivered_elsewhere(places)
        new, already = delta.split(routed, delivered, self.mode)
        # Cards this session holds from its record in another workspace are recorded here
        # too: that record ages (and stops being trusted) while the session works here.
        carried = [r.key for r in already if r.key not in own]
        already = [r for r in already if not r.always]  # session context, not this prompt's
        if event.kind == "path":
            cap = int(self.settings.get("load.max_path_cards", 3))
            new, already = new[:cap], []
            if not new:
                return delta.EMPTY
        if self.index.unchecked and already:
            # An index answering before its per-file check may list a card edited since: the
            # session holds the old body. Such a card is read like one to send (and found
            # delivered when what the model reads is unchanged).
            stale = [r for r in already if not self.index.unchanged(r.slot)]
            if stale:
                already = [r for r in already if r not in stale]
                new = sorted(new + stale, key=lambda r: r.item.rank)
        # Only the cards to send are read (repeat prompts read no card file at all, unless
        # the index is unchecked).
        new, found = _current(self.index, new, delivered if self.mode != "always" else set())
        carried += [r.key for r in found if r.key not in own]
        already += [r for r in found if not r.always]
        result = delta.answer(new, already, routed_keys, self.proof, self.unit, self.limit,
                              list_already=list_already)
        # Recorded only once the answer is written: a hook killed in between re-sends the
        # body next time rather than losing it.
        self.emit(result)
        delivery.mark_delivered(entry, list(result.sent_keys) + carried, now)
        if self.spec.get("dropped_on_resume") and result.sent_keys:
            entry["resume_drops"] = sorted(set(entry.get("resume_drops") or []) | set(result.sent_keys))
        if event.kind == "prompt":
            self._hold_until_seen(entry, result)
        elif event.kind == "path" and self.context_transcribed:
            self._hold_tool_answer(entry, result)
        if event.kind == "prompt":
            prompt_keys = [r.key for r in routed if not r.always]
            if prompt_keys:
                entry["last_routed"] = prompt_keys
        if event.kind in ("start", "prompt", "subagent") and not self.index.building:
            # Not while answering from nothing during a background build: the always cards
            # this start should have carried then come with the first prompt after it.
            # SubagentStart delivered the always cards to the subagent: its own prompts
            # (Codex fires UserPromptSubmit for them) neither resend nor list them.
            entry["start_done"] = True
            entry["start_always"] = sorted(set(always_now))
            entry.pop("start_pending", None)
        return result

    def _hold_until_seen(self, entry: dict[str, Any], result: delta.Answer) -> None:
        """Keep what the next prompt needs to learn whether this answer reached the model,
        where the host drops a prompt another hook blocks (`blocked_prompt_note`,
        `prompt_context_transcribed`): the bodies sent, the transcript, where the host's writes
        to it stand, and the prompt's digest (never its text)."""
        if not result.sent_keys or not self.event.transcript_path \
                or not (self.blocked_note or self.context_transcribed):
            return
        from engram import prompt_outcome

        path = self.event.transcript_path
        offset = prompt_outcome.transcript_size(path)
        if self.context_transcribed and not offset:
            return  # no transcript being written: nothing will tell
        entry["unconfirmed"] = {"keys": list(result.sent_keys), "path": path, "offset": offset,
                                "prompt": _digest(self.event.prompt.strip().encode("utf-8")),
                                "event": self.payload_digest, "at": time.time_ns()}

    def _hold_tool_answer(self, entry: dict[str, Any], result: delta.Answer) -> None:
        """Keep what the next prompt needs to learn whether a tool call's answer reached the
        model, where the host writes what it keeps to its transcript: another hook that
        blocks the tool's result drops every hook's context with it (Gemini's AfterTool
        `decision: deny`). Checked at the next prompt, when the turn is written whole (a
        parallel call's result may not be yet); the oldest go past MAX_HELD_TOOLS (kept
        as delivered, as before)."""
        path = self.event.transcript_path
        if not result.sent_keys or not path:
            return
        from engram import prompt_outcome

        offset = prompt_outcome.transcript_size(path)
        if offset:
            held = list(entry.get("unconfirmed_tools") or [])
            held.append({"keys": list(result.sent_keys), "path": path, "offset": offset})
            entry["unconfirmed_tools"] = held[-MAX_HELD_TOOLS:]

    def _forget_if_dropped(self, entry: dict[str, Any]) -> None:
        """A new prompt: the last prompt's answer and the tool answers since reached the model
        unless the host's transcript says they did not; then their bodies are not delivered
        and go again when routed."""
        held = entry.get("unconfirmed")
        if held and self._same_prompt_event(held):
            return  # its own answer, not yet written, is not a dropped one
        gone = (self._dropped(entry) if held else set()) | self._tools_dropped(entry)
        entry.pop("unconfirmed", None)
        entry.pop("unconfirmed_tools", None)
        if gone:
            entry["delivered"] = [k for k in entry.get("delivered") or [] if k not in gone]
            self.dropped = {key.split("@", 1)[0] for key in gone}
            from engram import log

            log.note(f"the host dropped {len(gone)} card(s) with a blocked prompt or tool "
                     "result: they go again", name="hook.log")

    def _tools_dropped(self, entry: Mapping[str, Any]) -> set[str]:
        """The keys of `entry`'s held tool answers (`_hold_tool_answer`) that the host's
        transcript does not hold: the tool's result was blocked with every hook's context."""
        gone: set[str] = set()
        tools = entry.get("unconfirmed_tools") or ()
        if tools:
            from engram import prompt_outcome

            for tool in tools:
                if tool["path"] == self.event.transcript_path:
                    gone |= prompt_outcome.missing_after(tool["path"], tool["offset"],
                                                         tool["keys"]) or set()
        return gone

    def _same_prompt_event(self, held: Mapping[str, Any]) -> bool:
        """Whether this call is another run of the prompt event whose answer is held, where
        the check looks for the answer in the transcript: a host runs every engram entry the
        event matches (a project link and a --global one) at once, and writes the prompt only
        after all of them have answered, so the first run's bodies are not there yet. The
        same payload within the hook timeout is that event (Gemini's carries a timestamp, and
        Claude Code's a prompt_id since 2.1.196: a prompt asked again is another payload).
        Where the host's note decides (`blocked_prompt_note`), a payload naming no event of
        its own may be a prompt asked again at once after a block (Claude Code before
        2.1.196), which must be checked; the second run of one stamped event must not be
        checked, or it takes the first run's answer for one kept before the user's guard
        has blocked the prompt, or for one dropped after a note on an earlier prompt."""
        applied = int(held.get("at") or 0)
        return (not self.blocked_note or self.event.stamped) and bool(self.payload_digest) \
            and held.get("event") == self.payload_digest \
            and 0 <= time.time_ns() - applied < SAME_START_NS

    def _dropped(self, entry: Mapping[str, Any]) -> set[str]:
        """The keys of `entry`'s held prompt answer (`_hold_until_seen`) that the host dropped
        with a blocked prompt; none when not known to be dropped or held for another
        transcript (a fork)."""
        held = entry.get("unconfirmed")
        if not held or held.get("path") != self.event.transcript_path:
            return set()
        from engram import prompt_outcome

        if not self.blocked_note:
            # The host writes what it keeps: a body not written after the answer was dropped.
            return prompt_outcome.missing_after(held["path"], held["offset"], held["keys"]) or set()
        window = prompt_outcome.read_window(held["path"], held["offset"])

        def is_this_prompt(quoted: str) -> bool:
            # The prompt as the hook read it: the same cut and blocks taken out.
            as_read = event_module.strip_blocks(quoted[:event_module.MAX_PROMPT_CHARS], list(
                self.runtime.get("strip_prompt_blocks") or ()))
            return _digest(as_read.strip().encode("utf-8")) == str(held["prompt"])

        if not window:
            return set()
        return prompt_outcome.dropped_keys(window, held["keys"], self.blocked_note,
                                           is_this_prompt,
                                           prompt_outcome.window_offset(held["offset"]))

    def _start_seen(self, entry: Mapping[str, Any]) -> bool:
        """Whether this record's last reset came from this very payload, within the time the
        host gives the hooks of one event (every run of one start is started at once)."""
        applied = int(entry.get("reset_at") or 0)
        # A stamp ahead of the clock (set back since an earlier reset of the session: each
        # stamp is later than the last) has no age; the payload says it (every real start has
        # one of its own, and anything else the session does in between drops `reset_by`).
        return bool(self.payload_digest) and entry.get("reset_by") == self.payload_digest \
            and time.time_ns() - applied < SAME_START_NS

    def _join_session(self) -> list[str] | None:
        """The workspaces this session (or subagent) has records in, this one added on its
        first call here (whatever the event: a key recorded here counts elsewhere). None for
        a damaged or oversized list: each workspace on its own, as before."""
        event, here = self.event, self.workspace.location
        places = delivery.workspaces_of(event.host, event.context_id)
        if places is not None and here not in places:
            delivery.join_workspace(event.host, event.context_id, here)
        if places is not None:
            # Dated by the delivery clock, never by the one the system stamped a new list
            # with: a wall clock behind it would make the list look old to the next sweep.
            delivery.session_used(event.host, event.context_id, self.now)
        return places

    def _delivered_elsewhere(self, places: list[str] | None) -> set[str]:
        """Keys this session (or subagent) was sent in the other `places`: the same key is
        the same content, already in its context. A record there that has not applied the
        session's last reset yet counts for nothing. Read only by events that send bodies."""
        event, here = self.event, self.workspace.location
        if places is None:
            return set()
        keys: set[str] = set()
        for place in places:
            if place == here:
                continue
            document = delivery.peek_document(delivery.cache_path(paths.workspace_key(place)))
            key, now = event.cache_key(place), self.now
            # The record there, or the one its cache evicted (still the session's context).
            other = document["entries"].get(key) or delivery.restore(key, now) or {}
            if int(other.get("reset_at") or 0) >= self.reset_stamp and delivery.trusted(other, now):
                # What a resumed history drops may be gone already (a resume reported from
                # another folder): sent again rather than lost.
                # A prompt blocked in another folder: what it was sent never arrived. Nor did
                # what went with a tool result blocked there, as a prompt finds (the turn is
                # written whole by then; a tool call of this turn still counts it).
                gone = self._dropped(other)
                if event.kind == "prompt":
                    gone |= self._tools_dropped(other)
                keys.update(set(other.get("delivered") or ()) - set(other.get("resume_drops") or ())
                            - gone)
        return keys

    def _fill_slot(self, document: dict[str, Any], now: float) -> delta.Answer:
        """Single-slot hosts (OpenCode): the slot holds the always cards plus the cards of the
        latest prompt that routed anything. The plugin says which slot it holds (the token of
        the answer that filled it; "" in a process that holds nothing, such as a session
        continued by a new OpenCode process). Answer `retain` when that is the slot wanted
        now, `replace` with the text and its token when not, `clear` when memory is switched
        off. A plugin that does not say is taken to hold what engram last sent it."""
        event = self.event
        entry = delivery.entry_for(document, event.cache_key(self.workspace.location), event.host,
                                   self.workspace.location, event.session, event.agent, now)
        refill = delivery.apply_reset(entry, self.reset_stamp, now) or event.kind == "reset"
        held = event.slot_held
        if held is None:
            last = list(entry.get("slot") or [])
            held = delta.slot_token(last, self.unit, self.limit, self.proof) if last else ""
        if self.mode in ("off", "manual"):
            delivery.reset(entry, now)
            entry["slot"] = []
            return delta.Answer("", (), 0, action="clear" if held else "retain")
        if self.index.building:
            # Nothing known until the background build is done: keep what the slot holds
            # rather than clear it and send it all again a few calls later.
            delivery.touch(entry, now)
            return delta.Answer("", (), 0, action="retain")
        if event.kind == "prompt":
            slots = self.route(event.prompt, [], include_always=False)
            if slots:
                entry["last_routed"] = [r.key for r in _routed(self.index, slots, self.native)]
        slots = list(self.index.data["always"])
        slots += [s for s in self.slots_for_keys(entry.get("last_routed") or []) if s not in slots]
        routed = _routed(self.index, slots, self.native)
        # The slot is named by its cards' file keys: an edit of a fold line refills it too.
        keys = sorted(r.file_key for r in routed)
        token = delta.slot_token(keys, self.unit, self.limit, self.proof)
        if token == held and not refill:
            delivery.touch(entry, now)
            return delta.Answer("", (), 0, action="retain")
        routed, _found = _current(self.index, routed, set())
        keys = sorted(r.file_key for r in routed)
        result = delta.answer(routed, [], keys, self.proof, self.unit, self.limit)
        if result.text:
            result = result.replace(slot=delta.slot_token(keys, self.unit, self.limit, self.proof))
        else:
            result = delta.Answer("", (), 0, action="clear" if held else "retain")
        # Recorded only once the answer is written: a re-send beats a loss.
        self.emit(result)
        entry["delivered"] = sorted(result.sent_keys)
        entry["slot"] = keys if result.text else []
        entry["updated"] = now
        return result

    # --- side channels ------------------------------------------------------------------
    def _record_rule_loaded(self, entry: dict[str, Any], now: float) -> None:
        if not self.generated_rule:
            return
        slot = self.index.slot_of(self.generated_rule)
        if slot is None:
            return
        row = self.index.row(slot)
        key = self._rule_key(slot)
        if key is None:  # not readable now (nothing says what it held): the card, as named
            key = f"{row.id}@{row.view}"
        if not key:
            # The file Claude loaded is not the card as it is now: edited since the rule files
            # were written (at a session start), the model holds an older version. Not
            # recorded, and a key of the card the record holds goes (the model's latest copy
            # is the older one): the next prompt routing it sends it, and the rule files are
            # brought in step for the next load.
            entry["delivered"] = [k for k in entry.get("delivered") or ()
                                  if k.split("@", 1)[0] != row.id]
            self._sync_native_rules()
            return
        delivery.mark_delivered(entry, [key], now)
        # The model holds this content now, whatever becomes of an earlier answer that
        # carried it: a blocked prompt's (or tool result's) drop must not take it out.
        for held in [entry.get("unconfirmed") or {}, *(entry.get("unconfirmed_tools") or ())]:
            if key in (held.get("keys") or ()):
                held["keys"] = [k for k in held["keys"] if k != key]
        from engram import log

        log.note(f"{self.event.host} {self.event.name} native rule loaded: {row.id}",
                 name="usage.log")

    def _rule_key(self, slot: int) -> str | None:
        """The key of the card content the loaded rule file holds: the card as the index
        holds it, or as its file holds it now (an index that has not seen an edit yet), when
        the rule file is that card's rule; '' when it is neither (a stale or foreign file);
        None when the rule file cannot be read."""
        from engram import native_rules

        try:
            loaded = fileio.read_bounded(os.path.join(self.workspace.location, self.rule_file),
                                         MAX_RULE_BYTES).decode("utf-8").replace("\r\n", "\n")
        except (OSError, UnicodeDecodeError):
            return None
        cards = [card for card, _secret in self.index.judged_cards([slot])]
        _body, raw = self.index.current_body(slot)
        card = _card_of_file(self.index, slot, raw) if raw is not None else None
        if card is not None:
            cards.append(card)
        return next((card.key for card in cards if card.id == self.generated_rule
                     and native_rules.render_rule(card) == loaded), "")

    def _sync_native_rules(self) -> None:
        if self.settings.get("hooks.path_rules") != "native":
            return
        if not self.rules_folder:
            return
        rules_dir = os.path.join(self.workspace.location, *self.rules_folder.split("/"))
        if not os.path.isdir(rules_dir):
            return  # not linked in native mode: nothing of ours to keep in step
        try:
            from pathlib import Path

            from engram import native_rules

            slots = [slot for slot in self.index.active if self.index.row(slot).applies_to]
            # Each card with the compiler's verdict on exactly that content (one read of its
            # row): a concurrent refresh cannot pair one commit's verdict with another's text.
            judged = self.index.judged_cards(slots)
            scoped = [card for card, _secret in judged if card.applies_to]
            verdicts = {card.file_key: secret for card, secret in judged}
            # Never through a committed symlink that leads out of the workspace.
            native_rules.sync_rules(Path(rules_dir), scoped, root=self.workspace.location,
                                    follow=self.settings.get("install.follow_symlinks") is True,
                                    loads_natively=self.native[0], secret_verdicts=verdicts)
        except Exception as exc:  # noqa: BLE001 - a failed sync must not cost the memory
            from engram import log, secrets

            # The sync works on card text, and an exception's message may quote it.
            log.note(f"native rule sync failed: {type(exc).__name__}: {secrets.redact(str(exc))}",
                     name="hook.log")

    def _enqueue_session_end(self) -> None:
        event = self.event
        if not event.transcript_path:
            return
        try:
            from engram import session_queue

            session_queue.enqueue(self.workspace.memory_location,
                                  transcript_path=event.transcript_path,
                                  host=event.host, session=event.session,
                                  at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        except Exception as exc:  # noqa: BLE001
            from engram import log

            log.note(f"session queue append failed: {type(exc).__name__}", name="hook.log")


def handle(host_name: str, raw: bytes, defer: bool = False,
           write: Callable[[str], None] | None = None) -> str:
    """The hook's stdout for one payload, also handed to `write` (once) when given: inside the
    delivery transaction, before what it delivers is recorded, when it delivers anything.
    Raises on internal errors; the entry point turns any exception into the host's empty
    answer (unless `write` already had the answer)."""
    started = time.perf_counter()
    fileio.set_wait_budget(WAIT_BUDGET)
    try:
        return _handle(host_name, raw, defer, write, started)
    finally:
        fileio.set_wait_budget(None)


def _handle(host_name: str, raw: bytes, defer: bool, write: Callable[[str], None] | None,
            started: float) -> str:
    from engram import firing_log, host_registry
    from engram import index as index_module
    from engram import workspace as workspace_module

    paths.make_state_dir()  # before anything is written under it (the hosts cache first)
    host_def = host_registry.load_host(host_name)
    host = host_def["name"]
    runtime = host_def.get("runtime") or {}
    shape = answer_spec(runtime)
    payload = json_accel.loads(raw) if raw.strip() else None
    event = event_module.normalize(host, runtime, payload)
    if event is None:
        return _written(write, empty_answer(shape))
    event = event.replace(cwd=os.path.realpath(event.cwd))
    ws = workspace_module.load(event.cwd)
    if ws is None or not ws.roots:
        if event.resets:
            # Nothing to send here, but the session's records in other workspaces must
            # learn of a compaction or /clear reported from this folder.
            delivery.announce_reset(event.host, event.context_id)
        firing_log.record(host, event.name, 0, workspace=ws.key if ws is not None else "")
        return _written(write, "" if event.silent else empty_answer(shape))
    index = index_module.load_or_build(ws, defer=defer)
    call = HookCall(host_def, event, ws, index, write)
    call.payload_digest = _digest(raw)
    try:
        result = call.run()
    except Exception as exc:  # noqa: BLE001 - only a damaged index is retried
        if not index_module.is_damage(exc) or call.written is not None:
            raise
        # Torn pages show only when routing reads them; nothing was recorded (the delivery
        # transaction writes nothing on an exception), so set the index aside and go again.
        index.db.close()
        index_module.set_aside(ws, f"damaged ({type(exc).__name__} while routing)")
        call = HookCall(host_def, event, ws, index_module.load_or_build(ws), write)
        call.payload_digest = _digest(raw)
        result = call.run()
    text = call.written
    if text is None:
        text = _written(write, call.encoded(result))
    # A rule file is named only when it is engram's copy of a card the index holds (ids pass
    # the secret gate); another file's name, which the payload gave, is not kept.
    ours = bool(call.generated_rule) and call.index.slot_of(call.generated_rule) is not None
    firing_log.record(host, event.name, len(text.encode("utf-8")),
                      (time.perf_counter() - started) * 1000, workspace=ws.key,
                      rule=(call.rule_file if ours else firing_log.OTHER_RULE) if call.rule_file
                      else "", engram_rule=ours)
    return text


def _digest(raw: bytes) -> str:
    import xxhash  # already loaded by the state dir's key functions

    return xxhash.xxh64_hexdigest(raw)


def reset_stamp(event: Event) -> int:
    """The session's last reset (ns): now, stamped for every folder, when this event resets
    it."""
    if event.resets:
        return delivery.announce_reset(event.host, event.context_id)
    return delivery.last_reset(event.host, event.context_id)


def _rule_file(root: str, path: str) -> str:
    """A loaded rule file relative to the workspace (its name alone when outside it, or '?')."""
    if not path:
        return "?"
    path = path.replace("\\", "/")
    full = path if os.path.isabs(path) else os.path.join(root, path)
    relative = os.path.relpath(full, root).replace("\\", "/")
    if relative.startswith("../"):
        # The host may name it through a symlink of the workspace's folder (the root is real).
        relative = os.path.relpath(os.path.realpath(full), root).replace("\\", "/")
    return os.path.basename(path) if relative.startswith("../") else relative


def generated_rule_id(rules_folder: str, relative: str) -> str:
    """The card id when `relative` (a workspace-relative path, / separators) is one of
    engram's generated rule files, `<rules_folder>/<id>.md` (install.native_rules), else ''.
    A file of the same name in another project, or in a sub-folder, is not one of ours."""
    folder, _, name = relative.rpartition("/")
    if not rules_folder or folder != rules_folder.strip("/") or not name.endswith(".md"):
        return ""
    return name[: -len(".md")]


def _written(write: Callable[[str], None] | None, text: str) -> str:
    if write is not None:
        write(text)
    return text
