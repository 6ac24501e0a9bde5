"""Make untrusted text safe to keep as evidence or to show an agent: redact value-shaped
secrets, drop prompt-injection-like lines, strip injected hook context, and reduce paths so
neither the home directory nor the login name survives.

Used by `observe` on transcripts and offered to `lint`/the renderer for card bodies
(injection hygiene). Only `re` and small stdlib pieces; every pattern is bounded.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from engram import secrets

# Blocks removed whole when they close within a bounded distance. Hook context is what
# hooks (engram's included) injected; Gemini folds it into the prompt text itself.
_HOOK_CONTEXT_BLOCK: Final = re.compile(r"<hook_context>[\s\S]{0,20000}?</hook_context>\n{0,2}")
_SYSTEM_BLOCK: Final = re.compile(
    r"(?i)<(system(?:[-_]reminder)?)(?:\s[^>\n]{0,200})?>[\s\S]{0,20000}?</\1\s{0,3}>"
)

# Line patterns. Each is bounded ({0,N}) so a long line cannot make them backtrack.
INJECTION_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("ignore-instructions", re.compile(
        r"(?i)\b(?:ignore|disregard|forget|override)\b[^\n]{0,40}?"
        r"\b(?:previous|prior|above|earlier|preceding|foregoing|all|system|developer|your)"
        r"\b[^\n]{0,30}?\b(?:instructions?|prompts?|rules|directions|guidelines|directives)\b"
        r"|(?i:\b(?:ignore|disregard|forget)[ \t]{1,3}(?:everything|anything)[ \t]{1,3}"
        r"(?:above|before|earlier|you were told))")),
    ("reveal-system-prompt", re.compile(
        r"(?i)\b(?:reveal|print|show|output|repeat|leak|display|dump|disclose|tell me|give me)"
        r"\b[^\n]{0,40}?\b(?:system|developer|hidden|initial|original)[ \t]{1,3}"
        r"(?:prompt|message|instructions?)\b")),
    ("system-tag", re.compile(
        r"(?i)<[ \t]{0,3}/?[ \t]{0,3}(?:system(?:[-_](?:reminder|prompt))?|\|?im_(?:start|end)\|?)"
        r"[ \t]{0,3}(?:>|[ \t][^>\n]{0,200}>)")),
    ("engram-framing", re.compile(r"(?i)\balready loaded:|\bengram proof:")),
    ("role-line", re.compile(r"(?i)^[ \t>*#-]{0,8}system[ \t]{0,3}:[ \t]")),
)


@dataclass(frozen=True)
class InjectionHit:
    line: int  # 1-based
    kind: str


@dataclass(frozen=True)
class PathContext:
    """What to hide: the workspace root (shown as `.`), the home directory (`~`) and login
    names (never left inside a path)."""

    home: tuple[str, ...] = ()
    workspace: tuple[str, ...] = ()
    logins: tuple[str, ...] = ()

    @classmethod
    def current(cls, workspace: Path | None = None) -> "PathContext":
        home = os.environ.get("HOME") or os.path.expanduser("~")
        return cls(home=_variants(home), workspace=_variants(str(workspace)) if workspace else (),
                   logins=login_names())


@dataclass(frozen=True)
class Sanitized:
    text: str
    secrets: int = 0
    injections: int = 0
    kinds: tuple[str, ...] = field(default=())


def _variants(path: str) -> tuple[str, ...]:
    """The path as given and as resolved (macOS /var -> /private/var), without a trailing
    slash; the longest first so the more specific one is replaced first."""
    found = {path.rstrip("/\\") or path}
    try:
        found.add(os.path.realpath(path).rstrip("/\\"))
    except (OSError, ValueError):
        pass
    return tuple(sorted((p for p in found if len(p) > 1), key=len, reverse=True))


def login_names() -> tuple[str, ...]:
    names = {os.environ.get(k, "") for k in ("USER", "LOGNAME", "USERNAME")}
    try:
        import pwd

        names.add(pwd.getpwuid(os.getuid()).pw_name)
    except (ImportError, KeyError, OSError, AttributeError):
        pass
    # Very short names would mangle ordinary path parts (`js`, `go`); three letters is the
    # shortest we hide.
    return tuple(sorted((n for n in names if len(n) >= 3), key=len, reverse=True))


def strip_hook_context(text: str) -> str:
    """Remove `<hook_context>...</hook_context>` blocks (hook output folded into a prompt)."""
    if "<hook_context>" not in text:
        return text
    return _HOOK_CONTEXT_BLOCK.sub("", text)


def find_injections(text: str) -> list[InjectionHit]:
    """Lines that look like prompt injection or imitate engram's framing."""
    hits: list[InjectionHit] = []
    for number, line in enumerate(text.split("\n"), start=1):
        for kind, pattern in INJECTION_PATTERNS:
            if pattern.search(line):
                hits.append(InjectionHit(number, kind))
                break
    return hits


def remove_injections(text: str) -> tuple[str, list[str]]:
    """`text` with system blocks and injection-like lines replaced by `[REMOVED:<kind>]`
    (so a reviewer sees that something was there), and the kinds removed."""
    kinds: list[str] = []

    def _block(match: re.Match[str]) -> str:
        kinds.append("system-tag")
        return "[REMOVED:system-tag]"

    if "<" in text:
        text = _SYSTEM_BLOCK.sub(_block, text)
    lines = text.split("\n")
    for index, line in enumerate(lines):
        for kind, pattern in INJECTION_PATTERNS:
            if pattern.search(line):
                lines[index] = f"[REMOVED:{kind}]"
                kinds.append(kind)
                break
    return "\n".join(lines), kinds


_BOUNDARY: Final = r"(?![A-Za-z0-9_.-])"
_GENERIC_HOMES: Final = (
    re.compile(r"(?<![A-Za-z0-9_.-])/(?:home|Users)/[^/\\\s\"'`<>:|]{1,64}" + _BOUNDARY),
    re.compile(r"(?<![A-Za-z0-9_.-])/root" + _BOUNDARY),
    re.compile(r"(?i)(?<![A-Za-z0-9])[A-Z]:\\{1,2}Users\\{1,2}[^\\/\s\"'`<>:|]{1,64}" + _BOUNDARY),
)
# Claude names project folders after the cwd: `-home-alice-proj`.
_CLAUDE_SLUG: Final = re.compile(r"(?<=/)-(home|Users)-[^/\\\s-]{1,64}(?=-|/)")
_TOKEN: Final = re.compile(r"[^\s\"'`<>()\[\]{},;]+")


def reduce_paths(text: str, context: PathContext) -> str:
    """Workspace root -> `.`, home directory -> `~`, any other user's home -> `~`, and no
    login name left inside a path."""
    for root in context.workspace:
        if root in text:
            text = re.sub(re.escape(root) + _BOUNDARY, ".", text)
    for home in context.home:
        if home in text:
            text = re.sub(re.escape(home) + _BOUNDARY, "~", text)
    for pattern in _GENERIC_HOMES:
        text = pattern.sub("~", text)
    text = _CLAUDE_SLUG.sub(lambda m: f"-{m.group(1)}-~", text)
    if context.logins and ("/" in text or "\\" in text):
        names = re.compile("|".join(re.escape(n) for n in context.logins))
        bounded = re.compile(r"(?<![A-Za-z0-9])(?:" + names.pattern + r")(?![A-Za-z0-9])")

        def _token(match: re.Match[str]) -> str:
            token = match.group(0)
            if "/" not in token and "\\" not in token:
                return token
            return bounded.sub("~", token)

        text = _TOKEN.sub(_token, text)
    return text


def sanitize(text: str, context: PathContext | None = None) -> Sanitized:
    """Everything above, in the order that keeps each step honest: hook context first (it is
    not the user's text), then injection lines, then secrets, then paths."""
    text = strip_hook_context(text)
    text, kinds = remove_injections(text)
    hits = secrets.find_secrets(text)
    if hits:
        text = secrets.redact(text, hits)
    if context is not None:
        text = reduce_paths(text, context)
    return Sanitized(text=text, secrets=len(hits), injections=len(kinds),
                     kinds=tuple(sorted(set(kinds) | {h.kind for h in hits})))
