"""The SessionEnd queue: real payloads in, locked appends that lose nothing across processes,
(host, session) dedup, newest 50, git-ignored, never raising, import-light."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, load_payload

from engram import session_queue

SCHEMA = REPO / "schemas" / "session-queue.schema.json"


def _enqueue_payload(memory_dir: Path, host: str, payload: dict, at: str) -> None:
    session_queue.enqueue(memory_dir, transcript_path=payload["transcript_path"], host=host,
                          session=payload["session_id"], at=at)


def _queue(memory_dir: Path) -> list[dict]:
    return json.loads((memory_dir / "session-queue.json").read_text(encoding="utf-8"))


def _validate(memory_dir: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(_queue(memory_dir), json.loads(SCHEMA.read_text(encoding="utf-8")))


def test_real_session_end_payloads(workspace: Path) -> None:
    memory_dir = workspace / ".agents" / ".engram"
    claude = load_payload("claude", "SessionEnd.json")
    claude2 = load_payload("claude", "SessionEnd.2.json")
    codex = load_payload("codex", "SessionEnd.json")
    _enqueue_payload(memory_dir, "claude", claude, "2026-11-30T08:38:34Z")
    _enqueue_payload(memory_dir, "codex", codex, "2026-11-30T08:38:41Z")
    # The /compact run ends the same Claude session again: it replaces the first entry.
    _enqueue_payload(memory_dir, "claude", claude2, "2026-11-30T08:38:36Z")
    queue = _queue(memory_dir)
    assert queue == [
        {"transcript_path": codex["transcript_path"], "host": "codex",
         "session": codex["session_id"], "at": "2026-11-30T08:38:41Z"},
        {"transcript_path": claude2["transcript_path"], "host": "claude",
         "session": claude2["session_id"], "at": "2026-11-30T08:38:36Z"},
    ]
    _validate(memory_dir)
    # Invariant 5: the queue never holds prompt text.
    assert "STEPS" not in (memory_dir / "session-queue.json").read_text(encoding="utf-8")


def test_newest_fifty_are_kept(workspace: Path) -> None:
    memory_dir = workspace / ".agents" / ".engram"
    for n in range(60):
        session_queue.enqueue(memory_dir, transcript_path=f"/t/{n}.jsonl", host="claude",
                              session=f"s{n}", at=f"2026-11-30T08:{n:02d}:00Z")
    queue = _queue(memory_dir)
    assert len(queue) == session_queue.MAX_ENTRIES
    assert [e["session"] for e in queue] == [f"s{n}" for n in range(10, 60)]
    _validate(memory_dir)


def test_two_processes_writing_at_once_lose_nothing(workspace: Path) -> None:
    memory_dir = workspace / ".agents" / ".engram"
    script = (
        "import sys; from pathlib import Path; from engram import session_queue\n"
        "tag = sys.argv[2]\n"
        "for n in range(20):\n"
        "    session_queue.enqueue(Path(sys.argv[1]), transcript_path=f'/t/{tag}{n}.jsonl',\n"
        "                          host='claude' if tag == 'a' else 'codex',\n"
        "                          session=f'{tag}{n}', at='2026-11-30T08:00:00Z')\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(memory_dir), tag], cwd=REPO)
             for tag in ("a", "b")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    sessions = sorted(e["session"] for e in _queue(memory_dir))
    assert sessions == sorted([f"a{n}" for n in range(20)] + [f"b{n}" for n in range(20)])
    _validate(memory_dir)


def test_gitignore_is_written_and_merged(workspace: Path) -> None:
    memory_dir = workspace / ".agents" / ".engram"
    (memory_dir / ".gitignore").write_text("scratch/", encoding="utf-8")
    session_queue.enqueue(memory_dir, transcript_path="/t/x.jsonl", host="claude", session="s",
                          at="now")
    lines = (memory_dir / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "scratch/"
    for pattern in ("/session-queue.json", "/inbox/", "/traces/", "/.session-queue.lock"):
        assert pattern in lines
    before = (memory_dir / ".gitignore").read_text(encoding="utf-8")
    session_queue.enqueue(memory_dir, transcript_path="/t/y.jsonl", host="claude", session="t",
                          at="now")
    assert (memory_dir / ".gitignore").read_text(encoding="utf-8") == before


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_really_ignores_the_queue_inbox_and_traces(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    memory_dir = root / ".agents" / ".engram"
    session_queue.enqueue(memory_dir, transcript_path="/t/x.jsonl", host="claude", session="s",
                          at="now")
    for name in ("session-queue.json", "inbox/a.md", "traces/tr-claude-0.jsonl"):
        result = subprocess.run(["git", "-C", str(root), "check-ignore", "-q",
                                 f".agents/.engram/{name}"])
        assert result.returncode == 0, name
    card = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", ".agents/.engram/a.md"])
    assert card.returncode == 1  # cards themselves stay tracked


def test_enqueue_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    session_queue.enqueue(blocker, transcript_path="/t", host="claude", session="s", at="now")
    session_queue.enqueue(blocker / "deeper", transcript_path="/t", host="claude", session="s",
                          at="now")
    session_queue.enqueue(tmp_path / "m", transcript_path="", host="claude", session="s", at="x")
    assert not (tmp_path / "m" / "session-queue.json").exists()


def test_a_corrupt_or_hostile_queue_is_replaced_by_valid_entries(workspace: Path) -> None:
    memory_dir = workspace / ".agents" / ".engram"
    (memory_dir / "session-queue.json").write_text('{"not": "a list"', encoding="utf-8")
    session_queue.enqueue(memory_dir, transcript_path="/t/x", host="claude", session="s", at="a")
    assert [e["session"] for e in _queue(memory_dir)] == ["s"]
    (memory_dir / "session-queue.json").write_text(
        json.dumps([{"transcript_path": 3}, "junk", {"transcript_path": "/t/y", "host": "codex",
                                                     "session": "k", "at": "b", "extra": 1}]),
        encoding="utf-8")
    session_queue.enqueue(memory_dir, transcript_path="/t/x", host="claude", session="s", at="c")
    assert [e["session"] for e in _queue(memory_dir)] == ["k", "s"]


def test_import_is_light() -> None:
    code = ("import sys, engram.session_queue; "
            "print(','.join(sorted(m for m in sys.modules if m.startswith('engram') "
            "or m in ('yaml', 'typer', 'click'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO)
    # engram.json_accel: JSON without the json package (and its `re`) in the SessionEnd hook.
    assert out.stdout.strip() == "engram,engram.fileio,engram.json_accel,engram.session_queue"


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_the_session_end_hook_enqueues_and_answers_empty(workspace: Path, client: str) -> None:
    """The whole capture path: a real SessionEnd payload (cwd pointed at the test workspace)
    through `engram hook <host>` in its own process."""
    payload = load_payload(client, "SessionEnd.json")
    payload["cwd"] = str(workspace)
    done = subprocess.run([sys.executable, "-m", "engram", "hook", client],
                          input=json.dumps(payload).encode("utf-8"), capture_output=True,
                          cwd=REPO, timeout=60)
    assert done.returncode == 0
    assert json.loads(done.stdout or b"{}") == {}
    memory_dir = workspace / ".agents" / ".engram"
    (entry,) = _queue(memory_dir)
    assert entry["transcript_path"] == payload["transcript_path"]
    assert entry["host"] == client and entry["session"] == payload["session_id"]
    _validate(memory_dir)


def test_the_queue_lock_lives_in_the_state_dir(workspace: Path, tmp_path: Path) -> None:
    memory_dir = workspace / ".agents" / ".engram"
    session_queue.enqueue(memory_dir, transcript_path="/t/x.jsonl", host="claude", session="s",
                          at="now")
    assert not (memory_dir / session_queue.LOCK_NAME).exists()
    assert session_queue.lock_path(memory_dir).is_relative_to(tmp_path / "state" / "locks")
    assert session_queue.lock_path(memory_dir).exists()
