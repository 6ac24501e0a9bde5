"""Pure merge and strip of engram's entries, one adapter per config format.

`merge(document, ours)` returns the document with exactly our entries present (updated in
place where they already are, appended where missing, stale and duplicate ones removed);
`strip(document, ours)` returns it without any. Foreign entries, foreign keys on groups and
foreign handlers sharing a group with ours are kept untouched. Inputs are never mutated.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from engram.installer import jsonc
from engram.installer.command import is_ours, runs_engram_hook

# Keys engram sets on its own handlers. Anything else a user adds to one of our handlers is
# kept across re-links; `name`/`description` also clear the predecessor's managed markers.
MANAGED_KEYS: Final = frozenset({"type", "command", "timeout", "timeoutSec", "name", "async",
                                 "description"})
PLUGIN_MARKER: Final = "engram:opencode-plugin"
_BY_HAND: Final = ("nothing was changed; add engram's entries by hand (see `engram link --dry-run "
                   "--json`), and please report the file's layout as an engram bug")


class ShapeError(Exception):
    """The file does not have the shape we can merge into: which key, and what to do."""

    def __init__(self, key: str, problem: str, fix: str) -> None:
        super().__init__(f"{key}: {problem}")
        self.key, self.problem, self.fix = key, problem, fix


@dataclass(frozen=True)
class Entry:
    """One handler engram wants under one event (and matcher)."""

    event: str
    handler: tuple[tuple[str, Any], ...]
    matcher: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.handler)


@dataclass(frozen=True)
class Ours:
    """Everything merge and strip need to know about engram's side of one config file."""

    names: tuple[str, ...]  # the host's name and aliases: the marker after `engram hook`
    entries: tuple[Entry, ...] = ()
    container: str = "hooks"
    wrapper: tuple[tuple[str, Any], ...] = ()
    plugin_text: str = ""
    # Events the host already runs engram's hook for from another file it reads beside this
    # one (Codex's `[hooks]` in config.toml): engram adds no entry of its own for them.
    covered: tuple[str, ...] = ()
    # The matcher engram's entry has on each event that has one: the user's own entry there
    # stands in for engram's only if it selects at least the same tools.
    matchers: tuple[tuple[str, str], ...] = ()
    # Keys of the container the host reads as settings, not events (Gemini's `enabled`,
    # `disabled`, `notifications` inside `hooks`): never walked as events, kept as they are.
    settings: tuple[str, ...] = ()
    # The user said to replace or remove a generated file (OpenCode's plugin) even though it
    # holds edits of theirs (`--force`): the backup keeps them.
    force: bool = False

    def events(self, hooks: dict[str, Any]) -> list[str]:
        """The keys of a hooks container that are events."""
        return [key for key in hooks if key not in self.settings]


@dataclass(frozen=True)
class Found:
    """One of our handlers as it stands in a document."""

    event: str
    matcher: str | None
    handler: dict[str, Any] = field(hash=False)


def same_matcher(a: object, b: object) -> bool:
    """Matchers that select the same events: no matcher, "" and "*" all match everything."""
    return (a in (None, "", "*") and b in (None, "", "*")) or a == b


def covers(mine: object, wanted: object) -> bool:
    """Does a matcher select every tool `wanted` does (the same, or everything)?"""
    return mine in (None, "", "*") or same_matcher(mine, wanted)


def _updated(existing: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
    extra = {k: v for k, v in existing.items() if k not in MANAGED_KEYS and k not in want}
    return {**want, **extra}


def _require(condition: bool, key: str, problem: str, fix: str) -> None:
    if not condition:
        raise ShapeError(key, problem, fix)


class ConfigFormat(Protocol):
    def load(self, text: str | None) -> Any: ...
    def merge(self, document: Any, ours: Ours) -> Any: ...
    def strip(self, document: Any, ours: Ours) -> Any: ...
    def found(self, document: Any, ours: Ours) -> list[Found]: ...
    def render(self, text: str | None, document: Any, ours: Ours) -> str | None: ...
    def same_as(self, document: Any, text: str | None, original: str | None, ours: Ours) -> bool: ...
    def is_pristine(self, text: str | None, ours: Ours) -> bool: ...


class _JsonFormat:
    """Shared by the JSON formats: load with comments allowed, render by member edits."""

    grouped = True

    def found(self, document: dict[str, Any], ours: Ours) -> list[Found]:
        raise NotImplementedError  # each JSON format finds its own entries

    def _apply(self, document: dict[str, Any], ours: Ours, wanted: tuple[Entry, ...]) -> dict[str, Any]:
        raise NotImplementedError  # each JSON format lays out its own entries

    def own_entries(self, document: Any, ours: Ours) -> dict[str, str]:
        """Events whose handlers already run engram's hook for this host through an entry of
        the user's own form, not engram's (`uvx engram hook claude`, exec form, a shell
        around it): event -> that command. Kept as they are, and engram adds none beside."""
        hooks = document.get(ours.container) if isinstance(document, dict) else None
        if not isinstance(hooks, dict):
            return {}
        own: dict[str, str] = {}
        matchers = dict(ours.matchers)
        for event in ours.events(hooks):
            items = hooks[event]
            for item in items if isinstance(items, list) else ():
                if self.grouped and isinstance(item, dict) and event in matchers and \
                        not covers(item.get("matcher"), matchers[event]):
                    # `Read` alone where engram's is `Read|Edit|Write|MultiEdit`: engram's
                    # entry is still needed, or written code would never reach the hook
                    continue
                handlers = item.get("hooks") if self.grouped and isinstance(item, dict) else [item]
                for handler in handlers if isinstance(handlers, list) else ():
                    if isinstance(handler, dict) and not is_ours(handler.get("command"), ours.names) \
                            and runs_engram_hook(handler.get("command"), ours.names,
                                                 handler.get("args")):
                        own.setdefault(event, str(handler.get("command")))
        return own

    def merge(self, document: dict[str, Any], ours: Ours) -> dict[str, Any]:
        # An event the user's own entry (here or in another file of the layer) runs engram
        # for gets no entry of engram's: one more would run the hook twice per event.
        covered = set(ours.covered) | set(self.own_entries(document, ours))
        return self._apply(document, ours, tuple(e for e in ours.entries if e.event not in covered))

    def strip(self, document: dict[str, Any], ours: Ours) -> dict[str, Any]:
        return self._apply(document, ours, ())

    def _editable(self, document: dict[str, Any], ours: Ours,
                  wanted: tuple[Entry, ...]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """A copy of `document` to edit, and its hooks container (created when entries are
        wanted; None when there is none and nothing to add)."""
        self.validate(document, ours)
        result = copy.deepcopy(document)
        hooks = result.get(ours.container)
        if hooks is None and wanted:
            hooks = result[ours.container] = {}
        return result, hooks

    def load(self, text: str | None) -> dict[str, Any]:
        if text is None or not text.strip():
            return {}
        document = jsonc.parse(text)
        _require(isinstance(document, dict), "(top level)", "is not a JSON object",
                 "the file must hold one JSON object ({...})")
        parsed: dict[str, Any] = document
        return parsed

    def validate(self, document: dict[str, Any], ours: Ours) -> None:
        key = ours.container
        hooks = document.get(key)
        if hooks is None:
            return
        _require(isinstance(hooks, dict), key, f"is a {type(hooks).__name__}, not an object",
                 f'make "{key}" an object of event names, e.g. "{key}": {{}}')
        for event in ours.events(hooks):
            items, where = hooks[event], f"{key}.{event}"
            _require(isinstance(items, list), where, "is not a list", f'make "{where}" a list')
            for i, item in enumerate(items):
                _require(isinstance(item, dict), f"{where}[{i}]", "is not an object",
                         f'make each item of "{where}" an object')
                if self.grouped:
                    handlers = item.get("hooks", [])
                    _require(isinstance(handlers, list), f"{where}[{i}].hooks", "is not a list",
                             f'make "{where}[{i}].hooks" a list of handlers')
                    for j, handler in enumerate(handlers):
                        _require(isinstance(handler, dict), f"{where}[{i}].hooks[{j}]",
                                 "is not an object", "make each handler an object")

    def same_as(self, document: Any, text: str | None, original: str | None, ours: Ours) -> bool:
        """Is `document` (our entries stripped, about to be rendered over `text`) what
        `original` held, so that writing `original` back loses nothing? Equal settings once an
        empty or null `hooks` and a bare wrapper are set aside, and the same comments."""
        try:
            before = self.load(original)
        except (jsonc.JsoncError, ShapeError):
            return False
        if self.found(before, ours):
            return False  # an earlier install: never put its entries back
        return _identical(self._canonical(document, ours), self._canonical(before, ours)) \
            and jsonc.comments(text or "") == jsonc.comments(original or "")

    def _canonical(self, document: dict[str, Any], ours: Ours) -> dict[str, Any]:
        """The settings that matter: an empty event list is no hook at all (a link fills the
        user's `"SessionStart": []` and the strip cannot tell it was there), and an empty or
        null container and a bare wrapper are no settings."""
        wrapper = dict(ours.wrapper)
        out = {}
        for key, value in document.items():
            if key == ours.container and isinstance(value, dict):
                value = {event: items for event, items in value.items() if items != []}
            if (key == ours.container and value in (None, {})) or \
                    (key in wrapper and value == wrapper[key]):
                continue
            out[key] = value
        return out

    def is_pristine(self, text: str | None, ours: Ours) -> bool:
        """Does the file hold none of our entries (so it is the user's pre-engram state)?"""
        return not self.found(self.load(text), ours)

    def _is_empty(self, document: dict[str, Any], ours: Ours) -> bool:
        return all(k in dict(ours.wrapper) and document[k] == dict(ours.wrapper)[k]
                   for k in document)

    def render(self, text: str | None, document: dict[str, Any], ours: Ours) -> str | None:
        if self._is_empty(document, ours) and not jsonc.comments(text or ""):
            return None  # nothing of ours or theirs is left: remove the file engram made
        if text is None or not text.strip("\ufeff \t\r\n"):
            rendered = jsonc.render_fresh(document)
        else:
            try:
                rendered, document = self._patched(text, document, ours)
            except jsonc.CommentLoss as exc:
                raise ShapeError(ours.container, f"has a comment near line {exc.line} that this "
                                 "change would delete", "move that comment elsewhere in the file, "
                                 "or add engram's entries by hand") from None
            except jsonc.PatchError as exc:
                raise ShapeError("(file)", str(exc), _BY_HAND) from None
        verify(rendered, document)
        return rendered

    def _patched(self, text: str, document: dict[str, Any], ours: Ours) -> tuple[str, dict[str, Any]]:
        """`text` edited to `document`, and the document it holds. An event list engram
        emptied is deleted with its key, and with the lines that held it: where a comment of
        the user's sits on one of those lines (a one-line file, a comment after `[],`), the
        list stays instead, empty (as the host reads no list at all), and so does the
        container holding it. First the lists a comment sits next to, then every list engram
        emptied; CommentLoss when the comment would go all the same."""
        before = self.load(text)
        try:
            return jsonc.patch(text, before, document), document
        except jsonc.CommentLoss as exc:
            loss = exc
        emptied = _emptied(before, document, ours)
        if not emptied:
            raise loss
        beside = jsonc.commented_members(text, ours.container)
        for keep in dict.fromkeys((tuple(e for e in emptied if e in beside), emptied)):
            candidate = _with_empty(document, ours, keep)
            try:
                return jsonc.patch(text, before, candidate), candidate
            except jsonc.CommentLoss:
                continue
        raise loss


def _emptied(before: dict[str, Any], after: dict[str, Any], ours: Ours) -> tuple[str, ...]:
    """The events of `before`'s container that `after` no longer has (the lists engram emptied
    and deleted)."""
    old = before.get(ours.container)
    if not isinstance(old, dict):
        return ()
    new = after.get(ours.container)
    new = new if isinstance(new, dict) else {}
    return tuple(e for e in ours.events(old) if e not in new)


def _with_empty(document: dict[str, Any], ours: Ours, events: tuple[str, ...]) -> dict[str, Any]:
    """`document` with an empty list under each of `events`, in a container it keeps."""
    result = dict(document)
    hooks = result.get(ours.container)
    result[ours.container] = {**(hooks if isinstance(hooks, dict) else {}),
                              **{event: [] for event in events}}
    return result


def verify(rendered: str, document: Any) -> None:
    """Refuse a rendering that does not parse back to exactly the intended document: the edit
    is computed span by span, and this check is what makes a wrong span harmless."""
    try:
        again = jsonc.parse(rendered)
    except jsonc.JsoncError as exc:
        raise ShapeError("(file)", f"could not be edited safely (the result would not parse: "
                         f"{exc})", _BY_HAND) from None
    if not _identical(again, document):
        raise ShapeError("(file)", "could not be edited safely (the result would differ from "
                         "the intended settings)", _BY_HAND)


def _identical(a: Any, b: Any) -> bool:
    """Equal as JSON values, with types kept apart (1 is not 1.0 or true). Key order is free:
    an edit keeps the user's order and appends new keys."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_identical(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b, strict=False))
    return type(a) is type(b) and a == b


def _reconcile(handlers: list[dict[str, Any]], event: str, want: Entry | None, placed: set[str],
               ours: Ours) -> tuple[list[dict[str, Any]], bool]:
    """One list of handlers with foreign ones kept as they are, the first of ours updated to
    `want` (once per event, tracked in `placed`) and the rest of ours dropped as stale,
    duplicate, or no longer wanted. Returns the handlers kept and whether anything changed."""
    kept, touched = [], False
    for handler in handlers:
        if not is_ours(handler.get("command"), ours.names):
            kept.append(handler)
        elif want is not None and event not in placed:
            placed.add(event)
            updated = _updated(handler, want.as_dict())
            touched |= updated != handler or list(updated) != list(handler)
            kept.append(updated)
        else:
            touched = True
    return kept, touched


class MatcherGroups(_JsonFormat):
    """Claude Code, Codex, Gemini: {"hooks": {Event: [{"matcher"?, "hooks": [handler]}]}}."""

    def found(self, document: dict[str, Any], ours: Ours) -> list[Found]:
        self.validate(document, ours)
        hooks = document.get(ours.container) or {}
        return [Found(event, group.get("matcher"), handler)
                for event in ours.events(hooks) for group in hooks[event]
                for handler in group.get("hooks", [])
                if is_ours(handler.get("command"), ours.names)]

    def _apply(self, document: dict[str, Any], ours: Ours, wanted: tuple[Entry, ...]) -> dict[str, Any]:
        result, hooks = self._editable(document, ours, wanted)
        if hooks is None:
            return result
        desired = {e.event: e for e in wanted}
        placed: set[str] = set()
        for event in ours.events(hooks):
            new_groups, event_touched = [], False
            for group in hooks[event]:
                want = desired.get(event)
                if want and not same_matcher(group.get("matcher"), want.matcher):
                    want = None
                kept, touched = _reconcile(group.get("hooks", []), event, want, placed, ours)
                event_touched |= touched
                if not touched:
                    new_groups.append(group)
                elif kept:
                    new_groups.append({**group, "hooks": kept})
            if new_groups or not event_touched:
                hooks[event] = new_groups
            else:
                del hooks[event]  # emptied by us
        for entry in wanted:
            if entry.event not in placed:
                new_group: dict[str, Any] = {} if entry.matcher is None else {"matcher": entry.matcher}
                new_group["hooks"] = [entry.as_dict()]
                hooks.setdefault(entry.event, []).append(new_group)
        if not hooks and document.get(ours.container):  # emptied by us: drop it too
            del result[ours.container]
        return result


class FlatVersioned(_JsonFormat):
    """Cursor ({"version": 1, "hooks": {event: [handler]}}) and Windsurf ({"hooks": ...})."""

    grouped = False

    def found(self, document: dict[str, Any], ours: Ours) -> list[Found]:
        self.validate(document, ours)
        hooks = document.get(ours.container) or {}
        return [Found(event, None, handler) for event in ours.events(hooks)
                for handler in hooks[event] if is_ours(handler.get("command"), ours.names)]

    def _apply(self, document: dict[str, Any], ours: Ours, wanted: tuple[Entry, ...]) -> dict[str, Any]:
        result, hooks = self._editable(document, ours, wanted)
        if hooks is None:
            return result
        desired = {e.event: e for e in wanted}
        placed: set[str] = set()
        for event in ours.events(hooks):
            kept, touched = _reconcile(hooks[event], event, desired.get(event), placed, ours)
            if touched:
                if kept:
                    hooks[event] = kept
                else:
                    del hooks[event]
        for entry in wanted:
            if entry.event not in placed:
                hooks.setdefault(entry.event, []).append(entry.as_dict())
        if wanted:
            for key, value in ours.wrapper:  # a version the user already set is theirs
                result.setdefault(key, value)
            if list(result)[-1] != ours.container and ours.container not in document:
                result[ours.container] = result.pop(ours.container)  # wrapper keys first
        elif not hooks and document.get(ours.container):  # emptied by us: drop it too
            del result[ours.container]
        return result


# sha256 of each plugin template an earlier engram release generated from, LF line ends: a
# file that is one of them with a command engram writes in its place is engram's to replace
# or remove. The current template is recognised from itself.
EARLIER_PLUGINS: Final = frozenset({
    "37f3238383784d841b64b77119b69a271a073cbe59960b132f186e5dea943306",  # v1
    "679d62ba7bf6bb2a6c21be0812a8bd0a99a068587f8cf7c437973624943a92ad",  # v2, first form
    "150cba7a8ad6a2f9fdcabe2f709a2f71a9fcedb55217f5a403bbff3d625997f5",  # v2, one slot
})
PLUGIN_PLACEHOLDER: Final = '"__ENGRAM_HOOK_COMMAND__"'
_COMMAND_LINE: Final = ("const COMMAND = ", ";")


def _template_of(text: str, ours: Ours) -> str | None:
    """The template `text` was generated from: its one COMMAND line's value, exactly as
    engram writes it (json.dumps of a command engram writes for this host), put back to the
    placeholder. None when the file has no such line, or another value there."""
    lines = text.replace("\r\n", "\n").split("\n")
    at = [i for i, line in enumerate(lines) if line.startswith(_COMMAND_LINE[0])]
    if len(at) != 1 or not lines[at[0]].endswith(_COMMAND_LINE[1]):
        return None
    literal = lines[at[0]][len(_COMMAND_LINE[0]):-len(_COMMAND_LINE[1])]
    try:
        value = json.loads(literal)
    except ValueError:
        return None
    if not isinstance(value, str) or json.dumps(value) != literal or not is_ours(value, ours.names):
        return None
    lines[at[0]] = _COMMAND_LINE[0] + PLUGIN_PLACEHOLDER + _COMMAND_LINE[1]
    return "\n".join(lines)


def plugin_edited(text: str, ours: Ours) -> bool:
    """Does the plugin file hold anything an engram release did not write: an edit of the
    user's (a timeout, a line of theirs, their own command)? CRLF line ends alone are not
    one (Git on Windows checks a committed file out so)."""
    template = _template_of(text, ours)
    if template is None:
        return True
    known = set(EARLIER_PLUGINS)
    current = _template_of(ours.plugin_text, ours) if ours.plugin_text else None
    if current is not None:
        known.add(hashlib.sha256(current.encode("utf-8")).hexdigest())
    return hashlib.sha256(template.encode("utf-8")).hexdigest() not in known


class Plugin:
    """OpenCode: a whole generated file, ours only when it carries the marker; replaced or
    removed only when it is exactly what an engram release wrote, or with `force`."""

    def load(self, text: str | None) -> str | None:
        if text is not None and PLUGIN_MARKER not in text:
            raise ShapeError("(file)", "was not generated by engram",
                             "move it aside, or keep it and skip `engram link opencode`")
        return text

    def found(self, document: str | None, ours: Ours) -> list[Found]:
        return [] if document is None else [Found("plugin", None, {"template": PLUGIN_MARKER})]

    def merge(self, document: str | None, ours: Ours) -> str:
        if document != ours.plugin_text:
            self._check_edits(document, ours, "replace")
        return ours.plugin_text

    def strip(self, document: str | None, ours: Ours) -> None:
        self._check_edits(document, ours, "remove")

    def _check_edits(self, document: str | None, ours: Ours, verb: str) -> None:
        if document is None or ours.force or not plugin_edited(document, ours):
            return
        raise ShapeError("(file)", "holds edits of yours: it is not the file any engram release "
                         f"generates, and engram will not {verb} them",
                         "move what you added into a plugin file of your own (another name in "
                         "the same folder), then run the command again with --force (the file "
                         "as it is now is backed up first; `engram restore` puts it back)")

    def render(self, text: str | None, document: str | None, ours: Ours) -> str | None:
        return document

    def same_as(self, document: Any, text: str | None, original: str | None, ours: Ours) -> bool:
        return document is None and original is None

    def is_pristine(self, text: str | None, ours: Ours) -> bool:
        return text is None


FORMATS: Final[dict[str, ConfigFormat]] = {
    "matcher_groups": MatcherGroups(),
    "flat_versioned": FlatVersioned(),
    "plugin": Plugin(),
}
