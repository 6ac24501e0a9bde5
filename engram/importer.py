"""Split a monolithic instruction file (CLAUDE.md, AGENTS.md, .cursorrules, Copilot
instructions) into memory cards by its headings. Pure: text in, planned cards out.

The split level is the highest heading level that occurs at least twice (a lone `# Title` on
top names the file, not a section). Text before the first section, and sections whose heading
says they hold ground rules for everything (overview, principles, important, ...), stay global:
they become `always` cards. A section larger than MAX_SECTION_CHARS is split again at its own
sub-headings, so no card outgrows a host's budget when the file has structure to split on."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Callable, Final, Sequence

from engram import formats, frontmatter, globs, secrets

MAX_SECTION_CHARS: Final = 4000
_FENCE: Final = re.compile(r"^\s*(```|~~~)")
_HEADING: Final = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
# Headings whose sections apply to every task: kept global (always cards).
_GLOBAL: Final = re.compile(
    r"\b(overview|introduction|about (this|the) (project|repo|repository)|general|principles?|"
    r"important|critical|golden rules?|ground rules?|key rules?|persona|your role|role|mission|"
    r"tone|communication|always|must know)\b", re.IGNORECASE)
_STOPWORDS: Final = frozenset(
    "a an and the of for to in on with by at or is are be this that how what when our we you "
    "your it its as from guide guidelines guideline rules rule best practices practice notes "
    "note section conventions convention tips general usage using use instructions conclusion "
    "summary example examples task analysis implementation misc other overview introduction "
    "expanded comprehensive deep dive".split())
MAX_ID_CHARS: Final = 48
# `backend/migrations/`, `src/**/*.ts`, `docs/api.md`: a path or glob a section names in code
# quotes. Only relative, space-free, slash-holding tokens; URLs and options are not paths.
_QUOTED_PATH: Final = re.compile(r"`(\.?[\w*{][\w.*{},\-/]*/[\w.*{},\-/]*)`")
MAX_DERIVED_GLOBS: Final = 4
_WILDCARD: Final = re.compile(r"[*{]")


@dataclass(frozen=True)
class Planned:
    """One card to write: its id, frontmatter values and body."""

    id: str
    title: str
    card: str
    body: str
    tags: tuple[str, ...] = ()
    always: bool = False
    applies_to: tuple[str, ...] = ()
    source: str = ""  # `CLAUDE.md#testing`: where it came from
    line: int = 1  # line of its heading in the source

    def render(self) -> str:
        """The card file this plan writes."""
        return render_card(self.id, self.title, self.body, card=self.card, tags=self.tags,
                           applies_to=self.applies_to, always=self.always,
                           derived_from=self.source)


def render_card(card_id: str, title: str, body: str, *, card: str | None = None,
                tags: Sequence[str] = (), applies_to: Sequence[str] = (), always: bool = False,
                priority: int | None = None, derived_from: str | None = None) -> str:
    """A card file: frontmatter with JSON-quoted strings (valid YAML), then the body."""
    lines = ["---", f"id: {card_id}", f"title: {json.dumps(title, ensure_ascii=False)}"]
    if card is not None:
        lines.append(f"card: {json.dumps(card, ensure_ascii=False)}")
    if tags:
        lines.append("tags: [" + ", ".join(json.dumps(t) for t in tags) + "]")
    if applies_to:
        lines.append("applies_to: [" + ", ".join(json.dumps(g) for g in applies_to) + "]")
    if always:
        lines.append("always: true")
    if priority is not None:
        lines.append(f"priority: {priority}")
    if derived_from is not None:
        lines.append(f"derived_from: {json.dumps(derived_from, ensure_ascii=False)}")
    lines.append("---")
    return "\n".join(lines) + "\n" + body.strip("\n") + "\n"


@dataclass
class _Section:
    level: int
    title: str
    line: int
    lines: list[str] = field(default_factory=list)


def clean_heading(text: str) -> str:
    """Heading text without markup, numbering or trailing colons: `### **2. Jobs:**` -> `Jobs`.
    A heading holding a secret is kept as written: without its `_` a `ghp_...` token is one no
    detector knows, and the card would pass the secrets gate with it in its title."""
    if secrets.has_secrets(text):
        return " ".join(text.split()) or "Section"
    text = re.sub(r"[*_`]", "", text)
    text = re.sub(r"^\s*(\d+(\.\d+)*[.)]?|[IVX]+\.)\s+", "", text)
    text = re.sub(r"[^\w\s&/+.,()'-]", "", text)
    return " ".join(text.split()).strip(" :.-") or "Section"


def tag_for(title: str) -> str | None:
    """One tag from a heading's content words (at most three, hyphenated), or None."""
    words = [w for w in re.findall(r"[a-z0-9][a-z0-9+#.]*", title.lower())
             if w not in _STOPWORDS and not w.isdigit()]
    if not words or len(words) > 3:
        return None
    return "-".join(word.strip(".") for word in words)


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(index, level, text) of each heading outside fenced code."""
    found, fenced = [], False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            found.append((number, len(match.group(1)), match.group(2)))
    return found


def _split_level(headings: list[tuple[int, int, str]], lines: list[str]) -> int | None:
    levels = sorted({level for _, level, _ in headings})
    for level in levels:
        at_level = [h for h in headings if h[1] == level]
        if len(at_level) >= 2:
            return level
        # A lone top heading is the document's title; look one level down.
        first_text = next((i for i, line in enumerate(lines) if line.strip()), 0)
        if not (len(at_level) == 1 and at_level[0][0] == first_text):
            return level
    return levels[-1] if levels else None


def _sections(lines: list[str], offset: int) -> tuple[list[str], str | None, list[_Section]]:
    """(preamble lines, document title, sections) of `lines`; line numbers shifted by offset."""
    headings = _headings(lines)
    level = _split_level(headings, lines)
    if level is None:
        return lines, None, []
    title = None
    starts = [h for h in headings if h[1] == level]
    preamble = lines[: starts[0][0]] if starts else lines
    top = [h for h in headings if h[1] < level and h[0] < (starts[0][0] if starts else len(lines))]
    if top:
        title = clean_heading(top[0][2])
        preamble = [line for i, line in enumerate(preamble) if i != top[0][0]]
    sections: list[_Section] = []
    ends = [h[0] for h in headings if h[1] <= level]
    for index, lvl, text in starts:
        end = next((e for e in ends if e > index), len(lines))
        sections.append(_Section(lvl, clean_heading(text), index + 1 + offset,
                                 lines[index + 1:end]))
    return preamble, title, sections


def _body(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n")


def plan(text: str, source: str,
         exists: Callable[[str], str | None] | None = None) -> list[Planned]:
    """The cards `text` (the file named `source`, relative) splits into, in file order.

    `exists(path)` says what a path a section names in code quotes is in the workspace
    ("dir", "file" or None); with it, a section that names existing paths gets them as
    `applies_to`, so touching those files selects the card even when the prompt does not
    say its words."""
    text = text.replace("\r\n", "\n")
    parsed = frontmatter.parse(text)
    inherited: tuple[str, ...] = ()
    for key in ("globs", "applyTo", "paths", "applies_to"):
        if parsed.data.get(key):
            inherited = tuple(globs.normalize(parsed.data[key]))
            break
    if set(inherited) & {"*", "**", "**/*"}:
        inherited = ()  # a file meant for every path: routed by text instead
    lines = parsed.body.split("\n")
    offset = parsed.body_line - 1
    preamble, doc_title, sections = _sections(lines, offset)
    stem = formats.slug(formats.default_id(__import__("pathlib").PurePath(source)).lstrip("."))
    planned: list[_Draft] = []
    intro = _body(preamble)
    if intro.strip():
        title = doc_title or f"{source}: overview"
        planned.append(_Draft(title, intro, True, (), 1 + offset))
    for section in sections:
        planned.extend(_expand(section, ()))
    if not planned and _body(lines).strip():
        planned.append(_Draft(doc_title or source, _body(lines), True, (), 1 + offset))
    return _finish(planned, source, stem, inherited, exists)


@dataclass
class _Draft:
    title: str
    body: str
    always: bool
    parents: tuple[str, ...]
    line: int


def _expand(section: _Section, parents: tuple[str, ...]) -> list[_Draft]:
    body = _body(section.lines)
    is_global = bool(_GLOBAL.search(section.title)) and not parents
    if len(body) <= MAX_SECTION_CHARS or is_global:
        return [_Draft(section.title, body, is_global, parents, section.line)] if body.strip() \
            else []
    preamble, _title, children = _sections(section.lines, section.line)
    if not children:
        return [_Draft(section.title, body, False, parents, section.line)]
    drafts = []
    if _body(preamble).strip():
        drafts.append(_Draft(section.title, _body(preamble), False, parents, section.line))
    for child in children:
        drafts.extend(_expand(child, parents + (section.title,)))
    return drafts


def _short(slug: str) -> str:
    """A slug cut at a word boundary to MAX_ID_CHARS."""
    if len(slug) <= MAX_ID_CHARS:
        return slug or "section"
    return slug[:MAX_ID_CHARS].rsplit("-", 1)[0].strip("-._") or "section"


def named_paths(body: str, exists: Callable[[str], str | None] | None) -> tuple[str, ...]:
    """The globs for the workspace paths a section names in code quotes: a folder as
    `folder/**`, a file as itself, a glob when its fixed leading folder exists."""
    if exists is None:
        return ()
    found: list[str] = []
    for token in _QUOTED_PATH.findall(body):
        token = token.removeprefix("./")
        if token.startswith(("/", "..")) or "://" in token or "//" in token:
            continue
        wild = _WILDCARD.search(token)
        if wild:
            # The folders before the first wildcard must exist: `src/**/*.ts` needs `src/`.
            lead = token[:wild.start()].rpartition("/")[0]
            glob = token if lead and exists(lead) == "dir" else None
        else:
            kind = exists(token.rstrip("/"))
            glob = (token.rstrip("/") + "/**" if kind == "dir"
                    else token if kind == "file" else None)
        if glob and glob not in found:
            found.append(glob)
        if len(found) == MAX_DERIVED_GLOBS:
            break
    return tuple(found)


def _finish(drafts: list[_Draft], source: str, stem: str, inherited: tuple[str, ...],
            exists: Callable[[str], str | None] | None = None) -> list[Planned]:
    used: set[str] = set()
    cards = []
    for draft in drafts:
        # The id and the tag are made of words of the heading: never of a secret in it.
        named = secrets.redact(draft.title)
        base = _short(formats.slug(named)) if draft.title != f"{source}: overview" \
            else f"{stem}-overview"
        card_id, n = base, 2
        if card_id in used and draft.parents:
            card_id = _short(formats.slug(secrets.redact(f"{draft.parents[-1]} {draft.title}")))
        while card_id in used:
            card_id, n = f"{base}-{n}", n + 1
        used.add(card_id)
        # Only the section's own heading: a parent's tag on every child would select them all.
        tags = tuple(t for t in [tag_for(named)] if t and named == draft.title)
        title = draft.title if not draft.parents else f"{draft.title} ({draft.parents[-1]})"
        one_line = formats.first_sentence(draft.body) or title
        applies = () if draft.always else (inherited or named_paths(draft.body, exists))
        cards.append(Planned(card_id, title, one_line, draft.body, tags, draft.always,
                             applies,
                             f"{source}#{card_id}", draft.line))
    return cards
