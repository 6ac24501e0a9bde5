"""`engram hook HOST`: read one payload from stdin, print the answer, exit 0. Fails open:
any error prints the host's empty answer and is logged in the state dir (without the
payload: it may hold prompt text)."""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, NoReturn

MAX_STDIN_BYTES: Final = 8 * 1024 * 1024


def _empty_for(host_name: str) -> str:
    try:
        from engram import hook, host_registry

        runtime = host_registry.load_host(host_name).get("runtime") or {}
        return hook.empty_answer(hook.answer_spec(runtime))
    except Exception:  # noqa: BLE001
        return "{}"


def _write(output: str) -> None:
    """The answer on stdout, flushed: what a hook delivers is recorded only after this
    returns, so a hook killed before the host could read the answer has recorded nothing."""
    if output:
        sys.stdout.write(output)
        if not output.endswith("\n"):
            sys.stdout.write("\n")
    sys.stdout.flush()


def run_hook(args: list[str]) -> int:
    # A hook process lives for one call and makes little cyclic garbage: the collector's
    # passes over every object imported so far cost ~3% of the call. Compiling cards turns
    # it back on (engram.index_compile.refresh); the caller gets it back as it was.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if collecting:
            gc.enable()


def _run(args: list[str]) -> int:
    host_name = args[0] if args else ""
    answered: list[str] = []

    def write(output: str) -> None:
        answered.append(output)
        _write(output)

    try:
        raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1) if sys.stdin else b""
        if len(raw) > MAX_STDIN_BYTES:
            raise ValueError(f"payload larger than {MAX_STDIN_BYTES} bytes refused")
        from engram import hook

        hook.handle(host_name, raw, defer=True, write=write)
    except BaseException as exc:  # noqa: BLE001 - a hook never fails its host
        try:
            import traceback

            from engram import log

            # Only the error type and where it happened: an exception message may quote the
            # payload, and no file engram writes holds prompt text.
            frames = traceback.extract_tb(exc.__traceback__)
            where = " <- ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}"
                                for f in reversed(frames[-4:]))
            after = " (after answering; nothing recorded)" if answered else ""
            log.note(f"hook {_shown(host_name)} failed open: {type(exc).__name__} at {where}"
                     f"{after}", name="hook.log")
        except BaseException:  # noqa: BLE001
            pass
        if not answered:  # the host reads one answer: never a second after the first
            try:
                _write(_empty_for(host_name) if host_name else "{}")
            except BaseException:  # noqa: BLE001 - a closed stdout is the host's business
                pass
    index = sys.modules.get("engram.index")
    if index is not None:
        index.finish_deferred()  # large stores: the per-file freshness check, after the answer
    return 0


def _shown(host_name: str) -> str:
    """The host argument as the log may hold it: a host engram knows by name, else only its
    length (a pasted token in the host's place must not land in a log)."""
    try:
        import os

        from engram import host_registry

        known = host_name.isascii() and host_name.replace("-", "").isalnum() and os.path.isfile(
            os.path.join(host_registry._hosts_folder(), f"{host_name}.yaml"))
    except Exception:  # noqa: BLE001 - the log line must still be written
        known = False
    return repr(host_name) if known else f"<an unknown host of {len(host_name)} characters>"


def leave(code: int) -> NoReturn:
    """End the hook process now, without the interpreter's teardown: freeing every module
    and a last collection cost ~10% of a call, and nothing of engram's is left open but the
    index's connections (every file it writes is closed by now). Those are closed first, so
    SQLite checkpoints and removes its -wal and -shm files as on a normal exit."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - a closed stdout is the host's business
        pass
    index = sys.modules.get("engram.index")
    if index is not None:
        index.close_connections()
    os._exit(code)
