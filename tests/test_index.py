"""The compiled index: refreshed incrementally (stat, then xxhash), loaded without YAML or
wcmatch, and rebuilt when its file is corrupt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, deny_reading, write_card

from engram import host_registry, index, store, workspace
from engram.query import route_request

MEM = ".agents/.engram"


def _load(ws: Path) -> index.CompiledIndex:
    loaded = workspace.load(ws)
    assert loaded is not None
    return index.load_or_build(loaded)


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = store.load_file

    def counting(found, data=None):  # noqa: ANN001, ANN202
        parsed.append(os.path.basename(found.path))
        return real(found, data)

    monkeypatch.setattr(store, "load_file", counting)
    return parsed


def _bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


def _populate(ws: Path) -> None:
    mem = ws / MEM
    write_card(mem, "alpha.md", "---\ntitle: Kite flying\ntags: [alpha]\n---\nAlpha body about kites.\n")
    write_card(mem, "beta.md", "---\ntitle: Beta\napplies_to: [src/**/*.py]\n---\nBeta body.\n")
    write_card(mem, "gamma.md", "---\ntitle: Garden beds\n---\nGamma body about gardens.\n")
    _fillers(mem)


FILLER_WORDS = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "glacier", "harbor",
                "iris", "juniper", "kelp", "lichen", "moss", "nectar", "opal", "pumice"]


def _fillers(mem: Path) -> None:
    """Unrelated cards: text routing needs a store big enough for IDF to mean something."""
    for word in FILLER_WORDS:
        write_card(mem, f"filler/{word}.md", f"---\ntitle: {word.title()} notes\n---\nAbout {word}.\n")


def test_unchanged_files_are_not_reparsed(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _populate(workspace)
    parsed = _count_parses(monkeypatch)
    first = _load(workspace)
    assert sorted(parsed) == sorted(["alpha.md", "beta.md", "gamma.md"]
                                    + [f"{word}.md" for word in FILLER_WORDS])
    assert os.path.exists(index.index_path(workspace_key(workspace)))
    parsed.clear()
    second = _load(workspace)
    assert parsed == []
    assert [c.id for c in second.all_cards()] == [c.id for c in first.all_cards()]


def test_touched_but_identical_file_is_hashed_not_reparsed(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _populate(workspace)
    _load(workspace)
    parsed = _count_parses(monkeypatch)
    _bump_mtime(workspace / MEM / "alpha.md")
    _load(workspace)
    assert parsed == []  # same bytes: xxhash says unchanged


def test_edited_file_is_reparsed_and_its_hash_changes(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _populate(workspace)
    before = {c.id: c for c in _load(workspace).all_cards()}
    parsed = _count_parses(monkeypatch)
    path = workspace / MEM / "alpha.md"
    path.write_text("---\ntitle: Zeppelin hangars\ntags: [alpha]\n---\nAlpha body.\n",
                    encoding="utf-8")
    _bump_mtime(path)
    compiled = _load(workspace)
    assert parsed == ["alpha.md"]
    after = {c.id: c for c in compiled.all_cards()}
    assert after["alpha"].content_hash != before["alpha"].content_hash
    assert after["beta"].content_hash == before["beta"].content_hash
    ids = route_request(compiled, workspace, workspace, "zeppelin hangars", [], 8).ids
    assert ids == ["alpha"]
    assert route_request(compiled, workspace, workspace, "kite flying", [], 8).ids == []


def test_the_freshness_check_sees_any_one_stat_change_and_nothing_else(workspace: Path) -> None:
    """The stored stats are compared whole (path, root, mtime and size of every file, in scan
    order): one nanosecond of mtime, one byte of size, a file more or less is stale; put
    back exactly, it is fresh again without a refresh."""
    _populate(workspace)
    _load(workspace)
    loaded = workspace_module_load(workspace)
    path, roots = index.workspace_index_path(loaded), index.roots_of(loaded)
    alpha = workspace / MEM / "alpha.md"
    stat = alpha.stat()
    original = alpha.read_bytes()
    assert index.check(path, roots)
    os.utime(alpha, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert not index.check(path, roots)
    os.utime(alpha, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert index.check(path, roots)
    alpha.write_bytes(original + b" ")
    os.utime(alpha, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert not index.check(path, roots)
    alpha.write_bytes(original)
    os.utime(alpha, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert index.check(path, roots)
    extra = workspace / MEM / "filler" / "zzz.md"
    extra.write_text("---\ntitle: Extra\n---\nExtra.\n", encoding="utf-8")
    assert not index.check(path, roots)
    extra.unlink()
    assert index.check(path, roots)
    (workspace / MEM / "gamma.md").rename(workspace / MEM / "filler" / "gamma.md")
    assert not index.check(path, roots)


def test_a_file_read_within_its_timestamp_tick_is_checked_by_its_bytes(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A card file the compiler read within its mtime's tick (here every file: the window
    widened to a minute) may be saved again with the same stat. Its bytes decide: the same
    ones are fresh without a refresh or a parse, others (same size, same mtime) are stale.
    Past the window, more than RACY_SETTLE such files are stored with their stamps by one
    refresh, after which the stat alone decides again."""
    from engram import index_rows

    monkeypatch.setattr(index_rows, "RACY_NS", 60 * 10**9)
    _populate(workspace)
    _load(workspace)
    loaded = workspace_module_load(workspace)
    path, roots = index.workspace_index_path(loaded), index.roots_of(loaded)
    racy = index_rows.read_meta(index._open(path), ("racy",))["racy"]
    assert len(racy) == 3 + len(FILLER_WORDS)
    parsed = _count_parses(monkeypatch)
    assert index.check(path, roots)
    alpha = workspace / MEM / "alpha.md"
    stat, original = alpha.stat(), alpha.read_bytes()
    alpha.write_bytes(original.replace(b"kites", b"kitez"))
    os.utime(alpha, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert not index.check(path, roots)
    alpha.write_bytes(original)
    os.utime(alpha, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert index.check(path, roots)
    monkeypatch.setattr(index_rows, "RACY_NS", 0)  # every stamp is old enough now
    monkeypatch.setattr(index_rows, "RACY_SETTLE", 1)
    assert not index.check(path, roots)
    # Storing stamps parses nothing: it is no change that sends a hook's refresh to the
    # background, whatever the number of files.
    monkeypatch.setattr(index, "BACKGROUND_MIN_CHANGES", 1)
    backgrounded: list[object] = []
    monkeypatch.setattr(index, "_refresh_in_background", lambda *args: backgrounded.append(args))
    assert not index.load_or_build(loaded, defer=True).unchecked
    assert backgrounded == []
    assert parsed == []  # the bytes were read again, and found the same: nothing parsed
    assert index_rows.read_meta(index._open(path), ("racy",))["racy"] == {}
    assert index.check(path, roots)


def test_removed_file_disappears_and_new_file_appears(workspace: Path) -> None:
    _populate(workspace)
    _load(workspace)
    (workspace / MEM / "gamma.md").unlink()
    write_card(workspace / MEM, "delta.md", "---\ntitle: River crossings\n---\nDelta body.\n")
    compiled = _load(workspace)
    assert sorted(c.id for c in compiled.all_cards()) == sorted(["alpha", "beta", "delta"]
                                                               + FILLER_WORDS)
    assert route_request(compiled, workspace, workspace, "garden beds", [], 8).ids == []
    assert route_request(compiled, workspace, workspace, "river crossings", [], 8).ids == ["delta"]
    assert compiled.slot_of("gamma") is None


def test_many_removals_compact_and_keep_routing(workspace: Path) -> None:
    mem = workspace / MEM
    for n in range(120):
        write_card(mem, f"c{n:03}.md", f"---\ntitle: Word{n} special{n}\n---\nBody.\n")
    _load(workspace)
    for n in range(100):
        (mem / f"c{n:03}.md").unlink()
    compiled = _load(workspace)
    assert len(compiled.all_cards()) == 20
    assert route_request(compiled, workspace, workspace, "word110 special110", [], 8).ids == ["c110"]
    # nothing of the removed files is left behind
    assert compiled.db.execute("SELECT COUNT(*) FROM cards").fetchone()[0] == 20


def test_fixing_a_broken_file_clears_its_problem(workspace: Path) -> None:
    mem = workspace / MEM
    path = write_card(mem, "x.md", "---\npriority: high\n---\nBody.\n")
    assert [p.code for p in _load(workspace).problems] == ["invalid"]
    path.write_text("---\npriority: 60\n---\nBody.\n", encoding="utf-8")
    _bump_mtime(path)
    compiled = _load(workspace)
    assert compiled.problems == []
    assert compiled.card(compiled.slot_of("x")).priority == 60


def test_a_file_made_readable_again_is_loaded(workspace: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    locked = write_card(workspace / MEM, "locked.md", "---\ntitle: Locked\n---\nBody.\n")
    with monkeypatch.context() as patch:  # undo() would also drop the isolation fixture's env
        deny_reading(patch, locked)
        assert [p.code for p in _load(workspace).problems] == ["unreadable"]
    compiled = _load(workspace)
    assert [c.id for c in compiled.all_cards()] == ["locked"]


def workspace_key(ws: Path) -> str:
    loaded = workspace.load(ws)
    assert loaded is not None
    return loaded.key


def test_corrupt_index_is_set_aside_and_rebuilt(workspace: Path) -> None:
    _populate(workspace)
    _load(workspace)
    path = Path(index.index_path(workspace_key(workspace)))
    path.write_bytes(b"\x00garbage that marshal cannot read" * 3)
    compiled = _load(workspace)
    assert sorted(c.id for c in compiled.all_cards()) == sorted(["alpha", "beta", "gamma"]
                                                               + FILLER_WORDS)
    assert Path(str(path) + ".corrupt").exists()
    # The rebuilt index is valid again: the next load reads it without setting anything aside.
    Path(str(path) + ".corrupt").unlink()
    _load(workspace)
    assert not Path(str(path) + ".corrupt").exists()


def test_index_from_another_format_is_rebuilt(workspace: Path) -> None:
    import marshal

    _populate(workspace)
    _load(workspace)
    path = Path(index.index_path(workspace_key(workspace)))
    path.write_bytes(marshal.dumps({"format": -1}))
    assert len(_load(workspace).all_cards()) == 3 + len(FILLER_WORDS)


def test_read_only_state_dir_still_routes(workspace: Path, monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    _populate(workspace)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("ENGRAM_STATE_DIR", str(blocker / "state"))
    compiled = _load(workspace)
    assert route_request(compiled, workspace, workspace, "kite flying", [], 8).ids == ["alpha"]


HOT_PATH = r"""
import json, sys
from engram import index, workspace
from engram.query import route_request
ws = workspace.load(sys.argv[1])
compiled = index.load_or_build(ws)
result = route_request(compiled, ws.root, ws.root, "kite flying", ["src/app.py"], 8)
print(json.dumps({"ids": result.ids,
                  "modules": sorted(m for m in sys.modules
                                    if m.split(".")[0] in ("yaml", "wcmatch"))}))
"""


def _warm_hosts_cache() -> None:
    """The hosts cache in this test's state dir, as any engram process leaves it (the hook
    loads its host before the index; the memory scan reads the hosts' rules folders)."""
    host_registry._memo.clear()
    host_registry.all_definitions()


def test_loading_a_fresh_index_imports_neither_yaml_nor_wcmatch(workspace: Path) -> None:
    _populate(workspace)
    _load(workspace)  # compiled here, in the test process
    _warm_hosts_cache()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", HOT_PATH, str(workspace)], env=env,
                         capture_output=True, text=True, check=True, timeout=60)
    result = json.loads(out.stdout)
    assert result["ids"] == ["beta", "alpha"]  # the path match first, then the text match
    assert result["modules"] == []


def test_the_hot_path_probe_can_see_an_import(workspace: Path) -> None:
    """The probe above is not vacuous: a stale index makes the subprocess parse, and then
    yaml is imported."""
    _populate(workspace)
    _warm_hosts_cache()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", HOT_PATH, str(workspace)], env=env,
                         capture_output=True, text=True, check=True, timeout=60)
    assert "yaml" in json.loads(out.stdout)["modules"]


def test_explicit_roots_get_their_own_index(tmp_path: Path) -> None:
    root_a = tmp_path / "a"
    root_b = tmp_path / "b"
    write_card(root_a, "one.md", "One about kites.\n")
    write_card(root_b, "two.md", "Two about kites.\n")
    assert [c.id for c in index.load_roots([root_a]).all_cards()] == ["one"]
    assert sorted(c.id for c in index.load_roots([root_a, root_b]).all_cards()) == ["one", "two"]
    assert [c.id for c in index.load_roots([root_b]).all_cards()] == ["two"]


def test_row_views_name_every_stored_position() -> None:
    """`index.row(slot).applies_to` reads the same value as position C_APPLIES of the stored
    tuple, for every field; the stored form stays a plain tuple (no on-disk change)."""
    import marshal

    from engram import index_rows

    names = {"id": "C_ID", "title": "C_TITLE", "card": "C_CARD", "type": "C_TYPE",
             "tags": "C_TAGS", "applies_to": "C_APPLIES", "always": "C_ALWAYS",
             "priority": "C_PRIORITY", "depends_on": "C_DEPENDS", "format": "C_FORMAT",
             "body_line": "C_BODY_LINE", "provenance": "C_PROVENANCE", "body_span": "C_BODY_SPAN",
             "hash": "C_HASH", "path": "C_PATH", "root": "C_ROOT"}
    stored = tuple(f"value-{i}" for i in range(16))
    row = index_rows.Row(marshal.loads(marshal.dumps(stored)))
    assert row == stored and type(marshal.loads(marshal.dumps(tuple(row)))) is tuple
    assert sorted(getattr(index_rows, c) for c in names.values()) == list(range(16))
    for name, constant in names.items():
        assert getattr(row, name) == stored[getattr(index_rows, constant)], name


def _tables(ws: Path) -> dict[str, list[tuple[object, ...]]]:
    import sqlite3

    db = sqlite3.connect(index.index_path(workspace_key(ws)))
    try:
        names = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: db.execute(f"SELECT * FROM {name} ORDER BY 1, 2").fetchall() for name in names}
    finally:
        db.close()


def test_parallel_first_build_equals_serial_build(
        workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A first build spread over forked children stores exactly what one process stores,
    byte for byte, table by table: cards with problems, a secret, a broken file, CRLF,
    non-ASCII text and an unreadable file included."""
    from engram import index_compile

    _populate(workspace)
    mem = workspace / MEM
    write_card(mem, "crlf.md", "---\r\ntitle: Windows lines\r\ntags: [crlf]\r\n---\r\nBody über café.\r\n")
    write_card(mem, "broken.md", "---\ntitle: [unclosed\n---\nBody.\n")
    write_card(mem, "leaky.md", "---\ntitle: Deploy\n---\nexport GITHUB_TOKEN=ghp_" + "aB3" * 12 + "\n")
    write_card(mem, "dup/alpha.md", "---\nid: alpha\ntitle: Second alpha\n---\nDuplicate id.\n")
    write_card(mem, "locked.md", "---\ntitle: Locked\n---\nNo read.\n")
    deny_reading(monkeypatch, mem / "locked.md")
    monkeypatch.setattr(os, "cpu_count", lambda: 3)  # forks on a one-core CI runner too
    builds: dict[str, dict[str, list[tuple[object, ...]]]] = {}
    spread: list[bool] = []
    real = index_compile._prepare_parallel

    def watched(found):  # noqa: ANN001, ANN202
        result = real(found)
        spread.append(result is not None)
        return result

    monkeypatch.setattr(index_compile, "_prepare_parallel", watched)
    for name, minimum in (("serial", 10**9), ("parallel", 2)):
        monkeypatch.setenv("ENGRAM_STATE_DIR", str(tmp_path / name))
        monkeypatch.setattr(index_compile, "PARALLEL_MIN_FILES", minimum)
        _load(workspace)
        builds[name] = _tables(workspace)
    assert spread == [False, True]
    assert builds["parallel"] == builds["serial"]
    assert builds["serial"]["cards"] and any(row[10] for row in builds["serial"]["cards"])


def test_a_hook_below_the_deferral_size_opens_the_index_once(
        workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The deferral probe's connection is the full load's: no second open (and no second
    -wal/-shm create and remove) per hook call; a card edited in place is still seen."""
    _populate(workspace)
    _load(workspace)
    index.close_connections()
    opened: list[str] = []
    real = index._connect

    def counting(path: str) -> object:
        opened.append(path)
        return real(path)

    monkeypatch.setattr(index, "_connect", counting)
    loaded = workspace_module_load(workspace)
    before = index.load_or_build(loaded, defer=True).all_cards()
    assert len(opened) == 1 and before
    card = Path(before[0].path)
    card.write_text(card.read_text(encoding="utf-8") + "\nedited in place\n", encoding="utf-8")
    _bump_mtime(card)
    after = {c.id: c for c in index.load_or_build(loaded, defer=True).all_cards()}
    assert len(opened) == 2
    assert after[before[0].id].content_hash != before[0].content_hash


def workspace_module_load(ws: Path) -> workspace.Workspace:
    loaded = workspace.load(ws)
    assert loaded is not None
    return loaded


def test_judged_cards_pair_each_stored_card_with_its_own_verdict(workspace: Path) -> None:
    _populate(workspace)
    write_card(workspace / MEM, "leaky.md",
               "---\ntitle: Leaky\n---\nToken ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 here.\n")
    compiled = _load(workspace)
    slots = [compiled.slot_of("beta"), compiled.slot_of("leaky"), 10**6]
    judged = compiled.judged_cards([s for s in slots if s is not None])
    assert [(card.id, secret) for card, secret in judged] == [("beta", False), ("leaky", True)]
    beta = judged[0][0]
    assert beta.body == compiled.card(compiled.slot_of("beta")).body  # type: ignore[arg-type]
    assert beta.key == compiled.card(compiled.slot_of("beta")).key  # type: ignore[arg-type]


def test_sqlite_driver_loads_without_functools_and_leaves_the_real_one_importable() -> None:
    """The hook opens SQLite without importing functools (and so collections); the driver's
    statement cache still works, and functools imported afterwards is the real module."""
    check = (
        "import sys\n"
        "from engram import index\n"
        "driver = index._driver()\n"
        "assert 'functools' not in sys.modules and 'collections' not in sys.modules, sorted(sys.modules)\n"
        "db = driver.connect(':memory:')\n"
        "for i in range(300):\n"
        "    assert db.execute('SELECT ? + 1', (i,)).fetchone() == (i + 1,)\n"
        "import functools\n"
        "assert hasattr(functools, 'partial') and hasattr(functools, 'reduce')\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path[:0] = [{str(REPO)!r}]\n" + check],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_stat_signature_packs_like_array_q() -> None:
    """The stored signature is compared byte for byte with the one a hook computes: its
    numbers keep the layout of array("q") (native 8-byte signed)."""
    from array import array

    from engram.index_rows import stat_signature

    mtimes, sizes = [0, 1_700_000_000_123_456_789, -1], [0, 42, 2**40]
    expected = array("q", mtimes)
    expected.extend(sizes)
    assert stat_signature(["a", "b", "c"], ["r", "r", "r"], mtimes, sizes)[2] == expected.tobytes()


def test_postings_views_read_like_arrays() -> None:
    from array import array

    slots, keys = array("I", [7, 3, 2**32 - 1]), array("H", [0, 17, 65535])
    assert list(index._unsigned(slots.tobytes(), "I")) == list(slots)
    assert list(index._unsigned(keys.tobytes(), "H")) == list(keys)
    assert list(index._unsigned(b"", "I")) == []


@pytest.mark.parametrize(("cards", "deferred"), [(index.DEFER_MIN_FILES - 1, False),
                                                 (index.DEFER_MIN_FILES, True)])
def test_the_hook_defers_the_per_file_check_from_500_cards(
        workspace: Path, cards: int, deferred: bool) -> None:
    """From 500 card files (the default, ENGRAM_DEFER_MIN_FILES) a hook whose store folders
    are unchanged answers from the stored index and queues the per-file check for after its
    answer; below that it checks every file first."""
    assert index.DEFER_MIN_FILES == 500 or "ENGRAM_DEFER_MIN_FILES" in os.environ
    mem = workspace / MEM
    for i in range(cards):
        write_card(mem / f"area-{i % 5}", f"card-{i}.md", f"---\ntitle: Card {i}\n---\nBody {i}.\n")
    _load(workspace)
    index.close_connections()
    index._deferred.clear()
    loaded = workspace_module_load(workspace)
    assert len(index.load_or_build(loaded, defer=True).all_cards()) == cards
    assert bool(index._deferred) is deferred
    index._deferred.clear()
    index.close_connections()
