"""Memory roots on disk: which files count, reading one file into a card, and the checks that
need every card at once (duplicate ids, dangling or cyclic depends_on)."""

from __future__ import annotations

import os

from engram import host_registry
from engram.problems import Problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Iterable

    from engram.card import Card  # annotations only: the hook's file scan never builds one

MAX_CARD_BYTES: Final = 256 * 1024
RESERVED_DIRS: Final = frozenset({"inbox", "traces", "archive", "quarantine", "proposals",
                                  ".git", "node_modules", ".engram-state", "__pycache__"})
CARD_SUFFIXES: Final = (".md", ".mdc")


def host_rule_suffix(folder: str, rule_folders: Iterable[tuple[str, str, str]]) -> tuple[str, str] | None:
    """(required suffix, host) when `folder` lies in a host's rules folder, else None. A host
    loads only its own kind of file from there (`rules` in hosts/*.yaml: Cursor only `.mdc`
    from `.cursor/rules/`), and engram routes what the host would load. `rule_folders`:
    host_registry.rule_folders()."""
    probe = folder.rstrip(os.sep) + os.sep
    for marker, suffix, host in rule_folders:
        if marker in probe:
            return suffix, host
    return None


class FoundFile(tuple):  # type: ignore[type-arg]
    """A card file found by `scan`: (path, root, mtime_ns, size), read by name. A tuple, not
    a record or a slotted class: a scan of 10,000 files builds 10,000 of them on every hook
    call, and a tuple is built without running Python code and compared and sorted in C."""

    __slots__ = ()

    def __new__(cls, path: str, root: str, mtime_ns: int, size: int) -> FoundFile:
        return tuple.__new__(cls, (path, root, mtime_ns, size))

    @property
    def path(self) -> str:
        value: str = self[0]
        return value

    @property
    def root(self) -> str:
        value: str = self[1]
        return value

    @property
    def mtime_ns(self) -> int:
        value: int = self[2]
        return value

    @property
    def size(self) -> int:
        value: int = self[3]
        return value

    def __repr__(self) -> str:
        return f"FoundFile({self.path!r}, {self.root!r}, {self.mtime_ns}, {self.size})"


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


def _generated_places(workspace: str | None, root: str,
                      generated: tuple[str, ...]) -> frozenset[str]:
    """Where engram's generated rule folders lie for a scan of `root`: each
    `install.native_rules` under the workspace root (found upward from `root` when the caller
    names none), every link resolved."""
    if workspace is None:
        from engram.workspace import find_root_str

        workspace = find_root_str(root)
    if workspace is None:
        return frozenset()
    return frozenset(os.path.realpath(os.path.join(workspace, folder)) for folder in generated)


def scan(roots: Iterable[tuple[str, str]], follow_symlinks: bool = False,
         allowed_parents: tuple[str, ...] = (),
         folders: dict[str, int] | None = None,
         workspace: str | None = None) -> tuple[list[FoundFile], list[Problem]]:
    """Every card file under the roots ((path, scope) pairs), in root order then path order.
    Reserved folders are skipped, and so are engram's generated rule folders at their place in
    the `workspace` root (found upward from each root when None); symlinks that lead outside
    the root (or the allowed parents) are skipped unless `follow_symlinks`."""
    found: list[FoundFile] = []
    problems: list[Problem] = []
    make = tuple.__new__  # FoundFile(...) without its Python __new__: once per card file
    # From the host definitions the hook already loaded: two dict lookups, no parse.
    rule_folders = host_registry.rule_folders()
    generated = host_registry.generated_folders()
    # Their last names: a folder is resolved and compared with the generated places only when
    # its name is one of these, not once per folder of the store.
    generated_names = frozenset(os.path.basename(folder) for folder in generated)
    for root, _scope in roots:
        places: frozenset[str] | None = None
        root_real = os.path.realpath(root)
        fences = (root_real,) + tuple(os.path.realpath(p) for p in allowed_parents)
        stack = [root]
        files: list[FoundFile] = []
        while stack:
            folder = stack.pop()
            try:
                if folders is not None:
                    folders[folder] = os.stat(folder).st_mtime_ns
                entries = list(os.scandir(folder))
            except OSError as exc:
                problems.append(Problem(folder, None, "error", f"cannot read folder: {exc.strerror}",
                                        "unreadable"))
                continue
            host_rule = host_rule_suffix(folder, rule_folders)
            for entry in entries:
                name = entry.name
                # The common case first, in as few calls as possible: a plain card file. A scan
                # runs on every hook call, once per card.
                is_card = name.endswith(CARD_SUFFIXES) or name.lower().endswith(CARD_SUFFIXES)
                if is_card and host_rule is not None and not name.lower().endswith(host_rule[0]):
                    try:
                        plain_file = entry.is_file()
                    except OSError:
                        plain_file = False
                    if plain_file:
                        problems.append(Problem(
                            entry.path, None, "warning",
                            f"not a rule file: {host_rule[1]} loads only *{host_rule[0]} from "
                            f"this folder, so engram does not route it either", "not-a-rule"))
                    continue
                try:
                    is_link = entry.is_symlink()
                    # Not a link: is_file() need not be told not to follow one.
                    if not is_link and is_card and entry.is_file():
                        stat = entry.stat()
                        files.append(make(FoundFile, (entry.path, root, stat.st_mtime_ns,
                                                      stat.st_size)))
                        continue
                    if not is_link and is_card and not entry.is_dir(follow_symlinks=False):
                        # A FIFO would hang the reader, a device never end: never read.
                        problems.append(Problem(entry.path, None, "warning", "not a regular file "
                                                "(a FIFO, device or socket); skipped", "special-file"))
                        continue
                    if is_link and not follow_symlinks:
                        target = os.path.realpath(entry.path)
                        if not any(_within(target, fence) for fence in fences):
                            problems.append(Problem(entry.path, None, "warning",
                                                    "symlink points outside the memory root; not "
                                                    "followed (set security.follow_symlinks true "
                                                    "to allow it)", "symlink"))
                            continue
                    if entry.is_dir():
                        if name in generated_names:
                            if places is None:
                                places = _generated_places(workspace, root, generated)
                            if os.path.realpath(entry.path) in places:
                                continue
                        if name not in RESERVED_DIRS and not (is_link and follow_symlinks
                                                              and name.startswith(".")):
                            stack.append(entry.path)
                        continue
                    if not is_card or not entry.is_file():
                        continue
                    stat = entry.stat()
                except OSError as exc:
                    problems.append(Problem(entry.path, None, "error",
                                            f"cannot read file: {exc.strerror}", "unreadable"))
                    continue
                files.append(FoundFile(entry.path, root, stat.st_mtime_ns, stat.st_size))
        # By path: string keys sort with C's string compare; whole tuples would go through
        # rich comparison, several times slower.
        files.sort(key=lambda found: found[0])
        found.extend(files)
    return found, problems


def content_hash(data: bytes) -> str:
    import xxhash

    return xxhash.xxh64_hexdigest(data)


def load_file(found: FoundFile, data: bytes | None = None) -> tuple[Card | None, list[Problem], str]:
    """One file as a card (or None) with its problems and content hash. Never raises."""
    from pathlib import PurePath

    from engram import formats, frontmatter

    path = found.path
    if data is None:
        if found.size > MAX_CARD_BYTES:
            return None, [Problem(path, None, "error", f"file is larger than {MAX_CARD_BYTES // 1024} "
                                  "KiB; split it into smaller cards", "too-large")], ""
        from engram.fileio import FileTooLarge, NotRegularFile, read_bounded

        try:
            data = read_bounded(path, MAX_CARD_BYTES)
        except NotRegularFile:
            return None, [Problem(path, None, "error", "not a regular file (a FIFO, device or "
                                  "socket); engram reads only plain card files", "special-file")], ""
        except FileTooLarge:
            return None, [Problem(path, None, "error", f"file is larger than {MAX_CARD_BYTES // 1024} "
                                  "KiB; split it into smaller cards", "too-large")], ""
        except OSError as exc:
            return None, [Problem(path, None, "error", f"cannot read file: {exc.strerror}",
                                  "unreadable")], ""
    digest = content_hash(data)
    if len(data) > MAX_CARD_BYTES:
        return None, [Problem(path, None, "error", f"file is larger than {MAX_CARD_BYTES // 1024} "
                              "KiB; split it into smaller cards", "too-large")], digest
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [Problem(path, line, "error", "file is not UTF-8 text; save it as UTF-8",
                              "encoding")], digest
    text = text.replace("\r\n", "\n")
    parsed = frontmatter.parse(text)
    if parsed.error:
        return None, _quoting_no_secret([Problem(path, parsed.error_line, "error", parsed.error,
                                                 "frontmatter")], text), digest
    try:
        card, notes = formats.build(PurePath(path), found.root, text, parsed, digest)
    except formats.CardError as exc:
        return None, _quoting_no_secret([Problem(path, line, "error", message, "invalid")
                                         for message, line in exc.problems]
                                        + _note_problems(path, exc.notes), text, parsed.data), digest
    from engram import secrets

    leaked = secrets.name_kind(card.id, os.path.basename(path))
    if leaked:
        # The id is what engram would list, record and name rule files after: a card whose id
        # or file name holds a secret is refused whole (reports redact the name).
        id_line = formats.key_line(text, "id") if "id" in parsed.data else 1
        return None, [Problem(path, id_line, "error",
                              f"the card's id or file name holds a value-shaped secret ({leaked}, "
                              "redacted); engram never routes, lists or stores it: rename it",
                              "secret")], digest
    return card, _quoting_no_secret(_note_problems(path, notes), text, parsed.data), digest


def _quoting_no_secret(problems: list[Problem], text: str,
                       fields: "dict[str, object] | None" = None) -> list[Problem]:
    """`problems` of a card file whose messages quote a value parsed from `text` (a bad
    `priority`, a dangling `depends_on`) with the pieces of each secret of the file hidden: a
    token YAML read from two lines (a folded scalar, two list items) is two words there, which
    no redaction of the message alone finds. The file is scanned only when a message quotes
    a word of it with a digit or a capital (a generated value's piece)."""
    if not problems:
        return problems
    import re

    quoted = [word for problem in problems
              for word in re.findall(r"[A-Za-z0-9_+/=.-]{4,}", problem.message)
              if word in text and not word.islower()
              and any(c.isdigit() or c.isupper() for c in word[1:])]
    if not quoted:
        return problems
    from engram import secrets

    # As the gate reads them: each item of a list on a line of its own (two items may be the
    # halves of a token).
    pieces = secrets.fragments(text + "".join(
        "\n" + "\n".join(map(str, value)) for value in (fields or {}).values()
        if isinstance(value, list)))
    if not pieces:
        return problems
    return [problem.replace(message=secrets.scrub(problem.message, pieces)) for problem in problems]


def _note_problems(path: str, notes: "Iterable[object]") -> list[Problem]:
    """Warnings from building a card: (message, line, code) tuples or plain guesses."""
    return [Problem(path, note[1], "warning", note[0], note[2]) if isinstance(note, tuple)
            else Problem(path, None, "warning", str(note), "guessed") for note in notes]


def _file_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(MAX_CARD_BYTES)
    except OSError:
        return ""


def id_line(path: str) -> int | None:
    """The line of a card file's `id:` key (for reports about its id), None when the id comes
    from the file name."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if line.startswith("id:") or line.startswith("id :"):
                    return number
                if number > 200:
                    break
    except OSError:
        pass
    return None


def _is_named_for(card: Card) -> bool:
    from pathlib import PurePath

    from engram.formats import default_id

    return default_id(PurePath(card.path)) == card.id


def _clash(group: list[Card], problems: list[Problem]) -> Card | None:
    """The card of one root that keeps an id several of its files claim: the one file whose
    name is the id; none when no file or several are so named (routing a draft that happens
    to sort first would send the wrong text). Every file of the clash is reported."""
    named = [card for card in group if _is_named_for(card)]
    winner = named[0] if len(named) == 1 else None
    where = {card.path: f"{card.path}:{id_line(card.path) or 1}" for card in group}
    for card in group:
        others = ", ".join(where[c.path] for c in group if c is not card)
        if card is winner:
            problems.append(Problem(card.path, id_line(card.path), "warning",
                                    f"id {card.id!r} is also claimed by {others}; this file is "
                                    "routed (its name is the id)", "duplicate-id"))
        else:
            verdict = (f"{winner.path} is routed (its name is the id)" if winner is not None
                       else "none of them is routed until one file keeps the id")
            problems.append(Problem(card.path, id_line(card.path), "error",
                                    f"duplicate id {card.id!r} (also in {others}); {verdict}; "
                                    "rename the others", "duplicate-id"))
    return winner


def resolve(cards: list[Card]) -> tuple[list[Card], list[Problem]]:
    """Settle duplicate ids (the first root wins: workspace before config roots before global;
    within a root, see `_clash`), then drop cards whose depends_on is dangling or cyclic,
    reporting each."""
    problems: list[Problem] = []
    by_id: dict[str, Card] = {}
    groups: dict[str, list[Card]] = {}
    for card in cards:
        groups.setdefault(card.id, []).append(card)
    for card_id, group in groups.items():
        first = [card for card in group if card.root == group[0].root]
        kept = first[0] if len(first) == 1 else _clash(first, problems)
        if kept is not None:
            by_id[card_id] = kept
        for card in group:
            if card.root == group[0].root:
                continue
            problems.append(Problem(card.path, None, "warning", (
                f"id {card.id!r} is also defined in {kept.path}, which wins" if kept is not None
                else f"id {card.id!r} is also claimed in {card_id!r}'s first root "
                     f"({group[0].root}), so this card is not routed"), "shadowed"))
    known = {card.id for card in cards}
    _drop_dangling(by_id, known, problems)
    for cycle in _cycles(by_id):
        for card_id in cycle:
            if card_id not in by_id:
                continue  # in two cycles (a self-loop and a longer one): dropped once
            dropped = by_id.pop(card_id)
            problems.append(Problem(dropped.path, None, "error",
                                    "depends_on forms a cycle: " + " -> ".join(cycle + [cycle[0]]),
                                    "cyclic-dependency"))
    # Cards that need a card dropped for a cycle cannot be delivered whole either.
    _drop_dangling(by_id, known, problems)
    kept_cards = [card for card in cards if by_id.get(card.id) is card]
    return kept_cards, problems


def _drop_dangling(by_id: dict[str, Card], known: set[str], problems: list[Problem]) -> None:
    """Drop (and report) cards whose depends_on names a card that is not routable, until none
    is left: a card whose prerequisite was skipped is skipped too."""
    changed = True
    while changed:
        changed = False
        for card_id, card in list(by_id.items()):
            missing = [dep for dep in card.depends_on if dep not in by_id]
            if not missing:
                continue
            unknown = [dep for dep in missing if dep not in known]
            skipped = [dep for dep in missing if dep in known]
            parts = []
            if unknown:
                parts.append(f"depends_on names unknown card(s): {', '.join(unknown)}")
            if skipped:
                parts.append(f"depends_on names card(s) skipped for errors: {', '.join(skipped)}; "
                             "fix those first")
            problems.extend(_quoting_no_secret([Problem(card.path, None, "error", "; ".join(parts),
                                                        "dangling-dependency")],
                                               _file_text(card.path), {"": list(card.depends_on)}))
            del by_id[card_id]
            changed = True


def _cycles(by_id: dict[str, Card]) -> list[list[str]]:
    state: dict[str, int] = {}
    cycles: list[list[str]] = []
    for start in sorted(by_id):
        if state.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[str] = []
        while stack:
            node, position = stack.pop()
            if position == 0:
                if state.get(node) == 1:
                    cycle = path[path.index(node):]
                    if cycle and cycle not in cycles:
                        cycles.append(cycle)
                    continue
                if state.get(node) == 2:
                    continue
                state[node] = 1
                path.append(node)
            deps = [d for d in by_id[node].depends_on if d in by_id]
            if position < len(deps):
                stack.append((node, position + 1))
                stack.append((deps[position], 0))
            else:
                state[node] = 2
                path.pop()
    return cycles


def dependency_order(cards: list[Card]) -> list[str]:
    """Ids with every prerequisite before the cards that need it (stable by id otherwise)."""
    by_id = {card.id: card for card in cards}
    order: list[str] = []
    seen: set[str] = set()
    # An explicit stack, not recursion: a chain of thousands of cards is a hostile repository's
    # cheapest way past the recursion limit, and it would fail every hook of the workspace.
    for start in sorted(by_id):
        if start in seen:
            continue
        seen.add(start)
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            card_id, position = stack.pop()
            deps = by_id[card_id].depends_on
            while position < len(deps) and (deps[position] in seen or deps[position] not in by_id):
                position += 1
            if position < len(deps):
                stack.append((card_id, position + 1))
                seen.add(deps[position])
                stack.append((deps[position], 0))
            else:
                order.append(card_id)
    return order
