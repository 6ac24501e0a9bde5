"""`engram save-session`: promote a reviewed inbox note into a memory card."""

from __future__ import annotations

import io
import os
import stat
import sys
from pathlib import Path

from engram import output, promote, workspace
from engram.errors import EngramError


class _Redacted(io.TextIOBase):
    """The review's terminal: the candidate card it shows, the id it asks about and cancels
    may hold a secret, redacted here as everything else engram prints is."""

    def write(self, text: str) -> int:
        output.write(text)
        return len(text)

    def flush(self) -> None:
        sys.stdout.flush()


def _editor(stdout: promote.Terminal) -> promote.Editor:
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if command and sys.stdin.isatty():
        return promote.program_editor(command)
    return promote.stream_editor(sys.stdin, stdout)


def run(*, file: Path, yes: bool, cwd: Path) -> int:
    space = workspace.load(cwd)
    if space is None:
        raise EngramError("no workspace here (no .agents/.engram, .agents/engram.json or .git)",
                          "run it inside a repository or pass --cwd")
    path = file if file.is_absolute() else cwd / file
    try:
        info = os.lstat(path)
    except OSError:
        raise EngramError(f"no such inbox file: {file}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > promote.MAX_WRAPPER_BYTES:
        raise EngramError(f"{file} is not a regular inbox file of at most 8 MiB")
    from engram.fileio import read_bounded

    try:  # the checked file, bounded: a swap for a FIFO after the lstat must not hang
        raw = read_bounded(path, promote.MAX_WRAPPER_BYTES)
    except OSError as exc:
        raise EngramError(f"{file} is not a regular inbox file of at most 8 MiB ({exc})") from None
    wrapper = promote.read_wrapper(raw.decode("utf-8", errors="replace"))
    _show_related(space, wrapper)
    terminal = _Redacted()
    written = promote.promote(wrapper, space.memory_dir, yes=yes, stdin=sys.stdin,
                              stdout=terminal, editor=_editor(terminal))
    for target in written:
        output.write(f"WROTE {target.relative_to(space.root).as_posix()}\n")
    if not written:
        output.write("nothing written\n")
    else:
        output.write(f"The inbox file stays for reference; delete it when done: {file}\n")
    return 0


def _show_related(space: workspace.Workspace, wrapper: promote.Wrapper) -> None:
    """Name existing cards on the same subject before anything is written: merging into one
    of them usually beats adding a near-duplicate that competes with it."""
    try:
        from engram import index

        cards = index.load_or_build(space).all_cards() if space.roots else []
    except Exception:  # noqa: BLE001 - a hint, never a failure
        return
    for candidate in wrapper.candidates:
        for card, shared in promote.related_cards(candidate, cards):
            try:
                shown = Path(card.path).relative_to(space.root).as_posix()
            except ValueError:
                shown = card.path
            output.write(f"note: {candidate.id!r} covers the same subject as {card.id} "
                             f"({shown}; shares {', '.join(shared)}): consider merging it "
                             f"there instead\n  {card.id}: {card.card}\n")
