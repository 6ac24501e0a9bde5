"""A card edited between two prompts of one context, as the model sees it: what the model
reads of a card is its id, its title and its body (`### engram memory: id — title` and the
body). An edit of any of those is delivered again, once; an edit of what the model never
reads (tags, `applies_to`, `priority`, `depends_on`, `always`, the one-line fold, the file's
place) sends nothing again, and the card is listed as already loaded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hookkit import CARDS, already, context, make_workspace, payload, sent_ids

from engram import delivery, hook, paths

HOSTS = {"claude": ("UserPromptSubmit.json", "SessionStart.json"),
         "codex": ("UserPromptSubmit.json", "SessionStart.json"),
         "gemini": ("BeforeAgent.json", "SessionStart.json")}

RELEASE = """---
id: release
title: Release checklist
card: Releases are cut on Tuesdays.
tags: [release, deploy]
priority: 30
---
Releases are cut from main on Tuesdays. Bump the version, update the changelog, tag.
"""
BASE = """---
id: base
title: Base rules
tags: [base]
---
Base rules hold everywhere.
"""

# Edits of what the model never reads: the body block stays byte for byte the same.
UNSEEN = {
    "tags": ("tags: [release, deploy]", "tags: [release, deploy, shipping]"),
    "priority": ("priority: 30", "priority: 75"),
    "applies_to": ("priority: 30", 'priority: 30\napplies_to: ["release/**"]'),
    "depends_on": ("priority: 30", "priority: 30\ndepends_on: [base]"),
    "fold line": ("card: Releases are cut on Tuesdays.", "card: Cut releases on Tuesdays."),
    "type": ("priority: 30", "priority: 30\ntype: workflow"),
    "blank lines": ("tag.\n", "tag.\n\n\n"),
}
# Edits of what the model reads: the card is sent again.
SEEN = {
    "body": ("on Tuesdays. Bump", "on Wednesdays. Bump"),
    "title": ("title: Release checklist", "title: Release steps"),
}


def _prompt(host: str, ws: Path, session: str = "s1") -> str:
    name = HOSTS[host][0]
    return context(hook.handle(host, json.dumps(payload(
        host, name, ws, prompt="how do we cut a release and deploy?", session_id=session)).encode()))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj", cards={"release": RELEASE, "base": BASE})


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("edit", sorted(UNSEEN))
def test_an_edit_the_model_cannot_see_sends_nothing_again(ws: Path, host: str, edit: str) -> None:
    first = _prompt(host, ws)
    assert "release" in sent_ids(first)
    card = ws / ".agents" / ".engram" / "release.md"
    old, new = UNSEEN[edit]
    card.write_text(card.read_text().replace(old, new))
    again = _prompt(host, ws)
    assert "release" not in sent_ids(again), f"the same body sent again after a {edit} edit"
    assert "release" in already(again)


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("edit", sorted(SEEN))
def test_an_edit_the_model_can_see_is_sent_again_once(ws: Path, host: str, edit: str) -> None:
    assert "release" in sent_ids(_prompt(host, ws))
    card = ws / ".agents" / ".engram" / "release.md"
    old, new = SEEN[edit]
    card.write_text(card.read_text().replace(old, new))
    again = _prompt(host, ws)
    assert sent_ids(again).count("release") == 1
    assert new.split(": ", 1)[-1] in again
    third = _prompt(host, ws)
    assert "release" not in sent_ids(third) and "release" in already(third)


def test_an_unchanged_card_moved_to_another_file_is_not_sent_again(ws: Path) -> None:
    assert "release" in sent_ids(_prompt("claude", ws))
    memory = ws / ".agents" / ".engram"
    (memory / "ops").mkdir()
    (memory / "release.md").rename(memory / "ops" / "release-checklist.md")
    again = _prompt("claude", ws)
    assert "release" not in sent_ids(again) and "release" in already(again)


def test_an_edit_undone_after_the_model_saw_it_is_sent_again(ws: Path) -> None:
    """The model's last word on the card is the edited body: the body restored is news."""
    assert "release" in sent_ids(_prompt("claude", ws))
    card = ws / ".agents" / ".engram" / "release.md"
    card.write_text(RELEASE.replace("Tuesdays. Bump", "Wednesdays. Bump"))
    assert "Wednesdays" in _prompt("claude", ws)
    card.write_text(RELEASE)
    restored = _prompt("claude", ws)
    assert sent_ids(restored) == ["release"] and "on Tuesdays. Bump" in restored


def test_a_record_written_before_keys_named_what_the_model_reads_still_counts(ws: Path) -> None:
    """A session recorded by an engram whose keys hashed the whole file (`id@xxh64 of the
    file's bytes`) is not sent again what it has, after an upgrade."""
    import xxhash

    _prompt("claude", ws)
    cache = Path(delivery.cache_path(paths.workspace_key(str(ws.resolve()))))
    document = json.loads(cache.read_text())
    (entry,) = document["entries"].values()
    file_hash = xxhash.xxh64_hexdigest((ws / ".agents" / ".engram" / "release.md").read_bytes())
    entry["delivered"] = [f"release@{file_hash}"]
    cache.write_text(json.dumps(document))
    again = _prompt("claude", ws)
    assert "release" not in sent_ids(again) and "release" in already(again)


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_record_written_before_keys_named_what_the_model_reads_outlives_an_unseen_edit(
        tmp_path: Path, host: str) -> None:
    """engram upgraded mid-session: the session's record holds the keys an older engram wrote
    (the hash of each card file's bytes). After the session's next call, an edit of what the
    model never reads (a tag) sends nothing again, neither a card a prompt routes nor an
    always card: the record names what the model holds, not a file that has changed since."""
    import xxhash

    ws = make_workspace(tmp_path / "proj", cards={"release": RELEASE, "overview": OVERVIEW})
    memory = ws / ".agents" / ".engram"
    start = context(hook.handle(host, json.dumps(payload(
        host, HOSTS[host][1], ws, session_id="s1", source="startup")).encode()))
    first = _prompt(host, ws)
    assert sorted(sent_ids(start) + sent_ids(first)) == ["overview", "release"]
    cache = Path(delivery.cache_path(paths.workspace_key(str(ws.resolve()))))
    document = json.loads(cache.read_text())
    (entry,) = document["entries"].values()
    entry["delivered"] = [f"{name}@{xxhash.xxh64_hexdigest((memory / f'{name}.md').read_bytes())}"
                          for name in ("overview", "release")]
    for name in ("unconfirmed", "view_keys"):  # fields the older engram did not write
        entry.pop(name, None)
    cache.write_text(json.dumps(document))
    name = HOSTS[host][0]
    other = context(hook.handle(host, json.dumps(payload(
        host, name, ws, prompt="how do we name branches?", session_id="s1")).encode()))
    assert sent_ids(other) == []
    (memory / "release.md").write_text(RELEASE.replace("tags: [release, deploy]",
                                                       "tags: [release, deploy, shipping]"))
    (memory / "overview.md").write_text(OVERVIEW.replace("priority: 90",
                                                         "priority: 90\ntags: [payments]"))
    again = _prompt(host, ws)
    assert sent_ids(again) == [] and "release" in already(again)


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_an_older_record_renamed_by_an_index_that_has_not_seen_the_edit_outlives_an_unseen_edit(
        ws: Path, host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """engram upgraded mid-session over a record an older engram wrote after an edit: the
    record keys the card by the hash of the edited file, and the first call of the new hook
    answers from a stored index that has not seen that edit (a large store's deferred check).
    The key must still be renamed after what the model reads, from the file itself: left as
    the file's hash, a later edit of a tag sent the same body again."""
    import xxhash

    from engram import index

    monkeypatch.setattr(index, "DEFER_MIN_FILES", 1)

    def ask(prompt: str, defer: bool = True) -> str:
        answer = hook.handle(host, json.dumps(payload(
            host, HOSTS[host][0], ws, prompt=prompt, session_id="s1")).encode(), defer=defer)
        index._deferred.clear()  # the after-answer check has not run yet
        return context(answer)

    assert "release" in sent_ids(ask("how do we cut a release and deploy?", defer=False))
    card = ws / ".agents" / ".engram" / "release.md"
    with open(card, "r+", encoding="utf-8") as handle:  # the folder's mtime stays
        handle.write(RELEASE.replace("Tuesdays. Bump", "Thursdays. Bump"))
        handle.truncate()
    assert "Thursdays. Bump" in ask("how do we cut a release and deploy?")
    # The record as the older engram wrote it for that answer: the edited file's hash.
    cache = Path(delivery.cache_path(paths.workspace_key(str(ws.resolve()))))
    document = json.loads(cache.read_text())
    (entry,) = document["entries"].values()
    entry["delivered"] = [f"release@{xxhash.xxh64_hexdigest(card.read_bytes())}"]
    for name in ("unconfirmed", "view_keys"):  # fields the older engram did not write
        entry.pop(name, None)
    cache.write_text(json.dumps(document))
    assert sent_ids(ask("how do we name branches?")) == []  # the new hook, index unchecked
    assert sent_ids(ask("how do we name branches?", defer=False)) == []  # checked now
    card.write_text(card.read_text().replace("tags: [release, deploy]",
                                             "tags: [release, deploy, shipping]"))
    again = ask("how do we cut a release and deploy?", defer=False)
    assert sent_ids(again) == [] and "release" in already(again)


def test_an_older_records_keys_are_renamed_in_every_list_that_names_them(tmp_path: Path) -> None:
    """An older engram's record of a card Claude's legacy PreToolUse sent (a resumed history
    drops it): its keys are renamed in the list of what a resume drops too, so after the
    rename a resume still takes the card out of the record and a prompt sends it again,
    rather than listing a card the resumed model no longer has."""
    import xxhash

    ws = make_workspace(tmp_path / "proj")
    memory = ws / ".agents" / ".engram"
    touched = context(hook.handle("claude", json.dumps(payload(
        "claude", "PreToolUse.json", ws, session_id="s1", tool_name="Read",
        tool_input={"file_path": str(ws / "db" / "migrations" / "1.sql")})).encode()))
    assert "migrations" in sent_ids(touched)
    cache = Path(delivery.cache_path(paths.workspace_key(str(ws.resolve()))))
    document = json.loads(cache.read_text())
    (entry,) = document["entries"].values()

    def by_file(keys: list[str]) -> list[str]:
        return [f"{key.split('@')[0]}@"
                f"{xxhash.xxh64_hexdigest((memory / (key.split('@')[0] + '.md')).read_bytes())}"
                for key in keys]

    entry["delivered"], entry["resume_drops"] = by_file(entry["delivered"]), \
        by_file(entry["resume_drops"])
    entry.pop("view_keys", None)
    cache.write_text(json.dumps(document))
    hook.handle("claude", json.dumps(payload("claude", "UserPromptSubmit.json", ws,
                                             prompt="hello", session_id="s1")).encode())
    hook.handle("claude", json.dumps(payload("claude", "SessionStart.json", ws, session_id="s1",
                                             source="resume")).encode())
    again = context(hook.handle("claude", json.dumps(payload(
        "claude", "UserPromptSubmit.json", ws, prompt="how do we write database migrations?",
        session_id="s1")).encode()))
    assert sent_ids(again).count("migrations") == 1


@pytest.mark.parametrize("defer", [False, True])
def test_a_token_planted_where_the_model_does_not_read_is_still_a_secret(
        ws: Path, defer: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key stays when only the one-line fold changes, but the secret gate judges the
    whole file: the card is not sent, folded or listed with the token, also from an index
    that has not seen the edit yet (a large store's deferred check; an edit in place)."""
    from engram import index

    monkeypatch.setattr(index, "DEFER_MIN_FILES", 1)
    token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"

    def ask(session: str) -> str:
        raw = json.dumps(payload("gemini", "BeforeAgent.json", ws, session_id=session,
                                 prompt="how do we cut a release and deploy?")).encode()
        answer = hook.handle("gemini", raw, defer=defer)
        index._deferred.clear()  # the after-answer check runs in the hook process only
        return answer

    assert "release" in sent_ids(context(ask("s1")))
    card = ws / ".agents" / ".engram" / "release.md"
    with open(card, "r+", encoding="utf-8") as handle:  # the folder's mtime stays
        handle.write(RELEASE.replace("Releases are cut on Tuesdays.", f"Token {token}."))
        handle.truncate()
    for session in ("s2", "s1"):
        answer = ask(session)
        assert token not in answer and "release" not in sent_ids(context(answer))



@pytest.mark.parametrize("host", sorted(HOSTS))
def test_an_edit_an_unchecked_index_has_not_seen_is_not_listed_as_loaded(
        ws: Path, host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large store answers from its stored index before the per-file check (here forced
    for two cards): a body edited in place since is news to a session that has the old one.
    It is sent, not listed as `already loaded:`, and then listed."""
    from engram import index

    monkeypatch.setattr(index, "DEFER_MIN_FILES", 1)

    def ask() -> str:
        name = HOSTS[host][0]
        answer = hook.handle(host, json.dumps(payload(
            host, name, ws, prompt="how do we cut a release and deploy?", session_id="s1")).encode(),
            defer=True)
        index._deferred.clear()  # the after-answer check runs in the hook process only
        return context(answer)

    assert "release" in sent_ids(ask())
    assert "release" in already(ask())
    card = ws / ".agents" / ".engram" / "release.md"
    with open(card, "r+", encoding="utf-8") as handle:  # the folder's mtime stays
        handle.write(RELEASE.replace("Tuesdays. Bump", "Thursdays. Bump"))
        handle.truncate()
    edited = ask()
    assert "release" not in already(edited) and sent_ids(edited) == ["release"]
    assert "on Thursdays. Bump" in edited
    again = ask()
    assert "release" not in sent_ids(again) and "release" in already(again)


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_an_edit_in_the_same_timestamp_tick_is_not_listed_as_loaded(
        ws: Path, host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A filesystem stamps files coarser than two saves can follow each other (2 s on FAT,
    1 s on HFS+ and ext3, a clock tick on ext4): a card saved again, at the same size, in the
    tick the index read it in keeps the mtime the index stored. The stat the freshness check
    compares is then unchanged, yet a session holding the old body must get the new one, not
    `already loaded:`. (The window is widened here so a loaded machine, slow between writing
    the card and compiling it, cannot step out of it.)"""
    from engram import index_rows

    monkeypatch.setattr(index_rows, "RACY_NS", 60 * 10**9, raising=False)
    card = ws / ".agents" / ".engram" / "release.md"
    assert "release" in sent_ids(_prompt(host, ws))
    before = card.stat()
    card.write_text(RELEASE.replace("Tuesdays. Bump", "Thursdays Bump"))
    os.utime(card, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same tick
    assert card.stat().st_size == before.st_size
    edited = _prompt(host, ws)
    assert "release" not in already(edited) and sent_ids(edited) == ["release"]
    assert "on Thursdays Bump" in edited
    again = _prompt(host, ws)
    assert "release" not in sent_ids(again) and "release" in already(again)


def test_a_card_deleted_and_added_again_unchanged_is_not_sent_again(ws: Path) -> None:
    assert "release" in sent_ids(_prompt("claude", ws))
    card = ws / ".agents" / ".engram" / "release.md"
    card.unlink()
    gone = _prompt("claude", ws)
    assert "release" not in sent_ids(gone) and "release" not in already(gone)
    card.write_text(RELEASE)
    back = _prompt("claude", ws)
    assert "release" not in sent_ids(back) and "release" in already(back)


def test_a_renamed_id_is_sent_once_under_its_new_name(ws: Path) -> None:
    """The header the model reads names the id, and `already loaded:` names ids: a card whose
    id changed is sent once under the new one (an `already loaded:` line naming an id the
    model never read would tell it nothing), then listed under it alone."""
    assert "release" in sent_ids(_prompt("claude", ws))
    card = ws / ".agents" / ".engram" / "release.md"
    card.write_text(RELEASE.replace("id: release", "id: release-steps"))
    renamed = _prompt("claude", ws)
    assert sent_ids(renamed) == ["release-steps"] and "release" not in already(renamed)
    again = _prompt("claude", ws)
    assert sent_ids(again) == [] and already(again) == ["release-steps"]


OVERVIEW = CARDS["overview"]  # always: true; "... written in Python 3.12."


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_an_always_card_edited_mid_session_is_sent_again_once(tmp_path: Path, host: str) -> None:
    """An always card is context for the whole session: after the start it comes with a
    prompt only when the prompt routes it for itself, or when the session holds an older
    version of it (edited since it was sent). Once; an edit the model cannot see sends
    nothing."""
    ws = make_workspace(tmp_path / "proj", cards={"release": RELEASE, "overview": OVERVIEW})
    card = ws / ".agents" / ".engram" / "overview.md"
    start = context(hook.handle(host, json.dumps(payload(
        host, HOSTS[host][1], ws, session_id="s1", source="startup")).encode()))
    first = _prompt(host, ws)
    assert (sent_ids(start) + sent_ids(first)).count("overview") == 1
    card.write_text(OVERVIEW.replace("priority: 90", "priority: 90\ntags: [payments]"))
    assert "overview" not in sent_ids(_prompt(host, ws))
    card.write_text(OVERVIEW.replace("Python 3.12", "Python 3.13"))
    edited = _prompt(host, ws)
    assert sent_ids(edited).count("overview") == 1 and "Python 3.13" in edited
    later = _prompt(host, ws)
    assert "overview" not in sent_ids(later) and "overview" not in already(later)


STYLE = """---
id: house-style
title: House style
always: true
---
Answer in British English; keep replies short.
"""


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("change", ["added", "made always", "renamed", "secret removed"])
def test_an_always_card_new_to_the_session_comes_with_the_next_prompt(tmp_path: Path, host: str,
                                                                      change: str) -> None:
    """An always card is context for the whole session: one the session's start did not know
    of (added mid-session, `always: true` set on a card the session was never sent, a file
    renamed, which names another card, or a token taken out of a card the gate held back)
    comes with the next prompt, once, as the start would have brought it (before: only at
    the next start or compaction, or when a prompt routed it for itself)."""
    ws = make_workspace(tmp_path / "proj", cards={"release": RELEASE, "overview": OVERVIEW})
    memory = ws / ".agents" / ".engram"
    if change == "made always":
        (memory / "house-style.md").write_text(STYLE.replace("always: true\n", ""))
    elif change == "renamed":
        (memory / "style.md").write_text(STYLE.replace("id: house-style", "id: style"))
    elif change == "secret removed":
        (memory / "house-style.md").write_text(
            STYLE.replace("short.", "short. ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"))
    start = context(hook.handle(host, json.dumps(payload(
        host, HOSTS[host][1], ws, session_id="s1", source="startup")).encode()))
    first = _prompt(host, ws)
    assert "house-style" not in sent_ids(start) + sent_ids(first)
    if change == "renamed":
        os.replace(memory / "style.md", memory / "house-style.md")
        (memory / "house-style.md").write_text(STYLE)
    else:
        (memory / "house-style.md").write_text(STYLE)
    after = _prompt(host, ws)
    assert sent_ids(after).count("house-style") == 1 and "overview" not in sent_ids(after)
    later = _prompt(host, ws)
    assert "house-style" not in sent_ids(later) + already(later)


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_card_made_always_that_the_session_holds_is_not_sent_again(tmp_path: Path,
                                                                     host: str) -> None:
    ws = make_workspace(tmp_path / "proj", cards={"release": RELEASE, "overview": OVERVIEW})
    card = ws / ".agents" / ".engram" / "release.md"
    context(hook.handle(host, json.dumps(payload(
        host, HOSTS[host][1], ws, session_id="s1", source="startup")).encode()))
    assert "release" in sent_ids(_prompt(host, ws))
    card.write_text(RELEASE.replace("priority: 30", "priority: 30\nalways: true"))
    again = _prompt(host, ws)
    assert "release" not in sent_ids(again)


def test_a_rule_file_claude_loads_after_the_card_was_edited_is_not_taken_for_the_card(
        tmp_path: Path) -> None:
    """With `hooks.path_rules: native` the rule files are written at a session's start, and
    Claude Code loads one by itself when the agent reads a matching file. A card edited since
    the start is loaded as it was: the model holds the older body. The load was recorded as
    the card's current version, and the next prompt said `already loaded: migrations` for a
    body the model never read. It is sent instead, once, and the rule file is rewritten."""
    ws = make_workspace(tmp_path / "proj", config={"hooks": {"path_rules": "native"}})
    rule = ws / ".claude" / "rules" / "engram" / "migrations.md"
    rule.parent.mkdir(parents=True)

    def ask() -> str:
        return context(hook.handle("claude", json.dumps(payload(
            "claude", "UserPromptSubmit.json", ws, prompt="how do we write database migrations?",
            session_id="s1")).encode()))

    hook.handle("claude", json.dumps(payload("claude", "SessionStart.json", ws, session_id="s1",
                                             source="startup")).encode())
    assert "Write reversible migrations only." in rule.read_text()
    card = ws / ".agents" / ".engram" / "migrations.md"
    card.write_text(card.read_text().replace("Write reversible migrations only.",
                                             "Write forward-only migrations."))
    # The agent reads db/migrations/1.sql: Claude loads the rule file as the start wrote it.
    loaded = payload("claude", "InstructionsLoaded.json", ws, session_id="s1",
                     file_path=str(rule), load_reason="path_glob_match")
    assert hook.handle("claude", json.dumps(loaded).encode()) == ""
    edited = ask()
    assert sent_ids(edited) == ["migrations"] and "Write forward-only migrations." in edited
    assert "Write forward-only migrations." in rule.read_text()
    again = ask()
    assert sent_ids(again) == [] and already(again) == ["migrations"]
    # The rule file as it is now, loaded by another read: the card as the model has it.
    assert hook.handle("claude", json.dumps(loaded).encode()) == ""
    assert sent_ids(ask()) == []
