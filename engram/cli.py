"""Command declarations only: each command calls one function that returns an exit code."""

from __future__ import annotations

import os
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import List, Optional

import typer

from engram import __version__, output, paths
from engram.completion import card_ids, host_names, host_names_or_all
from engram.errors import EngramError

app = typer.Typer(
    add_completion=True,
    no_args_is_help=True,
    help="engram: the right project memory for AI coding agents, at the right moment, "
    "never twice.",
    context_settings={"help_option_names": ["-h", "--help"]},
)

CwdOption = typer.Option(None, "--cwd", help="Work as if started in this directory.")
JsonOption = typer.Option(False, "--json", help="Machine-readable output (versioned envelope).")
DryRunOption = typer.Option(False, "--dry-run", help="Show the change, write nothing.")
# unlink and restore act on a config link wrote; link words its own help for writing one.
UserConfigOption = typer.Option(False, "--global", help="Use the user-level config.")
LocalConfigOption = typer.Option(False, "--local", help="Use the personal project file.")
ForceOption = typer.Option(False, "--force", help="Replace or remove engram's generated file (the "
                           "OpenCode plugin) even when it holds your own edits; it is backed "
                           "up first.")


def _cwd(value: Optional[Path]) -> Path:
    return (value or Path.cwd()).resolve()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"engram {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """engram: the right project memory for AI coding agents, at the right moment, never twice."""
    paths.make_state_dir(tighten=True)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # `sudo engram link ...` keeping HOME writes backups, locks and records into the
        # user's state dir: left root's, every later hook of the user's would fail open.
        from engram.installer.filedance import give_state_back

        ctx.call_on_close(give_state_back)


@app.command()
def init(
    yes: bool = typer.Option(False, "--yes", "-y", help="Import the instruction files found and "
                             "link the hosts found, without asking."),
    no_input: bool = typer.Option(False, "--no-input", help="Never ask; only report and print "
                                  "the next steps."),
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Set this repository up: memory folder, existing rule folders routed, instruction files
    offered for import, configured hosts offered for linking. Safe to run again."""
    from engram.commands import init as command

    raise typer.Exit(command.run(cwd=_cwd(cwd), yes=yes, no_input=no_input))


@app.command("import")
def import_(
    files: List[Path] = typer.Argument(..., help="CLAUDE.md, AGENTS.md, .cursorrules, ..."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the cards, write nothing."),
    replace: bool = typer.Option(False, "--replace", help="Swap each file for a short pointer to "
                                 "its cards (the original is kept in .agents/.engram/archive/)."),
    prompts: Optional[Path] = typer.Option(None, "--prompts", help="Measure over your own prompts "
                                           "(one per line, or JSON lines with prompt and paths)."),
    host: str = typer.Option("claude", "--host", help="Host whose budget the measure uses.",
                             autocompletion=host_names),
    as_json: bool = JsonOption,
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Split monolithic instruction files into memory cards by their headings, and show the
    characters the host loads today against what engram would inject."""
    from engram.commands import import_cmd as command

    raise typer.Exit(command.run(files=files, cwd=_cwd(cwd), dry_run=dry_run, replace=replace,
                                 prompts=prompts, host=host, as_json=as_json))


@app.command()
def route(
    prompt: Optional[str] = typer.Argument(None, help="The prompt to route."),
    path: list[str] = typer.Option([], "--path", "-p", help="A touched path (repeatable)."),
    root: list[Path] = typer.Option([], "--root", help="Route over this memory root instead "
                                    "of the workspace's (repeatable)."),
    cwd: Optional[Path] = CwdOption,
    limit: Optional[int] = typer.Option(None, "--limit", help="Most cards to select."),
    explain: bool = typer.Option(False, "--explain", help="Show why each card was selected."),
    why_not: Optional[str] = typer.Option(None, "--why-not", metavar="ID",
                                          help="Say in words why this card was not selected.",
                                          autocompletion=card_ids),
    as_json: bool = JsonOption,
    batch: Optional[Path] = typer.Option(None, "--batch", help="JSON lines of "
                                         '{"prompt": ..., "paths": [...]}; one result line each.'),
    written: Optional[Path] = typer.Option(None, "--written", metavar="FILE", help="Route as "
                                           "if the agent wrote this file's code (into the first "
                                           "--path, or the file itself; - reads stdin)."),
) -> None:
    """Show which memory cards a prompt and touched paths select, and why."""
    from engram.commands import route as command

    raise typer.Exit(command.run(prompt=prompt, paths=path, roots=root, cwd=_cwd(cwd),
                                 limit=limit, explain=explain, as_json=as_json, batch=batch,
                                 why_not=why_not, written=written))


@app.command()
def new(
    card_id: str = typer.Argument(..., metavar="ID", help="The card's id (its file name)."),
    title: Optional[str] = typer.Option(None, "--title", help="A short title."),
    tags: List[str] = typer.Option([], "--tags", help="Tags, comma-separated or repeated; a "
                                   "prompt naming one selects the card."),
    applies_to: List[str] = typer.Option([], "--applies-to", help="Globs of the files it is "
                                         "about (repeatable)."),
    always: bool = typer.Option(False, "--always", help="Send it at every session start."),
    priority: Optional[int] = typer.Option(None, "--priority", help="0-100 (default 50)."),
    body: Optional[str] = typer.Option(None, "--body", help="The card's text."),
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Write a new, valid memory card to .agents/.engram/ID.md."""
    from engram.commands import new as command

    raise typer.Exit(command.run(card_id=card_id, title=title, tags=tags, applies_to=applies_to,
                                 always=always, priority=priority, body=body, cwd=_cwd(cwd)))


@app.command()
def show(
    card_id: str = typer.Argument(..., metavar="ID", help="The card's id.",
                                  autocompletion=card_ids),
    root: List[Path] = typer.Option([], "--root", help="Look in this memory root (repeatable)."),
    as_json: bool = JsonOption,
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Print one card whole: file, key, fields, body, and its size against each host's budget."""
    from engram.commands import show as command

    raise typer.Exit(command.run(card_id=card_id, roots=root, cwd=_cwd(cwd), as_json=as_json))


@app.command()
def lint(
    root: list[Path] = typer.Option([], "--root", help="Lint this memory root (repeatable)."),
    cwd: Optional[Path] = CwdOption,
    as_json: bool = JsonOption,
    strict: bool = typer.Option(False, "--strict", help="Exit 1 on warnings too (for CI)."),
    ignore: list[str] = typer.Option([], "--ignore", metavar="CODE",
                                     help="Skip a check by the code printed after each problem "
                                     "(repeatable, or comma-separated)."),
) -> None:
    """Check memory cards: frontmatter, ids, depends_on, globs, sizes, secrets. Every problem
    of every card in one run, with file, line and code. Exit 1 on errors."""
    from engram.commands import lint as command

    raise typer.Exit(command.run(roots=root, cwd=_cwd(cwd), as_json=as_json, strict=strict,
                                 ignore=ignore))


@app.command()
def demo(
    host: str = typer.Option("claude", "--host", help="Host whose budget and envelope to use.",
                             autocompletion=host_names),
) -> None:
    """Run a scripted session on the bundled memories and show every step."""
    from engram.commands import demo as command

    raise typer.Exit(command.run(host=host))


ProjectOption = typer.Option(False, "--project", help="Set it in the workspace's "
                             ".agents/engram.json, shared with the team (default: your user "
                             "config only).")
GlobalCompat = typer.Option(False, "--global", hidden=True,
                            help="The user scope (the default; kept for old scripts).")


@app.command("set-read")
def set_read(
    mode: str = typer.Argument(..., help="startup | auto | always | manual | off | status"),
    project: bool = ProjectOption,
    global_scope: bool = GlobalCompat,
    cwd: Optional[Path] = CwdOption,
) -> None:
    """When memory is injected: auto (only what this session has not had), startup, always,
    manual (hooks inject nothing; pull cards with route/show), off. A personal setting: it
    is written to your user config unless --project."""
    from engram.commands import modes as command

    raise typer.Exit(command.run("read", mode, project=project and not global_scope,
                                 cwd=_cwd(cwd)))


@app.command("set-proof")
def set_proof(
    mode: str = typer.Argument(..., help="off | compact | status"),
    project: bool = ProjectOption,
    global_scope: bool = GlobalCompat,
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Whether hook output ends with an `Engram proof:` line (memory is injected either way).
    A personal setting: it is written to your user config unless --project."""
    from engram.commands import modes as command

    raise typer.Exit(command.run("proof", mode, project=project and not global_scope,
                                 cwd=_cwd(cwd)))


@app.command("config")
def config_command(
    action: str = typer.Argument(..., help="view | get | set | unset"),
    key: Optional[str] = typer.Argument(None),
    value: Optional[str] = typer.Argument(None),
    global_scope: bool = typer.Option(False, "--global", help="Use the user scope."),
    cwd: Optional[Path] = CwdOption,
) -> None:
    """View or change settings (workspace scope by default; --global: the user scope, and
    `config view --global` shows only what the user config sets)."""
    from engram.commands import config_cmd as command

    raise typer.Exit(command.run(action, key, value, global_scope=global_scope, cwd=_cwd(cwd)))


@app.command()
def link(
    host: str = typer.Argument(..., help="claude | codex | gemini | cursor | windsurf | "
                               "opencode | all (copilot and cline are explained)",
                               autocompletion=host_names_or_all),
    global_scope: bool = typer.Option(False, "--global", help="Write the user-level config."),
    local: bool = typer.Option(False, "--local", help="Write the personal, uncommitted project "
                               "file (.claude/settings.local.json)."),
    session_end: bool = typer.Option(False, "--session-end",
                                     help="Also register the SessionEnd transcript queue hook."),
    dry_run: bool = DryRunOption,
    as_json: bool = JsonOption,
    force: bool = ForceOption,
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Merge engram's hook entries into a host's config, touching nothing else."""
    from engram.commands import link as command

    raise typer.Exit(command.run(host=host, global_scope=global_scope, session_end=session_end,
                                 dry_run=dry_run, as_json=as_json, cwd=_cwd(cwd), local=local,
                                 force=force))


@app.command()
def unlink(
    host: str = typer.Argument(..., help="A host name or all.",
                               autocompletion=host_names_or_all),
    global_scope: bool = UserConfigOption,
    local: bool = LocalConfigOption,
    dry_run: bool = DryRunOption,
    as_json: bool = JsonOption,
    force: bool = ForceOption,
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Remove engram's entries (and only those) from a host's config."""
    from engram.commands import unlink as command

    raise typer.Exit(command.run(host=host, global_scope=global_scope, dry_run=dry_run,
                                 as_json=as_json, cwd=_cwd(cwd), local=local, force=force))


@app.command()
def restore(
    host: str = typer.Argument(..., help="The host whose config file to restore.",
                               autocompletion=host_names),
    global_scope: bool = UserConfigOption,
    local: bool = LocalConfigOption,
    list_only: bool = typer.Option(False, "--list", help="List the saved versions."),
    backup: Optional[str] = typer.Option(None, "--backup", help="The ID of a saved version "
                                         "(see --list)."),
    original: bool = typer.Option(False, "--original",
                                  help="The file as it was before engram first changed it."),
    dry_run: bool = DryRunOption,
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Put back a saved version of a host config (the current file is backed up first)."""
    from engram.commands import restore as command

    raise typer.Exit(command.run(host=host, global_scope=global_scope, local=local,
                                 list_only=list_only, backup=backup, original=original,
                                 dry_run=dry_run, cwd=_cwd(cwd)))


@app.command()
def upgrade(
    dry_run: bool = DryRunOption,
    as_json: bool = JsonOption,
    force: bool = ForceOption,
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Bring every installed host to the current hook definitions."""
    from engram.commands import upgrade as command

    raise typer.Exit(command.run(dry_run=dry_run, cwd=_cwd(cwd), as_json=as_json, force=force))


@app.command()
def doctor(
    as_json: bool = JsonOption,
    cwd: Optional[Path] = CwdOption,
) -> None:
    """What is configured, what was observed firing, and what is broken."""
    from engram.commands import doctor as command

    raise typer.Exit(command.run(as_json=as_json, cwd=_cwd(cwd)))


@app.command()
def observe(
    queue: bool = typer.Option(False, "--queue", help="Drain the session transcript queue."),
    file: Optional[Path] = typer.Option(None, "--file", help="Ingest one transcript or note."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Report what would happen."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Most queue entries to take."),
    as_json: bool = JsonOption,
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Turn session transcripts into sanitized evidence traces and inbox notes."""
    from engram.commands import observe as command

    raise typer.Exit(command.run(queue=queue, file=file, dry_run=dry_run, limit=limit,
                                 as_json=as_json, cwd=_cwd(cwd)))


@app.command("save-session")
def save_session(
    file: Path = typer.Option(..., "--file", help="The inbox file to promote."),
    yes: bool = typer.Option(False, "--yes", help="Approve without asking."),
    cwd: Optional[Path] = CwdOption,
) -> None:
    """Promote a reviewed inbox note into a memory card."""
    from engram.commands import save_session as command

    raise typer.Exit(command.run(file=file, yes=yes, cwd=_cwd(cwd)))


@app.command()
def completion(
    shell: str = typer.Argument(..., help="bash | zsh | fish"),
    install: bool = typer.Option(False, "--install", help="Install it for that shell (as "
                                 "`engram --install-completion` does for the current one)."),
) -> None:
    """Print (or --install) the completion script for a shell: commands, options, host names
    and card ids complete on Tab."""
    from engram.completion import script_or_install

    raise typer.Exit(script_or_install(shell, install))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def hook(host: str = typer.Argument(..., help="The host whose hook payload is on stdin.")) -> None:
    """The command host configs run: reads one JSON payload on stdin, prints the answer.
    Never fails the host: any error prints the host's empty answer and exits 0."""
    from engram.hook_entry import run_hook

    raise typer.Exit(run_hook([host]))


def _crash_log(exc: BaseException) -> Path | None:
    try:
        log_dir = paths.state_dir() / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        log_path = log_dir / f"crash-{stamp}.log"
        # An exception's message may quote a card, a setting or a prompt: redacted like
        # everything else engram writes.
        log_path.write_text(output.redacted("".join(traceback.format_exception(
            type(exc), exc, exc.__traceback__))), encoding="utf-8")
        return log_path
    except OSError:
        return None


def run(argv: list[str]) -> int:
    """Run the CLI: EngramError -> 1, Ctrl-C -> 130, anything unexpected -> 3 with a log."""
    try:
        # With standalone_mode=False the command's exit code comes back as the return value.
        result = app(args=argv, prog_name="engram", standalone_mode=False)
    except typer.Exit as done:
        return int(done.exit_code or 0)
    except EngramError as exc:
        output.message(f"engram: error: {exc}")
        return 1
    except KeyboardInterrupt:
        typer.echo("engram: interrupted", err=True)
        return 130
    except typer.Abort:
        typer.echo("engram: aborted", err=True)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one handler around the CLI
        # A usage error (click's ClickException, which typer raises but does not export)
        # knows how to show itself and its exit code: recognised by that, not by a private
        # import of typer's vendored click.
        show, code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(code, int):
            # It quotes the arguments it rejects ("Got unexpected extra argument(s) (...)",
            # "No such command '...'"), a pasted prompt's token too: shown into a buffer and
            # printed through the redacting output layer, like every other line.
            import io

            shown = io.StringIO()
            show(file=shown)
            output.message(shown.getvalue().rstrip("\n"), quoting=argv)
            return code
        log_path = _crash_log(exc)
        where = f"; details in {log_path}" if log_path else ""
        output.message(f"engram: unexpected error: {type(exc).__name__}: {exc}{where}")
        return 3
    return int(result or 0) if isinstance(result, int) else 0
