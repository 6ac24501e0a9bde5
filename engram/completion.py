"""Shell completion values for hosts and card ids (`engram --install-completion` installs the
script for bash, zsh or fish). A completion runs on every Tab press: it answers from the
compiled index and never fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def host_names(incomplete: str) -> list[tuple[str, str]]:
    """Host names for a command that takes one host (import, demo, restore)."""
    return [(name, label) for name, label in _hosts() if name.startswith(incomplete)]


def host_names_or_all(incomplete: str) -> list[tuple[str, str]]:
    """Host names and `all`, for link and unlink (the only commands that accept it)."""
    found = _hosts() + ([("all", "every host")] if _hosts() else [])
    return [(name, label) for name, label in found if name.startswith(incomplete)]


def _hosts() -> list[tuple[str, str]]:
    try:
        from engram import host_registry

        return [(h.name, h.display_name) for h in host_registry.registry()]
    except Exception:  # noqa: BLE001 - completion never fails
        return []


def card_ids(ctx: Any, incomplete: str) -> list[tuple[str, str]]:
    try:
        from engram import index, workspace

        cwd = (ctx.params.get("cwd") if ctx is not None else None) or Path.cwd()
        ws = workspace.load(cwd)
        if ws is None or not ws.roots:
            return []
        compiled = index.load_or_build(ws)
        cards = compiled.all_cards()
        blocked = {card.id for slot, card in zip(compiled.active, cards, strict=True)
                   if compiled.holds_secret(slot)}
    except Exception:  # noqa: BLE001 - completion never fails
        return []
    from engram import secrets

    # zsh and fish print each title beside its id, past engram's output layer: redacted here,
    # a card the gate holds back as `show` prints it (a token YAML folded from two lines of
    # its title, or a piece of one opening it, which no redaction of the title alone finds).
    shown = {}
    if any(card.id in blocked and card.id.startswith(incomplete) for card in cards):
        from engram.commands.route import shown_card

        shown = {card.id: shown_card(card).title for card in cards if card.id in blocked}
    return sorted((card.id, shown.get(card.id) or secrets.redact(card.title)) for card in cards
                  if card.id.startswith(incomplete))


SHELLS = ("bash", "zsh", "fish")


def script_or_install(shell: str, install: bool) -> int:
    """Print the completion script for `shell`, or install it; the exit code."""
    # typer's private module, on purpose: no public API prints or installs the script for a
    # named shell on every typer the pins allow. typer documents only the --show-completion
    # and --install-completion options (which detect the shell, print with their own wording
    # and exit); typer.completion re-exports these two functions without exporting them
    # (mypy --strict refuses the import); click's public shell_completion has the script
    # but no install, and typer 0.29 does not install click at all (it vendors it as
    # typer._click). .ci/run runs tests/test_completion.py on typer 0.16.0 and the current one.
    from typer import _completion_shared as shared

    from engram import output
    from engram.errors import EngramError

    if shell not in SHELLS:
        raise EngramError(f"unsupported shell {shell!r}", "use one of: " + ", ".join(SHELLS))
    if install:
        _shell, path = shared.install(shell=shell, prog_name="engram",
                                      complete_var="_ENGRAM_COMPLETE")
        output.write(f"INSTALLED {shell} completion in {path}; it takes effect in a new "
                         "shell\n")
        return 0
    output.write(shared.get_completion_script(prog_name="engram",
                                              complete_var="_ENGRAM_COMPLETE", shell=shell))
    return 0
