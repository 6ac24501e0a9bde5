"""Whether the context a prompt's hook answered with reached the model, read afterwards from
the host's own transcript. A host drops a prompt another of the user's hooks blocks, and
every hook's context with it. The bodies engram recorded as delivered with that prompt never
reached the model, and must be sent again rather than listed as already loaded. Two ways to
tell, one per kind of host:
- Claude Code writes neither the prompt nor the context, only a note that the prompt was
  blocked (`dropped_keys`);
- Gemini CLI writes every prompt it keeps with every hook's context in the same transcript
  line, so a body whose header is nowhere in what it wrote after the answer was dropped: with
  a denied prompt (not written) or a stopped one (written without the context)
  (`missing_after`)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Final, Iterator

# The part of the transcript read: from a little before where the host's writes stood when the
# hook answered (a hook that blocks can finish first, and the host may write its note at
# once) to well after it (the host writes a kept prompt's context right after its hooks,
# ahead of the model's reply and any tool output). A window that does not settle it leaves
# the record as it is.
BEFORE_BYTES: Final = 256 * 1024
WINDOW_BYTES: Final = 4 * 1024 * 1024
ORIGINAL_PROMPT: Final = "Original prompt: "
SUBAGENT_START: Final = "SubagentStart"


def header(key: str) -> bytes:
    """What the transcript holds of a body block when the host kept it: its header up to the
    card id and the space after it (ids are ASCII; the title after it may be written escaped)."""
    from engram.render import HEADER_PREFIX

    return f"{HEADER_PREFIX}{key.split('@', 1)[0]} ".encode()


def transcript_size(path: str) -> int:
    """Where the host's writes to the transcript stand (0 when it does not exist yet)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def read_window(path: str, offset: int) -> bytes:
    try:
        with open(path, "rb") as transcript:
            transcript.seek(max(0, offset - BEFORE_BYTES))
            return transcript.read(BEFORE_BYTES + WINDOW_BYTES)
    except (OSError, ValueError):
        return b""


def blocked_prompts(window: bytes, note: str) -> list[tuple[int, str]]:
    """The prompts the host says were blocked in `window`: (where the note's line ends, the
    prompt as the note quotes it), for each line holding `note` and a quoted prompt."""
    found: list[tuple[int, str]] = []
    for end, line in _lines_holding(window, note.encode("utf-8"), 0):
        content = line.get("content") if isinstance(line, dict) else None
        if isinstance(content, str) and ORIGINAL_PROMPT in content:
            found.append((end, content.rsplit(ORIGINAL_PROMPT, 1)[1]))
    return found


def _lines_holding(window: bytes, needle: bytes, start: int) -> Iterator[tuple[int, object]]:
    """(where the line ends, the line parsed as JSON or None) for each line of `window` from
    `start` on that holds `needle`."""
    at = window.find(needle, start)
    if at < 0:
        return  # the common case, without the json package (and `re`, which it imports)
    import json

    while at >= 0:
        begin = window.rfind(b"\n", 0, at) + 1
        end = window.find(b"\n", at)
        end = len(window) if end < 0 else end
        try:
            line = json.loads(window[begin:end])
        except ValueError:
            line = None
        yield end, line
        at = window.find(needle, end)


def dropped_keys(window: bytes, keys: list[str], note: str,
                 is_this_prompt: Callable[[str], bool], answered_at: int) -> set[str]:
    """Only on the host's own word: when a note in `window` says this very prompt was
    blocked, the keys whose bodies were not written after the hook answered (`answered_at`,
    in `window`) or after the note, whichever is first (a prompt blocked once and then asked
    again and kept; the same words kept, then asked again and blocked: that note is a later
    prompt's). Each key on its own: a tool call's answer may bring one of them again, which
    says nothing of the others. Anything else keeps the record: a body lost is worse than
    one sent twice, but engram sends again only what it knows was dropped."""
    if not keys or not note:
        return set()
    # The last note quoting these words: an older one may be a block the same words had
    # before this prompt was asked (and then kept).
    ends = [end for end, prompt in blocked_prompts(window, note) if is_this_prompt(prompt)]
    if not ends:
        return set()
    since = min(ends[-1], answered_at)
    return {key for key in keys if not _in_main_context(window, header(key), since)}


def window_offset(offset: int) -> int:
    """Where `offset` in the transcript lies in the window `read_window` reads from it."""
    return offset - max(0, offset - BEFORE_BYTES)


def _in_main_context(window: bytes, text: bytes, start: int) -> bool:
    """Whether `text` is in a line from `start` on that went to the session's own model: not
    a subagent's (a subagent's context is no sign of what the session's model got). Claude
    Code marks a subagent's lines `isSidechain` with its `agentId`, and its start's context
    `hookEvent: SubagentStart`. Any other line counts, one that does not parse too: a re-send
    only on the host's word."""
    for _end, line in _lines_holding(window, text, start):
        if not isinstance(line, dict):
            return True
        attachment = line.get("attachment")
        event = attachment.get("hookEvent") if isinstance(attachment, dict) else None
        if not (line.get("isSidechain") is True or isinstance(line.get("agentId"), str)
                or event == SUBAGENT_START):
            return True
    return False


# Past this much written after an answer, with a body still not found, there is nothing to go
# by (the record stays): a resumed Gemini session writes its whole history again.
SCAN_MAX_BYTES: Final = 64 * 1024 * 1024
SCAN_CHUNK_BYTES: Final = 1024 * 1024


def missing_after(path: str, offset: int, keys: list[str]) -> set[str] | None:
    """The keys whose body header is nowhere in what the host wrote to the transcript from
    `offset` to its end: where a host writes everything it keeps with every hook's context,
    the bodies it dropped. None when there is nothing to go by: no offset held, the file
    gone or shorter than it was (replaced or cut), or more than SCAN_MAX_BYTES written."""
    if offset <= 0:
        return None
    wanted = {key: header(key) for key in keys}
    overlap = max((len(h) for h in wanted.values()), default=1) - 1
    try:
        with open(path, "rb") as transcript:
            if os.fstat(transcript.fileno()).st_size < offset:
                return None
            transcript.seek(offset)
            seen, tail = 0, b""
            while wanted:
                chunk = transcript.read(SCAN_CHUNK_BYTES)
                if not chunk:
                    break
                seen += len(chunk)
                data = tail + chunk
                for key in [key for key, text in wanted.items() if text in data]:
                    del wanted[key]
                if wanted and seen >= SCAN_MAX_BYTES:
                    return None
                tail = data[-overlap:] if overlap else b""
    except (OSError, ValueError):
        return None
    return set(wanted)
