"""Claude Code native path rules: one `.claude/rules/engram/<id>.md` per card with `applies_to`.

Claude loads a rule file with `paths:` frontmatter by itself when it reads a matching file, so
the body reaches the model without a hook; InstructionsLoaded then only records that it did.
The hook runtime calls `sync_rules` at SessionStart so no stale rule outlives a card change,
which is why this module imports nothing beyond the standard library, engram.fileio and (to
leave out the cards Claude loads from its own files) engram.native_loads.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Final, Iterable, Mapping

from engram.fileio import atomic_write_text

if TYPE_CHECKING:  # pragma: no cover
    from engram.card import Card

# Every generated file carries this line; only such files are ever replaced or removed, and
# card loaders that read .claude/rules/ can skip them (they are copies of cards).
GENERATED_MARKER: Final = "<!-- engram:generated"
_RESERVED: Final = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))})
_UNSAFE: Final = re.compile(r'[\x00-\x1f<>:"/\\|?*]')


def is_safe_id(card_id: str) -> bool:
    """Can this id name a file inside the rules folder on every platform?"""
    if not card_id or len(card_id) > 200 or card_id in (".", ".."):
        return False
    if ".." in card_id or _UNSAFE.search(card_id) or card_id.startswith("."):
        return False
    if card_id.endswith((".", " ")):  # Windows drops them, aliasing another name
        return False
    return card_id.split(".", 1)[0].strip().lower() not in _RESERVED


def render_rule(card: "Card") -> str:
    """The rule file for a card: `paths:` frontmatter (its applies_to globs), then the body."""
    # JSON strings are valid YAML scalars and quote the `*` and `{` globs start with.
    globs = "".join(f"  - {json.dumps(glob, ensure_ascii=False)}\n" for glob in card.applies_to)
    from engram.render import neutralize

    # Claude wraps a rule file in its own tags: the same guard as the hook's output.
    title = f"# {neutralize(' '.join(card.title.split()))}\n\n" if card.title.strip() else ""
    body = neutralize(card.body.strip("\n"))
    return (f"---\npaths:\n{globs}---\n"
            f"{GENERATED_MARKER} from memory card {card.id}; edit the card, not this file -->\n"
            f"{title}{body}\n")


def _is_generated(path: Path) -> bool:
    """Does the file carry the marker near its top? Only its first 4 KiB are read; a file over
    1 MiB is never one of ours."""
    from engram.fileio import read_bounded

    try:  # a FIFO planted in the rules folder must not hang SessionStart
        head = read_bounded(path, 1024 * 1024, head=4096)
    except OSError:
        return False
    return GENERATED_MARKER in head.decode("utf-8", "replace")


def stays_inside(rules_dir: "str | os.PathLike[str]", root: "str | os.PathLike[str]") -> bool:
    """Does the rule folder, every symlink resolved, lie inside the workspace root, with no
    dangling link on the way? A repository can commit `.claude/rules/engram` (or `.claude`)
    as a link to `~/.claude/rules`; writing through it would plant its text in every project
    of the user."""
    root_abs = os.path.abspath(root)
    here = os.path.abspath(rules_dir)
    if not (here == root_abs or here.startswith(root_abs.rstrip(os.sep) + os.sep)):
        return False
    current = root_abs
    for part in os.path.relpath(here, root_abs).split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current) and not os.path.exists(current):
            return False
    real_root = os.path.realpath(root_abs)
    real = os.path.realpath(here)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def loaded_natively(patterns: tuple[str, ...], root: "str | os.PathLike[str] | None"
                    ) -> "Callable[[Card], str] | None":
    """Which cards the host loads by itself (its `runtime.loads_natively` globs) in the
    workspace `root` (None without one)."""
    if root is None or not patterns:
        return None
    from engram import native_loads

    location = os.path.realpath(root)
    return lambda card: native_loads.native_file(patterns, location, card.path, card.provenance)


def sync_rules(rules_dir: Path, cards: Iterable["Card"], dry_run: bool = False,
               root: "str | os.PathLike[str] | None" = None, follow: bool = False,
               loads_natively: tuple[str, ...] = (),
               secret_verdicts: Mapping[str, bool] | None = None) -> list[Path]:
    """Make `rules_dir` hold exactly one current rule per card with `applies_to` (cards with
    unsafe ids or a secret, and with `root` the cards the host loads by itself per its
    `loads_natively` globs, are skipped); returns the paths written or removed (or, with
    `dry_run`, that would be). With `root`, writes nothing when the folder leads outside it
    (unless the user set `follow`). Never raises on I/O.

    `secret_verdicts`: card file key (`id@content hash`) -> whether the compiled index found a
    secret in that content. A verdict is used only for a card of that exact key: the key names
    the content it was given for, and any other card (an edit since, another hash) is scanned."""
    from engram import secrets

    if root is not None and not follow and not stays_inside(rules_dir, root):
        return []

    native = loaded_natively(loads_natively, root)
    wanted: dict[str, str] = {}
    for card in cards:
        # Claude loads a rule file by itself, so a card holding a secret must never become
        # one (the hook never injects it either; lint and doctor report it). Nor a card Claude
        # already loads from its own file (.claude/rules/x.md, an imported CLAUDE.md): a copy
        # under .claude/rules/engram/ would be the same rule twice.
        if card.applies_to and is_safe_id(card.id) and not secrets.name_kind(card.id) and \
                not (native and native(card)) and not _holds_secret(card, secret_verdicts):
            wanted.setdefault(f"{card.id}.md", render_rule(card))
    changed: list[Path] = []
    mine, to_write = [], []
    for name, text in sorted(wanted.items()):
        path = rules_dir / name
        try:
            if path.is_file() and path.read_text(encoding="utf-8") == text:
                mine.append(name)
            elif not os.path.lexists(path) or (path.is_file() and _is_generated(path)):
                mine.append(name)
                to_write.append(path)
            # else: a file the user put here is theirs
        except OSError:
            continue
    if mine and not dry_run:
        _ignore_folder(rules_dir, mine)  # before the files, so git never sees them unignored
    for path in to_write:
        try:
            if not dry_run:
                atomic_write_text(path, wanted[path.name])
            changed.append(path)
        except OSError:
            continue
    try:
        existing = list(os.scandir(rules_dir))
    except OSError:
        return changed
    for entry in existing:
        if entry.name.endswith(".md") and entry.name not in wanted and entry.is_file():
            path = Path(entry.path)
            if _is_generated(path):
                try:
                    if not dry_run:
                        path.unlink()
                    changed.append(path)
                except OSError:
                    pass
    return changed


def _holds_secret(card: "Card", verdicts: Mapping[str, bool] | None) -> bool:
    from engram import secrets

    known = verdicts.get(card.file_key) if verdicts else None
    return known if known is not None else secrets.card_holds_secret(card)


def remove_rules(rules_dir: Path, dry_run: bool = False) -> list[Path]:
    """Remove every generated rule, and the folder when nothing else is left in it."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(rules_dir))
    except OSError:
        return removed
    for entry in entries:
        path = Path(entry.path)
        if entry.name.endswith(".md") and entry.is_file() and _is_generated(path):
            if not dry_run:
                path.unlink(missing_ok=True)
            removed.append(path)
    if not dry_run:
        ignore = rules_dir / IGNORE_FILE
        if _is_engrams_ignore(ignore):
            ignore.unlink(missing_ok=True)
        try:
            rules_dir.rmdir()
        except OSError:
            pass  # the user keeps something of their own there
    return removed


# The generated files ignore themselves, so a team never commits copies of its cards and no
# user file (.gitignore) has to change. The folder's .gitignore names engram's files one by
# one: a file of the user's in the same folder (theirs before engram came, or put there
# since) is never ignored. A .gitignore without this first line is the user's, never edited.
IGNORE_FILE: Final = ".gitignore"
IGNORE_HEADER: Final = "# generated by engram from the memory cards; not committed\n"
_GLOB_ESCAPES: Final = str.maketrans({c: "\\" + c for c in "\\*?[]!#"})


def ignore_line(name: str) -> str:
    """The .gitignore line naming exactly the file `name` of its folder (anchored, glob
    characters escaped; Git drops a line's trailing blanks unless each is escaped)."""
    line = name.translate(_GLOB_ESCAPES)
    kept = line.rstrip(" ")
    return "/" + kept + "\\ " * (len(line) - len(kept))


def ignore_text(names: Iterable[str]) -> str:
    """engram's .gitignore for these generated files."""
    return IGNORE_HEADER + "".join(f"{ignore_line(name)}\n" for name in (IGNORE_FILE, *names))


def _is_engrams_ignore(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(len(IGNORE_HEADER)) == IGNORE_HEADER
    except OSError:
        return False


def _ignore_folder(rules_dir: Path, names: list[str]) -> None:
    path = rules_dir / IGNORE_FILE
    text = ignore_text(names)
    try:
        if os.path.lexists(path) and not _is_engrams_ignore(path):
            return  # the user's own: theirs to keep
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            atomic_write_text(path, text)
    except OSError:
        pass
