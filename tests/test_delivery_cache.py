"""The delivery cache as plain data, and its file: pruning, caps, corruption, schema."""

from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest
from conftest import REPO

from engram import delivery


def doc_with(entries: dict) -> dict:
    return {"version": 1, "entries": entries}


def entry(updated: float, agent: str = "") -> dict:
    e = delivery.new_entry("claude", "/w", "s", agent, updated)
    e["updated"] = updated
    return e


def test_prune_ttl_and_caps_subagents_never_evict_parents() -> None:
    now = 10_000_000.0
    entries = {f"claude|/w|s{i}": entry(now - i) for i in range(250)}
    entries.update({f"claude|/w|s0#agent:{i}": entry(now - 1000 - i, agent=str(i)) for i in range(150)})
    entries["claude|/w|old"] = entry(now - delivery.TTL_SECONDS - 1)
    document = doc_with(entries)
    delivery.prune(document, now)
    kept = document["entries"]
    assert "claude|/w|old" not in kept
    assert sum(1 for e in kept.values() if not e["agent"]) == 200
    assert sum(1 for e in kept.values() if e["agent"]) == 100
    assert "claude|/w|s0" in kept and "claude|/w|s249" not in kept  # oldest go first


def test_mark_delivered_replaces_older_hash_of_same_id() -> None:
    e = entry(0)
    delivery.mark_delivered(e, ["a@1111111111111111", "b@2222222222222222"], 1)
    delivery.mark_delivered(e, ["a@3333333333333333"], 2)
    assert e["delivered"] == ["a@3333333333333333", "b@2222222222222222"]


@pytest.mark.parametrize("garbage", [b"", b"{", b"\x00\xff garbage", b'{"version": 99, "entries": {}}',
                                     b'{"version": 1, "entries": []}', b"[]"])
def test_corrupt_cache_is_set_aside_and_rebuilt(tmp_path: Path, garbage: bytes) -> None:
    path = tmp_path / "delivery" / "w.json"
    path.parent.mkdir()
    path.write_bytes(garbage)
    with delivery.transaction(str(path)) as document:
        assert document == delivery.empty_document()
        delivery.entry_for(document, "claude|/w|s", "claude", "/w", "s", "", time.time())
    assert json.loads(path.read_text())["entries"]
    if garbage:
        assert list(path.parent.glob("w.json.corrupt-*"))


def test_exception_inside_transaction_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with pytest.raises(RuntimeError), delivery.transaction(str(path)) as document:
        delivery.entry_for(document, "claude|/w|s", "claude", "/w", "s", "", 1.0)
        raise RuntimeError("boom")
    assert not path.exists()


def test_written_cache_validates_against_schema(tmp_path: Path) -> None:
    schema = json.loads((REPO / "schemas" / "delivery-cache.schema.json").read_text())
    path = tmp_path / "c.json"
    with delivery.transaction(str(path)) as document:
        e = delivery.entry_for(document, "claude|/w|s#agent:7", "claude", "/w", "s", "7", time.time())
        delivery.mark_delivered(e, ["card-a@0123456789abcdef"], time.time())
    jsonschema.validate(json.loads(path.read_text()), schema)


def test_stale_temp_files_are_swept(tmp_path: Path) -> None:
    import os

    from engram import fileio

    path = tmp_path / "c.json"
    old = tmp_path / ".c.json.123.abcdef.tmp"
    fresh = tmp_path / ".c.json.456.abcdef.tmp"
    other = tmp_path / ".other.json.1.a.tmp"
    for file in (old, fresh, other):
        file.write_text("partial")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    os.utime(other, (time.time() - 7200, time.time() - 7200))
    assert fileio.sweep_stale_temps(path) == 1
    assert not old.exists() and fresh.exists() and other.exists()


def test_a_cache_the_hooks_wrote_validates_against_schema(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Every field a hook call writes is in the schema: Gemini's deferred session start,
    Claude's legacy PreToolUse record (dropped on resume), a reset's stamp and the start that
    made it."""
    from hookkit import call, make_workspace, payload

    from engram import paths

    monkeypatch.setenv("ENGRAM_STATE_DIR", str(tmp_path / "state"))
    ws = make_workspace(tmp_path / "proj")
    call("gemini", payload("gemini", "SessionStart.json", ws, session_id="g"))
    call("claude", payload("claude", "SessionStart.json", ws, session_id="c", source="startup"))
    call("claude", payload("claude", "PreToolUse.json", ws, session_id="c", tool_name="Read",
                           tool_input={"file_path": str(ws / "db" / "migrations" / "1.sql")}))
    cache = tmp_path / "state" / "delivery" / f"{paths.workspace_key(str(ws.resolve()))}.json"
    document = json.loads(cache.read_text())
    fields = {name for entry in document["entries"].values() for name in entry}
    assert {"start_pending", "resume_drops", "reset_at", "reset_by", "view_keys"} <= fields
    schema = json.loads((REPO / "schemas" / "delivery-cache.schema.json").read_text())
    jsonschema.validate(document, schema)


@pytest.mark.parametrize("field, value", [("reset_at", "yesterday"), ("resume_drops", 7),
                                          ("resume_drops", [1]), ("slot", None),
                                          ("reset_by", 3), ("view_keys", "yes")])
def test_a_damaged_optional_field_makes_the_cache_invalid(field: str, value: object) -> None:
    """A cache holding, say, a string where the reset stamp belongs is set aside, not a
    failure of every later call of that session."""
    e = entry(1.0)
    assert delivery.is_valid(doc_with({"claude|/w|s": e}))
    e[field] = value
    assert not delivery.is_valid(doc_with({"claude|/w|s": e}))
