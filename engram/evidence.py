"""Evidence: a sanitized transcript rendered as trace bytes, and the trace files under a
memory folder (`traces/<id>.jsonl`, id = host + 24 hex digits of the sha256 of its bytes).
`engram observe` writes traces; `engram save-session` verifies one before promoting cards
from it. Both depend on this module, neither on the other's internals."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from engram.transcripts.model import Transcript

TRACE_SCHEMA: Final = "engram.trace/1"
HASH_DIGITS: Final = 24
MAX_TRACE_BYTES: Final = 64 * 1024 * 1024  # a trace is read whole: bounded, never a stream


@dataclass(frozen=True)
class Evidence:
    """A sanitized transcript rendered as trace bytes, ready to write."""

    trace_id: str
    sha256: str
    data: bytes
    transcript: Transcript  # the sanitized turns
    secrets: int
    injections: int


def trace_path(memory_dir: Path, trace_id: str) -> Path:
    return memory_dir / "traces" / f"{trace_id}.jsonl"


def verify_trace(memory_dir: Path, trace_id: str, sha256: str) -> bool:
    """True when the trace exists and its bytes still hash to `sha256` (and match its id)."""
    path = trace_path(memory_dir, trace_id)
    try:
        from engram.fileio import read_bounded

        data = read_bounded(path, MAX_TRACE_BYTES)
    except OSError:
        return False
    digest = hashlib.sha256(data).hexdigest()
    return digest == sha256 and trace_id.endswith(digest[:HASH_DIGITS])
