"""A body sent is the content its key names, read at send time: when a card file changed
after the index was compiled (a large store answered from a deferred check, a branch switch
answered from the stored index while a child rebuilds, an edit racing the hook), the hook
parses that one card again and checks it for secrets, sends its current body under its current
key, or skips it and says so in the hook log. Never a new body under an old key, a cut body,
or a secret."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hookkit import already, context, make_workspace, payload, sent_ids

from engram import delivery, hook, index, paths, render

GITHUB = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


def card(body: str, tags: str = "release, deploy") -> str:
    return f"---\nid: release\ntitle: Release checklist\ntags: [{tags}]\n---\n{body}\n"


FIRST = card("Releases are cut from main on Tuesdays and the rollout is watched for an hour.")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj", cards={"release": FIRST, "other": card(
        "Unrelated text.", "misc").replace("id: release", "id: other")})


def call(ws: Path, session: str, defer: bool = True) -> str:
    raw = json.dumps(payload("claude", "UserPromptSubmit.json", ws, prompt="release checklist",
                             session_id=session)).encode()
    text = context(hook.handle("claude", raw, defer=defer))
    index._deferred.clear()  # the after-answer check runs in the hook process only
    return text


def bodies(text: str) -> dict[str, str]:
    """{id: body} of the bodies in an answer."""
    found: dict[str, str] = {}
    current = None
    for line in text.split("\n"):
        if line.startswith(render.HEADER_PREFIX):
            current = line[len(render.HEADER_PREFIX):].split(" — ")[0]
            found[current] = ""
        elif line.startswith(("already loaded: ", "Engram proof: ")):
            current = None
        elif current is not None:
            found[current] += line + "\n"
    return {k: v.strip("\n") for k, v in found.items()}


def delivered(ws: Path, session: str) -> list[str]:
    document = json.loads(Path(delivery.cache_path(paths.workspace_key(str(ws.resolve()))))
                          .read_text())
    (entry,) = [e for e in document["entries"].values() if e["session"] == session]
    return entry["delivered"]


def key_of(path: Path) -> str:
    """The delivery key of what the file holds now: its id and the hash of its title and
    body (what the model reads)."""
    from engram import index_compile

    card, _secret = index_compile.reparse(str(path), str(path.parent), path.read_bytes())
    assert card is not None and card.id == "release"
    return "release@" + card.view_hash


def edit_in_place(path: Path, text: str) -> None:
    """Rewrite the file without touching its folder (no rename): the deferred check's folder
    mtimes do not see it."""
    folder = path.parent
    before = os.stat(folder).st_mtime_ns
    with open(path, "r+", encoding="utf-8") as handle:
        handle.seek(0)
        handle.write(text)
        handle.truncate()
    assert os.stat(folder).st_mtime_ns == before


@pytest.fixture
def deferred(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index, "DEFER_MIN_FILES", 1)


@pytest.mark.usefixtures("deferred")
def test_deferred_check_sends_the_new_body_under_the_new_key(ws: Path) -> None:
    path = ws / ".agents" / ".engram" / "release.md"
    assert bodies(call(ws, "warm"))["release"].startswith("Releases are cut")
    new = card("Releases are cut on Thursdays now, after the freeze, by the on-call lead.")
    edit_in_place(path, new)
    text = call(ws, "s1")
    assert index._deferred == [] and bodies(text)["release"] == \
        "Releases are cut on Thursdays now, after the freeze, by the on-call lead."
    assert delivered(ws, "s1") == [key_of(path)]
    # The next call (index still stale for the deferred path) does not send it again.
    again = call(ws, "s1")
    assert "release" not in sent_ids(again) and already(again) == ["release"]


@pytest.mark.usefixtures("deferred")
def test_same_length_edit_is_not_sent_under_the_old_key(ws: Path) -> None:
    path = ws / ".agents" / ".engram" / "release.md"
    call(ws, "warm")
    new = FIRST.replace("Tuesdays", "Thursday")
    assert len(new) == len(FIRST)
    edit_in_place(path, new)
    assert bodies(call(ws, "s1"))["release"] == \
        "Releases are cut from main on Thursday and the rollout is watched for an hour."
    assert delivered(ws, "s1") == [key_of(path)]


@pytest.mark.usefixtures("deferred")
def test_shorter_edit_is_sent_whole_not_cut(ws: Path) -> None:
    path = ws / ".agents" / ".engram" / "release.md"
    call(ws, "warm")
    edit_in_place(path, card("Short."))
    assert bodies(call(ws, "s1"))["release"] == "Short."


@pytest.mark.usefixtures("deferred")
def test_a_secret_planted_in_place_is_never_sent(ws: Path, tmp_path: Path) -> None:
    path = ws / ".agents" / ".engram" / "release.md"
    call(ws, "warm")
    edit_in_place(path, card(f"Releases use the token {GITHUB} for the API."))
    text = call(ws, "s1")
    assert GITHUB not in text and "release" not in sent_ids(text)
    assert "card release changed since the index was compiled and now holds a secret" in \
        (tmp_path / "state" / "logs" / "hook.log").read_text()


def native_release(ws: Path) -> tuple[str, Path, Path, bytes]:
    """The release card scoped to a path, native rule mode, and a first SessionStart that
    wrote its rule file: (its text, its file, the rules folder, the SessionStart payload)."""
    scoped = FIRST.replace("tags:", 'applies_to: ["deploy/**"]\ntags:')
    path = ws / ".agents" / ".engram" / "release.md"
    path.write_text(scoped, encoding="utf-8")
    (ws / ".agents" / "engram.json").write_text(json.dumps({"hooks": {"path_rules": "native"}}))
    rules = ws / ".claude" / "rules" / "engram"
    rules.mkdir(parents=True)
    start = json.dumps(payload("claude", "SessionStart.json", ws)).encode()
    hook.handle("claude", start, defer=False)
    index._deferred.clear()
    return scoped, path, rules, start


@pytest.mark.usefixtures("deferred")
def test_a_secret_planted_in_place_never_reaches_a_native_rule_file(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Native mode writes rule files at session start from the index, using the compiler's
    secret verdicts (no scan of unchanged cards). Answered from a stale index, the card is
    the content its key names, so the token planted since is never written."""
    from engram import secrets

    scoped, path, rules, start = native_release(ws)
    assert "Releases are cut from main" in (rules / "release.md").read_text()
    scans: list[str] = []
    real = secrets.has_secrets
    monkeypatch.setattr(secrets, "has_secrets", lambda text: scans.append(text) or real(text))
    hook.handle("claude", start, defer=True)
    index._deferred.clear()
    assert scans == []  # the stored verdict served
    edit_in_place(path, scoped.replace("Releases are cut", f"Use {GITHUB}. Releases are cut"))
    hook.handle("claude", start, defer=True)
    index._deferred.clear()
    assert all(GITHUB not in p.read_text() for p in rules.iterdir())
    hook.handle("claude", start, defer=False)  # compiled afresh: the card now holds a secret
    index._deferred.clear()
    assert not (rules / "release.md").exists()


@pytest.mark.usefixtures("deferred")
def test_a_secret_a_concurrent_refresh_found_never_reaches_a_native_rule_file(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another hook's after-answer check commits the card with a secret planted in place
    while this SessionStart runs, after this call read the meta (no secret then): the rule
    sync takes each card and its verdict from one read of its row, never the meta's list
    with a newer row."""
    scoped, path, rules, start = native_release(ws)
    (rules / "release.md").unlink()  # so this call writes it afresh
    real = index.load_or_build

    def load_then_refresh_elsewhere(workspace: object, defer: bool = False) -> object:
        loaded = real(workspace, defer=defer)  # type: ignore[arg-type]
        # The meta is read now, before the other hook's commit: no secret in it.
        assert loaded.active and loaded.data.get("secret_slots") == []
        edit_in_place(path, scoped.replace("Releases are cut", f"Use {GITHUB}. Releases are cut"))
        index._load_healing(index.workspace_index_path(workspace),  # type: ignore[arg-type]
                            index.roots_of(workspace), False, ())  # type: ignore[arg-type]
        return loaded

    monkeypatch.setattr(index, "load_or_build", load_then_refresh_elsewhere)
    hook.handle("claude", start, defer=True)
    index._deferred.clear()
    assert all(GITHUB not in p.read_text() for p in rules.iterdir())


@pytest.mark.usefixtures("deferred")
def test_a_secret_a_concurrent_refresh_found_is_never_sent(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another hook's after-answer check finds the secret planted in place and commits while
    this call runs: this call read the meta (no secret then) before that commit and the card's
    row, whose hash matches the file, after it. The row's own verdict keeps the body out."""
    path = ws / ".agents" / ".engram" / "release.md"
    call(ws, "warm")
    real = index.load_or_build

    def load_then_refresh_elsewhere(workspace: object, defer: bool = False) -> object:
        loaded = real(workspace, defer=defer)  # type: ignore[arg-type]
        edit_in_place(path, card(f"Releases use the token {GITHUB} for the API."))
        index._load_healing(index.workspace_index_path(workspace),  # type: ignore[arg-type]
                            index.roots_of(workspace), False, ())  # type: ignore[arg-type]
        return loaded

    monkeypatch.setattr(index, "load_or_build", load_then_refresh_elsewhere)
    text = call(ws, "s1")
    assert GITHUB not in text and "release" not in sent_ids(text)


@pytest.mark.usefixtures("deferred")
def test_a_card_that_no_longer_parses_or_changed_id_is_skipped(ws: Path) -> None:
    path = ws / ".agents" / ".engram" / "release.md"
    call(ws, "warm")
    edit_in_place(path, FIRST.replace("id: release", "id: shipping"))
    assert "release" not in sent_ids(call(ws, "s1"))
    edit_in_place(path, "---\nid: [release\ntitle: x\n---\nbody\n")
    assert "release" not in sent_ids(call(ws, "s2"))


def test_background_rebuild_answers_with_current_bodies(ws: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch switch of many files: the stored index answers while a child rebuilds (the
    child never finishes here), and every body sent is the file's current one."""
    path = ws / ".agents" / ".engram" / "release.md"
    call(ws, "warm")
    monkeypatch.setattr(index, "BACKGROUND_MIN_CHANGES", 0)
    monkeypatch.setattr(index, "_refresh_in_background", lambda *args: True)
    path.write_text(card("On this branch releases go out every day."), encoding="utf-8")
    text = call(ws, "s1")
    assert bodies(text)["release"] == "On this branch releases go out every day."
    assert delivered(ws, "s1") == [key_of(path)]


def test_an_edit_racing_the_hook_is_read_at_send_time(ws: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The file changes after the index was checked and the prompt routed, before the body
    is read."""
    from engram import query

    path = ws / ".agents" / ".engram" / "release.md"
    call(ws, "warm")
    real = query.route_request

    def route_then_edit(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)
        path.write_text(card("Raced: the new text."), encoding="utf-8")
        return result

    monkeypatch.setattr(query, "route_request", route_then_edit)
    text = call(ws, "s1", defer=False)
    assert bodies(text)["release"] == "Raced: the new text."
    assert delivered(ws, "s1") == [key_of(path)]


@pytest.mark.usefixtures("deferred")
def test_a_deleted_card_is_skipped_not_sent_from_the_stored_copy(ws: Path) -> None:
    path = ws / ".agents" / ".engram" / "release.md"
    call(ws, "warm")
    folder_mtime = os.stat(path.parent).st_mtime_ns
    path.unlink()
    os.utime(path.parent, ns=(folder_mtime, folder_mtime))  # the folder looks unchanged
    assert "release" not in sent_ids(call(ws, "s1"))
