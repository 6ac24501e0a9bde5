"""Value-shaped secret detection and redaction.

Runs on the hook path over card bodies (issue 8, secrets gate) and over transcripts in
`observe` (issue 6), so it imports only `re`, every pattern is bounded (no nested or
unbounded quantifiers that can backtrack catastrophically), and it prefers missing an odd
secret over flagging ordinary prose and code: a false positive blocks a card from delivery.

Detection is by *value shape* (a provider prefix, a key block, a password in a URL) or by a
secret-looking *name* with a value that is not a placeholder or a code reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Iterator

MARKER_PREFIX: Final = "[REDACTED:"


@dataclass(frozen=True)
class SecretHit:
    """One secret: `line` is 1-based; `start`/`end` are character offsets into the whole text
    (the span `redact` replaces); `kind` names the shape, e.g. `aws-access-key`."""

    line: int
    kind: str
    start: int
    end: int


def marker(kind: str) -> str:
    return f"{MARKER_PREFIX}{kind}]"


# Provider shapes. Each is anchored on a literal prefix and bounded, so it costs one cheap
# scan of the text. The token classes exclude the characters around them (no backtracking
# between adjacent quantifiers).
_TOKEN_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("aws-access-key", re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Za-z0-9])")),
    ("github-token", re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,251})(?![A-Za-z0-9_])")),
    ("anthropic-key", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,400}")),
    ("openai-key", re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{20,400}")),
    ("slack-token", re.compile(r"(?<![A-Za-z0-9_-])xox[abposre]-[A-Za-z0-9-]{10,250}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,200}")),
    ("google-api-key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])")),
    ("stripe-key", re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,247}(?![A-Za-z0-9_])")),
    ("stripe-webhook-secret", re.compile(r"(?<![A-Za-z0-9_])whsec_[0-9A-Za-z]{24,247}(?![A-Za-z0-9_])")),
    ("jwt", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{8,2000}")),
    ("bearer-token", re.compile(r"(?i:\bbearer)[ \t]{1,4}([A-Za-z0-9._~+/-]{20,2000}=*)")),
)

# A key block; an unterminated one runs to the end of the text (a truncated key still leaks).
_PRIVATE_KEY: Final = re.compile(
    r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"[\s\S]*?(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)"
)

# scheme://user:password@host — only the password is redacted.
_URL_PASSWORD: Final = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,15}://[^\s:/@]{0,128}:([^\s/@]{1,256})@"
)

# NAME = value, NAME: value, "name": "value", export NAME=value. The name may be quoted.
# Zero-width (a lookahead) so that a value which itself looks like `NAME=...` does not hide
# the assignment inside it from the scan.
_ASSIGNMENT: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])(?=[\"']?([A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']?[ \t]{0,8}"
    r"(?::=|=>|=|:)[ \t]{0,8}([\"'`]?)([^\s\"'`,;=:]{1,512}={0,2}))"
)
# Cheap gate: without one of these words no assignment can have a secret-looking name.
_SECRET_WORD: Final = re.compile(r"(?i)key|token|secret|pass|pat")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SECRET_SUFFIXES: Final = ("key", "token", "secret", "apikey", "pat", "passphrase")
_NOT_SECRET_NAME_PARTS: Final = ("public", "pub", "publishable", "primary", "foreign",
                                 "sort", "cache", "partition", "idempotency", "max", "min")
_PLACEHOLDERS: Final = frozenset("""
password passwd pass pwd secret token key apikey api_key changeme change_me changeit example
sample dummy test testing placeholder redacted none null nil undefined true false yes no
your_key your_token your_secret your_password yourpassword mypassword mysecret xxx xxxx
""".split())
_CODE_REFERENCE: Final = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+|[A-Za-z_][\w.]*[(\[{].*")


def _classes(value: str) -> int:
    return (any(c.islower() for c in value) + any(c.isupper() for c in value)
            + any(c.isdigit() for c in value) + any(not c.isalnum() for c in value))


def _looks_random(token: str) -> bool:
    """Generated keys mix cases and digits; long hex/lowercase tokens at least mix digits in."""
    has_digit = any(c.isdigit() for c in token)
    has_upper = any(c.isupper() for c in token)
    has_lower = any(c.islower() for c in token)
    return has_digit and ((has_upper and has_lower) or (len(token) >= 32 and (has_lower or has_upper)))


def is_placeholder(value: str) -> bool:
    """Values that only stand for a secret: `changeme`, `<token>`, `${VAR}`, `xxxx`, `***`,
    an earlier redaction marker."""
    stripped = value.strip("\"'`")
    lowered = stripped.lower()
    if not stripped or lowered in _PLACEHOLDERS or stripped.startswith(MARKER_PREFIX):
        return True
    if stripped[0] in "<$%{[(" or stripped.startswith("process.env"):
        return True
    if len(set(lowered)) <= 2:  # xxxxxxxx, ********, 00000000, abababab
        return True
    return lowered.startswith(("your-", "your_", "my-", "my_", "example", "<", "..."))


def is_secret_name(name: str) -> bool:
    """`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*` and their camelCase and dotted forms;
    not `PUBLIC_KEY`, `SORT_KEY`, `MAX_TOKENS`."""
    words = [w for w in re.split(r"[_.\-]+", _CAMEL.sub("_", name).lower()) if w]
    if not words:
        return False
    if any(w in ("password", "passwd", "passphrase") or "password" in w for w in words):
        return True
    if any(w in _NOT_SECRET_NAME_PARTS for w in words):
        return False
    last = words[-1]
    if last in ("token", "secret"):
        return True
    # A bare `key` is a dict key, a sort key, a cache key... only a compound one is secret.
    if last == "key" and len(words) >= 2:
        return True
    return last in ("apikey", "secretkey", "accesskey", "privatekey", "authtoken")


def _is_secret_value(name: str, value: str) -> bool:
    if is_placeholder(value) or value[0] in "/~." or "://" in value:
        return False  # paths and URLs (a URL's password is its own pattern)
    if _CODE_REFERENCE.fullmatch(value):
        return False  # settings.SECRET_KEY, os.environ["X"], get_token()
    lowered = name.lower()
    if "pass" in lowered:
        # Passwords may be short words; demand a little variety unless long.
        return len(value) >= 6 and (_classes(value) >= 2 or len(value) >= 12)
    return len(value) >= 8 and _classes(value) >= 2 and not value.isdigit()


def _scan(text: str) -> Iterator[tuple[str, int, int]]:
    for match in _PRIVATE_KEY.finditer(text):
        yield "private-key", match.start(), match.end()
    for kind, pattern in _TOKEN_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span(1) if pattern.groups else match.span()
            token = text[start:end]
            if kind in ("openai-key", "anthropic-key", "bearer-token") and not _looks_random(
                token.split("-", 1)[-1] if kind != "bearer-token" else token
            ):
                continue  # sk-learn-compatible-estimator, "Bearer authentication-header"
            yield kind, start, end
    for match in _URL_PASSWORD.finditer(text):
        if not is_placeholder(match.group(1)):
            yield "url-password", match.start(1), match.end(1)
    if ("=" in text or ":" in text) and _SECRET_WORD.search(text):
        for match in _ASSIGNMENT.finditer(text):
            name, value = match.group(1), match.group(3)
            if is_secret_name(name) and _is_secret_value(name, value):
                yield "assigned-secret", match.start(3), match.end(3)


def find_secrets(text: str) -> list[SecretHit]:
    """Every secret in `text`, in order, overlaps merged (the earliest, then longest, wins)."""
    spans = sorted(_scan(text), key=lambda s: (s[1], -s[2]))
    hits: list[SecretHit] = []
    last_end = -1
    line = 1
    line_pos = 0
    for kind, start, end in spans:
        if start < last_end:
            continue
        line += text.count("\n", line_pos, start)
        line_pos = start
        hits.append(SecretHit(line=line, kind=kind, start=start, end=end))
        last_end = end
    return hits


def redact(text: str) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`; idempotent."""
    hits = find_secrets(text)
    if not hits:
        return text
    parts: list[str] = []
    position = 0
    for hit in hits:
        parts.append(text[position:hit.start])
        parts.append(marker(hit.kind))
        position = hit.end
    parts.append(text[position:])
    return "".join(parts)


def has_secrets(text: str) -> bool:
    return bool(find_secrets(text))
