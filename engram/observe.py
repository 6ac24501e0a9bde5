"""`engram observe`: turn queued (or named) session transcripts into sanitized evidence.

For each transcript: check it is safe to read, parse it in its host's format, sanitize every
turn, and write an immutable trace (`traces/<id>.jsonl`, id = host + 24 hex digits of the
sha256 of its bytes, file mode read-only, never rewritten) plus an editable review wrapper
(`inbox/<id>.md`). Neither holds an absolute path or the login name.

Where a queued transcript may come from is decided by the *user*, never by the workspace: a
repository can commit a `session-queue.json` naming `~/.aws/credentials`. So a queued path
must lie under a host's own transcript folder or a folder in the user-level config
`transcripts.allowed_dirs`, and be a regular, singly linked file of at most 5 MiB.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Final

from engram import config, fileio, paths, session_queue, transcripts
from engram.errors import EngramError
from engram.evidence import HASH_DIGITS, TRACE_SCHEMA, Evidence, trace_path, verify_trace
from engram.sanitize import PathContext, reduce_paths, sanitize
from engram.transcripts.model import Transcript, Turn
from engram.workspace import Workspace

MAX_BYTES: Final = 5 * 1024 * 1024
QUOTA_CONFIG: Final = ".agents/engram.transcripts.json"
DEFAULT_MAX_FILES: Final = 100


@dataclass(frozen=True)
class Outcome:
    """What happened to one transcript. `status`: saved | would-save | skipped | kept
    (left queued, over quota) | duplicate (its trace exists already)."""

    source: str  # the transcript path with home and login reduced (`~/...`)
    host: str
    session: str | None
    status: str
    reason: str | None = None
    trace: str | None = None
    inbox: str | None = None  # relative to the workspace root
    turns: int = 0
    summaries: int = 0
    secrets: int = 0
    injections: int = 0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Report:
    outcomes: tuple[Outcome, ...]
    remaining: int  # entries left in the queue afterwards (or that would be, on a dry run)
    dry_run: bool
    invalid: int = 0  # malformed queue entries dropped


def allowed_dirs() -> list[Path]:
    """The folders a queued transcript may lie under: the hosts' own transcript folders and
    the user-level `transcripts.allowed_dirs` (workspace config is deliberately not read)."""
    from engram import host_registry

    found: list[Path] = []
    for definition in host_registry.all_definitions().values():
        for folder in (definition.get("transcripts") or {}).get("dirs") or ():
            host_dir = os.path.expanduser(os.path.expandvars(str(folder)))
            if os.path.isabs(host_dir):  # "$CODEX_HOME/sessions" with CODEX_HOME unset is not
                found.append(Path(host_dir))
    user = config.read_file(paths.user_config_path())
    raw = user.get("transcripts.allowed_dirs")
    if raw is not None:
        for entry in config.coerce("transcripts.allowed_dirs", raw):
            expanded = Path(os.path.expanduser(entry))
            if expanded.is_absolute():  # a relative entry would depend on the cwd: ignored
                found.append(expanded)
    return found


def _is_under(path: str, folder: Path) -> bool:
    try:
        base = os.path.realpath(folder)
    except (OSError, ValueError):
        return False
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def check_source(raw_path: str, folders: list[Path] | None) -> tuple[bytes | None, str | None]:
    """(bytes, None) when the file may be read, else (None, reason). `folders` None skips the
    location check (a path the user typed with `--file`)."""
    if not raw_path or "\x00" in raw_path or not os.path.isabs(raw_path):
        return None, "not an absolute path"
    if ".." in Path(raw_path).parts:
        return None, "has '..' in it"  # `..` after a symlinked folder climbs out of it
    if folders is not None:
        # Location first, whether or not the file exists: a hostile queue learns nothing
        # about files outside the allowed folders. The last component is not followed, so
        # a symlink is reported as one below.
        head, tail = os.path.split(raw_path.rstrip(os.sep))
        real = os.path.join(os.path.realpath(head), tail)
        if not any(_is_under(real, folder) for folder in folders):
            return None, "is not under a host transcript folder or a user-allowed folder"
    try:
        info = os.lstat(raw_path)
    except FileNotFoundError:
        return None, "does not exist"
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return None, "is a symlink"
    if not stat.S_ISREG(info.st_mode):
        return None, "is not a regular file"
    if info.st_nlink != 1:
        return None, "has other hard links"
    if info.st_size > MAX_BYTES:
        return None, "is larger than 5 MiB"
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(raw_path, flags)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(handle.fileno())
        # The file we checked must be the file we read (no swap between lstat and open).
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino) or opened.st_nlink != 1:
            return None, "changed while being checked"
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        return None, "is larger than 5 MiB"
    return data, None


def build_evidence(data: bytes, host: str | None, context: PathContext) -> Evidence | None:
    """Parse, sanitize and render a transcript; None when it holds no text worth keeping."""
    text = data.decode("utf-8", errors="replace")
    parsed = transcripts.parse(text, host)
    turns: list[Turn] = []
    secrets = injections = 0
    for turn in parsed.turns:
        clean = sanitize(turn.text, context)
        secrets += clean.secrets
        injections += clean.injections
        body = clean.text.strip()
        if body and set(body.split()) != {"[REMOVED:system-tag]"}:
            turns.append(transcripts.Turn(turn.role, body, clean_time(turn.at)))
    if not any(t.role != "summary" for t in turns):
        return None
    clean_session = _scrub(parsed.session, context)
    clean_agent = _scrub(parsed.agent, context)
    sanitized = Transcript(parsed.host, clean_session, tuple(turns),
                                       parsed.compactions, clean_agent, parsed.skipped_lines)
    header = {"kind": "header", "schema": TRACE_SCHEMA, "host": parsed.host,
              "session": clean_session, "agent": clean_agent,
              "compactions": parsed.compactions, "turns": len(turns),
              "secrets_redacted": secrets, "injections_removed": injections}
    lines = [header]
    for number, turn in enumerate(turns, start=1):
        line: dict[str, Any] = {"kind": "summary" if turn.role == "summary" else "turn",
                                "n": number, "role": turn.role, "at": turn.at, "text": turn.text}
        if turn.role == "summary":
            line["model_written"] = True
        lines.append(line)
    payload = "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines)
    raw = payload.encode("utf-8")
    digest = hashlib.sha256(raw).hexdigest()
    return Evidence(f"tr-{parsed.host}-{digest[:HASH_DIGITS]}", digest, raw, sanitized,
                    secrets, injections)


_TIMESTAMP: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}"
                               r"(?::[0-9]{2}(?:\.[0-9]{1,9})?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?")


def clean_time(value: str | None) -> str | None:
    """A transcript's `timestamp` kept only when it is one: any other text there (a key, a
    line break, an instruction) is not evidence of when, and never reaches a trace."""
    if value is None or not _TIMESTAMP.fullmatch(value):
        return None
    return value


def _scrub(value: str | None, context: PathContext) -> str | None:
    if value is None:
        return None
    return sanitize(value, context).text[:200]


def max_files(root: Path) -> int:
    """The inbox quota from the optional `.agents/engram.transcripts.json`."""
    path = root / QUOTA_CONFIG
    try:
        from engram.fileio import read_bounded

        document = json.loads(read_bounded(path, 1024 * 1024).decode("utf-8"))
    except FileNotFoundError:
        return DEFAULT_MAX_FILES
    except (OSError, ValueError, RecursionError) as exc:
        raise EngramError(f"cannot read {QUOTA_CONFIG}: {exc}",
                          f'fix it, e.g. {{"max_files": {DEFAULT_MAX_FILES}}}') from None
    value = document.get("max_files", DEFAULT_MAX_FILES) if isinstance(document, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise EngramError(f"{QUOTA_CONFIG}: max_files must be a whole number >= 0")
    return value


def inbox_count(memory_dir: Path) -> int:
    try:
        return sum(1 for p in (memory_dir / "inbox").iterdir() if p.suffix == ".md")
    except (FileNotFoundError, NotADirectoryError):
        return 0


def check_memory_dir(workspace: Workspace) -> None:
    """Refuse to write through links a repository may have committed in place of the memory
    folder or its queue files (the memory folder itself may be a link when the user allows
    symlinks with `security.follow_symlinks`)."""
    memory_dir = workspace.memory_dir
    if memory_dir.is_symlink() and not workspace.settings.get("security.follow_symlinks"):
        raise EngramError(f"{paths.MEMORY_DIR_NAME} is a symlink; observe writes nothing "
                          "through it", "set security.follow_symlinks true if you meant it")
    linked = session_queue.symlinked(memory_dir)
    if linked:
        raise EngramError(f"{', '.join(linked)} in {paths.MEMORY_DIR_NAME} is a symlink; "
                          "observe writes nothing through it", "replace it with a plain file "
                          "or folder (or delete it)")


class _Run:
    """One observe run: shared context, quota bookkeeping and the write step."""

    def __init__(self, workspace: Workspace, dry_run: bool, now: datetime | None) -> None:
        check_memory_dir(workspace)
        self.workspace = workspace
        self.memory_dir = workspace.memory_dir
        self.dry_run = dry_run
        self.context = PathContext.current(workspace.root)
        self.quota = max_files(workspace.root)
        self.inbox_used = inbox_count(self.memory_dir)
        self.now = (now or datetime.now(timezone.utc)).replace(microsecond=0)

    def existing_cards(self) -> list[Any]:
        """The workspace's cards, to name those a draft overlaps (none when unreadable)."""
        if getattr(self, "_cards", None) is None:
            try:
                from engram import index

                self._cards = index.load_or_build(self.workspace).all_cards()
            except Exception:  # noqa: BLE001 - a hint for the reviewer, never a failure
                self._cards = []
        return self._cards

    def ingest(self, data: bytes, host: str | None, source: str) -> Outcome:
        from engram import promote  # owns the wrapper format (renders it, reads it back)

        evidence = build_evidence(data, host, self.context)
        shown = reduce_paths(source, self.context)
        if evidence is None:
            return Outcome(shown, host or "?", None, "skipped", "holds no user or assistant text")
        parsed = evidence.transcript
        make = functools.partial(
            Outcome, source=shown, host=parsed.host, session=parsed.session,
            trace=evidence.trace_id, turns=sum(t.role != "summary" for t in parsed.turns),
            summaries=sum(t.role == "summary" for t in parsed.turns),
            secrets=evidence.secrets, injections=evidence.injections)
        path = trace_path(self.memory_dir, evidence.trace_id)
        if path.exists():
            if verify_trace(self.memory_dir, evidence.trace_id, evidence.sha256):
                return make(status="duplicate", reason="already observed")
            return make(status="skipped", reason="a trace with this id exists but differs; "
                        "left untouched")
        if self.inbox_used >= self.quota:
            return make(status="kept", reason=f"inbox quota reached (max_files {self.quota})")
        wrapper = self.memory_dir / "inbox" / f"{evidence.trace_id}.md"
        relative = wrapper.relative_to(self.workspace.root).as_posix()
        if self.dry_run:
            self.inbox_used += 1
            return make(status="would-save", inbox=relative)
        session_queue.ensure_ignored(self.memory_dir)
        _make_private(self.memory_dir)
        fileio.atomic_write_bytes(path, evidence.data, mode=0o400)
        if not wrapper.exists():
            text = promote.render_wrapper(evidence, observed=self.now.isoformat().replace("+00:00", "Z"),
                                wrapper_path=relative, existing=self.existing_cards())
            fileio.atomic_write_text(wrapper, text, mode=0o600)
        self.inbox_used += 1
        return make(status="saved", inbox=relative)


# What a session said (its secrets redacted, its words and file names kept) is the user's own:
# traces and inbox notes are readable by their owner alone, in folders only the owner opens.
_PRIVATE_FOLDERS: Final = ("traces", "inbox")


def _make_private(memory_dir: Path) -> None:
    """Create the traces and inbox folders 0700 and take group and other bits off them and
    their files (an older engram wrote traces 0444 and notes 0644 in 0755 folders)."""
    for name in _PRIVATE_FOLDERS:
        folder = memory_dir / name
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for path in (folder, *folder.iterdir()):
            try:
                info = path.lstat()
                if info.st_mode & 0o077 and info.st_uid == os.getuid() and not stat.S_ISLNK(info.st_mode):
                    os.chmod(path, stat.S_IMODE(info.st_mode) & 0o700)
            except OSError:
                continue  # a file going away, or one that is not ours: left as it is


def drain_queue(workspace: Workspace, *, dry_run: bool = False, limit: int | None = None,
                progress: Callable[[int, int], None] | None = None,
                now: datetime | None = None) -> Report:
    """Process queued entries oldest first. Saved, duplicate and skipped entries leave the
    queue; over-quota ones stay. The lock is held only to read and to write back, never while
    transcripts are parsed, so SessionEnd hooks are not kept waiting."""
    memory_dir = workspace.memory_dir
    lock = session_queue.lock_path(memory_dir)
    if not memory_dir.is_dir():
        return Report((), 0, dry_run)
    check_memory_dir(workspace)
    with fileio.exclusive_lock(lock, timeout=10.0):
        snapshot = session_queue.read_entries(memory_dir)
    valid = [e for e in snapshot if session_queue.is_entry(e)]
    invalid = len(snapshot) - len(valid)
    chosen = valid if limit is None else valid[:max(limit, 0)]
    run = _Run(workspace, dry_run, now)
    folders = allowed_dirs()
    outcomes: list[Outcome] = []
    done: list[dict[str, str]] = []
    for index, entry in enumerate(chosen, start=1):
        if progress is not None:
            progress(index, len(chosen))
        data, reason = check_source(entry["transcript_path"], folders)
        if data is None:
            outcome = Outcome(reduce_paths(entry["transcript_path"], run.context), entry["host"],
                              entry["session"], "skipped", reason)
        else:
            outcome = run.ingest(data, entry["host"], entry["transcript_path"])
        outcomes.append(outcome)
        if outcome.status != "kept":
            done.append(entry)
    if dry_run:
        return Report(tuple(outcomes), len(valid) - len(done), True, invalid)
    with fileio.exclusive_lock(lock, timeout=10.0):
        current = session_queue.read_entries(memory_dir)
        # Entries added by hooks while we worked are kept; a re-queued session with a newer
        # `at` is a different dict and is kept as well.
        left = [e for e in current if session_queue.is_entry(e) and e not in done]
        if left != current:
            session_queue.write_entries(memory_dir, left)
    return Report(tuple(outcomes), len(left), False, invalid)


def observe_file(workspace: Workspace, path: Path, *, dry_run: bool = False,
                 now: datetime | None = None) -> Report:
    """Ingest one transcript or note the user named. The location check is the queue's
    defence against a hostile workspace; a path typed by the user needs no such check, but
    the file checks (regular, one link, size) still apply."""
    absolute = os.path.abspath(os.path.expanduser(str(path)))
    run = _Run(workspace, dry_run, now)
    data, reason = check_source(absolute, None)
    if data is None:
        raise EngramError(f"cannot observe {reduce_paths(absolute, run.context)}: it {reason}")
    return Report((run.ingest(data, None, absolute),), 0, dry_run)
