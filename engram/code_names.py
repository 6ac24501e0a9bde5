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
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

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

_IDENTIFIER = re.compile(r"[$A-Za-z_][$\w]*")
_INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]")
_HYPHENATED = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])")
_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_PACKAGE = re.compile(r"@?[a-z0-9][a-z0-9._-]*(?:/[a-z0-9][a-z0-9._-]*)?")
_PROSE_PACKAGE = re.compile(r"(?<![\w@/.-])@?[a-z0-9][a-z0-9._]*(?:-[a-z0-9._]+)+"
                            r"(?:/[a-z0-9][a-z0-9._-]*)?(?![\w/-])")
_JS_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)(["'])([^"'\n]{1,200})\1""")
_PY_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import\b|import[ \t]+([\w.]+))",
                        re.MULTILINE)


def code_shaped(token: str) -> bool:
    """An identifier no English word looks like: an inner capital after a lowercase letter or
    digit, or an underscore or `$` inside it, and long enough to be specific."""
    if len(token) < MIN_IDENTIFIER:
        return False
    if "$" in token or "_" in token.strip("_"):
        return any(c.isalpha() for c in token)
    if token.islower() or token.isupper():
        return False
    return _INNER_CAPITAL.search(token) is not None


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
    code = {token.lower() for token in _IDENTIFIER.findall(text) if code_shaped(token)}
    packages: set[str] = set()
    for span in _CODE_SPAN.findall(text) + list(tags):
        span = span.strip()
        code.update(_HYPHENATED.findall(span))
        if _PACKAGE.fullmatch(span):  # npm and Python package names are lowercase
            packages.add(package_name(span))
    packages.update(package_name(token.rstrip(".")) for token in _PROSE_PACKAGE.findall(text))
    return {KEY_PREFIX + name for name in code} | \
        {PACKAGE_PREFIX + name for name in packages if len(name) >= 2}


def imports(code: str) -> list[tuple[str, bool]]:
    """(specifier, whether it is Python's) for each import of JavaScript/TypeScript and Python
    code, in order, each once; Python's relative imports as `.`-prefixed module paths."""
    # Only the lines that can hold an import are searched: the regexes are the costly part.
    lines = "\n".join(line for line in code.splitlines()
                      if "import" in line or "from" in line or "require" in line)
    found = [(match.group(2), False) for match in _JS_IMPORT.finditer(lines)]
    found += [(match.group(1) or match.group(2), True) for match in _PY_IMPORT.finditer(lines)]
    return list(dict.fromkeys(found))[:MAX_IMPORTS]


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
    tokens = [token for token in dict.fromkeys(_IDENTIFIER.findall(code)) if code_shaped(token)]
    for token in tokens + list(dict.fromkeys(_HYPHENATED.findall(code.lower()))):
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
