"""`engram lint`: every problem the index found, plus checks that need the cards whole: globs
that can never match (or match everything), globs that match nothing in the tree, secrets in
bodies and bodies that imitate engram's own framing."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Iterable

from engram import globs, render
from engram.card import Card
from engram.commands.new import PLACEHOLDER
from engram.problems import Problem

if TYPE_CHECKING:
    from engram.index import CompiledIndex
    from engram.workspace import Workspace

MAX_TREE_FILES: Final = 50_000
_SKIP_TREE_DIRS: Final = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__",
                                    ".tox", "dist", "build", ".mypy_cache", ".pytest_cache"})


_GLOB_KEY_LINE: Final = re.compile(r"^\s*(?:applies_to|globs|paths|applyTo)\s*:")


def _glob_line(card: Card, pattern: str) -> int | None:
    """The line that holds `pattern`, else the line of the glob key."""
    from engram import index_rows

    try:
        lines = index_rows.read_text(card.path).split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    key_line = next((n for n, line in enumerate(lines, 1) if _GLOB_KEY_LINE.match(line)), None)
    start = key_line or 1
    for number, line in enumerate(lines[start - 1:], start):
        if pattern in line:
            return number
    return key_line


def tree_files(root: Path) -> list[str] | None:
    """Relative paths of files in the workspace tree (None when it is too large to check)."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_TREE_DIRS]
        rel = os.path.relpath(folder, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in files:
            found.append(prefix + name)
            if len(found) > MAX_TREE_FILES:
                return None
    return found


def check_cards(cards: Iterable[Card], tree: list[str] | None) -> list[Problem]:
    import re as regex

    problems: list[Problem] = []
    for card in cards:
        first = len(problems)
        for pattern in card.applies_to:
            line = _glob_line(card, pattern)
            found = globs.lint(pattern)
            for severity, message in found:
                problems.append(Problem(card.path, line, severity, message, "glob"))
            if found or tree is None:
                continue
            compiled = regex.compile(globs.translate(pattern))
            if not any(compiled.match(path) for path in tree):
                problems.append(Problem(card.path, line, "warning",
                                        f"glob {pattern!r} matches no file in the workspace now",
                                        "glob-unmatched"))
        problems.extend(_framing_problems(card))
        if card.body.strip() == PLACEHOLDER:
            problems.append(Problem(card.path, card.body_line, "warning",
                                    "the body is still the placeholder `engram new` wrote; write "
                                    "the rule", "placeholder"))
        if any(render.is_forged(line) for line in render.break_lines(card.title + "\n" + card.card)):
            problems.append(Problem(card.path, None, "error",
                                    "the title or card line imitates engram's own framing", "framing"))
        leaks = _secret_problems(card)
        if leaks:
            # A message quoting a field (a glob) shows a token YAML read from two lines (a
            # folded value, two list items) as two words: hide each piece of the card's secrets.
            from engram import secrets

            pieces = secrets.fragments(secrets.card_text(card) + "\n" + secrets.frontmatter(card))
            problems[first:] = [p.replace(message=secrets.scrub(p.message, pieces))
                                for p in problems[first:]]
        problems.extend(leaks)
    return problems


def _framing_problems(card: Card) -> list[Problem]:
    """Body lines that imitate engram's framing, at their line in the file. A line break other
    than `\n` (`\r`, U+2028...) starts a line for a reader, so it does here; the file line is
    the `\n` line it sits in."""
    found = []
    quoted: list[str] | None = None
    for number, file_line in enumerate(card.body.split("\n")):
        for line in render.break_lines(file_line):
            if render.is_forged(line):
                quoted = _redacted_lines(card.body) if quoted is None else quoted
                forged = [q for q in render.break_lines(quoted[number]) if render.is_forged(q)]
                shown = " ".join((forged or [quoted[number]])[0].split())[:40]
                found.append(Problem(card.path, card.body_line + number, "error",
                                     f"the body imitates engram's own framing ({shown!r}); engram "
                                     "quotes it when injecting, but reword it", "framing"))
                break
    return found


def _redacted_lines(body: str) -> list[str]:
    """The body's `\n` lines with every secret redacted, found in the body as a whole: a
    line quoted and cut short must not show part of a token, nor the half of one wrapped over
    two lines (which neither line shows the detector alone)."""
    from engram import secrets

    return secrets.redact_parts(body.split("\n"))


def _secret_problems(card: Card) -> list[Problem]:
    """Every secret in the card's file, at its line in the file: the title and one-line card
    block injection as much as the body does, and a secret anywhere in the file is in Git."""
    from engram import index_rows, secrets

    try:
        text, first_line = index_rows.read_text(card.path), 1
    except (OSError, UnicodeDecodeError):  # changed or gone since indexing: the body we have
        text, first_line = card.body, card.body_line
    found = []
    for hit in secrets.find_secrets(text):
        found.append(Problem(card.path, first_line + hit.line - 1, "error",
                             f"a value-shaped secret ({hit.kind}, redacted); engram never "
                             "injects a card whose title, card line or body holds one: remove it",
                             "secret"))
    if not found:
        found.extend(_parsed_secret(card, text if first_line == 1 else ""))
    if not found and secrets.has_secrets(secrets.card_text(card)):
        # Cut between two fields (the title and the card line, or the title and the body,
        # which a hook's answer shows one after the other): the gate reads them joined.
        key = re.search(r"^title[ \t]*:", text, re.MULTILINE) if first_line == 1 else None
        found.append(Problem(card.path, text.count("\n", 0, key.start()) + 1 if key else 1,
                             "error", "a value-shaped secret (redacted) cut between the title "
                             "and the card line or body, which engram shows one after the other; "
                             "engram never injects the card: remove it", "secret"))
    if not found:
        for kind, piece in secrets.edge_fragments(card):
            at = text.find(piece) if first_line == 1 else -1
            found.append(Problem(card.path, text.count("\n", 0, at) + 1 if at >= 0 else None,
                                 "error", f"the card starts or ends with what may be a piece of a "
                                 f"value-shaped secret ({kind}, redacted) that another card shown "
                                 "in a later answer could complete; engram never injects the card: "
                                 "remove it (or end the sentence)", "secret"))
    return found


def _parsed_secret(card: Card, text: str) -> list[Problem]:
    """A secret the gate found in the parsed frontmatter that the file's text does not show
    (a YAML escape, `"\x67hp_..."`, or a folded or joined scalar), at its field's line."""
    from engram import secrets

    for field in secrets.CARD_FIELDS:
        value = getattr(card, field)
        hits = secrets.find_secrets("\n".join(value) if isinstance(value, tuple) else value)
        if hits:
            key = re.search(rf"^{field}[ \t]*:", text, re.MULTILINE)
            line = text.count("\n", 0, key.start()) + 1 if key else 1
            return [Problem(card.path, line, "error",
                            f"a value-shaped secret ({hits[0].kind}, redacted) in `{field}` once "
                            "its YAML is read (an escape or a folded line hides it in the file); "
                            "engram never injects the card: remove it", "secret")]
    return []


_ID_LINE: Final = re.compile(r"^id\s*:", re.MULTILINE)
_DEPENDS_LINE: Final = re.compile(r"^depends_on\s*:", re.MULTILINE)
_LINE_IN_MESSAGE: Final = re.compile(r"\bline (\d+)\b")
_NAMED: Final = re.compile(r"card\(s\)[^:]*: ([^;]+)|cycle: (.+)$")


def _file_lines(path: str) -> list[str] | None:
    from engram import index_rows

    try:  # bounded and regular files only: a FIFO reported as a problem must not hang lint
        return index_rows.read_text(path).split("\n")
    except (OSError, UnicodeDecodeError):
        return None


def locate(problem: Problem) -> Problem:
    """The problem with a line: checks that see every card at once (duplicate ids, depends_on)
    report a file only; the line is the `id:` or `depends_on:` entry that causes it."""
    if problem.line is not None or os.path.isdir(problem.path):
        return problem
    lines = _file_lines(problem.path)
    if lines is None:
        return problem
    line = 1
    mentioned = _LINE_IN_MESSAGE.search(problem.message)
    if mentioned:
        line = int(mentioned.group(1))
    elif problem.code in ("duplicate-id", "shadowed"):
        line = next((n for n, text in enumerate(lines, 1) if _ID_LINE.match(text)), 1)
    elif problem.code in ("dangling-dependency", "cyclic-dependency"):
        key = next((n for n, text in enumerate(lines, 1) if _DEPENDS_LINE.match(text)), None)
        line = key or 1
        named = _NAMED.search(problem.message)
        ids = [part.strip() for part in (named.group(1) or named.group(2)).replace("->", ",")
               .split(",")] if named else []
        for number, text in enumerate(lines[(key or 1) - 1:], key or 1):
            if number > (key or 1) and not text[:1].isspace() and not text.startswith("-"):
                break
            if any(re.search(rf"(?<![\w.-]){re.escape(i)}(?![\w.-])", text) for i in ids if i):
                line = number
                break
    return Problem(problem.path, line, problem.severity, problem.message, problem.code)


def budget_problems(cards: Iterable[Card], settings: dict[str, Any], hosts: list[str]) -> list[Problem]:
    """A card larger than a linked host's budget is never sent there in full."""
    from engram import card_size

    found = []
    for card in cards:
        for fit in card_size.fits(card, settings, hosts):
            if not fit.fits:
                found.append(Problem(
                    card.path, 1, "warning",
                    f"the body is {fit.size:,} {fit.unit}, larger than {fit.host}'s budget of "
                    f"{fit.limit:,} {fit.unit}: {fit.host} only ever gets its one-line card; split "
                    "it into smaller cards (engram new ID)", "over-budget"))
    return found


def lint_index(compiled: "CompiledIndex", tree_root: Path | None, settings: dict[str, Any] | None = None,
               hosts: list[str] | None = None) -> list[Problem]:
    tree = tree_files(tree_root) if tree_root is not None else None
    cards = compiled.all_cards()
    problems = list(compiled.problems) + check_cards(cards, tree)
    if hosts:
        problems += budget_problems(cards, settings or {}, hosts)
    problems = [locate(problem) for problem in problems]
    return sorted(set(problems), key=lambda p: (p.path, p.line or 0, p.severity, p.message))


def report_workspace(workspace: "Workspace", inspected: Iterable[Any] | None = None,
                     ) -> tuple[list[Problem], int]:
    """(problems, number of routable cards) for the workspace; `inspected`: see
    card_size.linked_hosts."""
    from engram import card_size, index

    compiled = index.load_or_build(workspace)
    hosts = card_size.linked_hosts(workspace.root, inspected)
    return lint_index(compiled, workspace.root, dict(workspace.settings), hosts), \
        len(compiled.all_cards())


def report_roots(roots: list[Path]) -> tuple[list[Problem], int]:
    from engram import index

    compiled = index.load_roots(roots)
    return lint_index(compiled, None), len(compiled.all_cards())


def lint_workspace(workspace: "Workspace", inspected: Iterable[Any] | None = None) -> list[Problem]:
    return report_workspace(workspace, inspected)[0]


def lint_roots(roots: list[Path]) -> list[Problem]:
    return report_roots(roots)[0]
