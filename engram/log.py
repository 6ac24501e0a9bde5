"""engram's own bounded log in the state dir. Never holds prompt text: callers pass only
event names, ids, counts and error descriptions."""

from __future__ import annotations

import os
import time

from engram import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

MAX_LOG_BYTES: Final = 256 * 1024


def note(message: str, name: str = "engram.log") -> None:
    """Append one line; rotate to `<name>.1` past MAX_LOG_BYTES. Never raises. Nothing is
    written in a state dir another user owns (`paths.foreign_owner`)."""
    try:
        if paths.foreign_owner(paths.state_dir_str()) is not None:
            return
        folder = paths.state_dir() / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / name
        try:
            if target.stat().st_size > MAX_LOG_BYTES:
                os.replace(target, folder / (name + ".1"))
        except FileNotFoundError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = " ".join(message.split())[:2000]
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {line}\n")
    except OSError:
        pass
