"""The review wrapper (`inbox/<trace id>.md`) and its promotion into memory cards
(`engram save-session`).

The wrapper is review material: frontmatter naming its trace and the trace's sha256, one or
more `## Candidate card` sections (a YAML block, then the card body), then the sanitized
transcript as a block quote, so no transcript line can pose as a heading of ours. The trace
is the source: before a card is written, the trace is re-read and its hash checked.
Nothing is written without approval.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Final, Protocol, TextIO

from engram import fileio, secrets
from engram.errors import EngramError
from engram.evidence import verify_trace
from engram.sanitize import find_injections

if TYPE_CHECKING:
    from engram.evidence import Evidence

WRAPPER_KIND: Final = "engram-inbox"
CANDIDATE_HEADING: Final = "## Candidate card"
TRANSCRIPT_HEADING: Final = "## Transcript (sanitized)"
SUMMARY_HEADING: Final = "## Compaction summaries (model-written, not said by anyone)"
ID_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,79}")
MAX_WRAPPER_BYTES: Final = 8 * 1024 * 1024
_FENCE_YAML: Final = re.compile(r"^```ya?ml[ \t]*$")
_WORD: Final = re.compile(r"[a-z][a-z0-9]{3,}")
_DULL: Final = frozenset(["this", "that", "with", "from", "have", "what", "when", "your", "please", "would", "could", "should", "there", "their", "them", "then", "than", "into", "about", "just", "like", "make", "also"])  # noqa: E501 - one data table


@dataclass(frozen=True)
class Candidate:
    id: str
    title: str
    card: str
    body: str
    type: str = "rule"
    tags: tuple[str, ...] = ()
    applies_to: tuple[str, ...] = ()
    priority: int = 50


@dataclass(frozen=True)
class Wrapper:
    trace: str
    trace_sha256: str
    host: str
    session: str | None
    candidates: tuple[Candidate, ...]


# ---------------------------------------------------------------- rendering the wrapper


def _first_line(text: str, limit: int) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#>*- ").strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return ""


def slugify(text: str, limit: int = 48) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].rstrip("-")


def draft(evidence: "Evidence") -> Candidate:
    """A starting point for the reviewer: the user's own instructions and corrections in the
    session; only when there are none, the first request and the last answer."""
    return draft_with_notes(evidence)[0]


def draft_with_notes(evidence: "Evidence") -> tuple[Candidate, list[str]]:
    """(the drafted candidate, notes for the reviewer about how it was drafted)."""
    from engram import session_draft

    turns = evidence.transcript.turns
    user_texts = [t.text for t in turns if t.role in ("user", "note")]
    drafted = session_draft.draft(user_texts)
    if drafted is not None:
        notes = [f"Drafted from {len(drafted.instructions)} instruction(s) or correction(s) "
                 "you gave in the session, in your words."]
        if drafted.left_out:
            notes.append(f"Left out {drafted.left_out} instruction line(s) holding a redacted "
                         "secret; write them again without the secret if they matter.")
        ident = slugify(drafted.title) or f"session-{evidence.trace_id[-8:]}"
        return Candidate(id=ident, title=drafted.title, card=drafted.card, body=drafted.body,
                         tags=drafted.tags), notes
    asked = next((t.text for t in turns if t.role in ("user", "note")), "")
    answered = next((t.text for t in reversed(turns) if t.role == "assistant"), "")
    title = _first_line(asked, 80) or f"{evidence.transcript.host} session"
    ident = slugify(title) or f"session-{evidence.trace_id[-8:]}"
    tags = tuple(dict.fromkeys(w for w in _WORD.findall(title.lower()) if w not in _DULL))[:4]
    body = f"- Asked: {_first_line(asked, 200)}\n"
    if answered:
        body += f"- Outcome: {_first_line(answered, 200)}\n"
    notes = ["No instruction or correction from you was found in the session; this draft is "
             "only the first request and the last answer: rewrite it or delete this file."]
    return Candidate(id=ident, title=title, card=title, body=body, tags=tags), notes


def related_cards(candidate: Candidate, cards: "list[Any]") -> "list[tuple[Any, list[str]]]":
    """Existing cards sharing tags or distinctive words with `candidate`."""
    from engram import session_draft

    text = " ".join([candidate.title, candidate.card, candidate.body])
    return session_draft.related(candidate.tags, text, [c for c in cards if c.id != candidate.id])


def _yaml_block(candidate: Candidate) -> str:
    # JSON scalars are valid YAML and quote whatever a transcript put in a title.
    lines = [f"id: {candidate.id}", f"title: {json.dumps(candidate.title, ensure_ascii=False)}",
             f"card: {json.dumps(candidate.card, ensure_ascii=False)}",
             f"type: {candidate.type}", f"tags: {json.dumps(list(candidate.tags))}",
             f"priority: {candidate.priority}",
             f"applies_to: {json.dumps(list(candidate.applies_to))}"]
    return "```yaml\n" + "\n".join(lines) + "\n```\n"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def render_wrapper(evidence: "Evidence", *, observed: str, wrapper_path: str,
                   existing: "list[Any] | None" = None) -> str:
    """The inbox Markdown for a freshly written trace; `existing` cards on the same subject
    are named so the reviewer can merge instead of adding a card."""
    parsed = evidence.transcript
    meta = {"kind": WRAPPER_KIND, "authority": "evidence", "trace": evidence.trace_id,
            "trace_sha256": evidence.sha256, "host": parsed.host, "session": parsed.session,
            "agent": parsed.agent, "observed": observed, "compactions": parsed.compactions,
            "secrets_redacted": evidence.secrets, "injections_removed": evidence.injections}
    front = "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in meta.items())
    label = (parsed.session or evidence.trace_id)[:8]
    candidate, notes = draft_with_notes(evidence)
    for card, shared in related_cards(candidate, existing or []):
        notes.append(f"An existing card covers the same subject: `{card.id}` ({card.title}; "
                     f"shares {', '.join(shared)}). Consider adding this to it instead.")
    parts = [f"---\n{front}\n---\n\n",
             f"# Session review: {parsed.host} {label}\n\n",
             f"Review material drawn from trace `{evidence.trace_id}` (the trace is the evidence;\n"
             "this file is yours to edit). Rewrite the candidate card below in your own words,\n"
             f"or repeat the `{CANDIDATE_HEADING}` section to propose several, then run\n"
             f"`engram save-session --file {wrapper_path}`.\nDelete this file to discard it.\n\n",
             "".join(f"Note: {note}\n" for note in notes) + ("\n" if notes else ""),
             f"{CANDIDATE_HEADING}\n\n", _yaml_block(candidate), "\n", candidate.body,
             f"\n{TRANSCRIPT_HEADING}\n"]
    said = [(n, t) for n, t in enumerate(parsed.turns, start=1) if t.role != "summary"]
    summaries = [(n, t) for n, t in enumerate(parsed.turns, start=1) if t.role == "summary"]
    for number, turn in said:
        parts.append(f"\n### {number} · {turn.role}" + (f" · {turn.at}" if turn.at else "") + "\n")
        parts.append(_quote(turn.text) + "\n")
    if summaries:
        parts.append(f"\n{SUMMARY_HEADING}\n")
        for number, turn in summaries:
            parts.append(f"\n### {number} · summary" + (f" · {turn.at}" if turn.at else "") + "\n")
            parts.append(_quote(turn.text) + "\n")
    return "".join(parts)


# ---------------------------------------------------------------- reading it back


def _frontmatter(text: str) -> tuple[dict[str, Any], list[str]]:
    import yaml

    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        raise EngramError("not an engram inbox file (no frontmatter)",
                          "pass a file from .agents/.engram/inbox/ written by `engram observe`")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise EngramError("the inbox file's frontmatter is not closed") from None
    try:
        data = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise EngramError(f"the inbox file's frontmatter is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise EngramError("the inbox file's frontmatter is not a mapping")
    return data, lines[end + 1:]


def _as_tuple(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise EngramError(f"candidate card: {name} must be a list of strings")
    return tuple(value)


def candidate_from(fields: Any, body: str) -> Candidate:
    """A Candidate from parsed YAML fields and a body; EngramError names what is wrong."""
    if not isinstance(fields, dict):
        raise EngramError("candidate card: the YAML block is not a mapping")
    priority = fields.get("priority", 50)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise EngramError("candidate card: priority must be a whole number 0-100")
    return Candidate(id=str(fields.get("id") or ""), title=str(fields.get("title") or ""),
                     card=str(fields.get("card") or ""), body=body.strip("\n") + "\n",
                     type=str(fields.get("type") or "rule"),
                     tags=_as_tuple(fields.get("tags"), "tags"),
                     applies_to=_as_tuple(fields.get("applies_to"), "applies_to"),
                     priority=priority)


def _candidates(lines: list[str]) -> list[Candidate]:
    import yaml

    found: list[Candidate] = []
    index = 0
    while index < len(lines):
        if lines[index].strip() != CANDIDATE_HEADING:
            if lines[index].strip() == TRANSCRIPT_HEADING:
                break
            index += 1
            continue
        index += 1
        while index < len(lines) and not lines[index].strip():
            index += 1
        if index >= len(lines) or not _FENCE_YAML.match(lines[index].strip()):
            raise EngramError(f"candidate card at line {index}: expected a ```yaml block")
        close = next((i for i in range(index + 1, len(lines)) if lines[i].strip() == "```"), None)
        if close is None:
            raise EngramError("candidate card: the ```yaml block is not closed")
        try:
            fields = yaml.safe_load("\n".join(lines[index + 1:close]))
        except yaml.YAMLError as exc:
            raise EngramError(f"candidate card: the YAML block is not valid: {exc}") from None
        stop = next((i for i in range(close + 1, len(lines))
                     if lines[i].strip() in (CANDIDATE_HEADING, TRANSCRIPT_HEADING)), len(lines))
        found.append(candidate_from(fields, "\n".join(lines[close + 1:stop])))
        index = stop
    return found


def read_wrapper(text: str) -> Wrapper:
    data, rest = _frontmatter(text)
    if data.get("kind") != WRAPPER_KIND:
        raise EngramError("not an engram inbox file (kind is not engram-inbox)")
    trace, digest = data.get("trace"), data.get("trace_sha256")
    if not (isinstance(trace, str) and re.fullmatch(r"tr-[a-z]+-[0-9a-f]{16,64}", trace)
            and isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
        raise EngramError("the inbox file does not name a valid trace and sha256")
    candidates = _candidates(rest)
    if not candidates:
        raise EngramError("the inbox file holds no candidate card",
                          f"add a `{CANDIDATE_HEADING}` section with a ```yaml block")
    session = data.get("session")
    return Wrapper(trace, digest, str(data.get("host") or ""),
                   session if isinstance(session, str) else None, tuple(candidates))


# ---------------------------------------------------------------- the card


def problems(candidate: Candidate, taken: frozenset[str] = frozenset()) -> list[str]:
    """What stops this candidate from being a valid, safe card (empty when none); `taken`
    holds the ids whose card files exist already."""
    found: list[str] = []
    if candidate.id in taken:
        found.append(f"a card file {candidate.id}.md exists already; choose another id")
    if not ID_PATTERN.fullmatch(candidate.id):
        found.append(f"id {candidate.id!r} must be a slug: a-z, 0-9 and '-', at most 80")
    if not candidate.title.strip():
        found.append("title is empty")
    if not candidate.card.strip() or "\n" in candidate.card:
        found.append("card must be one non-empty line")
    if not re.fullmatch(r"[a-z][a-z0-9_-]{0,31}", candidate.type):
        found.append(f"type {candidate.type!r} must be a word such as rule, workflow, reference")
    if not 0 <= candidate.priority <= 100:
        found.append("priority must be between 0 and 100")
    for glob in candidate.applies_to:
        if glob.startswith(("/", "~")) or ".." in glob.split("/") or "\x00" in glob:
            found.append(f"applies_to {glob!r} must be relative to the workspace root")
    if not candidate.body.strip():
        found.append("the body is empty")
    text = "\n".join([candidate.title, candidate.card, *candidate.tags, candidate.body])
    for hit in secrets.find_secrets(text):
        found.append(f"holds a value-shaped secret ({hit.kind}); remove it")
    for injection in find_injections(text):
        found.append(f"holds a line that looks like prompt injection ({injection.kind})")
    return found


def render_card(candidate: Candidate, wrapper: Wrapper, *, created: date) -> str:
    """The card file: frontmatter with provenance, then the body."""
    authority = "reference" if candidate.type == "reference" else "instruction"
    derived = f"session:{wrapper.host}:{wrapper.session}" if wrapper.session else (
        f"trace:{wrapper.trace}")
    lines = ["---", f"id: {candidate.id}",
             f"title: {json.dumps(candidate.title, ensure_ascii=False)}",
             f"card: {json.dumps(candidate.card, ensure_ascii=False)}",
             f"type: {candidate.type}", f"tags: {json.dumps(list(candidate.tags))}"]
    if candidate.applies_to:
        lines.append(f"applies_to: {json.dumps(list(candidate.applies_to))}")
    lines += [f"priority: {candidate.priority}", f"authority: {authority}",
              "evidence_refs:", f'  - "{evidence_ref(wrapper.trace, wrapper.trace_sha256)}"',
              "derived_from:", f"  - {json.dumps(derived, ensure_ascii=False)}",
              f"created: {created.isoformat()}", "---", ""]
    return "\n".join(lines) + candidate.body.strip("\n") + "\n"


def evidence_ref(trace: str, sha256: str) -> str:
    """`trace:<trace id>#sha256:<64 hex>`: the trace file is `traces/<trace id>.jsonl`."""
    return f"trace:{trace}#sha256:{sha256}"


def parse_card_text(text: str) -> Candidate:
    """A candidate back from edited card text (the format `render_card` writes; provenance
    fields in it are ignored, the wrapper supplies them)."""
    import yaml

    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        raise EngramError("the edited card must start with a --- frontmatter block")
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        raise EngramError("the edited card's frontmatter is not closed with ---")
    try:
        fields = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise EngramError(f"the edited card's frontmatter is not valid YAML: {exc}") from None
    return candidate_from(fields, "\n".join(lines[end + 1:]))


# ---------------------------------------------------------------- review and write

Editor = Callable[[str], str]


class Terminal(Protocol):
    """Where the review writes: the command's stream, which redacts what it is given."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


def _ask(prompt: str, stdin: TextIO, stdout: Terminal) -> str:
    stdout.write(prompt)
    stdout.flush()
    answer = stdin.readline()
    return answer.strip().lower() if answer else "c"  # EOF cancels


def review(candidate: Candidate, wrapper: Wrapper, *, created: date, stdin: TextIO,
           stdout: Terminal, editor: Editor, taken: frozenset[str] = frozenset()
           ) -> Candidate | None:
    """Show the card and ask approve / edit / cancel; the approved candidate or None."""
    while True:
        stdout.write("\n" + render_card(candidate, wrapper, created=created) + "\n")
        issues = problems(candidate, taken)
        for issue in issues:
            stdout.write(f"  problem: {issue}\n")
        choices = "[e]dit / [c]ancel" if issues else "[a]pprove / [e]dit / [c]ancel"
        answer = _ask(f"Save card {candidate.id!r}? {choices}: ", stdin, stdout)
        if answer in ("a", "approve", "y", "yes") and not issues:
            return candidate
        if answer in ("e", "edit"):
            # The editor gets the card in a file (`program_editor`'s temp file): a secret in
            # it goes as its marker, which shows the reviewer what to take out (a card holding
            # one cannot be approved).
            try:
                candidate = parse_card_text(editor(secrets.redact(
                    render_card(candidate, wrapper, created=created))))
            except EngramError as exc:
                stdout.write(f"  not changed: {exc}\n")
            continue
        if answer in ("c", "cancel", "n", "no", "q"):
            return None
        stdout.write("  answer a, e or c\n")


def stream_editor(stdin: TextIO, stdout: Terminal) -> Editor:
    """Edit without an editor program: the new card text is read until a line `.`."""

    def edit(text: str) -> str:
        stdout.write("Type the edited card (frontmatter and body); end with a line holding "
                     "only '.':\n")
        lines: list[str] = []
        for line in iter(stdin.readline, ""):
            if line.rstrip("\n") == ".":
                break
            lines.append(line)
        return "".join(lines) or text

    return edit


def program_editor(command: str) -> Editor:
    """Edit in `$VISUAL`/`$EDITOR` on a temp file."""

    def edit(text: str) -> str:
        import os
        import shlex
        import subprocess
        import tempfile

        fd, name = tempfile.mkstemp(prefix="engram-card-", suffix=".md")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            subprocess.run([*shlex.split(command), name], check=False)
            return Path(name).read_text(encoding="utf-8")
        finally:
            os.unlink(name)

    return edit


def promote(wrapper: Wrapper, memory_dir: Path, *, yes: bool, stdin: TextIO, stdout: Terminal,
            editor: Editor, created: date | None = None) -> list[Path]:
    """Review each candidate and write the approved ones to `<memory dir>/<id>.md`; the
    paths written. The trace is verified before anything is shown."""
    if not verify_trace(memory_dir, wrapper.trace, wrapper.trace_sha256):
        raise EngramError(f"trace {wrapper.trace} is missing or no longer matches its sha256",
                          "the trace is the evidence; run `engram observe` again to rebuild it")
    created = created or date.today()

    def taken() -> frozenset[str]:
        return frozenset(p.stem for p in memory_dir.glob("*.md"))

    if yes:
        # All or nothing: check every candidate before writing the first.
        ids = [c.id for c in wrapper.candidates]
        for candidate in wrapper.candidates:
            issues = problems(candidate, taken())
            if ids.count(candidate.id) > 1:
                issues.append("two candidates share this id")
            if issues:
                raise EngramError(f"candidate {candidate.id!r}: " + "; ".join(issues),
                                  "edit the inbox file, or run without --yes to edit it here")
    written: list[Path] = []
    for candidate in wrapper.candidates:
        approved = candidate if yes else review(candidate, wrapper, created=created,
                                                stdin=stdin, stdout=stdout, editor=editor,
                                                taken=taken())
        if approved is None:
            stdout.write(f"CANCELLED {candidate.id}: nothing written\n")
            continue
        target = memory_dir / f"{approved.id}.md"
        fileio.atomic_write_text(target, render_card(approved, wrapper, created=created),
                                 mode=0o644)
        written.append(target)
    return written
