"""`engram init`: set a repository up for routed memory. Creates the memory folder (with a
starter card when it holds none), makes existing rule folders memory roots, and offers
`engram import` for monolithic instruction files and `engram link` for the hosts the
repository is configured for. Running it again changes nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from engram import config, fileio, formats, host_registry, output, paths, settings_store
from engram import workspace as workspace_module
from engram.errors import EngramError


def rule_folders(hosts: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(folder, what its files are called, who loads them) for every folder of per-topic rule
    files engram reads in their own format: each host's `rules`, then the rule formats no
    linked host owns (formats.OTHER_RULE_FOLDERS). The loader's own hook leaves those cards
    out."""
    rows = []
    for definition in hosts:
        rules = host_registry.rules_of(definition)
        if rules is not None:
            folder, _suffix, label, owner, _format = rules
            rows.append((folder, label, owner))
    rows += [(folder, label, owner) for folder, _, label, owner in formats.OTHER_RULE_FOLDERS]
    return rows


def host_signs(hosts: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...]]]:
    """(host, paths) for each host engram can link: any of the paths (`markers` and
    `instruction_files`) in a repository tells us it is set up for that host."""
    return [(str(d["name"]), tuple(str(s) for s in (*(d.get("markers") or ()),
                                                    *(d.get("instruction_files") or ()))))
            for d in hosts if d.get("supported")]


STARTER_ID = "memory-cards"
STARTER = """---
id: memory-cards
title: How this project's agent memory works
card: Project memory is Markdown cards in .agents/.engram/, routed to agents by engram.
tags: [engram, memory-cards]
---
Project knowledge for AI agents lives in `.agents/.engram/` as small Markdown memory cards,
one topic per card. engram sends an agent the cards that matter for each prompt or touched
file, once per session.

- Add a card: `engram new ID --title "..." --tags a,b [--applies-to "src/**/*.py"]`.
- Check cards: `engram lint --strict`. See what a prompt gets: `engram route "PROMPT" --explain`.
- Keep a card to one topic and a few hundred words; put always-needed rules in a card with
  `always: true`.
"""


def _rule_files(folder: Path) -> int:
    from engram import store

    found, _ = store.scan([(str(folder), "config")])
    return len(found)


def _is_pointer(path: Path) -> bool:
    """A file `engram import --replace` already swapped for a pointer to the cards."""
    from engram import native_loads

    try:  # bounded and regular only: a FIFO planted as CLAUDE.md must not hang init
        data = fileio.read_bounded(path, 1024 * 1024)
    except OSError:
        return False
    return native_loads.is_pointer_text(data)


def _ask(question: str) -> bool:
    output.write(f"{question} [Y/n] ")
    sys.stdout.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("", "y", "yes")


def run(*, cwd: Path, yes: bool, no_input: bool) -> int:
    root_str = workspace_module.find_root_str(cwd)
    if root_str is None:
        raise EngramError(f"no repository found at or above {cwd}",
                          "run `engram init` inside a Git repository (git init first)")
    root = Path(root_str)
    out = output.write
    out(f"engram init in {root}\n")
    memory = root / paths.MEMORY_DIR_NAME
    from engram.commands.import_cmd import MAX_SOURCE_BYTES, folder_name, has_cards, imported_twin

    if has_cards(memory):
        out(f"  ok       {paths.MEMORY_DIR_NAME}/ holds memory cards\n")
    else:
        fileio.atomic_write_text(memory / f"{STARTER_ID}.md", STARTER)
        out(f"  CREATED  {paths.MEMORY_DIR_NAME}/{STARTER_ID}.md (a starter card; replace it "
            "with your own)\n")

    config_file = root / paths.WORKSPACE_CONFIG_NAME
    current = list(config.read_file(config_file).get("roots") or [])
    added = []
    definitions = host_registry.ordered_definitions()
    folders = rule_folders(definitions)
    for relative, label, _owner in folders:
        folder = root / relative
        if not folder.is_dir():
            continue
        count = _rule_files(folder)
        if not count:
            continue
        if relative in current or relative + "/" in current:
            out(f"  ok       {relative}/ ({label}, {count} files) is routed\n")
            continue
        added.append(relative)
        out(f"  ROUTED   {relative}/ ({label}, {count} files): listed under `roots` in "
            f"{paths.WORKSPACE_CONFIG_NAME}\n")
    if added:
        settings_store.set_value(config_file, "workspace", "roots", current + added)
    routed_folders = [(r, owner) for r, _, owner in folders
                      if r in added or r in current or r + "/" in current]
    if routed_folders:
        owners = ", ".join(f"{owner} {r}/" for r, owner in routed_folders)
        out(f"  note     rule folders are routed to the OTHER hosts: each host still loads its "
            f"own ({owners}) and engram never injects those cards into it, so no rule reaches "
            "a model twice\n")

    interactive = not yes and not no_input and sys.stdin.isatty()
    to_import = []
    for relative in host_registry.instruction_files(definitions):
        path = root / relative
        if not path.is_file():
            continue
        if _is_pointer(path):
            out(f"  ok       {relative} already points to the cards\n")
            continue
        size = path.stat().st_size
        try:  # bounded and regular only, as for the pointer
            text = fileio.read_bounded(path, MAX_SOURCE_BYTES).decode("utf-8")
            twin = imported_twin(root, relative, text)
        except (OSError, UnicodeDecodeError):
            twin = None
        if twin is not None:
            out(f"  ok       {relative} has the same content as {twin}, imported into "
                f"{paths.MEMORY_DIR_NAME}/{folder_name(twin)}/\n")
            continue

        cards_folder = f"{paths.MEMORY_DIR_NAME}/{folder_name(relative)}"
        if has_cards(root / cards_folder):
            out(f"  ok       {relative} is imported into {cards_folder}/; its host still loads it "
                f"whole ({size:,} bytes): `engram import {relative} --replace` swaps it for a "
                "pointer\n")
            continue
        out(f"  FOUND    {relative} ({size:,} bytes, loaded whole by its host every session)\n")
        to_import.append(relative)
    if to_import:
        out("  note     `engram import FILE` routes a file's sections to the other hosts while "
            "its own host keeps loading it whole; `engram import FILE --replace` swaps it for a "
            "pointer, and then its own host gets the sections routed too\n")

    signs = host_signs(definitions)
    hosts = [name for name, paths_ in signs if any((root / s).exists() for s in paths_)]
    linked = _linked(root)
    to_link = [h for h in hosts if h not in linked]
    for host in hosts:
        if host in linked:
            out(f"  ok       {host} is linked\n")

    status = 0
    if to_import and (yes or (interactive and _ask(f"Import {', '.join(to_import)} into "
                                                   "memory cards now?"))):
        from engram.commands import import_cmd

        status |= import_cmd.run(files=[root / r for r in to_import], cwd=root, dry_run=False,
                                 replace=False, prompts=None, host="claude", as_json=False)
        to_import = []
    if to_link and (yes or (interactive and _ask(f"Link engram into {', '.join(to_link)}?"))):
        from engram.commands import link

        for host in to_link:
            status |= link.run(host=host, global_scope=False, session_end=False, dry_run=False,
                               as_json=False, cwd=root)
        to_link = []

    steps = []
    if to_import:
        steps.append("engram import " + " ".join(to_import) + "   # split into cards (--dry-run "
                     "to preview)")
    if to_link:
        steps += [f"engram link {host}" for host in to_link]
    if not hosts and not linked and signs:
        first, *others = [name for name, _ in signs]
        steps.append(f"engram link {first}" + (f"   # or {', '.join(others)}" if others else ""))
    steps.append("engram lint --strict && engram route \"a typical prompt\" --explain")
    out("next:\n" + "".join(f"  {step}\n" for step in steps))
    return status


def _linked(root: Path) -> list[str]:
    from engram import card_size

    try:
        return card_size.linked_hosts(root, injecting_only=False)
    except Exception:  # noqa: BLE001 - reporting only
        return []

