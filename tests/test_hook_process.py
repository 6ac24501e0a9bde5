"""`engram hook` as the real process hosts run: fail open in every bad situation, import only
what the hook path needs, and lose nothing when 20 hooks run at once on one session."""

from __future__ import annotations

import json
import marshal
import os
import site
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import REPO
from hookkit import context, make_workspace, payload, run_process, sent_ids

from engram import delivery, paths


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj")


def test_real_process_answers_claude_envelope(ws: Path) -> None:
    done = run_process("claude", json.dumps(payload("claude", "UserPromptSubmit.json", ws,
                                                    prompt="release checklist")).encode())
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert sent_ids(answer["hookSpecificOutput"]["additionalContext"]) == ["overview", "release"]


def test_the_process_ends_without_teardown_and_with_the_index_closed(ws: Path) -> None:
    """The hook process skips the interpreter's teardown, but not closing the index: SQLite
    checkpoints and removes its -wal and -shm files as on a normal exit, and the answer is
    out in full first."""
    for prompt in ("release checklist", "release checklist"):  # a send, then nothing new
        done = run_process("claude", json.dumps(payload("claude", "UserPromptSubmit.json", ws,
                                                        prompt=prompt)).encode())
        assert done.returncode == 0 and done.stderr == b""
        json.loads(done.stdout)
    state = Path(os.environ["ENGRAM_STATE_DIR"])
    assert sorted(p.name for p in (state / "index").iterdir() if p.suffix == ".sqlite")
    assert not [p.name for p in (state / "index").iterdir() if p.name.endswith(("-wal", "-shm"))]
    verbose = subprocess.run([sys.executable, "-v", "-m", "engram", "hook", "claude"],
                             input=b"not json", capture_output=True, timeout=60)
    assert verbose.returncode == 0 and b"# cleanup[" not in verbose.stderr  # no teardown


@pytest.mark.parametrize("stdin", [b"", b"not json", b"[1, 2]", b'{"hook_event_name": 5}',
                                   b"\xff\xfe\x00", b'{"session_id": "s", "hook_event_name": '
                                   b'"UserPromptSubmit", "cwd": "/nonexistent/dir", "prompt": "x"}',
                                   b"[" * 100_000 + b"]" * 100_000])
def test_fails_open_on_bad_input(stdin: bytes) -> None:
    done = run_process("claude", stdin)
    assert done.returncode == 0
    assert done.stdout.strip() in (b"{}", b"")
    assert b"permissionDecision" not in done.stdout


def test_unknown_host_fails_open() -> None:
    done = run_process("no-such-host", b"{}")
    assert done.returncode == 0 and done.stdout.strip() == b"{}"


def test_unreadable_state_dir_fails_open_and_logs_nothing_of_the_prompt(ws: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "state-is-a-file"
    blocked.write_text("not a dir")
    done = run_process("claude", json.dumps(payload("claude", "UserPromptSubmit.json", ws,
                                                    prompt="release checklist")).encode(),
                       env={"ENGRAM_STATE_DIR": str(blocked)})
    assert done.returncode == 0
    assert done.stdout.strip() == b"{}"  # no delivery record can be kept: nothing is sent


def test_failure_is_logged_without_payload_text(ws: Path, tmp_path: Path) -> None:
    bad = ws / ".agents" / ".engram"
    (ws / ".agents" / "engram.json").write_text("{ this is not json")
    done = run_process("claude", json.dumps(payload("claude", "UserPromptSubmit.json", ws,
                                                    prompt="zebra-secret-prompt")).encode())
    assert done.returncode == 0 and done.stdout.strip() == b"{}"
    log = (tmp_path / "state" / "logs" / "hook.log").read_text()
    assert "failed open" in log and "zebra-secret-prompt" not in log
    assert bad.is_dir()


def test_a_token_in_the_hosts_place_is_not_logged(ws: Path, tmp_path: Path) -> None:
    """`engram hook <token>` (a paste in the wrong place): it fails open, and the log names
    the host only when engram knows it."""
    token = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    for host in (token, token.lower()[4:], "claude"):
        done = run_process(host, b"{ not json")
        assert done.returncode == 0
    log = (tmp_path / "state" / "logs" / "hook.log").read_text()
    assert token not in log and token.lower()[4:12] not in log and token[4:12] not in log
    assert "an unknown host of 40 characters" in log


def test_oversized_stdin_is_refused(ws: Path) -> None:
    big = json.dumps(payload("claude", "UserPromptSubmit.json", ws, prompt="x" * (9 * 1024 * 1024)))
    done = run_process("claude", big.encode())
    assert done.returncode == 0 and done.stdout.strip() == b"{}"


# Run with -S: an editable install's import hook (a .pth file) imports `re` and `enum` before
# any engram code runs, which would hide them from the check. The repository and the
# site-packages folders this interpreter uses (for xxhash) are put on the path by hand.
IMPORT_CHECK = (
    "import sys, io\n"
    "sys.path[:0] = [sys.argv[3]]; sys.path += sys.argv[4:]\n"
    "before = set(sys.modules)\n"  # what the interpreter itself loaded
    "if sys.argv[2] == 'control':\n"
    "    import json\n"  # the positive control: an import the check must see
    "sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))\n"
    "from engram.entry import main\n"
    "main(['hook', 'claude'])\n"
    "main(['hook', 'claude'])\n"
    "bad = [m for m in ('typer', 'click', 'yaml', 'portalocker', 'wcmatch', 'dataclasses', 'pathlib',"
    " 'typing', 'tempfile', 'hashlib', 'jsonschema',"
    # regular expressions and the json package (which imports re): a plain prompt needs neither
    " 're', 'json', 'enum',"
    # sqlite3's C module asks functools for lru_cache, array registers with collections.abc:
    # functools and collections together cost a quarter of a bare interpreter's start
    " 'functools', 'collections', 'array',"
    # sqlite3's Python layer imports datetime; the glob compiler only for a path that can
    # match a host's own rule files (a card under the memory folder cannot)
    " 'sqlite3', 'datetime', 'engram.globs') if m in sys.modules and m not in before]\n"
    "print('BAD', bad, file=sys.stderr)\n"
)


@pytest.mark.parametrize("prompt", ["release checklist",
                                    "Ünïcode prompt: is a < b in <div> code? `release` + sessionToken"])
def test_hook_path_imports(ws: Path, prompt: str) -> None:
    document = json.dumps(payload("claude", "UserPromptSubmit.json", ws, prompt=prompt))

    def check(mode: str) -> str:
        done = subprocess.run([sys.executable, "-S", "-c", IMPORT_CHECK, document, mode, str(REPO),
                               *site.getsitepackages()], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "release" in context(done.stdout.split("\n")[0]), done.stdout  # sent or already
        return done.stderr

    warm = check("plain")  # the first call builds the index
    plain = check("plain")
    assert "BAD []" in plain, plain + warm
    control = check("control")
    assert "'re'" in control and "'json'" in control, control  # the check sees an import


def _imports_of(document: dict, mode: str = "plain") -> str:
    done = subprocess.run([sys.executable, "-S", "-c", IMPORT_CHECK, json.dumps(document), mode,
                           str(REPO), *site.getsitepackages()], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[0] + "\n" + done.stderr


CODE_CARDS = {
    "money": "---\nid: money\ntitle: Money\napplies_to: ['src/**/*.{ts,tsx}']\n---\n"
             "Amounts are integers of minor units.\n",
    "receipts": "---\nid: receipts\ntitle: Receipts\n---\nUse `receiptLine` and "
                "`formatMinorUnits` for receipt lines.\n"}


def test_path_events_and_session_end_import_no_re_json_or_pathlib(tmp_path: Path) -> None:
    """A Write that a glob matches and whose code names a card's code names, a Read, and a
    SessionEnd that queues its transcript: none needs regular expressions, the json package,
    pathlib or typing (each costs a hook process a large share of its instructions)."""
    ws = make_workspace(tmp_path / "proj", cards=CODE_CARDS)
    (ws / "src").mkdir()
    (ws / "src" / "money.ts").write_text("export const x = 1;\n", encoding="utf-8")
    write = payload("claude", "PostToolUse.write.json", ws)
    write["tool_input"] = {**write["tool_input"], "file_path": str(ws / "src" / "receipt.ts")}
    read = payload("claude", "PostToolUse.read.json", ws)
    read["tool_input"] = {**read["tool_input"], "file_path": str(ws / "src" / "money.ts")}
    end = payload("claude", "SessionEnd.json", ws, transcript_path=str(tmp_path / "t.jsonl"))
    _imports_of(write)  # the first call builds the index
    written = _imports_of({**write, "session_id": "a second session"})
    # The glob's card, then the card whose code names the written code uses.
    assert sent_ids(context(written.split("\n")[0])) == ["money", "receipts"], written
    assert "BAD []" in written, written
    assert "BAD []" in _imports_of(read)
    assert "BAD []" in _imports_of(end)
    queue = json.loads((ws / ".agents" / ".engram" / "session-queue.json").read_text("utf-8"))
    assert [entry["transcript_path"] for entry in queue] == [str(tmp_path / "t.jsonl")]
    assert "'re'" in _imports_of(end, "control")  # the check sees an import


def test_a_prompt_after_a_prompt_that_sent_imports_no_re_or_json(tmp_path: Path) -> None:
    """The prompt after one that sent bodies reads Claude's transcript for a note that the
    user's own hook blocked it (engram.prompt_outcome): with no note there, that takes no
    regular expressions and no json package."""
    ws = make_workspace(tmp_path / "proj", cards=CODE_CARDS)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type":"user","message":{"content":"hi"}}\n' * 50, encoding="utf-8")
    ask = payload("claude", "UserPromptSubmit.json", ws, prompt="how do receipts work?",
                  transcript_path=str(transcript))
    assert sent_ids(context(_imports_of(ask).split("\n")[0])) == ["receipts"]
    held = json.loads(Path(delivery.cache_path(paths.workspace_key(str(ws.resolve()))))
                      .read_text(encoding="utf-8"))
    assert [e.get("unconfirmed") for e in held["entries"].values()][0], held
    assert "BAD []" in _imports_of(ask)


def test_twenty_concurrent_hooks_lose_nothing(tmp_path: Path) -> None:
    cards = {f"topic{i}": f"---\nid: topic{i}\ntitle: Topic {i}\ntags: [topic{i}]\n---\n"
                          f"Body of topic number {i}.\n" for i in range(20)}
    ws = make_workspace(tmp_path / "proj", cards=cards)
    run_process("claude", json.dumps(payload("claude", "SessionStart.json", ws)).encode())

    def fire(i: int) -> subprocess.CompletedProcess:
        document = payload("claude", "UserPromptSubmit.json", ws, prompt=f"tell me about topic{i}")
        return run_process("claude", json.dumps(document).encode())

    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(fire, range(20)))
    for i, done in enumerate(results):
        assert done.returncode == 0
        assert f"topic{i}" in sent_ids(context(done.stdout.decode())), done.stdout
    key = paths.workspace_key(str(ws.resolve()))
    cache = json.loads(Path(delivery.cache_path(key)).read_text())
    (entry,) = cache["entries"].values()
    delivered = {k.split("@")[0] for k in entry["delivered"]}
    assert {f"topic{i}" for i in range(20)} <= delivered
    leftovers = [p for p in Path(delivery.cache_path(key)).parent.iterdir() if p.suffix == ".tmp"]
    assert leftovers == []


@pytest.mark.parametrize("variable", ["ENGRAM_DEFER_MIN_FILES", "ENGRAM_BACKGROUND_MIN_CHANGES",
                                      "ENGRAM_FIRST_BUILD_MAX", "ENGRAM_PARALLEL_MIN_FILES"])
def test_a_tuning_variable_that_is_no_number_changes_nothing(variable: str, ws: Path) -> None:
    """Each was read with int() when its module loaded: `ENGRAM_DEFER_MIN_FILES=lots` (or a
    stray space, `1e3`) made every hook fail open and every command crash, and no memory came.
    A value that is no whole number is taken as unset."""
    for n, value in enumerate(("lots", "1e3", " 5 0", "-")):
        document = payload("claude", "UserPromptSubmit.json", ws, prompt="release checklist",
                           session_id=f"s{n}")
        done = run_process("claude", json.dumps(document).encode(), env={variable: value})
        assert done.returncode == 0
        assert "Releases are cut from main" in context(done.stdout.decode()), (variable, value)


def test_large_store_defers_the_per_file_check_until_after_the_answer(tmp_path: Path) -> None:
    """Above ENGRAM_DEFER_MIN_FILES cards the hook answers from the stored index when no folder
    changed and checks every file after answering: an in-place edit reaches the next call; a
    new card (its folder's mtime changes) is seen at once."""
    ws = make_workspace(tmp_path / "proj")
    env = {"ENGRAM_DEFER_MIN_FILES": "1"}

    def prompt(text: str, session: str) -> str:
        document = payload("claude", "UserPromptSubmit.json", ws, prompt=text, session_id=session)
        done = run_process("claude", json.dumps(document).encode(), env=env)
        assert done.returncode == 0
        return context(done.stdout.decode())

    assert "Releases are cut from main on Tuesdays" in prompt("release checklist", "s1")
    card = ws / ".agents" / ".engram" / "release.md"
    with open(card, "r+", encoding="utf-8") as handle:  # in place: the folder's mtime stays
        text = handle.read()
        handle.seek(0)
        handle.write(text.replace("Tuesdays", "Thursday"))
        handle.truncate()
    prompt("release checklist", "s2")  # may still answer from the stored index ...
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # ... whose background check then refreshes it
        if "Thursday" in prompt("release checklist", f"s3-{time.monotonic()}"):
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the in-place edit never reached a later hook call")
    (ws / ".agents" / ".engram" / "brand-new.md").write_text(
        "---\nid: brand-new\ntitle: Zeppelin hangar rules\n---\nZeppelins dock at hangar nine.\n")
    assert "Zeppelins dock at hangar nine." in prompt("zeppelin hangar rules", "s4")


def test_a_first_build_up_to_the_limit_delivers_in_the_first_call(tmp_path: Path) -> None:
    """A fresh clone's first session gets its memory: a first build of up to
    ENGRAM_FIRST_BUILD_MAX cards (2,000) runs within the call, whatever
    ENGRAM_BACKGROUND_MIN_CHANGES says; that one governs later changes of many files."""
    ws = make_workspace(tmp_path / "proj")
    env = {"ENGRAM_BACKGROUND_MIN_CHANGES": "2"}
    document = payload("claude", "UserPromptSubmit.json", ws, prompt="release checklist")
    first = run_process("claude", json.dumps(document).encode(), env=env)
    assert "release" in sent_ids(context(first.stdout.decode()))
    for name in ("api-style", "error-format", "migrations"):  # a checkout rewrote three cards
        path = ws / ".agents" / ".engram" / f"{name}.md"
        path.write_text(path.read_text() + "\nOne more line.\n")
    document["session_id"] = "after-checkout"
    again = run_process("claude", json.dumps(document).encode(), env=env)
    assert "release" in sent_ids(context(again.stdout.decode()))  # from the stored index
    log = (tmp_path / "state" / "logs" / "engram.log").read_text()
    assert "refreshing in the background" in log


def test_a_store_indexed_by_another_python_is_rebuilt_in_the_background(tmp_path: Path) -> None:
    """After a Python upgrade the whole store is parsed again: past ENGRAM_FIRST_BUILD_MAX
    cards a detached child does it while the hook answers with no memory (never from the old
    index), and a session that started meanwhile still gets its always card afterwards."""
    import sqlite3

    ws = make_workspace(tmp_path / "proj")
    env = {"ENGRAM_FIRST_BUILD_MAX": "2"}

    def ask(name: str, session: str, **changes: object) -> subprocess.CompletedProcess:
        document = payload("claude", name, ws, session_id=session, **changes)
        return run_process("claude", json.dumps(document).encode())

    assert "release" in sent_ids(context(ask("UserPromptSubmit.json", "before",
                                             prompt="release checklist").stdout.decode()))
    (stored,) = (tmp_path / "state" / "index").glob("*.sqlite")
    with sqlite3.connect(stored) as db:  # as an older Python left it
        db.execute("UPDATE meta SET value = ? WHERE key = 'py'", (marshal.dumps("cpython-3.9"),))
    document = payload("claude", "SessionStart.json", ws, session_id="during")
    start = run_process("claude", json.dumps(document).encode(), env=env)
    assert start.returncode == 0 and context(start.stdout.decode()) == ""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with sqlite3.connect(stored) as db:
            (py,) = db.execute("SELECT value FROM meta WHERE key = 'py'").fetchone()
        if marshal.loads(py) != "cpython-3.9":
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the background build never finished")
    after = ask("UserPromptSubmit.json", "during", prompt="release checklist")
    assert sent_ids(context(after.stdout.decode())) == ["overview", "release"]
    log = (tmp_path / "state" / "logs" / "engram.log").read_text()
    assert "none indexed for this Python and these memory folders" in log


def test_a_large_first_build_runs_in_the_background(tmp_path: Path) -> None:
    """A first build of more cards than ENGRAM_FIRST_BUILD_MAX: the hook answers at once (with
    nothing, the first time) and a detached child builds the index for the next calls."""
    ws = make_workspace(tmp_path / "proj")
    env = {"ENGRAM_FIRST_BUILD_MAX": "2"}
    document = payload("claude", "UserPromptSubmit.json", ws, prompt="release checklist")
    first = run_process("claude", json.dumps(document).encode(), env=env)
    assert first.returncode == 0 and first.stdout.strip() in (b"{}", b"")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        document["session_id"] = f"later-{time.monotonic()}"
        done = run_process("claude", json.dumps(document).encode(), env=env)
        if "release" in sent_ids(context(done.stdout.decode())):
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the background build never reached a later hook call")
    log = (tmp_path / "state" / "logs" / "engram.log").read_text()
    assert "refreshing in the background" in log
