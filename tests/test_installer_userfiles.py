"""Property: engram's edit of a config file touches nothing of the user's, byte for byte.

Hypothesis writes the user's file the way people do: any indentation (or none), tabs, CRLF, a
BOM where the host skips one, no final newline, `\\u00e9` or `é`, `1.0`, `1E0`, `-0.0`, `-0`,
`1e400` (JSON.parse's Infinity), huge integers, `\\/`, lines of thousands of characters,
comments where the host reads them, empty event lists and groups, hooks of other tools that
mention engram, and entries of an older engram. Every file is one its host reads, and so must
every file engram writes be, by the host's own rules (`installer_helpers.host_reads`: no
trailing comma anywhere, no byte order mark for Gemini CLI and Codex, no `NaN`). The oracle parses both texts into
"units" (each top-level setting of the user's, each handler of the user's, each key of a group
holding one, each group holding no handler) and compares their
raw text, so a value that is re-serialised (even to an equal value) fails. Then:

- link writes a file the host parses, with the user's units byte-identical and in order;
- link twice is link once (the second writes nothing);
- unlink after link gives back the original bytes (a file without engram's entries), or the
  user's units exactly (a file that held an older engram's);
- a user edit between link and unlink (a setting added, as a host does when it saves) is kept
  and nothing else of the user's changes.

Budget: EXAMPLES files per host, derandomized (`ENGRAM_USERFILE_EXAMPLES=2000` explores
further, randomized).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from installer_helpers import PINNED, host_reads

from engram import host_registry
from engram.installer import jsonc
from engram.installer.command import is_ours
from engram.installer.filedance import Place
from engram.installer.plan import Options, apply, ours_for

EXAMPLES = int(os.environ.get("ENGRAM_USERFILE_EXAMPLES") or 40)
FILES = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
         "gemini": ".gemini/settings.json", "cursor": ".cursor/hooks.json",
         "windsurf": ".windsurf/hooks.json"}
OLD_FORMS = ("engram hook {host}", "/old/venv/bin/engram hook {host}",
             "/usr/bin/python3 -m engram hook {host}", "engram agent-hook --host {host}",
             "command -v engram >/dev/null 2>&1 && exec engram hook {host} || true")
# Commands of the user's that mention engram but do not run engram's hook for this host.
LOOKALIKES = ("engram hook {other}", "echo engram hook {host}", "engram lint --strict",
              "/x/engram-hook {other}", "./engram-hook.sh {host}", "notengram hook {host}",
              "bash -c 'echo engram hook {host}'", "grep -q engram x && ./run.sh",
              "git commit -m engram hook {host}", "notify --title=done engram hook {host}",
              "cmd /c echo engram hook {host}", "pwsh -File engram hook {host}")
# The user's own entries that do run engram's hook for this host, in a form engram never
# writes: kept as they are, and engram adds no entry of its own on their event (the host
# would run the hook twice).
OWN_FORMS = ("bash -c 'engram hook {host}'", "uvx engram hook {host}", "cmd /c engram hook {host}",
             'powershell -NoProfile -Command "engram hook {host}"')
OTHER = {"claude": "codex", "codex": "claude", "gemini": "claude", "cursor": "claude",
         "windsurf": "cursor"}


def jsonc_host(host: str) -> bool:
    return host_registry.get(host).install.get("syntax") == "jsonc"


def grouped(host: str) -> bool:
    return host_registry.get(host).install["format"] == "matcher_groups"


# ---- the user's file: a value, then a text of it in a random style ----------------------------

SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1.0, -0.0, 0.5, 1e300, 2.5e-8, 0, math.inf, -math.inf]),
    st.text(max_size=12),
    st.sampled_from(["café", "日本", "a\u2028b", "tab\there", "quote\"d", "back\\slash", "/usr/bin",
                     "l" * 6000]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8)
TOP_KEYS = st.sampled_from(["model", "permissions", "env", "general", "ui", "$schema", "ñame",
                            "statusLine", "version", "x"])


@st.composite
def handler(draw: st.DrawFn, host: str) -> dict[str, Any]:
    kind = draw(st.sampled_from(["user", "user", "lookalike", "old", "own"]))
    if kind == "old":
        command = draw(st.sampled_from(OLD_FORMS))
    elif kind == "own":
        command = draw(st.sampled_from(OWN_FORMS))
    elif kind == "lookalike":
        command = draw(st.sampled_from(LOOKALIKES))
    else:
        command = draw(st.sampled_from(["./audit.sh", "echo hi", "npx lint-staged", "say é"]))
    out: dict[str, Any] = {"type": "command"} if grouped(host) else {}
    out["command"] = command.format(host=host, other=OTHER[host])
    for key, value in draw(st.dictionaries(st.sampled_from(["timeout", "statusMessage", "async",
                                                            "name", "env"]), SCALARS,
                                           max_size=2)).items():
        out[key] = draw(TYPED_FIELDS.get(host, {}).get(key, st.just(value)))
    return out


# Codex and Claude Code read a command handler's fields into fixed types and ignore the file's
# hooks when one does not fit (installer_helpers._codex_types, _claude_types); other keys
# (`name`, `env`) stay unread, whatever they hold.
TYPED_FIELDS = {
    "codex": {"timeout": st.one_of(st.none(), st.integers(0, 2**64 - 1)),
              "statusMessage": st.one_of(st.none(), st.text(max_size=12)),
              "async": st.booleans()},
    "claude": {"timeout": st.one_of(st.integers(1, 600), st.sampled_from([0.5, 10.5, 1e300])),
               "statusMessage": st.text(max_size=12), "async": st.booleans()},
}


@st.composite
def hooks_of(draw: st.DrawFn, host: str) -> dict[str, Any]:
    definition = host_registry.get(host).install
    ours = [e["event"] for e in definition.get("events") or ()]
    names = st.sampled_from(ours + ["Stop", "Notification", "stop"])
    result: dict[str, Any] = {}
    for event in draw(st.lists(names, max_size=4, unique=True)):
        if grouped(host):
            result[event] = draw(st.lists(st.builds(
                lambda m, hs, extra: {**({} if m is None else {"matcher": m}), "hooks": hs, **extra},
                st.sampled_from([None, "", "*", "Bash", "Read|Edit|Write|MultiEdit", "apply_patch"]),
                st.lists(handler(host), max_size=3),
                st.dictionaries(st.sampled_from(["description", "note"]), SCALARS, max_size=1)),
                max_size=3))
        else:
            result[event] = draw(st.lists(handler(host), max_size=3))
    return result


# Codex's hooks.json takes `description` alone beside `hooks` (any other key, and Codex
# ignores the file: `test_installer_repros.py::test_a_codex_file_codex_ignores_is_refused_untouched`).
CODEX_TOP = st.dictionaries(st.just("description"), st.one_of(st.none(), st.text(max_size=12)),
                            max_size=1)


# Claude Code checks the settings it knows (`model` a string, permission rules lists of
# strings, `verbose` a boolean, ...: installer_helpers._claude_types) and reads past a key it
# does not know.
CLAUDE_TOP = st.dictionaries(st.sampled_from(["general", "ui", "ñame", "version", "x"]), VALUES,
                             max_size=3).flatmap(lambda other: st.fixed_dictionaries({}, optional={
                                 "model": st.text(max_size=12),
                                 "permissions": st.fixed_dictionaries({}, optional={
                                     k: st.lists(st.text(max_size=12), max_size=3)
                                     for k in ("allow", "deny", "ask")}),
                                 "env": st.dictionaries(st.text(max_size=6), st.text(max_size=6),
                                                        max_size=2),
                                 "$schema": st.text(max_size=12),
                                 # settings Claude Code reads into a type, of that type
                                 "verbose": st.booleans(),
                                 "disableAllHooks": st.just(False),
                                 "cleanupPeriodDays": st.integers(1, 10**6),
                                 "outputStyle": st.text(max_size=12),
                                 "statusLine": st.fixed_dictionaries({
                                     "type": st.just("command"),
                                     "command": st.text(max_size=12)}),
                                 "enabledPlugins": st.dictionaries(st.text(max_size=6),
                                                                   st.booleans(), max_size=2),
                             }).map(lambda known: {**other, **known}))


@st.composite
def user_document(draw: st.DrawFn, host: str) -> dict[str, Any]:
    document = draw(CODEX_TOP if host == "codex" else CLAUDE_TOP if host == "claude"
                    else st.dictionaries(TOP_KEYS, VALUES, max_size=4))
    container = draw(st.sampled_from(["absent", "null", "empty", "some", "some"]))
    if container != "absent":
        document["hooks"] = {"null": None, "empty": {}}.get(container) or draw(hooks_of(host))
    return document


class Style:
    def __init__(self, draw: st.DrawFn, host: str) -> None:
        self.indent = draw(st.sampled_from([None, "  ", "    ", "\t", " "]))
        self.item_sep = draw(st.sampled_from([", ", ","]))
        self.key_sep = draw(st.sampled_from([": ", ":", " : "]))
        self.draw = draw
        self.jsonc = jsonc_host(host)
        self.host = host

    def scalar(self, value: Any) -> str:
        draw = self.draw
        if isinstance(value, str):
            text = json.dumps(value, ensure_ascii=draw(st.booleans()))
            return text.replace("/", "\\/") if draw(st.booleans()) else text
        if isinstance(value, float) and math.isinf(value):
            # A number past a double's range: JSON.parse reads Infinity (Python inf); Codex's
            # serde_json is not known to take one, so its files hold a large finite one.
            big = "1e300" if self.host == "codex" else draw(st.sampled_from(["1e400", "1E+999"]))
            return big if value > 0 else "-" + big
        if value == 0 and type(value) is int and draw(st.booleans()):
            return "-0"
        if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
            whole = "-0" if math.copysign(1, value) < 0 and value == 0 else str(int(value))
            return draw(st.sampled_from([repr(value), whole + ".0", whole + ".00", whole + "E0"]))
        return json.dumps(value)

    def comment(self, pad: str) -> str:
        """A comment on a line of its own (one after code, on a line engram removes, is refused,
        not kept: `test_installer_safety.py::test_a_change_that_would_delete_a_comment_is_refused`)."""
        if not self.jsonc or self.indent is None or self.draw(st.integers(0, 4)) != 0:
            return ""
        text = self.draw(st.sampled_from(["// note é", "// */", "/* a\n   block */"]))
        return text.replace("\n", "\n" + pad) + "\n" + pad

    def inline_comment(self) -> str:
        """A block comment after code on its line, as a one-line file can only have: kept
        where it is by every edit (`test_installer_repros.py::
        test_unlink_keeps_a_comment_on_a_line_whose_code_stays`)."""
        if not self.jsonc or self.indent is not None or self.draw(st.integers(0, 4)) != 0:
            return ""
        return self.draw(st.sampled_from(["/* é */ ", "/*x*/", "/* // */ "]))

    def render(self, value: Any, level: int = 0) -> str:
        if not isinstance(value, (dict, list)):
            return self.scalar(value)
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
        if not items:
            return opening + self.draw(st.sampled_from(["", " ", "\n" + (self.indent or "") * level])) + closing
        pad = "" if self.indent is None else (self.indent * (level + 1))
        parts = []
        for key, item in items:
            lead = self.comment(pad) or self.inline_comment()
            named = "" if key is None else json.dumps(key, ensure_ascii=self.draw(st.booleans())) + self.key_sep
            parts.append(lead + named + self.render(item, level + 1))
        if self.indent is None:
            return opening + self.item_sep.join(parts) + closing
        inner = (",\n").join(pad + p for p in parts)
        return f"{opening}\n{inner}\n{self.indent * level}{closing}"


@st.composite
def user_file(draw: st.DrawFn, host: str) -> str:
    style = Style(draw, host)
    text = style.render(draw(user_document(host)))
    text += draw(st.sampled_from(["\n", "", "\n\n", "  \n"]))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    if host_registry.get(host).install.get("syntax", "json") == "json" and \
            draw(st.integers(0, 5)) == 0:
        text = "\ufeff" + text  # skipped by Claude Code; Gemini CLI and Codex stop on it
    host_reads(host, text)  # a file its host reads
    return text


# ---- the oracle -------------------------------------------------------------------------------

def host_parse(host: str, text: str) -> Any:
    """The file as the host reads it (ValueError where the host rejects it whole)."""
    return host_reads(host, text)


def units(host: str, text: str) -> list[tuple[str, ...]]:
    """The user's parts of a file, each with its raw text (see the module docstring)."""
    names = host_registry.get(host).names
    document = jsonc.parse(text)
    if not isinstance(document, dict):
        return []
    root = jsonc.tree(text)

    def raw(node: jsonc.Node) -> str:
        return text[node.start:node.end]

    out: list[tuple[str, ...]] = []
    for key, node in zip(root.keys, root.items, strict=True):
        if key != "hooks" or node.kind != "object":
            out.append(("top", key, raw(node)))
            continue
        for event, event_node in zip(node.keys, node.items, strict=True):
            for item, item_node in zip(document["hooks"][event], event_node.items, strict=True):
                if not grouped(host):
                    if not is_ours(item.get("command"), names):
                        out.append(("handler", event, raw(item_node)))
                    continue
                handlers = item.get("hooks", [])
                if not handlers:
                    out.append(("group", event, raw(item_node)))
                    continue
                if all(is_ours(h.get("command"), names) for h in handlers):
                    continue
                for key2, child in zip(item_node.keys, item_node.items, strict=True):
                    if key2 != "hooks":
                        out.append(("group key", event, key2, raw(child)))
                hooks_node = item_node.items[item_node.keys.index("hooks")]
                for h, h_node in zip(handlers, hooks_node.items, strict=True):
                    if not is_ours(h.get("command"), names):
                        out.append(("handler", event, raw(h_node)))
    return out


def _selects_all(matcher: Any, engrams: str | None) -> bool:
    """Does a group's matcher select every tool engram's entry there selects? (No matcher,
    "" or "*" selects all; else its `|` names must hold all of engram's.)"""
    if matcher in (None, "", "*") or engrams is None:
        return True
    return isinstance(matcher, str) and set(engrams.split("|")) <= set(matcher.split("|"))


def _own_events(document: Any, host: str) -> set[str]:
    """The events where the user's file has one of OWN_FORMS, in a group that selects every
    tool engram's entry would (one on fewer tools leaves engram's entry needed)."""
    own = {form.format(host=host) for form in OWN_FORMS}
    matchers = {e["event"]: e.get("matcher") for e in host_registry.get(host).install["events"]}
    return {event for event, items in ((document or {}).get("hooks") or {}).items()
            for item in items for h in (item.get("hooks", [item]) if "hooks" in item else [item])
            if h.get("command") in own and (
                "hooks" not in item or _selects_all(item.get("matcher"), matchers.get(event)))}


def _count_ours(document: Any, names: tuple[str, ...]) -> int:
    count = 0
    for items in ((document or {}).get("hooks") or {}).values():
        for item in items:
            for h in item.get("hooks", [item]) if "hooks" in item else [item]:
                count += is_ours(h.get("command"), names)
    return count


# ---- driving the installer --------------------------------------------------------------------

class Files:
    def __init__(self, root: Path, host: str) -> None:
        self.root, self.host = root, host
        self.path = root / FILES[host]
        self.definition = host_registry.get(host)

    def run(self, remove: bool) -> str:
        change = apply(self.definition, self.path, "project",
                       ours_for(self.definition, Options()), remove=remove, dry_run=False,
                       place=Place(self.root))
        assert change.action != "refused", (change.message, change.fix)
        return change.action

    def text(self) -> str | None:
        return self.path.read_bytes().decode("utf-8") if self.path.exists() else None


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


@contextlib.contextmanager
def fresh(tmp_path: Path, host: str, text: str) -> Iterator[Files]:
    """The user's file in a folder of its own (hypothesis runs many examples per test)."""
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        files = Files(root, host)
        files.path.parent.mkdir(parents=True)
        files.path.write_bytes(text.encode("utf-8"))
        yield files
    finally:
        shutil.rmtree(root, ignore_errors=True)


def user_edit(host: str, text: str, key: str, value: Any) -> str:
    """A setting added the way a host saving its settings file would add one; in Codex's
    hooks.json, which takes no other key, the user's `description` set."""
    before = jsonc.parse(text)
    after = {**before, "description": f"{key}: {value}"} if host == "codex" else {**before, key: value}
    return jsonc.patch(text, before, after)


HYPOTHESIS = settings(max_examples=EXAMPLES, deadline=None,
                      derandomize="ENGRAM_USERFILE_EXAMPLES" not in os.environ,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                             HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("host", sorted(FILES))
@HYPOTHESIS
@given(data=st.data())
def test_link_touches_nothing_of_the_users_and_unlink_gives_it_back(
        host: str, data: st.DataObject, tmp_path: Path) -> None:
    text = data.draw(user_file(host), label="user file")
    had_ours = _count_ours(host_parse(host, text), host_registry.get(host).names) > 0
    with fresh(tmp_path, host, text) as files:
        files.run(remove=False)
        linked = files.text()
        assert linked is not None
        host_parse(host, linked)  # the host still loads it
        wrapper = files.definition.install.get("wrapper") or {}
        added = {("top", k, json.dumps(v)) for k, v in wrapper.items()}
        assert [u for u in units(host, linked) if u not in added] == \
            [u for u in units(host, text) if u not in added]
        covered = _own_events(host_parse(host, text), host)
        assert _count_ours(host_parse(host, linked), host_registry.get(host).names) == \
            len([e for e in ours_for(files.definition, Options()).entries
                 if e.event not in covered])
        assert files.run(remove=False) == "unchanged"
        assert files.text() == linked
        files.run(remove=True)
        after = files.text()
        if not had_ours:
            assert after == text
        elif after is None:  # only an older engram's entries were in it
            assert units(host, text) == []
        else:  # a wrapper link added (Cursor's "version": 1) may stay: the host needs it
            assert [u for u in units(host, after) if u not in added] == \
                [u for u in units(host, text) if u not in added]
            assert _count_ours(host_parse(host, after), host_registry.get(host).names) == 0


@pytest.mark.parametrize("host", sorted(FILES))
@HYPOTHESIS
@given(data=st.data())
def test_a_user_edit_between_link_and_unlink_is_all_that_changes(
        host: str, data: st.DataObject, tmp_path: Path) -> None:
    text = data.draw(user_file(host), label="user file")
    with fresh(tmp_path, host, text) as files:
        files.run(remove=False)
        linked = files.text()
        assert linked is not None
        edited = user_edit(host, linked, "addedByTheHost", {"ok": True})
        files.path.write_bytes(edited.encode("utf-8"))
        files.run(remove=True)
        after = files.text()
        assert after is not None
        host_parse(host, after)
        assert units(host, after) == units(host, edited)
        assert _count_ours(host_parse(host, after), host_registry.get(host).names) == 0


@pytest.mark.parametrize("host", sorted(FILES))
@HYPOTHESIS
@given(data=st.data())
def test_unlink_with_no_record_of_the_file_keeps_every_comment_and_unit(
        host: str, data: st.DataObject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Linked on another machine (a teammate's commit) or with the state dir since removed:
    unlink has no pre-engram bytes to give back, and strips engram's entries from the text
    alone. Every comment stays, byte for byte and in order, and every unit of the user's."""
    text = data.draw(user_file(host), label="user file")
    with fresh(tmp_path, host, text) as files:
        files.run(remove=False)
        monkeypatch.setenv("ENGRAM_STATE_DIR", str(files.root / "another-machine"))
        files.run(remove=True)
        after = files.text()
        if after is None:  # nothing of the user's was in it
            assert units(host, text) == [] and not jsonc.comments(text)
            return
        host_parse(host, after)
        assert jsonc.comments(after) == jsonc.comments(text)
        wrapper = files.definition.install.get("wrapper") or {}
        added = {("top", k, json.dumps(v)) for k, v in wrapper.items()}
        assert [u for u in units(host, after) if u not in added] == \
            [u for u in units(host, text) if u not in added]
        assert _count_ours(host_parse(host, after), host_registry.get(host).names) == 0


def _finite(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return True


@HYPOTHESIS
@given(data=st.data())
def test_a_codex_file_with_a_key_codex_does_not_take_is_refused_untouched(
        data: st.DataObject, tmp_path: Path) -> None:
    """The generated Codex files hold no top-level key but `hooks` and `description`: with any
    other (`$schema`, `model`, ...), Codex ignores the whole file. Each generated file with
    such a key added is one the oracle says Codex ignores; link and its dry run refuse it and
    leave it byte for byte, doctor says so, and unlink of one holding an older engram's
    entries takes them out and keeps every unit of the user's, that key included."""
    from engram.installer import health

    host = "codex"
    text = data.draw(user_file(host), label="user file")
    key = data.draw(TOP_KEYS, label="key")
    before = jsonc.parse(text)
    edited = jsonc.patch(text, before, {**before, key: data.draw(VALUES.filter(_finite))})
    with pytest.raises(ValueError):
        host_parse(host, edited)
    with fresh(tmp_path, host, edited) as files:
        for dry_run in (True, False):
            change = apply(files.definition, files.path, "project",
                           ours_for(files.definition, Options()), remove=False, dry_run=dry_run,
                           place=Place(files.root))
            assert change.action == "refused" and f'"{key}"' in change.message, change
            assert files.text() == edited
        row = health.inspect(files.definition, files.root, False, "hook")
        assert row.state == "unreadable" and f'"{key}"' in row.problem, row
        had_ours = _count_ours(jsonc.parse(edited), files.definition.names) > 0
        files.run(remove=True)
        after = files.text()
        if not had_ours:
            assert after == edited
        else:
            assert after is not None
            assert units(host, after) == units(host, edited)
            assert _count_ours(jsonc.parse(after), files.definition.names) == 0


SECOND = "/opt/engram-2.0/bin/engram"  # another engram release, installed elsewhere
OPERATIONS = st.lists(st.sampled_from(["link", "link", "link v2", "unlink", "upgrade",
                                       "upgrade v2", "user edit", "doctor"]),
                      min_size=1, max_size=7)


def _ours_commands(host: str, text: str | None) -> list[str]:
    document = host_parse(host, text) if text is not None else {}
    names = host_registry.get(host).names
    return [h.get("command") for items in ((document or {}).get("hooks") or {}).values()
            for item in items for h in (item.get("hooks", [item]) if "hooks" in item else [item])
            if is_ours(h.get("command"), names)]


@pytest.mark.parametrize("host", sorted(FILES))
@HYPOTHESIS
@given(data=st.data())
def test_random_sequences_of_link_unlink_upgrade_doctor_and_user_edits(
        host: str, data: st.DataObject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any sequence of link and upgrade by two engram releases (another executable), unlink,
    doctor and the host's own saves, on a generated user file. After every step: the host
    parses the file; every unit of the user's (and each setting the host added) is there,
    byte for byte, in order; engram's entries are exactly one set, all of the release that
    ran last, or none after unlink; link twice writes nothing the second time."""
    from engram.installer import health
    from engram.installer.plan import installed

    text = data.draw(user_file(host), label="user file")
    steps = data.draw(OPERATIONS, label="steps")
    with fresh(tmp_path, host, text) as files:
        wrapper = files.definition.install.get("wrapper") or {}
        added = {("top", k, json.dumps(v)) for k, v in wrapper.items()}
        expected = [u for u in units(host, text) if u not in added]
        covered = _own_events(host_parse(host, text), host)
        wanted = len([e for e in ours_for(files.definition, Options()).entries
                      if e.event not in covered])
        release = None  # the release whose entries the file holds, if any
        if _count_ours(host_parse(host, text), files.definition.names):
            release = "old"
        for step in steps:
            executable = SECOND if step.endswith("v2") else PINNED
            monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", executable)
            if step.startswith("link"):
                files.run(remove=False)
                linked = files.text()
                assert files.run(remove=False) == "unchanged" and files.text() == linked
                release = executable
            elif step.startswith("upgrade"):
                if installed(files.definition, files.path):
                    files.run(remove=False)
                    release = executable
            elif step == "unlink":
                files.run(remove=True)
                release = None
            elif step == "user edit" and files.text() is not None:
                current = files.text()
                assert current is not None
                before = jsonc.parse(current) or {}
                key = f"saved{len(steps)}{steps.index(step)}"
                if isinstance(before, dict) and key not in before:
                    edited = user_edit(host, current, key, [1, "é"])
                    files.path.write_bytes(edited.encode("utf-8"))
                    top = "description" if host == "codex" else key
                    unit = next(u for u in units(host, edited) if u[:2] == ("top", top))
                    at = [i for i, u in enumerate(expected) if u[:2] == ("top", top)]
                    if at:  # Codex's description, set again
                        expected[at[0]] = unit
                    else:
                        expected.append(unit)
            elif step == "doctor":
                row = health.inspect(files.definition, files.root, False, "hook")
                assert row.state != "unreadable", row.problem
            now = files.text()
            if now is None:
                assert not expected, step
                continue
            host_parse(host, now)
            assert [u for u in units(host, now) if u not in added] == expected, step
            commands = _ours_commands(host, now)
            if release is None:
                assert commands == [], step
            elif release != "old":
                assert len(commands) == wanted and \
                    set(commands) <= {f"{release} hook {host}"}, (step, commands)
