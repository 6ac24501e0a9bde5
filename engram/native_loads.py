"""Which cards a host already loads by itself, so its hook never sends them a second time.

A host reads some files of the workspace on its own: Claude Code its CLAUDE.md and
`.claude/rules/**/*.md`, Cursor `.cursor/rules/**/*.mdc`, Codex and OpenCode AGENTS.md, Gemini
GEMINI.md. When such a file is also a memory card (a rule folder listed under `roots`), or a
card was imported from it and the file still holds the original (not `engram import
--replace`'s pointer), the model of that host would read the rule twice. Such a card is left to
the host and routed to the others only.

The globs live in each host's definition (`runtime.loads_natively`, relative to the workspace;
an entry starting with `!` takes files back out). Hot path: a path that cannot match any glob
(it lacks every glob's literal head or tail: `.claude/rules/`, `CLAUDE.md`) is answered with two
string tests, so the common card (under the memory folder) costs no `re` or `engram.globs`; the
others compile the globs once per process. The source files' state is checked by one stat (and a
small read only for a file short enough to be a pointer)."""

from __future__ import annotations

import os

from engram import fileio, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, Mapping

# What `engram import --replace` leaves in place of the file: short, naming the memory folder.
POINTER_MAX_BYTES: Final = 1000
POINTER_MARK: Final = paths.MEMORY_DIR_NAME

_compiled: dict[tuple[str, ...], tuple[Any, Any]] = {}
_literals: dict[tuple[str, ...], list[tuple[str, str]]] = {}
# Characters with a meaning in a glob (wildcards, classes, braces, extglob, escapes): a literal
# head or tail stops at the first of them.
_GLOB_SPECIAL: Final = frozenset("*?[]{}()|@+!\\")
# Among a host's patterns (`patterns_of`): the host expands `@path` imports in the files it
# loads (`runtime.loads_imports`), so a file one of them imports is loaded too.
IMPORTS: Final = "@imports"
# Claude Code follows imports up to 5 hops; a file read for its imports is bounded, and so is
# the number of files one check reads.
IMPORT_HOPS: Final = 5
MAX_IMPORTING_BYTES: Final = 256 * 1024
MAX_IMPORTING_FILES: Final = 64
_imports_of: dict[tuple[str, int, int, int], list[str]] = {}


def _literal_ends(pattern: str) -> tuple[str, str]:
    """(head, tail): text every path the glob matches starts and ends with. Conservative: both
    stop at any glob character, a doubled slash (the glob collapses it) ends them, and the
    tail loses its leading slash (`**/CLAUDE.md` also matches `CLAUDE.md`)."""
    head_end = next((i for i, c in enumerate(pattern) if c in _GLOB_SPECIAL), len(pattern))
    tail_start = next((i + 1 for i in range(len(pattern) - 1, -1, -1)
                       if pattern[i] in _GLOB_SPECIAL), 0)
    head, tail = pattern[:head_end], pattern[tail_start:]
    head = head.split("//", 1)[0]
    tail = tail.rsplit("//", 1)[-1].lstrip("/")
    if head_end == len(pattern):  # no glob character: the path itself (unless collapsed)
        return ("", "") if "//" in pattern else (pattern, pattern)
    return head, tail


def _may_match(patterns: tuple[str, ...], relative: str) -> bool:
    """False only when no include glob can match `relative` (a quick necessary condition)."""
    ends = _literals.get(patterns)
    if ends is None:
        ends = _literals[patterns] = [_literal_ends(p) for p in _workspace_globs(patterns)
                                      if not p.startswith("!")]
    return any(relative.startswith(head) and relative.endswith(tail) for head, tail in ends)


def _matchers(patterns: tuple[str, ...]) -> tuple[Any, Any]:
    """(include regex, exclude regex or None) for a host's globs, compiled once."""
    found = _compiled.get(patterns)
    if found is None:
        import re

        from engram import globs  # only for a host whose cards routed: a few regexes

        workspace = _workspace_globs(patterns)
        include = [globs.translate(p) for p in workspace if not p.startswith("!")]
        exclude = [globs.translate(p[1:]) for p in workspace if p.startswith("!")]
        found = (re.compile("|".join(include)) if include else None,
                 re.compile("|".join(exclude)) if exclude else None)
        _compiled[patterns] = found
    return found


def patterns_of(host_def: Mapping[str, Any]) -> tuple[str, ...]:
    """The host's `runtime.loads_natively` globs (workspace-relative), then the files it loads
    from its own folder in every project (`runtime.loads_natively_user`: `~/.claude/CLAUDE.md`
    or `$CLAUDE_CONFIG_DIR/CLAUDE.md`) as absolute paths, read where the host reads them now."""
    runtime = host_def.get("runtime") or {}
    patterns = tuple(runtime.get("loads_natively") or ())
    if runtime.get("loads_imports") is True and patterns:
        patterns += (IMPORTS,)
    names = runtime.get("loads_natively_user") or ()
    folder = paths.host_folder(host_def.get("install") or {}) if names else ""
    if not folder:
        return patterns
    return patterns + tuple(os.path.normpath(os.path.join(folder, str(name))) for name in names)


def _workspace_globs(patterns: tuple[str, ...]) -> list[str]:
    """The globs of files in the workspace (the absolute paths are the user's own files)."""
    return [p for p in patterns if not os.path.isabs(p) and p != IMPORTS]


def matches(patterns: tuple[str, ...], relative: str) -> bool:
    """Whether the host loads this workspace-relative path itself."""
    if not patterns or not relative or relative.startswith("../") \
            or not _may_match(patterns, relative):
        return False
    include, exclude = _matchers(patterns)
    return include is not None and include.match(relative) is not None and \
        (exclude is None or exclude.match(relative) is None)


def is_pointer(path: str) -> bool:
    """Whether the file is the short pointer `engram import --replace` wrote over it."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(POINTER_MAX_BYTES)
    except OSError:
        return False
    return is_pointer_text(head)


def is_pointer_text(data: bytes) -> bool:
    """Whether a file's content (or its first POINTER_MAX_BYTES) is that pointer."""
    return len(data) < POINTER_MAX_BYTES and POINTER_MARK in data.decode("utf-8", "replace")


def still_loaded(full: str) -> bool:
    """An imported source the host still reads whole: a regular file, not the pointer."""
    try:
        if not os.path.isfile(full):
            return False
        if os.stat(full).st_size >= POINTER_MAX_BYTES:
            return True
    except OSError:
        return False
    return not is_pointer(full)


def _named_sources(provenance: Any) -> list[str]:
    """The files a card's `derived_from` names (`CLAUDE.md#testing`), as written."""
    value = None
    for pair in provenance or ():
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and pair[0] == "derived_from":
            value = pair[1]
    values = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for item in values:
        if isinstance(item, str) and item.strip():
            source = item.split("#", 1)[0].strip().replace("\\", "/")
            if source and "://" not in source:
                out.append(source)
    return out


def derived_sources(provenance: Any) -> list[str]:
    """The workspace-relative files a card's `derived_from` names (`CLAUDE.md#testing`)."""
    return [os.path.normpath(source).replace("\\", "/") for source in _named_sources(provenance)
            if not source.startswith(("/", "~"))]


def user_sources(provenance: Any) -> list[str]:
    """The files outside the workspace a card's `derived_from` names (`~/.claude/CLAUDE.md`,
    written by `engram import` of the user's own file)."""
    return [source for source in _named_sources(provenance) if source.startswith(("/", "~/"))]


def relative_to(location: str, path: str) -> str:
    location = location.rstrip("/\\")
    if path.startswith(location + os.sep) or path.startswith(location + "/"):
        return path[len(location) + 1:].replace("\\", "/")
    return "../"


def native_file(patterns: tuple[str, ...], location: str, path: str, provenance: Any) -> str:
    """The workspace file through which the host already loads this card ('' when none): the
    card's own file, or the file it was imported from while that still holds the original (or
    a file of the host's beside it with the same text, e.g. AGENTS.md as a copy of CLAUDE.md)."""
    if not patterns:
        return ""
    own = relative_to(location, path)
    if matches(patterns, own):
        return own
    for source in user_sources(provenance):
        full = os.path.normpath(os.path.expanduser(source))
        if os.path.isabs(full) and full in patterns and still_loaded(full):
            return source
    for source in derived_sources(provenance):
        if matches(patterns, source):
            if still_loaded(os.path.join(location, source)):
                return source
            continue
        found = _twin(patterns, location, source) or _importer(patterns, location, source)
        if found:
            return found
    return ""


def _names(patterns: tuple[str, ...]) -> list[str]:
    """The plain file names among a host's globs (`AGENTS.md` of `**/AGENTS.md`)."""
    out = []
    for pattern in patterns:
        name = pattern[3:] if pattern.startswith("**/") else pattern
        if name and not pattern.startswith(("!", "@")) and not any(c in name for c in "/*?[{"):
            out.append(name)
    return out


def _twin(patterns: tuple[str, ...], location: str, source: str) -> str:
    """A file the host loads that holds the same text as the imported `source`, beside it:
    AGENTS.md kept as a symlink or a copy of CLAUDE.md (imported once, under CLAUDE.md)."""
    folder = os.path.dirname(source)
    full = os.path.join(location, source)
    try:
        info = os.stat(full)
    except OSError:
        return ""
    for name in _names(patterns):
        candidate = os.path.join(folder, name) if folder else name
        other = os.path.join(location, candidate)
        try:
            other_info = os.stat(other)
        except OSError:
            continue
        if other_info.st_size != info.st_size or not os.path.isfile(other):
            continue
        if os.path.samestat(info, other_info) or _same_bytes(full, other):
            return candidate if still_loaded(other) else ""
    return ""


def _importer(patterns: tuple[str, ...], location: str, source: str) -> str:
    """A file the host loads that imports `source` (`@AGENTS.md` in CLAUDE.md), directly or
    through files it imports, for a host that expands imports, while `source` still holds
    the original: the host's instruction files in the source's folder and each folder above
    it up to the workspace root."""
    if IMPORTS not in patterns:
        return ""
    target = os.path.join(location, source)
    try:
        wanted = os.stat(target)
    except OSError:
        return ""
    names = _names(patterns)
    folder = os.path.dirname(source)
    inside = os.path.realpath(location) + os.sep
    while True:
        for name in names:
            candidate = os.path.join(folder, name) if folder else name
            if matches(patterns, candidate) \
                    and _reaches(os.path.join(location, candidate), wanted, inside):
                return candidate if still_loaded(target) else ""
        if not folder:
            return ""
        folder = os.path.dirname(folder)


def _reaches(path: str, wanted: os.stat_result, inside: str) -> bool:
    """Whether the file at `path` imports the file `wanted` describes, in at most
    IMPORT_HOPS hops, through files under the folder `inside` only (Gemini CLI imports
    nothing outside the project, and Claude Code asks before it does)."""
    frontier, seen = [path], {path}
    for _hop in range(IMPORT_HOPS):
        following: list[str] = []
        for importing in frontier:
            for imported in import_paths(importing):
                try:
                    info = os.stat(imported)
                except OSError:
                    continue
                if not os.path.realpath(imported).startswith(inside):
                    continue
                if os.path.samestat(info, wanted):
                    return True
                if imported not in seen and len(seen) < MAX_IMPORTING_FILES:
                    seen.add(imported)
                    following.append(imported)
        frontier = following
    return False


def import_paths(path: str) -> list[str]:
    """The files the `@path` imports of the file at `path` name, resolved relative to the
    file's folder. Read as narrowly as Claude Code and Gemini CLI both read them (Gemini CLI
    0.61.0's import processor, Claude Code's docs): a word after a space, a tab or a line
    break (`\\n`, `\\r`) that starts with `@` and then `.`, `/` or an ASCII letter, up to the
    next of those; nothing between backticks (a code span, over lines too, or a fenced
    block), in a `~~~` block, an indented block, an HTML block or comment. Where the hosts' readings
    and this one may differ it finds fewer imports: a card then reaches the host twice,
    never not at all."""
    try:
        info = os.stat(path)
    except OSError:
        return []
    key = (path, info.st_mtime_ns, info.st_size, info.st_ino)
    found = _imports_of.get(key)
    if found is not None:
        return found
    try:
        text = fileio.read_bounded(path, MAX_IMPORTING_BYTES).decode("utf-8", "replace")
    except (OSError, fileio.NotRegularFile, fileio.FileTooLarge):
        text = ""
    found = []
    if "@" in text:
        folder = os.path.dirname(path)
        for word in _import_words(text):
            if word[1:2] in _IMPORT_STARTS:
                found.append(os.path.normpath(os.path.join(folder, word[1:])))
    _imports_of[key] = found
    return found


_IMPORT_STARTS: Final = frozenset("./abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _import_words(text: str) -> list[str]:
    """The words of `text` starting with `@` outside code and comments (`import_paths`)."""
    if "`" in text:
        import re

        # Gemini CLI's code regions: a run of backticks to the next run of the same length.
        text = re.sub(r"(`+)[\s\S]*?\1", lambda m: "\n" * m.group(0).count("\n"), text)
    words: list[str] = []
    fence = False
    comment = False
    html = False
    for line in text.replace("\r", "\n").split("\n"):
        stripped = line.lstrip(" ")
        if fence:
            fence = not stripped.startswith("~~~")
            continue
        if html or stripped.startswith("<"):
            html = bool(stripped)  # an HTML block, to the next blank line: no text to Claude
            continue
        if stripped.startswith("~~~") or "`" in line:
            fence = stripped.startswith("~~~")
            continue  # an unclosed backtick: nothing on that line is read
        if line.startswith(("    ", "\t")):
            continue  # an indented code block (or a list's continuation: skipped as well)
        visible, rest = [], line
        while rest:
            if comment:
                end = rest.find("-->")
                if end < 0:
                    break
                comment, rest = False, rest[end + 3:]
                continue
            begin = rest.find("<!--")
            if begin < 0:
                visible.append(rest)
                break
            visible.append(rest[:begin])
            comment, rest = True, rest[begin + 4:]
        for word in " ".join(visible).replace("\t", " ").split(" "):
            if word.startswith("@"):
                words.append(word)
    return words


def _same_bytes(first: str, second: str) -> bool:
    try:
        with open(first, "rb") as one, open(second, "rb") as two:
            while True:
                a, b = one.read(65536), two.read(65536)
                if a != b:
                    return False
                if not a:
                    return True
    except OSError:
        return False


def loaded_by(host_defs: Mapping[str, Mapping[str, Any]], location: str, path: str,
              provenance: Any) -> list[tuple[str, str]]:
    """(host display name, file) for every supported host that loads this card itself."""
    out = []
    for name in sorted(host_defs):
        definition = host_defs[name]
        if not definition.get("supported"):
            continue
        found = native_file(patterns_of(definition), location, path, provenance)
        if found:
            out.append((str(definition.get("display_name") or name), found))
    return out


def note(host_defs: Mapping[str, Mapping[str, Any]], location: str, path: str,
         provenance: Any) -> str:
    """'loaded by Claude Code itself (.claude/rules/x.md)' for the reports ('' when no host
    loads the card by itself)."""
    found = loaded_by(host_defs, location, path, provenance)
    if not found:
        return ""
    names = sorted({name for name, _ in found})
    files = sorted({file for _, file in found})
    return f"loaded by {' and '.join(names)} itself ({', '.join(files)})"


def for_workspace(location: str, path: str, provenance: Any) -> str:
    """`note` for every host definition, paths made real (the CLI's reports, not the hook)."""
    from engram import host_registry

    return note(host_registry.all_definitions(), os.path.realpath(location), os.path.realpath(path),
                provenance)
