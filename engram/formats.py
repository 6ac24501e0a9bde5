"""Map a parsed file to a Card, whatever format it was written in: engram's own, the-long-ride
engram v1-v3, Cursor .mdc, Claude rules, Copilot instructions, Continue rules."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any, Final

from engram import globs, host_registry
from engram.card import CARD_TYPES, DEFAULT_PRIORITY, Card
from engram.frontmatter import Parsed

ID_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_WINDOWS_RESERVED: Final = frozenset(
    ["con", "prn", "aux", "nul"] + [f"com{i}" for i in range(1, 10)] + [f"lpt{i}" for i in range(1, 10)])
PROVENANCE_KEYS: Final = ("authority", "evidence_refs", "derived_from", "created", "updated",
                          "source", "revision", "valid_from", "last_confirmed", "author")
_HEADING: Final = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_CONTENT_SECTION: Final = re.compile(r"^##\s+Content\s*$", re.MULTILINE)

# Rule folders engram reads in a format of their own whose owner is no host engram links, as
# (folder, format, what the files are called, the tool that loads them). Continue is an IDE
# extension without hooks engram could install: its rules are a format to read, not a host,
# so it has no hosts/*.yaml (which `engram link` would offer). Host rule folders are in
# hosts/*.yaml (`rules`); `engram init` adopts the folders of both as memory roots.
OTHER_RULE_FOLDERS: Final = ((".continue/rules", "continue", "Continue rules", "Continue"),)
_OTHER_RULE_MARKERS: Final = tuple((f"/{folder}/", fmt) for folder, fmt, _, _ in OTHER_RULE_FOLDERS)

# The keys an engram card may carry; anything else in an engram-format file is reported, with
# the nearest known key, because a misspelt key (`tag:`, `applies-to:`) is silently ignored.
ENGRAM_KEYS: Final = ("id", "title", "card", "type", "tags", "applies_to", "always", "priority",
                      "depends_on", "description", "name", "globs", "paths", *PROVENANCE_KEYS)


class CardError(ValueError):
    """The file cannot become a card; `line` points at the cause when known. `problems` holds
    every (message, line) found in the file, so one lint run shows them all."""

    def __init__(self, message: str, line: int | None = None,
                 problems: "tuple[tuple[str, int | None], ...]" = (),
                 notes: "tuple[Any, ...]" = ()) -> None:
        super().__init__(message)
        self.line = line
        self.problems = problems or ((message, line),)
        self.notes = notes  # warnings found alongside, reported with the errors


def _squash(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


def suggest_key(key: str, known: "tuple[str, ...]" = ENGRAM_KEYS) -> str | None:
    """The known key `key` most likely meant (`tag` -> `tags`, `dependson` -> `depends_on`)."""
    import difflib

    squashed = {_squash(k): k for k in known}
    if _squash(key) in squashed:
        return squashed[_squash(key)]
    close = difflib.get_close_matches(_squash(key), list(squashed), n=1, cutoff=0.7)
    return squashed[close[0]] if close else None


def unknown_keys(data: dict[str, Any], text: str) -> list[tuple[str, int | None, str]]:
    """(message, line, code) for each key an engram card does not know."""
    found = []
    for key in data:
        if key in ENGRAM_KEYS:
            continue
        guess = suggest_key(key)
        hint = f"; did you mean `{guess}`?" if guess else \
            f"; known keys: {', '.join(ENGRAM_KEYS[:9])}"
        found.append((f"unknown frontmatter key `{key}` is ignored{hint}",
                      _key_line(1, text, key), "unknown-key"))
    return found


def detect(path: PurePath, data: dict[str, Any], body: str) -> str:
    name = path.name.lower()
    posix = path.as_posix()
    # File types that name their format wherever they lie (rule collections keep them outside
    # any host's folder too): Cursor's MDC, Copilot's instructions files.
    if name.endswith(".mdc"):
        return "cursor"
    if name.endswith(".instructions.md") or "applyTo" in data:
        return "copilot"
    # Plain Markdown in a host's rules folder is in that host's format, which its definition
    # names (`rules.format` in hosts/*.yaml: Claude's `.claude/rules/`).
    for marker, fmt in host_registry.rule_formats():
        if marker in posix:
            return fmt
    if "paths" in data and "applies_to" not in data:
        return "claude"
    for marker, fmt in _OTHER_RULE_MARKERS:
        if marker in posix:
            return fmt
    if "schema_version" in data or ("id" in data and data.get("type") in ("skill", "knowledge")) \
            or (_CONTENT_SECTION.search(body) and "applies_to" not in data):
        return "long-ride"
    if "globs" in data or "alwaysApply" in data:
        return "cursor"
    return "engram"


def is_valid_id(card_id: str) -> bool:
    return bool(ID_PATTERN.match(card_id)) and ".." not in card_id \
        and card_id.split(".")[0].lower() not in _WINDOWS_RESERVED


def slug(text: str) -> str:
    value = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._").lower()
    return value[:80] or "card"


def default_id(path: PurePath) -> str:
    name = path.name
    for suffix in (".instructions.md", ".mdc", ".md"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def first_sentence(body: str, limit: int = 160) -> str:
    """The body's first sentence as plain text: the default one-line fold."""
    for block in re.split(r"\n\s*\n", body):
        text = block.strip()
        if not text or text.startswith(("#", "```", "---", "|", "<!--")):
            continue
        text = re.sub(r"^[-*+>]\s+|^\d+\.\s+", "", text, flags=re.MULTILINE)
        # Markup goes, but never inside a code span: `__init__.py` and snake_case stay whole.
        pieces = re.split(r"(`[^`]*`)", text)
        for position in range(0, len(pieces), 2):
            plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", pieces[position])
            plain = re.sub(r"\*{1,3}([^*]+?)\*{1,3}", r"\1", plain)
            pieces[position] = re.sub(r"(?<!\w)_{1,3}([^_]+?)_{1,3}(?!\w)", r"\1", plain)
        text = "".join(piece[1:-1] if position % 2 else piece
                       for position, piece in enumerate(pieces))
        text = " ".join(text.split())
        match = re.match(r"(.+?[.!?])(?:\s|$)", text)
        sentence = match.group(1) if match else text
        if len(sentence) > limit:
            sentence = sentence[: limit - 1].rsplit(" ", 1)[0] + "…"
        return sentence
    return ""


def _string_list(value: Any, key: str, line: int | None) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return tuple(part.strip() for part in globs.split_top_level(value) if part.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(item).strip() for item in value if item is not None and str(item).strip())
    raise CardError(f"`{key}` must be a list of strings", line)


def _bool(value: Any) -> bool:
    # Cursor treats a quoted "true" as not always-on; only a real boolean counts.
    return value is True


def _priority(value: Any, line: int | None) -> int:
    if value is None:
        return DEFAULT_PRIORITY
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise CardError("`priority` must be a number from 0 to 100", line)
    try:
        number = int(value)
    except ValueError:
        raise CardError(f"`priority` must be a number from 0 to 100, not {value!r}", line) from None
    if not 0 <= number <= 100:
        raise CardError(f"`priority` must be between 0 and 100, not {number}", line)
    return number


def key_line(text: str, key: str) -> int | None:
    """The 1-based line of `key:` in the frontmatter text, or None."""
    return _key_line(1, text, key)


def _key_line(raw_block_start: int, text: str, key: str) -> int | None:
    match = re.search(rf"^{re.escape(key)}\s*:", text, re.MULTILINE)
    if not match:
        return None
    return text.count("\n", 0, match.start()) + 1


def build(path: PurePath, root: str, text: str, parsed: Parsed, content_hash: str) -> tuple[Card, list[str]]:
    """A Card from one parsed file, plus notes on what was guessed. Raises CardError."""
    data = parsed.data
    notes: list[Any] = list(parsed.notes)
    errors: list[tuple[str, int | None]] = []

    def check(compute: Any, fallback: Any) -> Any:
        try:
            return compute()
        except CardError as exc:
            errors.append((str(exc), exc.line))
            return fallback
    fmt = detect(path, data, parsed.body)
    def line_of(key: str) -> int | None:
        return _key_line(1, text, key)
    body = parsed.body.strip("\n")
    if fmt == "long-ride":
        section = _CONTENT_SECTION.search(body)
        if section:
            body = body[section.end():].strip("\n")
    heading = _HEADING.search(body)

    raw_id = data.get("id")
    if raw_id is None or raw_id == "":
        card_id = default_id(path)
        if not is_valid_id(card_id):
            card_id = slug(card_id)
            notes.append(f"file name is not a valid id; using {card_id!r}")
    else:
        card_id = str(raw_id).strip()
        if not is_valid_id(card_id):
            errors.append((f"id {card_id!r} is not a valid id (letters, digits, '.', '_', '-'; "
                           "no path separators or '..')", line_of("id")))
            card_id = slug(card_id)

    title = data.get("title") or data.get("name")
    if not title and heading:
        title = heading.group(1).strip()
    title = str(title).strip() if title else card_id.replace("-", " ").replace("_", " ")

    description = data.get("description")
    one_line = data.get("card") or description or first_sentence(body) or title
    one_line = " ".join(str(one_line).split())

    card_type = str(data.get("type") or "rule").strip()
    if fmt == "engram" and card_type not in CARD_TYPES:
        notes.append(f"type {card_type!r} is not one of {', '.join(CARD_TYPES)}")

    tags = check(lambda: _string_list(data.get("tags"), "tags", line_of("tags")), ())
    if fmt == "long-ride":
        tags = tags + check(lambda: _string_list(data.get("triggers"), "triggers",
                                                 line_of("triggers")), ()) \
            + check(lambda: _string_list(data.get("task_types"), "task_types",
                                         line_of("task_types")), ())
    if fmt == "engram":
        notes.extend(unknown_keys(data, text))

    glob_key = {"cursor": "globs", "continue": "globs", "claude": "paths",
                "copilot": "applyTo"}.get(fmt, "applies_to")
    raw_globs = data.get(glob_key, data.get("applies_to"))
    if glob_key == "applies_to" and raw_globs is None:
        raw_globs = data.get("globs") or data.get("paths")
    applies_to = tuple(globs.normalize(raw_globs))
    if fmt in ("copilot", "cursor") and applies_to == ("*",):
        # Copilot and Cursor read a lone `*` as every file; wcmatch would read it as the top
        # level only.
        applies_to = ("**",)

    if fmt in ("cursor", "continue"):
        always = _bool(data.get("alwaysApply"))
    elif fmt == "claude":
        always = "paths" not in data  # a Claude rule without paths loads at launch
    elif fmt == "long-ride":
        always = data.get("type") == "rule" or _bool(data.get("always"))
    else:
        always = _bool(data.get("always"))
        if data.get("always") not in (None, True, False):
            errors.append(("`always` must be true or false", line_of("always")))

    priority = check(lambda: _priority(data.get("priority"), line_of("priority")), DEFAULT_PRIORITY)
    depends_on = check(lambda: _string_list(data.get("depends_on"), "depends_on",
                                            line_of("depends_on")), ())
    provenance = tuple((key, data[key]) for key in PROVENANCE_KEYS if key in data)
    if not body.strip():
        errors.append(("the card has no body", parsed.body_line))
    if errors:
        raise CardError(errors[0][0], errors[0][1], tuple(errors), tuple(notes))
    card = Card(
        id=card_id, title=title, card=one_line, body=body, path=str(path), root=root,
        content_hash=content_hash, type=card_type, tags=tags, applies_to=applies_to,
        always=always, priority=priority, depends_on=depends_on, format=fmt,
        body_line=parsed.body_line, provenance=_freeze(provenance),
    )
    return card, notes


def _freeze(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple((str(k), _freeze(v)) for k, v in value.items())
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)
