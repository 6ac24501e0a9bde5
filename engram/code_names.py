"""Names in code: what written code uses, matched against the names a card gives as code. A
file an agent writes code into that calls `useTranslation` or imports `date-fns` is working
with what the card naming them is about, whatever the file is called or the prompt says. Only
what is written counts, not what is read: a file uses many conventions, the code being written
the ones that matter now. Pure: text in, names out
(what an event writes comes from `engram.event`, the imported files' existence from
`engram.query`).

A card gives two kinds of names, lowercased, as index keys:
  - code names, matched against a file's identifiers, hyphenated tokens and imports:
    identifiers shaped like code, not like words (an inner capital: `useTranslation`,
    `TaskCard`; an underscore or a `$`: `task_one`, `$transaction`; at least 4 characters),
    and the hyphenated tokens it writes in backticks (`aria-label`, `bg-surface`);
  - package names, matched only against what a file imports: the lowercase words and
    hyphenated or scoped names of its tags, code spans and prose (`zod`, `react-i18next`,
    `@tanstack/react-query`): "path" in a card is not `import path`, and a word in passing is
    not a package unless a file imports it.
The written code's relative imports are resolved to workspace paths by the caller: an import
of a module a card's `applies_to` claims (`../auth/policy` -> `api/src/auth/policy.ts`) is one
piece of evidence for that card, like one of its names (the router needs two)."""

from __future__ import annotations

import posixpath

from engram.text import WordChars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

# Index keys start with a backtick, which the tokenizer never yields: no prompt word reaches
# them. Package names add a "!", which no name starts with.
KEY_PREFIX: Final = "`"
PACKAGE_PREFIX: Final = "`!"
MIN_IDENTIFIER: Final = 4
# Bounded work per file: the first part of it, and of its names and imports.
MAX_CODE_CHARS: Final = 64 * 1024
MAX_NAMES: Final = 512
MAX_IMPORTS: Final = 64
# Extensions tried for an import written without one (`../auth/policy`), in the order
# bundlers try them, and the folder's index file.
IMPORT_SUFFIXES: Final = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".vue", ".svelte",
                          "/index.ts", "/index.tsx", "/index.js", "/index.jsx")

# The files whose written code routes: program source, not data or configuration.
SOURCE_SUFFIXES: Final = (
    ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".vue", ".svelte", ".astro",
    ".py", ".pyi", ".go", ".rs", ".java", ".kt", ".kts", ".scala", ".rb", ".php", ".cs",
    ".swift", ".dart", ".ex", ".exs", ".c", ".h", ".cc", ".cpp", ".hpp", ".m", ".mm", ".lua",
    ".sh", ".bash", ".zsh")

# What a card gives, read when cards are compiled (the hook reads code with str methods below:
# importing `re` costs a path event a third of its instructions).
_CARD_PATTERNS: dict[str, Any] = {}


def _card_pattern(name: str) -> Any:
    if not _CARD_PATTERNS:
        import re

        _CARD_PATTERNS.update(
            identifier=re.compile(r"[$A-Za-z_][$\w]*"),
            hyphenated=re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])"),
            code_span=re.compile(r"`([^`\n]{1,200})`"),
            package=re.compile(r"@?[a-z0-9][a-z0-9._-]*(?:/[a-z0-9][a-z0-9._-]*)?"),
            prose_package=re.compile(r"(?<![\w@/.-])@?[a-z0-9][a-z0-9._]*(?:-[a-z0-9._]+)+"
                                     r"(?:/[a-z0-9][a-z0-9._-]*)?(?![\w/-])"))
    return _CARD_PATTERNS[name]


_ASCII_LETTERS: Final = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER_OR_DIGIT: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_UPPER: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_IDENTIFIER_START: Final = frozenset(_ASCII_LETTERS + "$_")
_HYPHENATED_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_WORD_BYTES: Final = frozenset((_ASCII_LETTERS + "0123456789_").encode("ascii"))
# Word characters (`\w`) with `$`, and with `-`: str.translate tables keeping them and turning
# every other character into a space (no word character is whitespace), for ASCII as bytes.
_DOLLAR_WORDS: Final = WordChars("$")
_HYPHEN_WORDS: Final = WordChars("-")
_DOLLAR_BYTES: Final = bytes(c if c in _WORD_BYTES or c == 36 else 32 for c in range(256))
_HYPHEN_BYTES: Final = bytes(c if c in _WORD_BYTES or c == 45 else 32 for c in range(256))


def _runs(text: str, table: WordChars, ascii_table: bytes) -> list[str]:
    """The longest runs of the characters `table` keeps, in order."""
    if text.isascii():
        return text.encode("ascii").translate(ascii_table).decode("ascii").split()
    return text.translate(table).split()


def identifiers(text: str) -> list[str]:
    r"""What the regex `[$A-Za-z_][$\w]*` finds, in order: in each run of `$` and word
    characters, the rest of it from its first ASCII letter, `$` or `_`."""
    found: list[str] = []
    for run in _runs(text, _DOLLAR_WORDS, _DOLLAR_BYTES):
        if run[0] in _IDENTIFIER_START:
            found.append(run)
            continue
        for position, char in enumerate(run):
            if char in _IDENTIFIER_START:
                found.append(run[position:])
                break
    return found


def hyphenated(text: str) -> list[str]:
    r"""What `(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])` finds, in order: the runs of
    word characters and `-` that are ASCII lowercase letters and digits in groups joined by
    single hyphens, the first starting with a letter (a match must span its whole run)."""
    return [run for run in _runs(text, _HYPHEN_WORDS, _HYPHEN_BYTES)
            if "-" in run and "a" <= run[0] <= "z" and run[-1] != "-" and "--" not in run
            and _HYPHENATED_CHARS.issuperset(run)]


def code_shaped(token: str) -> bool:
    """An identifier no English word looks like: an inner capital after a lowercase letter or
    digit, or an underscore or `$` inside it, and long enough to be specific."""
    if len(token) < MIN_IDENTIFIER:
        return False
    if "$" in token or "_" in token.strip("_"):
        return any(c.isalpha() for c in token)
    if token.islower() or token.isupper():
        return False
    # An ASCII lowercase letter or digit followed by an ASCII capital (`[a-z0-9][A-Z]`).
    return any(token[i] in _UPPER and token[i - 1] in _LOWER_OR_DIGIT
               for i in range(1, len(token)))


def package_name(specifier: str, python: bool = False) -> str:
    """The package an import specifier names ("" for a relative one): `date-fns/locale` ->
    `date-fns`; `@tanstack/react-query/devtools` -> `@tanstack/react-query`; `node:fs` -> `fs`;
    Python's `sqlalchemy.orm` -> `sqlalchemy`."""
    spec = specifier.strip().lower()
    if not spec or spec.startswith((".", "/")):
        return ""
    if python:
        return spec.split(".")[0]
    if spec.startswith("node:"):
        spec = spec[5:]
    parts = spec.split("/")
    if spec.startswith("@"):
        return "/".join(parts[:2]) if len(parts) > 1 and parts[1] else ""
    return parts[0]


def card_names(title: str, card: str, body: str, tags: tuple[str, ...] = ()) -> set[str]:
    """The index keys of the names a card gives as code (see the module docstring)."""
    text = "\n".join((title, card, body))
    code = {token.lower() for token in _card_pattern("identifier").findall(text)
            if code_shaped(token)}
    packages: set[str] = set()
    for span in _card_pattern("code_span").findall(text) + list(tags):
        span = span.strip()
        code.update(_card_pattern("hyphenated").findall(span))
        if _card_pattern("package").fullmatch(span):  # npm and Python package names are lowercase
            packages.add(package_name(span))
    packages.update(package_name(token.rstrip("."))
                    for token in _card_pattern("prose_package").findall(text))
    return {KEY_PREFIX + name for name in code} | \
        {PACKAGE_PREFIX + name for name in packages if len(name) >= 2}


def imports(code: str) -> list[tuple[str, bool]]:
    """(specifier, whether it is Python's) for each import of JavaScript/TypeScript and Python
    code, in order, each once; Python's relative imports as `.`-prefixed module paths."""
    # Only the lines that can hold an import are searched.
    lines = [line for line in code.splitlines()
             if "import" in line or "from" in line or "require" in line]
    found = [(specifier, False) for specifier in _js_imports("\n".join(lines))]
    found += [(specifier, True) for specifier in map(_python_import, lines) if specifier is not None]
    return list(dict.fromkeys(found))[:MAX_IMPORTS]


_KEYWORDS: Final = ("from", "import", "require")


def _js_imports(text: str) -> list[str]:
    r"""What the regex
    `(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])([^"'\n]{1,200})\1` finds
    (group 2), in order, without overlaps."""
    found: list[str] = []
    starts = sorted(at for keyword in _KEYWORDS for at in _occurrences(text, keyword))
    done = 0  # where the last match ended: a match found inside it is not the regex's
    for at in starts:
        if at < done or (at and _is_word(text[at - 1])):
            continue
        keyword = "from" if text.startswith("from", at) else \
            "import" if text.startswith("import", at) else "require"
        position = _skip_space(text, at + len(keyword))
        if keyword != "from":
            if text.startswith("(", position):
                position = _skip_space(text, position + 1)
            elif keyword == "require":
                continue
        quote = text[position:position + 1]
        if quote not in ("'", '"'):
            continue
        end = position + 1
        while end < len(text) and end - position <= 200 and text[end] not in "'\"\n":
            end += 1
        if end - position - 1 < 1 or end - position - 1 > 200 or text[end:end + 1] != quote:
            continue
        found.append(text[position + 1:end])
        done = end + 1
    return found


def _occurrences(text: str, word: str) -> list[int]:
    found: list[int] = []
    at = text.find(word)
    while at >= 0:
        found.append(at)
        at = text.find(word, at + 1)
    return found


def _skip_space(text: str, position: int) -> int:
    r"""The position after the whitespace (`\s*`) from `position`."""
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _is_word(char: str) -> bool:
    r"""What `\w` matches in a str pattern."""
    return char.isalnum() or char == "_"


def _python_import(line: str) -> str | None:
    r"""The module a Python import line names, as the regex
    `^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import\b|import[ \t]+([\w.]+))` reads one
    line: group 1 or group 2; '' for `from  import` (no module between two blanks)."""
    start = _skip(line, 0, " \t")
    if line.startswith("from", start):
        blank = start + 4
        module = _skip(line, blank, " \t")
        if module == blank:
            return None
        after = _skip_word(line, module)
        before_import = _skip(line, after, " \t")
        if before_import > after > module and _import_word(line, before_import):
            return line[module:after]
        # The regex backtracks: with nothing between two of the blanks, `import` follows them.
        if module - blank >= 2 and _import_word(line, module):
            return ""
        return None
    if line.startswith("import", start):
        blank = start + 6
        module = _skip(line, blank, " \t")
        after = _skip_word(line, module)
        if module > blank and after > module:
            return line[module:after]
    return None


def _skip(text: str, position: int, chars: str) -> int:
    while position < len(text) and text[position] in chars:
        position += 1
    return position


def _skip_word(text: str, position: int) -> int:
    r"""The position after the word characters and dots (`[\w.]*`) from `position`."""
    while position < len(text) and (text[position] == "." or _is_word(text[position])):
        position += 1
    return position


def _import_word(text: str, position: int) -> bool:
    r"""`import\b` at `position`."""
    end = position + 6
    return text.startswith("import", position) and (end == len(text) or not _is_word(text[end]))


def file_evidence(code: str, relative_path: str) -> tuple[list[str], list[list[str]]]:
    """`file_names` and `imported_paths` of one file, its imports found once."""
    code = code[:MAX_CODE_CHARS]
    found = imports(code)
    return file_names(code, found), imported_paths(code, relative_path, found)


def file_names(code: str, found: list[tuple[str, bool]] | None = None) -> list[str]:
    """The index keys of what a file's code uses: the packages it imports (as code and as
    package names), its code-shaped identifiers and hyphenated tokens; at most MAX_NAMES."""
    code = code[:MAX_CODE_CHARS]
    names: dict[str, None] = {}
    for specifier, python in imports(code) if found is None else found:
        name = package_name(specifier, python)
        if name:
            names[PACKAGE_PREFIX + name] = None
            names[KEY_PREFIX + name] = None
    # Each distinct token once (dict.fromkeys runs in C and keeps the file's order).
    tokens = [token for token in dict.fromkeys(identifiers(code)) if code_shaped(token)]
    for token in tokens + list(dict.fromkeys(hyphenated(code.lower()))):
        names[KEY_PREFIX + token.lower()] = None
        if len(names) >= MAX_NAMES:
            break
    return list(names)


def imported_paths(code: str, relative_path: str,
                   found: list[tuple[str, bool]] | None = None) -> list[list[str]]:
    """For each relative import of the file at `relative_path` ('/'-separated, relative to the
    workspace root), the workspace paths it may name, in the order a bundler or Python tries
    them (the caller keeps the first that exists). Imports that climb out of the workspace
    are dropped."""
    folder = posixpath.normpath(posixpath.dirname(relative_path) or ".")
    out: list[list[str]] = []
    for specifier, python in imports(code[:MAX_CODE_CHARS]) if found is None else found:
        if not python and specifier.startswith(("./", "../")):
            base = posixpath.normpath(posixpath.join(folder, specifier))
            candidates = [base] + [base + suffix for suffix in IMPORT_SUFFIXES]
        elif python and specifier.startswith("."):
            # Python: one dot is the file's own package, each further dot one level up.
            dots = len(specifier) - len(specifier.lstrip("."))
            package = folder
            for _ in range(dots - 1):
                package = posixpath.dirname(package)
            module = specifier[dots:].replace(".", "/")
            base = posixpath.normpath(posixpath.join(package, module) if module else package)
            candidates = [base + ".py", base + "/__init__.py"]
        else:
            continue
        if base.startswith("../") or base in (".", "..", "") or base.startswith("/"):
            continue
        out.append(candidates)
    return out
