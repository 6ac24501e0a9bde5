"""`engram import FILE...`: split monolithic instruction files into memory cards, and show what
the host loads today against what engram would inject."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from engram import fileio, formats, importer, output, paths, session_sim
from engram import workspace as workspace_module
from engram.errors import EngramError

ARCHIVE = "archive"  # under the memory folder: reserved, never routed
MAX_SOURCE_BYTES = 8 * 1024 * 1024  # an instruction file to split; a larger one is not one


def folder_name(relative: str) -> str:
    """`CLAUDE.md` -> `claude`, `.github/copilot-instructions.md` -> `copilot-instructions`."""
    return formats.slug(formats.default_id(Path(relative)).lstrip(".")) or "imported"


def _existing_ids(root: Path, skip: Path) -> set[str]:
    """Ids of the workspace's cards outside `skip` (the folder being re-imported)."""
    from engram import index

    ws = workspace_module.load(root)
    if ws is None or not ws.roots:
        return set()
    inside = str(skip) + os.sep
    return {card.id for card in index.load_or_build(ws).all_cards()
            if not card.path.startswith(inside)}


def _unique(cards: list[importer.Planned], taken: set[str], stem: str) -> list[importer.Planned]:
    from dataclasses import replace

    result = []
    for card in cards:
        card_id = card.id if card.id not in taken else f"{stem}-{card.id}"
        n = 2
        while card_id in taken:
            card_id, n = f"{stem}-{card.id}-{n}", n + 1
        taken.add(card_id)
        result.append(card if card_id == card.id else
                      replace(card, id=card_id, source=card.source.split("#")[0] + "#" + card_id))
    return result


def measure(cards: list[importer.Planned], steps: list[session_sim.Step],
            host: str) -> session_sim.SessionResult:
    with tempfile.TemporaryDirectory(prefix="engram-import-") as temp:
        folder = Path(temp) / "cards"
        folder.mkdir()
        for card in cards:
            (folder / f"{card.id}.md").write_text(card.render(), encoding="utf-8")
        return session_sim.play(folder, steps, host)


def _pointer(relative: str, folder: str) -> str:
    return (f"# Agent instructions\n\nThis project's instructions live as memory cards in "
            f"`{folder}/`. engram delivers each card to the agent when it matters (run "
            f"`engram route \"PROMPT\"` to see which). The original {relative} is kept in "
            f"`{paths.MEMORY_DIR_NAME}/{ARCHIVE}/`.\n")


def _is_pointer(text: str, archive: Path) -> bool:
    """The pointer an earlier `--replace` left (its original archived): splitting it would make
    a card of engram's own note, and a second `--replace` would claim to replace it again."""
    from engram import native_loads

    return archive.is_file() and native_loads.is_pointer_text(text.encode("utf-8"))


def _archive_path(data: bytes, archive: Path) -> Path:
    """Where `--replace` keeps the text it replaces: its archive file, or where that already
    holds another text (an earlier import's, which the user has since rewritten) the next free
    `NAME.N.md`. The same text archived before is where it already is."""
    candidate, n = archive, 2
    while os.path.lexists(candidate):
        try:
            if fileio.read_bounded(candidate, MAX_SOURCE_BYTES) == data:
                return candidate
        except OSError:
            pass
        candidate, n = archive.with_name(f"{archive.stem}.{n}{archive.suffix}"), n + 1
    return candidate


def _keep(source: Path, data: bytes, candidate: Path) -> None:
    """Keep the replaced text at `candidate` (from `_archive_path`), unless it is there."""
    if os.path.lexists(candidate):
        return
    candidate.parent.mkdir(parents=True, exist_ok=True)
    fileio.atomic_write_bytes(candidate, data)
    shutil.copystat(source, candidate)


# A file Git ignores (`CLAUDE.local.md`: personal notes, often a password) gives cards, and
# an archived original, that Git ignores too: the memory folder is committed, and `git add -A`
# would put the notes into the team's history. The .gitignore is engram's while it starts
# with this line; one without it is the user's, never edited.
IGNORE_HEADER = "# engram: imported from files Git ignores, so kept out of Git like them\n"


def _home_form(path: Path) -> str:
    """`~/.claude/CLAUDE.md` for a file under the home folder, else the absolute path."""
    home = os.path.expanduser("~")
    try:
        return "~/" + path.relative_to(home).as_posix() if os.path.isabs(home) else str(path)
    except ValueError:
        return str(path)


def git_ignores(root: Path, relative: str) -> bool:
    """Does the workspace's Git ignore `relative`? False without Git or a repository."""
    return _git_not_ignored(root, [root / relative]) == []


def not_ignored(root: Path, files: list[Path]) -> list[Path]:
    """Which of `files` (in the workspace, written or not) Git would not ignore, a tracked file
    among them; none without Git or a repository, where nothing is staged."""
    return _git_not_ignored(root, files) or []


def _git_not_ignored(root: Path, files: list[Path]) -> list[Path] | None:
    """`not_ignored`, or None where Git cannot answer (no git, no repository)."""
    import subprocess

    git = shutil.which("git")
    if git is None:
        return None
    if not files:
        return []
    names = {file.relative_to(root).as_posix(): file for file in files}
    try:
        done = subprocess.run([git, "-C", str(root), "check-ignore", "-z", "--stdin"],
                              input="".join(f"{name}\0" for name in names).encode("utf-8"),
                              capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode not in (0, 1):
        return None
    ignored = set(done.stdout.decode("utf-8", "surrogateescape").split("\0"))
    return [file for name, file in names.items() if name not in ignored]


def _engrams_ignore(folder: Path) -> bool:
    """Is `folder`'s .gitignore engram's to edit (engram's header, or none yet)?"""
    path = folder / ".gitignore"
    if not os.path.lexists(path):
        return True
    try:
        head = fileio.read_bounded(path, MAX_SOURCE_BYTES, head=len(IGNORE_HEADER.encode()))
    except OSError:
        return False
    return head.decode("utf-8", "replace") == IGNORE_HEADER


def _ignore_in_git(folder: Path, names: list[str]) -> None:
    """Add `names` (files in `folder`) to engram's .gitignore there."""
    from engram.native_rules import IGNORE_FILE, ignore_line

    path = folder / IGNORE_FILE
    lines = [ignore_line(IGNORE_FILE)]
    if os.path.lexists(path):
        try:
            text = fileio.read_bounded(path, MAX_SOURCE_BYTES).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return
        if not text.startswith(IGNORE_HEADER):
            return  # the user's own
        lines = [line for line in text[len(IGNORE_HEADER):].splitlines() if line]
    added = [line for line in dict.fromkeys(map(ignore_line, names)) if line not in lines]
    if not added and os.path.lexists(path):
        return
    lines += added
    folder.mkdir(parents=True, exist_ok=True)
    fileio.atomic_write_text(path, IGNORE_HEADER + "".join(f"{line}\n" for line in lines))


def _holds_secret(card: importer.Planned) -> bool:
    """What the gate will say of the card once written: it reads the card as the hook would
    show it (`secrets.card_text`)."""
    from engram import secrets

    return secrets.has_secrets(secrets.card_text(card))


def _replace_with_pointer(source: Path, data: bytes, file: Path, pointer: str) -> None:
    """The user's file becomes engram's pointer, still theirs: its owner (run as root), mode and
    extended attributes kept; an edit saved since engram read it is not overwritten."""
    info = source.stat()

    def unchanged() -> None:
        try:
            same = fileio.read_bounded(source, MAX_SOURCE_BYTES) == data
        except OSError:
            same = False
        if not same:
            raise EngramError(f"{file} changed while engram imported it; it was not replaced",
                              "run the command again")

    fileio.atomic_write_bytes(source, pointer.encode("utf-8"), owner=(info.st_uid, info.st_gid),
                              check=unchanged, keep_attributes=True)


def has_cards(folder: Path) -> bool:
    """Does `folder` hold a card file (a memory scan finds one)?"""
    from engram import store

    if not folder.is_dir():
        return False
    found, _ = store.scan([(str(folder), "workspace")])
    return bool(found)


def imported_twin(root: Path, relative: str, text: str) -> str | None:
    """Another instruction file with the same content whose cards are already imported
    (AGENTS.md as a symlink or copy of CLAUDE.md), or None. Importing this one as well would
    route every card twice under two ids."""
    from engram import host_registry

    for other in host_registry.instruction_files(host_registry.ordered_definitions()):
        if other == relative or folder_name(other) == folder_name(relative) or \
                not has_cards(root / paths.MEMORY_DIR_NAME / folder_name(other)):
            continue
        try:
            same = fileio.read_bounded(root / other, MAX_SOURCE_BYTES).decode("utf-8") == text
        except (OSError, UnicodeDecodeError):
            continue
        if same:
            return other
    return None


def run(*, files: list[Path], cwd: Path, dry_run: bool, replace: bool, prompts: Path | None,
        host: str, as_json: bool) -> int:
    if not files:
        raise EngramError("give at least one file to import", "e.g. engram import CLAUDE.md")
    root_str = workspace_module.find_root_str(cwd)
    if root_str is None:
        raise EngramError(f"no workspace found at or above {cwd}",
                          "run inside a Git repository (or run `engram init` first)")
    root = Path(root_str)
    memory = root / paths.MEMORY_DIR_NAME
    steps = session_sim.read_prompts(prompts) if prompts else \
        [session_sim.Step(p) for p in session_sim.SAMPLE_PROMPTS]
    reports: list[dict[str, Any]] = []
    seen: dict[str, str] = {}  # content -> the file imported with it
    refused = False
    for file in files:
        # The folders resolved, not the file: a CLAUDE.md that links to AGENTS.md is imported,
        # and replaced, as CLAUDE.md (the link), never as the file it points at.
        given = file if file.is_absolute() else cwd / file
        source = given.parent.resolve() / given.name
        try:  # a regular file, bounded: a FIFO or device in its place must not hang import
            data = fileio.read_bounded(source, MAX_SOURCE_BYTES)
            text = data.decode("utf-8")
        except FileNotFoundError:
            raise EngramError(f"{file}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise EngramError(f"{file}: cannot read it as UTF-8 text ({exc})") from None
        if replace and not dry_run and not source.is_symlink() and source.stat().st_nlink > 1:
            raise EngramError(f"{file} has {source.stat().st_nlink} hard links: replacing it "
                              "would leave the other names with the old text",
                              "make the other names symlinks to it, or import without --replace")
        try:
            relative = source.relative_to(root).as_posix()
            inside = True
        except ValueError:
            relative, inside = source.name, False
        if not inside and replace:
            # Other projects read a file outside this one (`~/.claude/CLAUDE.md`): a pointer to
            # this repository's cards would take its instructions from all of them.
            output.message(f"REFUSED {file}: it is outside this workspace ({root}), and other "
                           "projects may read it: --replace would leave them a pointer to "
                           "cards only this repository has; nothing of it was imported. Import "
                           "it without --replace, or move it into the repository first")
            refused = True
            continue
        if text in seen:
            # CLAUDE.md and AGENTS.md are often one file (a copy or a symlink): one set of
            # cards, or every card would be routed twice under two ids.
            output.message(f"SKIPPED {relative}: same content as {seen[text]}, imported once")
            continue
        twin = imported_twin(root, relative, text)
        if twin is not None:
            output.message(f"SKIPPED {relative}: same content as {twin}, already imported into "
                           f"{paths.MEMORY_DIR_NAME}/{folder_name(twin)}/")
            continue
        seen[text] = relative
        archive = memory / ARCHIVE / relative.replace("/", "__")
        if _is_pointer(text, archive):
            output.message(f"SKIPPED {relative}: already engram's pointer to the cards; the "
                           f"original is in {archive.relative_to(root).as_posix()}")
            continue
        # A file from outside (the user's own global instructions) is no file of the team's:
        # its cards get a folder of their own, never merged into the cards of the repository's
        # file of the same name, and are kept out of Git like a file Git ignores.
        stem = folder_name(relative) if inside else f"outside-{folder_name(relative)}"
        folder = memory / stem
        # The cards name their source as the hosts find it: a host that loads the user's own
        # file in every project (`~/.claude/CLAUDE.md`) is never sent its cards again.
        origin = relative if inside else _home_form(source)
        cards = importer.plan(text, origin, _path_kind(root))
        if not cards:
            raise EngramError(f"{file}: nothing to import (the file is empty)")
        cards = _unique(cards, _existing_ids(root, folder), stem)
        personal = not inside or git_ignores(root, relative)
        why = "Git ignores it" if inside else "it is outside the repository"
        kept_at = _archive_path(data, archive) if replace else None
        new_files = [folder / f"{card.id}.md" for card in cards
                     if not (folder / f"{card.id}.md").is_file()]
        if kept_at is not None and not os.path.lexists(kept_at):
            new_files.append(kept_at)
        # A folder whose .gitignore is the user's gets no line of engram's: Git alone says
        # whether the user's rules keep the new files out, before any is written.
        unsafe = not_ignored(root, [file for file in new_files
                                    if not _engrams_ignore(file.parent)]) if personal else []
        if unsafe:
            names = ", ".join(file.relative_to(root).as_posix() for file in unsafe)
            output.message(
                f"REFUSED {file}: {why}, but Git would not ignore {names}, and the "
                ".gitignore there is not engram's to edit: nothing of it was "
                + ("written (dry run)" if dry_run else "imported")
                + "; ignore those files in that .gitignore, or remove it, and import again")
            refused = True
            continue
        if personal and not dry_run:  # ignored before the cards exist: never in `git status`
            _ignore_in_git(folder, [f"{card.id}.md" for card in cards])
        actions = []
        for card in cards:
            target = folder / f"{card.id}.md"
            rendered = card.render()
            if target.is_file():
                same = target.read_text(encoding="utf-8", errors="replace") == rendered
                actions.append("unchanged" if same else "kept")
                continue
            actions.append("would write" if dry_run else "written")
            if not dry_run:
                fileio.atomic_write_text(target, rendered)
        result = measure(cards, steps, host)
        replaced = None
        if kept_at is not None and not dry_run:
            if personal:
                _ignore_in_git(kept_at.parent, [kept_at.name])
            _keep(source, data, kept_at)
            _replace_with_pointer(source, data, file,
                                  _pointer(relative, f"{paths.MEMORY_DIR_NAME}/{stem}"))
            replaced = str(kept_at.relative_to(root))
        if personal and not dry_run:
            # What Git says of the files written, not what engram meant: checked, not assumed.
            visible = not_ignored(root, [file for file in new_files if file.is_file()])
            if visible:
                output.message(
                    f"WARNING {file}: {why}, but Git does not ignore "
                    + ", ".join(file.relative_to(root).as_posix() for file in visible)
                    + ": do not commit them (`git rm --cached` them, or remove them)")
                refused = True
        reports.append({
            "file": relative if inside else str(source), "folder": str(folder.relative_to(root)),
            "source_chars": len(text), "engram_chars": result.total,
            "prompts": len(steps), "host": host, "delivered": list(result.delivered),
            "replaced": replaced, "dry_run": dry_run, "git_ignored": personal,
            "outside": not inside,
            "cards": [{"id": c.id, "title": c.title, "always": c.always, "chars": len(c.body),
                       "tags": list(c.tags), "line": c.line, "action": a,
                       "secret": _holds_secret(c)}
                      for c, a in zip(cards, actions, strict=False)],
        })
    if as_json:
        output.emit_json("import", {"imports": reports})
    else:
        for report in reports:
            output.write(_table(report, prompts is None))
    return 1 if refused else 0


def _table(report: dict[str, Any], sample: bool) -> str:
    cards = report["cards"]
    width = max(len(c["id"]) for c in cards)
    lines = [f"{report['file']} -> {report['folder']}/ ({len(cards)} cards"
             + (", dry run: nothing written" if report["dry_run"] else "") + ")",
             f"  {'id':<{width}}  {'line':>5}  {'chars':>6}  always  tags"]
    for card in cards:
        note = "" if card["action"] in ("written", "would write") else f"  ({card['action']})"
        lines.append(f"  {card['id']:<{width}}  {card['line']:>5}  {card['chars']:>6,}  "
                     f"{'yes' if card['always'] else '':<6}  {', '.join(card['tags'])}{note}")
    for card in cards:
        if card["secret"]:
            lines.append(f"  {card['id']} holds a secret (line {card['line']} of "
                         f"{report['file']}): never injected; take it out of the card and the "
                         "source (engram lint names it)")
    if report.get("outside"):
        lines.append(f"  {report['file']} is outside this repository: its cards are kept out of "
                     f"Git ({report['folder']}/.gitignore); copy the file into the repository "
                     "and import that to share them with the team")
    elif report["git_ignored"]:
        lines.append(f"  {report['file']} is ignored by Git: its cards"
                     + (" and its archived original" if report["replaced"] else "")
                     + f" are kept out of Git too ({report['folder']}/.gitignore)")
    kept = sum(c["action"] == "kept" for c in cards)
    if kept:
        lines.append(f"  {kept} card file(s) already exist with other content and were kept; "
                     "delete them to import again")
    source, injected = report["source_chars"], report["engram_chars"]
    saved = 1 - injected / source if source else 0.0
    where = "a sample session" if sample else "your prompts"
    always = {card["id"] for card in cards if card["always"]}
    if set(report["delivered"]) - always:
        outcome = _saving(saved)
    else:
        # A session no prompt of which reached a section card measures nothing: its saving
        # would be the claim of a store the prompts never reach.
        outcome = "no prompt selected a card" + (
            f" (only the {len(report['delivered'])} always card(s) went out)"
            if report["delivered"] else "") + (
            ", the sample's prompts are generic: `--prompts FILE` plays your own"
            if sample else "")
    lines += [
        "",
        f"  today:  {source:>8,} characters of {report['file']} loaded whole at every session "
        "start",
        f"  engram: {injected:>8,} characters injected over {where} of {report['prompts']} "
        f"prompts ({report['host']} budget): {outcome}; "
        f"{len(report['delivered'])} of {len(cards)} cards sent",
    ]
    if report["replaced"]:
        lines.append(f"  REPLACED {report['file']} with a pointer; the original is in "
                     f"{report['replaced']}")
    elif not report["dry_run"] and report.get("outside"):
        lines.append(f"  {report['file']} is untouched: a host that loads it in every project "
                     "still loads it whole and gets none of these cards from engram (the other "
                     "hosts get them routed)")
    elif not report["dry_run"]:
        lines.append(f"  {report['file']} is untouched: the hosts that load it still load it "
                     "whole and get none of these cards from engram (the other hosts get them "
                     f"routed). Review the cards, then `engram import {report['file']} --replace` "
                     "to route them to every host.")
    lines.append("  next: engram lint --strict; engram route \"a prompt\" --explain")
    return "\n".join(lines) + "\n\n"


def _saving(saved: float) -> str:
    """'62% less', or for a file too small to gain from routing, '5% more' (never '-5% less')."""
    if saved >= 0:
        return f"{saved:.0%} less"
    return f"{-saved:.0%} more (a file this small gains little from routing)"


def _path_kind(root: Path) -> Callable[[str], str | None]:
    """What a relative path is in the workspace: "dir", "file" or None (also outside it)."""
    resolved_root = root.resolve()

    def kind(relative: str) -> str | None:
        target = (root / relative).resolve()
        if not target.is_relative_to(resolved_root):
            return None
        return "dir" if target.is_dir() else "file" if target.is_file() else None

    return kind
