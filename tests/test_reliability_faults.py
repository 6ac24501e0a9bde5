"""Faults: a hook killed mid-write, stale temp and lock files, a held lock, a full or
read-only state dir, a state dir with spaces and non-ASCII characters, no HOME, a read-only
workspace, and corrupt index and cache files. In each the hook fails open (exit 0, the host's
empty answer, a line in the state dir's log) or keeps working, loses nothing but the killed
call's own record, and `engram doctor` says what is wrong.

Running as root ignores file modes, so the chmod cases are backed by in-process simulations
(os.replace raising ENOSPC, writes under a folder raising EROFS) that bite for any user."""

from __future__ import annotations

import builtins
import errno
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import jsonschema
import pytest
from conftest import REPO
from hookkit import CARDS, already, context, make_workspace, payload, run_process, sent_ids

from engram import delivery, fileio, index, paths

SCHEMA = json.loads((REPO / "schemas" / "delivery-cache.schema.json").read_text())
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "proj")


def prompt(ws: Path, session: str, text: str = "release checklist", host: str = "claude") -> bytes:
    name = "BeforeAgent.json" if host == "gemini" else "UserPromptSubmit.json"
    return json.dumps(payload(host, name, ws, prompt=text, session_id=session)).encode()


def cache_file(ws: Path) -> Path:
    return Path(delivery.cache_path(paths.workspace_key(str(ws.resolve()))))


def index_file(ws: Path) -> Path:
    return Path(index.index_path(paths.workspace_key(str(ws.resolve()))))


def entries(ws: Path) -> dict:
    document = json.loads(cache_file(ws).read_text())
    jsonschema.validate(document, SCHEMA)
    return {e["session"]: {k.split("@")[0] for k in e["delivered"]}
            for e in document["entries"].values()}


def hook_log(tmp_path: Path) -> str:
    path = tmp_path / "state" / "logs" / "hook.log"
    return path.read_text() if path.exists() else ""


def engram_log(tmp_path: Path) -> str:
    path = tmp_path / "state" / "logs" / "engram.log"
    return path.read_text() if path.exists() else ""


def delivers(done: subprocess.CompletedProcess, *ids: str) -> bool:
    return done.returncode == 0 and set(ids) <= set(sent_ids(context(done.stdout.decode())))


def run_in_process(host: str, raw: bytes) -> str:
    from engram import hook_entry

    class Stdin:
        buffer = io.BytesIO(raw)

    saved_in, saved_out = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = Stdin(), io.StringIO()  # type: ignore[assignment]
    try:
        assert hook_entry.run_hook([host]) == 0
        return sys.stdout.getvalue()
    finally:
        sys.stdin, sys.stdout = saved_in, saved_out


# --- killed mid-write ---------------------------------------------------------------------

KILL_AT_REPLACE = """
import os, signal, sys
real = os.replace
def replace(src, dst, *a, **k):
    if str(dst).endswith(sys.argv[1]):
        os.kill(os.getpid(), signal.SIGKILL)   # after the temp file is written, before replace
    return real(src, dst, *a, **k)
os.replace = replace
from engram.entry import main
main(["hook", "claude"])
"""


def test_killed_between_temp_write_and_replace_loses_only_its_own_record(ws: Path) -> None:
    assert delivers(run_process("claude", prompt(ws, "earlier")), "release")
    before = cache_file(ws).read_bytes()
    killed = subprocess.run([sys.executable, "-c", KILL_AT_REPLACE, cache_file(ws).name],
                            input=prompt(ws, "victim"), capture_output=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL
    # The cache is the old one, whole; the killed call's temp file is left behind.
    assert cache_file(ws).read_bytes() == before
    stale = [p for p in cache_file(ws).parent.iterdir() if p.name.endswith(".tmp")]
    assert len(stale) == 1
    # The next call works and delivers again what the killed call could not record.
    assert delivers(run_process("claude", prompt(ws, "victim")), "release")
    assert entries(ws)["earlier"] >= {"release"} and entries(ws)["victim"] >= {"release"}


# Killed right after the answer reached stdout, before the delivery record: the flush of a
# non-empty answer is where the process dies (SIGKILL, nothing runs after it).
KILL_AFTER_ANSWER = """
import os, signal, sys
class Out:
    def __init__(self, real):
        self.real, self.size = real, 0
    def write(self, text):
        self.size += len(text)
        return self.real.write(text)
    def flush(self):
        self.real.flush()
        if self.size > 3:
            os.kill(os.getpid(), signal.SIGKILL)
sys.stdout = Out(sys.stdout)
from engram.entry import main
main(["hook", "claude"])
"""


def test_killed_between_answer_and_record_records_nothing(ws: Path) -> None:
    assert delivers(run_process("claude", prompt(ws, "earlier")), "release")
    before = cache_file(ws).read_bytes()
    killed = subprocess.run([sys.executable, "-c", KILL_AFTER_ANSWER], input=prompt(ws, "victim"),
                            capture_output=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL
    # The host got the answer; the cache does not say so, so the body is sent again.
    assert "release" in sent_ids(context(killed.stdout.decode()))
    assert cache_file(ws).read_bytes() == before and "victim" not in entries(ws)
    again = run_process("claude", prompt(ws, "victim"))
    assert delivers(again, "release") and entries(ws)["victim"] >= {"release"}


STOP_AFTER_ANSWER = """
import os, signal, sys
class Out:
    def __init__(self, real):
        self.real, self.size, self.stopped = real, 0, False
    def write(self, text):
        self.size += len(text)
        return self.real.write(text)
    def flush(self):
        self.real.flush()
        if self.size > 3 and not self.stopped:
            self.stopped = True
            os.kill(os.getpid(), getattr(signal, sys.argv[1]))
sys.stdout = Out(sys.stdout)
from engram.entry import main
main(["hook", "claude"])
"""


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_stopped_between_answer_and_record_records_nothing(ws: Path, tmp_path: Path,
                                                           stop: str) -> None:
    """A host whose hook timeout ran out as the answer was flushed stops the hook the way
    Node's child-process timeout does (SIGTERM), or interrupts it (SIGINT, which Python
    raises inside the call): the record is not written, and the next call sends the body
    again rather than counting one the host threw away."""
    assert delivers(run_process("claude", prompt(ws, "earlier")), "release")
    before = cache_file(ws).read_bytes()
    stopped = subprocess.run([sys.executable, "-c", STOP_AFTER_ANSWER, stop],
                             input=prompt(ws, "victim"), capture_output=True, timeout=60)
    if stop == "SIGTERM":
        assert stopped.returncode == -signal.SIGTERM
    else:  # interrupted inside the transaction: fails open, after its one answer
        assert stopped.returncode == 0 and "(after answering; nothing recorded)" in hook_log(tmp_path)
        assert stopped.stdout.decode().count("hookSpecificOutput") == 1
    assert "release" in sent_ids(context(stopped.stdout.decode()))
    assert cache_file(ws).read_bytes() == before and "victim" not in entries(ws)
    assert delivers(run_process("claude", prompt(ws, "victim")), "release")


def test_a_host_that_stopped_reading_gets_nothing_recorded(ws: Path, tmp_path: Path) -> None:
    """A host that timed out and closed its end of the pipe before the answer was written:
    the write fails, nothing is recorded (the host never had the body), no second answer is
    tried, and the next call sends the body."""
    assert delivers(run_process("claude", prompt(ws, "earlier")), "release")
    before = cache_file(ws).read_bytes()
    read_end, write_end = os.pipe()
    os.close(read_end)  # the host is gone: writing to the pipe fails (EPIPE)
    try:
        done = subprocess.run([sys.executable, "-m", "engram", "hook", "claude"],
                              input=prompt(ws, "victim"), stdout=write_end,
                              stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write_end)
    assert done.returncode == 0 and not done.stderr
    assert cache_file(ws).read_bytes() == before and "victim" not in entries(ws)
    assert "(after answering; nothing recorded)" in hook_log(tmp_path)
    assert delivers(run_process("claude", prompt(ws, "victim")), "release")


def test_randomly_killed_hooks_never_record_a_body_they_did_not_print(tmp_path: Path) -> None:
    """Kills at random points of real hook processes: every body a session's record names was
    in the stdout of a call of that session (recorded implies printed), and the cache stays
    valid."""
    import random

    cards = {f"topic{i}": f"---\nid: topic{i}\ntitle: Topic {i}\ntags: [topic{i}]\n---\n"
                          f"Body of topic number {i}.\n" for i in range(8)}
    ws = make_workspace(tmp_path / "proj", cards=cards)
    run_process("claude", prompt(ws, "warm", "topic0"))  # the index is built
    rng = random.Random(11)
    printed: dict[str, set[str]] = {}
    for round_ in range(3):
        processes = []
        for i in range(8):
            session = f"s{round_}-{i}"
            process = subprocess.Popen([sys.executable, "-m", "engram", "hook", "claude"],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL)
            process.stdin.write(prompt(ws, session, f"tell me about topic{i}"))
            process.stdin.close()
            processes.append((session, process))
        for _session, process in processes:
            time.sleep(rng.uniform(0.0, 0.12))
            process.kill()
        for session, process in processes:
            out = process.stdout.read()
            process.wait(timeout=30)
            printed[session] = set(sent_ids(context(out.decode()))) if out.strip() else set()
    if cache_file(ws).exists():
        for session, delivered in entries(ws).items():
            if session != "warm":
                assert delivered <= printed[session], session


def test_stale_temp_and_lock_files_are_harmless(ws: Path) -> None:
    cache = cache_file(ws)
    cache.parent.mkdir(parents=True)
    (cache.parent / f".{cache.name}.4242.deadbeef0000.tmp").write_text('{"version": 1, "entr')
    Path(str(cache) + ".lock").write_text("left by a killed process")
    # The OS dropped the dead holder's lock: waiting on it would end in LockTimeout, an
    # empty answer and no delivery.
    assert delivers(run_process("claude", prompt(ws, "s")), "release")
    assert "LockTimeout" not in hook_log(ws.parent)
    assert entries(ws)["s"] >= {"release"}


def test_a_briefly_held_lock_is_waited_for_not_given_up_on(ws: Path) -> None:
    lock = fileio.exclusive_lock(str(cache_file(ws)) + ".lock")
    lock.__enter__()
    try:
        process = subprocess.Popen([sys.executable, "-m", "engram", "hook", "claude"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        process.stdin.write(prompt(ws, "s"))
        process.stdin.close()
        time.sleep(0.8)
    finally:
        lock.__exit__(None, None, None)
    out = process.stdout.read()
    assert process.wait(timeout=30) == 0
    assert "release" in sent_ids(context(out.decode()))


# Tests that hold the delivery lock on purpose wait this long, not the real 4 s.
SHORT_LOCK = {"ENGRAM_LOCK_TIMEOUT": "0.4"}


def test_the_lock_wait_stays_well_inside_every_host_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    assert delivery.LOCK_TIMEOUT <= delivery.MAX_LOCK_TIMEOUT < 10  # the shortest host timeout
    monkeypatch.delenv("ENGRAM_LOCK_TIMEOUT", raising=False)
    assert delivery.lock_timeout() == delivery.LOCK_TIMEOUT
    for raw, expected in [("0.4", 0.4), ("60", delivery.MAX_LOCK_TIMEOUT), ("0", 4.0),
                          ("-1", 4.0), ("soon", 4.0), ("nan", 4.0), ("inf", 9.0)]:
        monkeypatch.setenv("ENGRAM_LOCK_TIMEOUT", raw)
        assert delivery.lock_timeout() == expected, raw


def test_a_lock_held_too_long_fails_open_well_inside_the_host_timeout(ws: Path, tmp_path: Path) -> None:
    lock = fileio.exclusive_lock(str(cache_file(ws)) + ".lock")
    lock.__enter__()
    try:
        started = time.monotonic()
        done = run_process("claude", prompt(ws, "s"), env=SHORT_LOCK, timeout=60)
        elapsed = time.monotonic() - started
    finally:
        lock.__exit__(None, None, None)
    assert done.returncode == 0 and done.stdout.strip() == b"{}"
    assert elapsed >= 0.4  # it waited for the lock before giving up (no clock upper bound:
    # how long the wait may be is test_the_lock_wait_stays_well_inside_every_host_timeout)
    assert "failed open: LockTimeout" in hook_log(tmp_path)
    assert delivers(run_process("claude", prompt(ws, "s")), "release")  # nothing was recorded


def test_sigkilled_hooks_mid_run_leave_a_valid_cache_and_lose_no_other_record(tmp_path: Path) -> None:
    cards = {f"topic{i}": f"---\nid: topic{i}\ntitle: Topic {i}\ntags: [topic{i}]\n---\n"
                          f"Body of topic number {i}.\n" for i in range(12)}
    ws = make_workspace(tmp_path / "proj", cards=cards)
    run_process("claude", prompt(ws, "warm", "topic0"))
    processes = []
    for i in range(12):
        process = subprocess.Popen([sys.executable, "-m", "engram", "hook", "claude"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL)
        process.stdin.write(prompt(ws, f"s{i % 3}", f"tell me about topic{i}"))
        process.stdin.close()
        processes.append(process)
    time.sleep(0.15)
    for process in processes[::2]:
        process.kill()  # at whatever point each one has reached
    survivors = {}
    for i, process in enumerate(processes):
        out = process.stdout.read()
        code = process.wait(timeout=30)
        if i % 2 and code == 0:
            survivors[i] = sent_ids(context(out.decode()))
    assert len(survivors) == 6
    for i, ids in survivors.items():
        assert f"topic{i}" in ids
        assert f"topic{i}" in entries(ws)[f"s{i % 3}"]  # every finished call's record is there
    for i in range(3):  # and the next hook of every session works
        assert delivers(run_process("claude", prompt(ws, f"s{i}", "tell me about topic11")))
    entries(ws)  # parses and validates against the schema


# --- full, read-only or odd state dirs ------------------------------------------------------

@contextmanager
def writes_fail(prefix: Path, code: int) -> Iterator[None]:
    """Every write under `prefix` fails with `code` (EROFS, ENOSPC), as on a read-only or
    full file system; reads still work."""
    prefix_text = str(prefix)
    real_open, real_os_open = builtins.open, os.open
    real = {name: getattr(os, name) for name in ("replace", "rename", "mkdir", "makedirs", "unlink")}

    def under(path: object) -> bool:
        try:
            return os.fspath(path).startswith(prefix_text)  # type: ignore[arg-type]
        except TypeError:
            return False

    def fail(path: object) -> None:
        raise OSError(code, os.strerror(code), os.fspath(path))  # type: ignore[arg-type]

    def guarded_open(file, mode="r", *args, **kwargs):  # noqa: ANN001, ANN202
        if under(file) and any(flag in mode for flag in "wax+"):
            fail(file)
        return real_open(file, mode, *args, **kwargs)

    def guarded_os_open(path, flags, *args, **kwargs):  # noqa: ANN001, ANN202
        if under(path) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            fail(path)
        return real_os_open(path, flags, *args, **kwargs)

    def guard(name: str):  # noqa: ANN202
        def guarded(path, *args, **kwargs):  # noqa: ANN001, ANN202
            if under(path) or (args and under(args[0])):
                fail(path)
            return real[name](path, *args, **kwargs)
        return guarded

    builtins.open, io.open, os.open = guarded_open, guarded_open, guarded_os_open
    for name in real:
        setattr(os, name, guard(name))
    try:
        yield
    finally:
        builtins.open, io.open, os.open = real_open, real_open, real_os_open
        for name, function in real.items():
            setattr(os, name, function)


def test_disk_full_fails_open_and_keeps_the_old_cache(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    assert "release" in sent_ids(context(run_in_process("claude", prompt(ws, "earlier"))))
    before = cache_file(ws).read_bytes()

    def full(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(fileio.os, "replace", full)
        answer = run_in_process("claude", prompt(ws, "later"))
    # The answer was written before the record failed: one answer, not recorded, so the next
    # call sends the body again (a re-send beats a loss).
    assert "release" in sent_ids(context(answer))
    assert cache_file(ws).read_bytes() == before
    assert not [p for p in cache_file(ws).parent.iterdir() if p.name.endswith(".tmp")]
    assert "failed open: OSError" in hook_log(tmp_path)
    assert "(after answering; nothing recorded)" in hook_log(tmp_path)
    assert "release" in sent_ids(context(run_in_process("claude", prompt(ws, "later"))))


@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC])
def test_unwritable_state_dir_fails_open(ws: Path, tmp_path: Path, code: int) -> None:
    state = tmp_path / "state"
    with writes_fail(state, code):
        answer = run_in_process("claude", prompt(ws, "s"))
    assert json.loads(answer) == {}  # the delivery record cannot be written: nothing is sent
    # Nothing was recorded, so once the state dir is writable again the body goes out.
    assert "release" in sent_ids(context(run_in_process("claude", prompt(ws, "s"))))


@pytest.mark.skipif(IS_ROOT, reason="root writes through file modes")
def test_read_only_state_dir_fails_open_for_real(ws: Path, tmp_path: Path) -> None:
    state = tmp_path / "ro-state"
    state.mkdir()
    state.chmod(0o555)
    try:
        done = run_process("claude", prompt(ws, "s"), env={"ENGRAM_STATE_DIR": str(state)})
    finally:
        state.chmod(0o755)
    assert done.returncode == 0 and done.stdout.strip() == b"{}"


# Without a delivery record nothing may be sent (it would go out again on the next call);
# without the index folder the hook routes from an index in memory; without logs it is quiet.
@pytest.mark.parametrize("blocked, delivered", [("state", False), ("state/delivery", False),
                                                ("state/index", True), ("state/logs", True)])
def test_a_file_where_a_state_folder_belongs_fails_open(ws: Path, tmp_path: Path, blocked: str,
                                                        delivered: bool) -> None:
    target = tmp_path / blocked
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("a file, not a folder")
    done = run_process("claude", prompt(ws, "s"))
    assert done.returncode == 0
    if delivered:
        assert delivers(done, "release")
    else:
        assert done.stdout.strip() == b"{}"
    assert b"permissionDecision" not in done.stdout


def test_state_dir_with_spaces_and_non_ascii(ws: Path, tmp_path: Path) -> None:
    state = tmp_path / "état de l'engram ☃ 日本" / "with  two spaces"
    env = {"ENGRAM_STATE_DIR": str(state)}
    assert delivers(run_process("claude", prompt(ws, "s"), env=env), "release")
    done = run_process("claude", prompt(ws, "s"), env=env)
    assert done.returncode == 0 and "release" in json.loads(done.stdout.decode())[
        "hookSpecificOutput"]["additionalContext"].split("already loaded: ")[1]
    assert list((state / "delivery").glob("*.json")) and list((state / "index").iterdir())


def test_missing_home_still_delivers(ws: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HOME", "USERPROFILE", "XDG_STATE_HOME", "XDG_CONFIG_HOME",
                        "ENGRAM_STATE_DIR", "ENGRAM_CONFIG_DIR")}
    scratch = tmp_path / "nohome"
    scratch.mkdir()
    # Without HOME, Python falls back to the password database; point XDG at scratch so this
    # test never writes the real user's state.
    env["XDG_STATE_HOME"] = str(scratch)
    done = subprocess.run([sys.executable, "-m", "engram", "hook", "claude"],
                          input=prompt(ws, "s"), capture_output=True, timeout=60, env=env)
    assert delivers(done, "release")
    assert list((scratch / "engram" / "delivery").glob("*.json"))
    env.pop("XDG_STATE_HOME")
    env["ENGRAM_STATE_DIR"] = str(scratch / "explicit")
    done = subprocess.run([sys.executable, "-m", "engram", "hook", "claude"],
                          input=prompt(ws, "s"), capture_output=True, timeout=60, env=env)
    assert delivers(done, "release")


@pytest.mark.parametrize("event", ["SessionStart.json", "UserPromptSubmit.json", "SessionEnd.json"])
def test_read_only_workspace_keeps_working(tmp_path: Path, event: str) -> None:
    """engram never needs to write the workspace on the hook path; what it would write there
    (native rule files, the opt-in session queue) is skipped with a log line."""
    ws = make_workspace(tmp_path / "proj", config={"hooks": {"path_rules": "native"}})
    (ws / ".claude" / "rules" / "engram").mkdir(parents=True)
    document = payload("claude", event, ws, prompt="release checklist")
    with writes_fail(ws, errno.EROFS):
        answer = run_in_process("claude", json.dumps(document).encode())
    if event == "SessionEnd.json":
        assert answer.strip() in ("", "{}")
    else:
        expected = {"overview"} if event == "SessionStart.json" else {"release"}
        assert expected <= set(sent_ids(context(answer)))


@pytest.mark.skipif(IS_ROOT, reason="root writes through file modes")
def test_read_only_workspace_for_real(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "proj")
    for folder, _dirs, _files in os.walk(ws):
        os.chmod(folder, 0o555)
    try:
        assert delivers(run_process("claude", prompt(ws, "s")), "release")
    finally:
        for folder, _dirs, _files in os.walk(ws):
            os.chmod(folder, 0o755)


# --- corrupt files --------------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "wrong-version",
                                    "garbage-meta", "wrong-type-meta", "dropped-table",
                                    "torn-pages"])
def test_corrupt_index_is_set_aside_with_a_note_and_rebuilt(tmp_path: Path, damage: str) -> None:
    cards = dict(CARDS, **{f"bulk{i}": f"---\nid: bulk{i}\ntags: [bulk{i}]\n---\n"
                           + " ".join(f"w{i}x{j}" for j in range(300)) + "\n" for i in range(60)})
    ws = make_workspace(tmp_path / "proj", cards=cards)
    assert delivers(run_process("claude", prompt(ws, "s0")), "release")
    path = index_file(ws)
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if damage == "wrong-version":
        db.execute("PRAGMA user_version = 3")
    elif damage == "garbage-meta":
        db.execute("UPDATE meta SET value = ? WHERE key IN ('stat', 'stat_sig')", (b"\xff\x00 not marshal",))
    elif damage == "wrong-type-meta":
        db.execute("UPDATE meta SET value = ? WHERE key IN ('stat', 'stat_sig')", (b"i\x05\x00\x00\x00",))
    elif damage == "dropped-table":
        db.execute("DROP TABLE meta")
    db.commit()
    db.close()
    raw = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "garbage":
        path.write_bytes(os.urandom(len(raw)))
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "torn-pages":
        torn = bytearray(raw)
        for offset in range(8192, len(torn) - 200, 4096 * 3):
            torn[offset + 100: offset + 200] = os.urandom(100)
        path.write_bytes(bytes(torn))
    for session in ("s1", "s2"):
        done = run_process("claude", prompt(ws, session))
        assert delivers(done, "release"), (damage, done.stdout, hook_log(tmp_path))
    log = engram_log(tmp_path)
    assert log.count("set aside") == 1, log  # once: the rebuilt index is used from then on
    assert "format 3 is not" in log if damage == "wrong-version" else True
    assert "routing from memory" not in log
    assert list(path.parent.glob(path.name + ".corrupt*"))


@pytest.mark.parametrize("damage", [
    b"", b'{"version": 1, "entr', b"\x00\xffgarbage", b'{"version": 2, "entries": {}}',
    b'{"version": 1, "entries": {"claude|/w|s": {"delivered": [], "last_routed": [], '
    b'"updated": "yesterday"}}}',
    b'{"version": 1, "entries": {"claude|/w|s": {"delivered": [1, 2], "last_routed": [], '
    b'"updated": 1}}}',
    b'{"version": 1, "entries": {"claude|/w|s": {"delivered": [], "last_routed": [], '
    b'"updated": null}}}',
])
def test_corrupt_cache_is_set_aside_with_a_note_and_rebuilt(ws: Path, tmp_path: Path,
                                                            damage: bytes) -> None:
    cache = cache_file(ws)
    cache.parent.mkdir(parents=True)
    cache.write_bytes(damage)
    assert delivers(run_process("claude", prompt(ws, "s")), "release")
    assert "release" in already(context(run_process("claude", prompt(ws, "s")).stdout.decode()))
    assert entries(ws)["s"] >= {"release"}
    if damage:
        assert list(cache.parent.glob(cache.name + ".corrupt-*"))
        assert "set aside and rebuilt" in engram_log(tmp_path)


# --- doctor says what is wrong ----------------------------------------------------------------

def doctor_problems(ws: Path, capsys: pytest.CaptureFixture) -> tuple[int, list[dict], str]:
    from installer_helpers import engram

    capsys.readouterr()
    code = engram("doctor", "--json", cwd=ws)
    report = json.loads(capsys.readouterr().out)
    engram("doctor", cwd=ws)
    text = capsys.readouterr().out
    return code, [p for p in report["problems"] if p["host"] == "engram"], text


def test_doctor_is_quiet_about_a_healthy_state_dir(ws: Path, capsys: pytest.CaptureFixture) -> None:
    assert delivers(run_process("claude", prompt(ws, "s")), "release")
    code, problems, _text = doctor_problems(ws, capsys)
    assert problems == []


@pytest.mark.parametrize("blocked", ["state", "state/delivery", "state/index", "state/logs"])
def test_doctor_names_a_file_in_place_of_the_state_dir(ws: Path, tmp_path: Path, blocked: str,
                                                       capsys: pytest.CaptureFixture) -> None:
    target = tmp_path / blocked
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("a file, not a folder")
    code, problems, text = doctor_problems(ws, capsys)
    assert code == 1
    assert any(p["path"] == str(target) and "a file is where" in p["problem"] for p in problems)
    assert "BROKEN engram (state): a file is where" in text and "ENGRAM_STATE_DIR" in text


@pytest.mark.parametrize("code_", [errno.EROFS, errno.ENOSPC, errno.EACCES])
def test_doctor_names_an_unwritable_state_dir(ws: Path, tmp_path: Path, code_: int,
                                              capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "state").mkdir(exist_ok=True)
    with writes_fail(tmp_path / "state", code_):
        code, problems, text = doctor_problems(ws, capsys)
    assert code == 1
    assert any("cannot be written" in p["problem"] and os.strerror(code_) in p["problem"]
               for p in problems), problems


def test_doctor_names_the_last_hook_failure_until_a_call_answers(ws: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture) -> None:
    lock = fileio.exclusive_lock(str(cache_file(ws)) + ".lock")
    lock.__enter__()
    try:
        run_process("claude", prompt(ws, "s"), env=SHORT_LOCK, timeout=60)  # LockTimeout
    finally:
        lock.__exit__(None, None, None)
    code, problems, text = doctor_problems(ws, capsys)
    assert code == 1 and any("failed open (LockTimeout" in p["problem"] for p in problems)
    time.sleep(1.1)  # the log's resolution is a second
    assert delivers(run_process("claude", prompt(ws, "s")), "release")
    code, problems, _text = doctor_problems(ws, capsys)
    assert problems == []
