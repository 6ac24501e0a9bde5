"""The `engram` executable. `engram hook ...` runs on every prompt and tool call as a fresh
process, so it is dispatched here before typer (~64 ms of imports) is loaded."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"]:
        from engram.hook_entry import leave, run_hook

        code = run_hook(args[1:])
        if argv is None:  # the hook process itself, not a caller in Python
            leave(code)
        return code
    from engram.cli import run

    return run(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
