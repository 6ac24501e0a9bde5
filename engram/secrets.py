"""Value-shaped secret detection and redaction.

Runs when the index compiles a changed card (the index stores the verdict, so a hook with a
fresh index never scans), in `lint`, `doctor` and over transcripts in `observe`. It imports
only `re` (and, when a text needs them, `unicodedata`, `binascii` and `urllib.parse`), every pattern is
bounded (no nested or unbounded quantifiers that can backtrack catastrophically), and it
prefers missing an odd secret over flagging ordinary prose and code: a false positive blocks
a card from delivery.

Detection is by *value shape* (a provider prefix, a key block, a password in a URL) or by a
secret-looking *name* with a value that is not a placeholder or a code reference. Invisible
characters (zero-width spaces, joiners, bidi controls: Unicode format characters) are removed
and compatibility forms folded (NFKC: fullwidth letters) before scanning, so a token split by
one or written in fullwidth is still found, and Cyrillic or Greek look-alike letters inside a
Latin word are read as Latin; the redaction covers the original characters. A token under up to
three encodings (base64, hex, percent-encoding; base64 wrapped over lines) is found in its
decoded form and the whole encoded run is redacted; a known prefix in capitals is found too.

The provider shapes follow the formats the providers document (`docs/reliability.md` has the
coverage figures, the false positives on real rule corpora, and why this is not a dependency
on a published rule set).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
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
# Each comes with literals one of which any match must contain: a substring test (far cheaper
# than a regex scan) skips the pattern for the text of almost every card.
_TOKEN_PATTERNS: Final[tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...]] = (
    ("aws-access-key", ('AKIA', 'ASIA', 'ABIA', 'ACCA', 'A3T'), re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}(?![A-Za-z0-9])")),
    ("github-token", ('ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'), re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,251})(?![A-Za-z0-9_])")),
    ("gitlab-token", ('gl', 'GR1348941'), re.compile(r"(?<![A-Za-z0-9_-])(?:gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas|ffct)-[A-Za-z0-9_-]{20,300}|GR1348941[A-Za-z0-9_-]{20,300})(?![A-Za-z0-9_-])")),
    ("npm-token", ('npm_',), re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])")),
    ("huggingface-token", ('hf_', 'api_org_'), re.compile(r"(?<![A-Za-z0-9_])(?:hf_|api_org_)[A-Za-z0-9]{30,40}(?![A-Za-z0-9_])")),
    ("pypi-token", ('pypi-',), re.compile(r"(?<![A-Za-z0-9_-])pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{40,2000}")),
    ("telegram-bot-token", (':AA',), re.compile(r"(?<![A-Za-z0-9_:-])[0-9]{8,10}:AA[A-Za-z0-9_-]{32,33}(?![A-Za-z0-9_-])")),
    ("sendgrid-key", ('SG.',), re.compile(r"(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")),
    ("twilio-key", ('SK',), re.compile(r"(?<![A-Za-z0-9_])SK[0-9a-f]{32}(?![A-Za-z0-9_])")),
    ("mailchimp-key", ('-us',), re.compile(r"(?<![A-Za-z0-9_])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9_])")),
    ("discord-bot-token", ('.',), re.compile(r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![A-Za-z0-9_-])")),
    ("square-token", ('sq0', 'EAAA'), re.compile(r"(?<![A-Za-z0-9_-])(?:sq0atp|sq0csp|EAAA)[-A-Za-z0-9_]{22,60}(?![A-Za-z0-9_-])")),
    ("shopify-token", ('shp',), re.compile(r"(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9_])")),
    ("digitalocean-token", ('_v1_',), re.compile(r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])")),
    ("doppler-token", ('dp.',), re.compile(r"(?<![A-Za-z0-9_.])dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_.-]{40,60}(?![A-Za-z0-9_-])")),
    ("databricks-token", ('dapi',), re.compile(r"(?<![A-Za-z0-9_])dapi[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9_])")),
    ("linear-key", ('lin_',), re.compile(r"(?<![A-Za-z0-9_])lin_(?:api|oauth)_[A-Za-z0-9]{40}(?![A-Za-z0-9_])")),
    ("postman-key", ('PMAK-',), re.compile(r"(?<![A-Za-z0-9_-])PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![A-Za-z0-9_-])")),
    ("planetscale-token", ('pscale_',), re.compile(r"(?<![A-Za-z0-9_])pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}(?![A-Za-z0-9_-])")),
    ("pulumi-token", ('pul-',), re.compile(r"(?<![A-Za-z0-9_-])pul-[a-f0-9]{40}(?![A-Za-z0-9_-])")),
    ("rubygems-key", ('rubygems_',), re.compile(r"(?<![A-Za-z0-9_])rubygems_[a-f0-9]{48}(?![A-Za-z0-9_])")),
    ("docker-hub-token", ('dckr_',), re.compile(r"(?<![A-Za-z0-9_])dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])")),
    ("grafana-token", ('glc_', 'glsa_'), re.compile(r"(?<![A-Za-z0-9_])(?:glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})(?![A-Za-z0-9_])")),
    ("newrelic-key", ('NRAK-', 'NRJS-', 'NRII-'), re.compile(r"(?<![A-Za-z0-9_-])NR(?:AK|JS|II)-[A-Za-z0-9]{19,32}(?![A-Za-z0-9_-])")),
    ("sentry-token", ('sntr',), re.compile(r"(?<![A-Za-z0-9_])sntry[su]_[A-Za-z0-9+/=_]{40,400}(?![A-Za-z0-9_])")),
    ("age-secret-key", ('AGE-SECRET-KEY-',), re.compile(r"(?<![A-Za-z0-9-])AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}(?![A-Za-z0-9])")),
    ("vault-token", ('hvs.', 'hvb.', 'hvr.'), re.compile(r"(?<![A-Za-z0-9_.])hv[sbr]\.[A-Za-z0-9_-]{24,300}(?![A-Za-z0-9_-])")),
    ("terraform-token", ('.atlasv1.',), re.compile(r"(?<![A-Za-z0-9_])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}(?![A-Za-z0-9_=-])")),
    ("alibaba-key", ('LTAI',), re.compile(r"(?<![A-Za-z0-9])LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])")),
    ("google-oauth-secret", ('GOCSPX-',), re.compile(r"(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])")),
    ("groq-key", ('gsk_',), re.compile(r"(?<![A-Za-z0-9_])gsk_[A-Za-z0-9]{52}(?![A-Za-z0-9_])")),
    ("replicate-token", ('r8_',), re.compile(r"(?<![A-Za-z0-9_])r8_[A-Za-z0-9]{37}(?![A-Za-z0-9_])")),
    ("perplexity-key", ('pplx-',), re.compile(r"(?<![A-Za-z0-9_-])pplx-[A-Za-z0-9]{48}(?![A-Za-z0-9_-])")),
    ("xai-key", ('xai-',), re.compile(r"(?<![A-Za-z0-9_-])xai-[A-Za-z0-9]{70,90}(?![A-Za-z0-9_-])")),
    ("supabase-token", ('sbp_', 'sb_secret_'), re.compile(r"(?<![A-Za-z0-9_])sb(?:p|_secret)_[A-Za-z0-9_]{32,64}(?![A-Za-z0-9_])")),
    ("figma-token", ('figd_', 'figo_', 'figu_'), re.compile(r"(?<![A-Za-z0-9_])fig[dou]_[A-Za-z0-9_-]{40,60}(?![A-Za-z0-9_-])")),
    ("mapbox-token", ('sk.eyJ',), re.compile(r"(?<![A-Za-z0-9_.])sk\.eyJ[A-Za-z0-9_-]{20,200}\.[A-Za-z0-9_-]{20,40}(?![A-Za-z0-9_-])")),
    ("atlassian-token", ('ATATT3',), re.compile(r"(?<![A-Za-z0-9_])ATATT3[A-Za-z0-9_=-]{170,200}(?![A-Za-z0-9_=-])")),
    ("azure-storage-key", ('ccountkey=',), re.compile(r"(?i:AccountKey)=([A-Za-z0-9+/]{86}==)")),
    ("dynatrace-token", ('dt0c01.',), re.compile(r"(?<![A-Za-z0-9_.])dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}(?![A-Za-z0-9])")),
    ("anthropic-key", ('sk-ant-',), re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,400}")),
    ("openai-key", ('sk-',), re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{20,400}")),
    ("slack-token", ('xox', 'xapp-'), re.compile(r"(?<![A-Za-z0-9_-])(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,250}")),
    ("slack-webhook", ('hooks.slack.com',), re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,200}")),
    ("google-api-key", ('AIza',), re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])")),
    ("stripe-key", ('_live_', '_test_'), re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,247}(?![A-Za-z0-9_])")),
    ("stripe-webhook-secret", ('whsec_',), re.compile(r"(?<![A-Za-z0-9_])whsec_[0-9A-Za-z]{24,247}(?![A-Za-z0-9_])")),
    ("jwt", ('eyJ',), re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{8,2000}")),
    ("bearer-token", ('earer',), re.compile(r"(?i:\bbearer)[ \t]{1,4}([A-Za-z0-9._~+/-]{20,2000}=*)")),
    ("google-oauth-token", ('ya29.',), re.compile(r"(?<![A-Za-z0-9_.-])ya29\.[A-Za-z0-9_-]{30,2000}(?![A-Za-z0-9_-])")),
    # `Authorization: Token ...` (Django REST framework, GitHub's older scheme) and the like.
    ("authorization-token", ('uthorization',), re.compile(
        r"(?i:\bauthorization)[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?i:token|apikey|api-key|key|sso-key)"
        r"[ \t]{1,4}([A-Za-z0-9._~+/:-]{16,2000}=*)")),
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

# scheme://token@host — a token as the user, with no password (`git clone
# https://<token>@github.com/...`): redacted when it looks generated, not a user's name.
_URL_USER_TOKEN: Final = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,15}://([A-Za-z0-9_~.%-]{16,256})@([A-Za-z0-9.-]{0,253})"
)
# A Sentry DSN's key is public by design (it only lets a client send events).
_PUBLIC_KEY_HOSTS: Final = ("sentry.io", "sentry")

# NAME = value, NAME: value, "name": "value", export NAME=value. The name may be quoted.
# Zero-width (a lookahead) so that a value which itself looks like `NAME=...` does not hide
# the assignment inside it from the scan.
_ASSIGNMENT: Final = re.compile(
    r"(?<![A-Za-z0-9_.-])(?=[\"']?([A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']?[ \t]{0,8}"
    r"(?::=|=>|=|:)[ \t]{0,8}([\"'`]?)([^\s\"'`,;=:]{1,512}={0,2}))"
)
# Cheap gate: without one of these words no assignment can have a secret-looking name.
_SECRET_WORD: Final = re.compile(r"(?i)key|token|secret|pass|pwd")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_SECRET_NAME_PARTS: Final = ("public", "pub", "publishable", "primary", "foreign",
                                 "sort", "cache", "partition", "idempotency", "max", "min")
_PLACEHOLDERS: Final = frozenset("""
password passwd pass pwd secret token key apikey api_key changeme change_me changeit example
sample dummy test testing placeholder redacted none null nil undefined true false yes no
your_key your_token your_secret your_password yourpassword mypassword mysecret xxx xxxx
""".split())
# A value holding one of these words is an example, not a credential someone uses.
_PLACEHOLDER_WORDS: Final = ("password", "changeme", "placeholder", "redacted", "dummy", "xxxx")
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


def _holds_placeholder_word(lowered: str) -> bool:
    """`lowered` holds a word that makes it an example; `xxxx` only when the x's are a
    third of it (`AKIAxxxxxxxxxxxxxxxx`, `xxxx-1234`): a generated token may hold four by chance."""
    return any(word in lowered for word in _PLACEHOLDER_WORDS[:-1]) or (
        "xxxx" in lowered and lowered.count("x") * 3 >= len(lowered))


_MARKDOWN_ESCAPE: Final = re.compile(r"\\([!-/:-@\[-`{-~])")


def _markdown_read(value: str) -> str:
    """`value` as Markdown shows it: `\\<token\\>` is `<token>`."""
    return _MARKDOWN_ESCAPE.sub(r"\1", value) if "\\" in value else value


def is_placeholder(value: str) -> bool:
    """Values that only stand for a secret: `changeme`, `<token>`, `${VAR}`, `xxxx`, `***`,
    an earlier redaction marker; Markdown's escapes read (`\\<token\\>`)."""
    stripped = _markdown_read(value).strip("\"'`")
    lowered = stripped.lower()
    if not stripped or lowered in _PLACEHOLDERS or stripped.startswith(MARKER_PREFIX):
        return True
    if stripped[0] in "<$%{[(" or "process.env" in stripped or "${" in stripped or "{{" in stripped:
        return True
    if _holds_placeholder_word(lowered):
        return True  # Password123, a-dummy-value, PLACEHOLDER_TOKEN
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
    # `DB_PASS`, `SMTP_PASS`, `MYSQL_PWD`, ODBC's `Pwd=`: a bare `pass` is a statement or a
    # step, a bare `pwd` a value that is a path, which the value check refuses.
    if last == "pwd" or last == "pass" and len(words) >= 2:
        return True
    if last in ("base", "value") and ("secret" in words or "token" in words):
        return True  # Rails' SECRET_KEY_BASE
    # A bare `key` is a dict key, a sort key, a cache key... only a compound one is secret.
    if last == "key" and len(words) >= 2:
        return True
    if last in ("apikey", "secretkey", "accesskey", "privatekey", "authtoken"):
        return True
    # One word of run-together ones (`identitytoken` in Docker's config.json, `clientsecret`).
    return len(words) == 1 and len(last) > 7 and last.endswith(("token", "secret"))


_SEPARATORS: Final = re.compile(r"[_\-. ]")
_WORD_PIECE: Final = re.compile(r"[A-Z]?[a-z]{1,20}|[A-Z]{1,12}")


def is_wordy(value: str) -> bool:
    """Made of words, not generated: `Property_Display_Key`, `client-secret`, `accessToken`,
    `Get-AzKeyVaultSecret`, `America/Los_Angeles`. A generated value of letters alone mixes
    cases inside its pieces (`wJalrXUtnFEMI`) or carries digits."""
    value = value.rstrip(")];,!?")
    if not value or any(c.isdigit() for c in value) or not value[0].isalpha():
        return False
    if any(not (c.isalpha() or c in "_-/.") for c in value):
        return False
    pieces = _CAMEL.sub(" ", value.replace("_", " ").replace("-", " ").replace("/", " ")
                        .replace(".", " ")).split()
    return all(_WORD_PIECE.fullmatch(piece) for piece in pieces)


# A Kubernetes bootstrap token (`kubeadm join --token abcdef.0123456789abcdef`, a kubeconfig's
# `token:`): its dot makes it look like a code reference.
_KUBE_BOOTSTRAP: Final = re.compile(r"[a-z0-9]{6}\.[a-z0-9]{16}")


def _is_secret_value(name: str, value: str) -> bool:
    if _KUBE_BOOTSTRAP.fullmatch(value) and any(c.isdigit() for c in value):
        return True
    if value[0] == "/" and _AWS_SECRET.fullmatch(value) and _classes(value) >= 3 and (
            "secretaccesskey" in _SEPARATORS.sub("", name.lower())
            or ("secret" in name.lower() and "/" not in value[1:])):
        # An AWS secret key is 40 base64 characters and may start with `/`: not a path. Under
        # the key's own name (`aws_secret_access_key`, `SecretAccessKey`) it may hold more `/`
        # (nearly half the keys that start with one do); no path goes by that name.
        return not is_placeholder(value)
    if is_placeholder(value) or value[0] in "/~.@\\" or "://" in value:
        return False  # paths and URLs (a URL's password is its own pattern)
    if _CODE_REFERENCE.fullmatch(value) or "(" in value or is_wordy(value):
        return False  # settings.SECRET_KEY, os.environ["X"], get_token(), accessToken
    password = "pass" in name.lower()
    if not password and is_wordy(value.rstrip("0123456789")):
        return False  # display-name-key="customEvent1": a resource name, not a key
    if password:
        # Passwords may be short words; demand a little variety unless long.
        return len(value) >= 6 and (_classes(value) >= 2 or len(value) >= 12)
    return len(value) >= 8 and _classes(value) >= 2 and not value.isdigit()


_CASELESS_KEYWORDS: Final = frozenset({"bearer-token", "azure-storage-key", "authorization-token"})
# Kinds whose shape alone is weak (prose-like words fit it): the token must look generated.
_RANDOM_ONLY: Final = frozenset({"openai-key", "anthropic-key", "bearer-token", "huggingface-token",
                                 "authorization-token",
                                 "discord-bot-token", "square-token", "telegram-bot-token",
                                 "gitlab-token", "slack-token", "newrelic-key", "figma-token",
                                 "planetscale-token", "supabase-token", "vault-token"})


def _is_generated(kind: str, token: str) -> bool:
    tail = token[-16:]
    if len(set(tail)) <= 2:  # ghp_xxxxxxxx..., glpat-XXXXXXXX...: a documentation placeholder
        return False
    if kind not in _RANDOM_ONLY:
        return True
    core = token if kind in ("bearer-token", "authorization-token") else token.split("-", 1)[-1] if kind in (
        "openai-key", "anthropic-key") else token
    if kind in ("huggingface-token", "discord-bot-token", "slack-token", "gitlab-token",
                "figma-token", "vault-token", "newrelic-key"):
        return _classes(core) >= 2 and any(c.isdigit() or c.isupper() for c in core[4:])
    return _looks_random(core)


# PuTTY's own key file format: the header line through the private MAC (or the text's end).
_PUTTY_KEY: Final = re.compile(r"PuTTY-User-Key-File-[0-9]{1,2}:[\s\S]*?(?:Private-MAC:[^\n]{0,200}|\Z)")
# An AWS secret access key has no prefix: 40 base64 characters, found next to its key id.
_AWS_SECRET: Final = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_NEIGHBOURHOOD: Final = 400
# A password-like name with a quoted value that may hold spaces (`password: "correct horse
# battery staple"`) or an unquoted one that may hold `:` (`PASSWORD=ab:cd:ef`), which the
# general assignment pattern stops at.
_PASS_ASSIGNMENT: Final = re.compile(
    r"(?i)(?<![A-Za-z0-9_.-])[\"']?([A-Za-z0-9_.-]{0,40}(?:pass(?:word|wd|phrase)?|pwd)"
    r"[A-Za-z0-9_.-]{0,20})[\"']?[ \t]{0,8}(?::=|=>|=|:)[ \t]{0,8}"
    r"(?:\"([^\"\n]{1,256})\"|'([^'\n]{1,256})'|([^\s\"'`,;]{1,256}))"
)
# Unquoted one-word values after `password:` that are prose, not a password.
_PROSE_VALUES: Final = frozenset("""
required optional string boolean integer number hidden masked provided omitted unchanged
missing invalid correct incorrect wrong empty blank stored hashed encrypted protected
supplied configured needed mandatory unknown default enabled disabled reset expired
string text bytes secret
""".split())


def _is_stand_in(value: str) -> bool:
    """Where the form itself says the value is a password (`mysql -pX`, `sshpass -p X`,
    `.pgpass`, `.netrc`, `PGPASSWORD=X`), only what stands for one is not: a placeholder
    word, a variable, a marker, one character repeated. A real password may be short and of
    one class (`abc`, `swordfish`)."""
    stripped = _markdown_read(value).strip("\"'`")
    lowered = stripped.lower()
    return not stripped or lowered in _PLACEHOLDERS or stripped.startswith(MARKER_PREFIX) \
        or stripped[0] in "<$%{[(-" or "${" in stripped or "{{" in stripped \
        or _holds_placeholder_word(lowered) or len(set(lowered)) == 1 \
        or lowered.startswith(("your-", "your_", "<", "...")) or lowered in ("stdin", "-")


def _is_password_value(value: str, quoted: bool, strong: bool = False) -> bool:
    """`strong`: the form says this is a password (see `_is_stand_in`)."""
    if strong:
        return not _is_stand_in(value) and "(" not in value
    if is_placeholder(value) or value[0] in "/~." or "://" in value or value.startswith("-"):
        return False
    if _CODE_REFERENCE.fullmatch(value) or "{" in value or "$" in value:
        return False
    if quoted and " " in value.strip():
        # A passphrase of words: at least three of them, not a sentence about passwords.
        words = value.split()
        return len(words) >= 3 and len(value) >= 12 and not value.rstrip().endswith((".", "?", "!")) \
            and all(w.isalnum() or w.isascii() and w.strip("-_!@#%&*0123456789").isalpha() for w in words)
    value = value.rstrip(")];,!?")
    if " " in value or len(value) < 6 or value.lower() in _PROSE_VALUES:
        return False
    # A type (`val password: String`), or a name passed on (`password: userPassword`).
    return not (value[0].isupper() and value[1:].islower()) and not (
        is_wordy(value) and not value.islower())


# A password passed on a command line: `--password X`, `--pass=X`, `--pwd X`, and a curl-style
# `-u user:password` / `--user user:password`.
_FLAG_PASSWORD: Final = re.compile(
    r"(?i)(?<![\w-])--?(?:[a-z]{1,12}-)?(?:store|key|src|dest|new)?(?:password|passwd|pass|pwd|passphrase)"
    r"(?:=|[ \t]{1,4})"
    r"(?:\"([^\"\n]{1,256})\"|'([^'\n]{1,256})'|([^\s\"'`;|&]{1,256}))"
)
# `--token X`, `--api-key X`, `--client-secret=X` (`kubeadm join --token ...`).
_TOKEN_FLAG: Final = re.compile(
    r"(?i)(?<![\w-])--(?:[a-z]{1,12}-){0,2}(?:token|secret|api-?key|access-key|secret-key)"
    r"(?:=|[ \t]{1,4})[\"']?([^\s\"'`;|&]{8,512})")
# Words after a password flag in prose about it, not a value given to it.
_FLAG_PROSE: Final = frozenset("""
a an and as at by for from if in instead is it of on only or the then to when with option
options flag flags argument parameter switch value
""".split())
# openssl's `-passin pass:X` / `-passout pass:X` / `-pass pass:X` (`env:`, `file:` name
# where the password is, not the password).
_OPENSSL_PASS: Final = re.compile(r"(?<![\w-])-pass(?:in|out)?[ \t]{1,4}pass:([^\s\"'`;|&]{1,256})")
# Tools whose `-p` (glued or not) is the password: sshpass, `docker login` and its kin;
# redis-cli's `-a`.
_P_FLAG_COMMAND: Final = re.compile(
    r"(?i)\b(?:sshpass|(?:docker|podman|buildah|skopeo|nerdctl|oras)[ \t]{1,4}login|redis-cli)\b"
    r"[^\n|;&]{0,300}")
_P_FLAG: Final = re.compile(
    r"(?<![\w-])-[pa](?:[ \t]{1,4})?(?:\"([^\"\n]{1,256})\"|'([^'\n]{1,256})'|([^\s\"'`;|&-][^\s\"'`;|&]{0,255}))")
_USER_FLAG: Final = re.compile(
    r"(?<![\w-])(?:-u|--user)(?:=|[ \t]{1,4})[\"']?[^\s:\"'/@]{1,64}:([^\s\"'`@/;|&]{6,256})"
)
# MySQL's client tools take the password glued to `-p` (`mysql -uroot -pSECRET db`): only
# on a `mysql`/`mariadb` command line, where `-p` means password (elsewhere it is a port, a
# path, a flag of its own).
_MYSQL_COMMAND: Final = re.compile(r"(?i)\b(?:mysql|mariadb)[a-z-]{0,12}\b[^\n|;&]{0,300}")
_MYSQL_GLUED_P: Final = re.compile(r"(?<![\w-])-p(?:\"([^\"\n]{1,256})\"|'([^'\n]{1,256})'|([^\s\"'`;|&-][^\s\"'`;|&]{0,255}))")
# A PostgreSQL password file line, `host:port:database:user:password` (each of the first
# four may be `*`): a port of digits in the second field, exactly five fields.
_PGPASS: Final = re.compile(
    r"(?<![\w.:/@-])[A-Za-z0-9_.*-]{1,253}:(?:[0-9]{2,5}|\*):[A-Za-z0-9_.*$-]{1,63}:"
    r"[A-Za-z0-9_.*@$-]{1,63}:([^\s:\"'`]{1,256})(?![^\s\"'`])")
# What any such line holds from its port on, found from its colons: the full pattern, tried
# at every word of a text, cost more than all the other command-line forms together.
_PGPASS_PORT: Final = re.compile(r":(?:[0-9]{2,5}|\*):[^\s:]{1,63}:[^\s:]{1,63}:[^\s:]")
# `aws ssm put-parameter ... --value X`: the value is a secret when the parameter is a
# SecureString or its name's last part is a secret's (`/prod/app/DB_PASSWORD`). The command
# may go on over lines ended by `\`.
_SSM_PUT: Final = re.compile(r"\bssm[ \t]{1,4}put-parameter\b(?:[^\n|;&\\]|\\\r?\n|\\[^\n]){0,1000}")
_SSM_NAME: Final = re.compile(r"--name(?:=|[ \t]{1,4})[\"']?([^\s\"'`;|&]{1,2048})")
_SSM_VALUE: Final = re.compile(
    r"--value(?:=|[ \t]{1,4})(?:\"([^\"\n]{1,4096})\"|'([^'\n]{1,4096})'|([^\s\"'`;|&]{1,4096}))")
# A SecureString in the JSON `aws ssm get-parameter --with-decryption` prints: its `Value`
# member, in the object whose `Type` says so.
_SSM_JSON_VALUE: Final = re.compile(r"\"Value\"[ \t]{0,4}:[ \t]{0,4}\"((?:[^\"\\\n]|\\[^\n]){1,4096})\"")
_SSM_SECURE_TYPE: Final = re.compile(r"\"Type\"[ \t]{0,4}:[ \t]{0,4}\"SecureString\"")


def _ssm_secrets(text: str) -> Iterator[tuple[str, int, int]]:
    for command in _SSM_PUT.finditer(text):
        line = command.group(0)
        name = _SSM_NAME.search(line)
        secure = "securestring" in line.lower()
        named = name is not None and is_secret_name(name.group(1).rstrip("/").rsplit("/", 1)[-1])
        if not secure and not named:
            continue
        for match in _SSM_VALUE.finditer(text, command.start(), command.end()):
            group = next(g for g in (1, 2, 3) if match.group(g) is not None)
            value = match.group(group)
            if value.startswith(("file://", "fileb://")):
                continue  # the CLI reads the value from that file
            if _is_password_value(value, group != 3, strong=secure):
                yield "assigned-secret", match.start(group), match.end(group)
    if "\"SecureString\"" in text:
        for match in _SSM_JSON_VALUE.finditer(text):
            opening = text.rfind("{", max(0, match.start() - 1000), match.start())
            closing = text.find("}", match.end(), match.end() + 1000)
            if opening >= 0 and _SSM_SECURE_TYPE.search(
                    text, opening, len(text) if closing < 0 else closing) is not None \
                    and _is_password_value(match.group(1), True, strong=True):
                yield "assigned-secret", match.start(1), match.end(1)


# `Authorization: Basic <base64 of user:password>`.
_BASIC_AUTH: Final = re.compile(r"(?i:\bbasic)[ \t]{1,4}([A-Za-z0-9+/]{8,400}={0,2})(?![A-Za-z0-9+/=])")


def _command_line_secrets(text: str) -> Iterator[tuple[str, int, int]]:
    lowered = text.lower()
    if "pass" in lowered or "-pwd" in lowered:
        for match in _FLAG_PASSWORD.finditer(text):
            group = next(g for g in (1, 2, 3) if match.group(g) is not None)
            value = match.group(group)
            if group == 3 and value.rstrip(".,:)").lower() in _FLAG_PROSE:
                continue  # "set it with --password or -p", "the --password option"
            if _is_password_value(value, group != 3, strong=not value.startswith(
                    ("env:", "file:", "fd:", "pass:"))):
                yield "assigned-secret", match.start(group), match.end(group)
        if "pass:" in text:
            for match in _OPENSSL_PASS.finditer(text):
                if _is_password_value(match.group(1), False, strong=True):
                    yield "assigned-secret", match.start(1), match.end(1)
    if "--" in text and ("token" in lowered or "secret" in lowered or "key" in lowered):
        for match in _TOKEN_FLAG.finditer(text):
            if _is_secret_value("token", match.group(1)):
                yield "assigned-secret", match.start(1), match.end(1)
    if "sshpass" in lowered or "login" in lowered or "redis-cli" in lowered:
        for command in _P_FLAG_COMMAND.finditer(text):
            for match in _P_FLAG.finditer(text, command.start(), command.end()):
                if (match.group(0)[1] == "a") != command.group(0).lower().startswith("redis"):
                    continue  # redis-cli's password is `-a` (its `-p` is the port)
                group = next(g for g in (1, 2, 3) if match.group(g) is not None)
                if _is_password_value(match.group(group), group != 3, strong=True):
                    yield "assigned-secret", match.start(group), match.end(group)
    if "-u " in text or "-u\t" in text or "--user" in text:
        for match in _USER_FLAG.finditer(text):
            value = match.group(1)
            if _classes(value) >= 2 and not value.isdigit() and _is_password_value(value, False):
                yield "url-password", match.start(1), match.end(1)
    if "mysql" in lowered or "mariadb" in lowered:
        for command in _MYSQL_COMMAND.finditer(text):
            for match in _MYSQL_GLUED_P.finditer(text, command.start(), command.end()):
                group = next(g for g in (1, 2, 3) if match.group(g) is not None)
                if _is_password_value(match.group(group), group != 3, strong=True):
                    yield "assigned-secret", match.start(group), match.end(group)
    if text.count(":") >= 4 and _PGPASS_PORT.search(text):
        for match in _PGPASS.finditer(text):
            # A host of digits alone is a time or an address (`2024:01:02:03:04`), not a host.
            host = match.group(0).split(":", 1)[0]
            if not host.isdigit() and _is_password_value(match.group(1), False, strong=True):
                yield "url-password", match.start(1), match.end(1)
    if "ssm" in lowered or "SecureString" in text:
        yield from _ssm_secrets(text)
    if "basic" in lowered:
        for match in _BASIC_AUTH.finditer(text):
            if _is_user_password(match.group(1)):
                yield "basic-auth", match.start(1), match.end(1)


# A name and its value on two lines: a Kubernetes or compose `env` entry (`- name: DB_PASSWORD`
# then `value: ...`), and a YAML key whose value sits indented on the next line.
_NAME_VALUE_PAIR: Final = re.compile(
    r"\bname[ \t]{0,4}:[ \t]{0,4}[\"']?([A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']?[ \t]{0,4}\r?\n"
    r"[ \t]{0,40}value[ \t]{0,4}:[ \t]{0,4}[\"']?([^\s\"'`]{1,512})")
_NEXT_LINE_VALUE: Final = re.compile(
    r"(?m)^(?=[ \t]{0,40}[\"']?([A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']?[ \t]{0,4}:[ \t]{0,4}\r?\n"
    r"[ \t]{1,40}[\"']?([^\s\"'`:#-][^\s\"'`]{0,511})[\"']?[ \t]{0,4}\r?$)")
# The same pair in JSON, on one line or over lines: a Kubernetes `env` entry as `kubectl -o
# json` prints it, an ECS task definition's `environment`.
_JSON_NAME_VALUE: Final = re.compile(
    r"(?i)\"name\"[ \t]{0,4}:[ \t]{0,4}\"([A-Za-z_][A-Za-z0-9_.-]{0,63})\"[ \t]{0,4},[ \t\r\n]{0,80}"
    r"\"value\"[ \t]{0,4}:[ \t]{0,4}\"([^\s\"`\\]{1,512})\"")
# `.netrc`; a Dockerfile's `ENV NAME value`; prose that says what the password is.
_NETRC: Final = re.compile(r"(?i)(?:\bmachine[ \t]+\S{1,256}|\bdefault)"
                           r"(?:\s{1,8}(?:login|account|port)[ \t]+\S{1,256}){1,3}\s{1,8}"
                           r"password[ \t]+([^\s]{1,256})")
_DOCKER_ENV: Final = re.compile(r"(?m)^[ \t]{0,8}ENV[ \t]+([A-Za-z_][A-Za-z0-9_]{0,63})[ \t]+"
                                r"[\"']?([^\s\"'=]{1,512})[\"']?[ \t]*\r?$")
_PROSE_SECRET: Final = re.compile(
    r"(?i)\b(password|passphrase|api[ _-]?key|secret key|access token|token)[ \t]{1,4}is:?"
    r"[ \t]{1,4}[\"'`]?([^\s\"'`]{6,256}?)[\"'`]?(?=[\s.,;)]|$)")
# A base64 `user:password` under an `auth` name (Docker's config.json, `.npmrc`'s `_auth`).
_AUTH_BLOB: Final = re.compile(r"(?i)[\"']?_?auth[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?"
                               r"([A-Za-z0-9+/]{8,400}={0,2})(?![A-Za-z0-9+/=])")
# An Azure shared access signature's `sig=`.
_SAS_SIGNATURE: Final = re.compile(r"(?<=[?&])sig=([A-Za-z0-9%+/]{20,200}(?:%3[Dd]|=){0,2})")


def _is_user_password(blob: str) -> bool:
    decoded = _decoded_text(blob, "base64")
    if not decoded or ":" not in decoded:
        return False
    user, _, password = decoded.partition(":")
    return bool(user) and len(password) >= 4 and not is_placeholder(password)


_COLON_EOL: Final = re.compile(r":[ \t]{0,4}\r?\n")


def _lines_ending_in_colon(text: str) -> Iterator[int]:
    """The start of each line that ends in `:` (a YAML key whose value may follow), found
    from the line breaks, not by trying a pattern at every line."""
    for match in _COLON_EOL.finditer(text):
        yield text.rfind("\n", 0, match.start()) + 1


def _split_secrets(text: str) -> Iterator[tuple[str, int, int]]:
    """Secrets whose name and value are apart: on two lines, or in a sentence."""
    lowered = text.lower()
    if "value:" in text and "name:" in text:
        for match in _NAME_VALUE_PAIR.finditer(text):
            name, value = match.group(1), match.group(2)
            if is_secret_name(name) and _is_secret_value(name, value):
                yield "assigned-secret", match.start(2), match.end(2)
    if "\"value\"" in lowered and "\"name\"" in lowered:
        for match in _JSON_NAME_VALUE.finditer(text):
            name, value = match.group(1), match.group(2)
            if is_secret_name(name) and _is_secret_value(name, value):
                yield "assigned-secret", match.start(2), match.end(2)
    for start in _lines_ending_in_colon(text):
        pair = _NEXT_LINE_VALUE.match(text, start)
        if pair:
            name, value = pair.group(1), pair.group(2)
            if is_secret_name(name) and (_is_password_value(value, False) if "pass" in name.lower()
                                         else _is_secret_value(name, value)):
                yield "assigned-secret", pair.start(2), pair.end(2)
    if "machine" in lowered or "default" in lowered:
        for match in _NETRC.finditer(text):
            if _is_password_value(match.group(1), False, strong=True):
                yield "assigned-secret", match.start(1), match.end(1)
    if "ENV " in text:
        for match in _DOCKER_ENV.finditer(text):
            name, value = match.group(1), match.group(2)
            if is_secret_name(name) and _is_secret_value(name, value):
                yield "assigned-secret", match.start(2), match.end(2)
    if "password is" in lowered or "passphrase is" in lowered or "key is" in lowered \
            or "token is" in lowered:
        for match in _PROSE_SECRET.finditer(text):
            value = match.group(2)
            if _classes(value) >= 3 and _is_secret_value("password", value):
                yield "assigned-secret", match.start(2), match.end(2)
    if "auth\":" in lowered or "auth':" in lowered or "auth:" in lowered or "auth=" in lowered \
            or "auth\" :" in lowered:
        for match in _AUTH_BLOB.finditer(text):
            if _is_user_password(match.group(1)):
                yield "basic-auth", match.start(1), match.end(1)
    if "sig=" in text:
        for match in _SAS_SIGNATURE.finditer(text):
            if _classes(match.group(1)) >= 3:
                yield "azure-sas-signature", match.start(1), match.end(1)


_TOKEN_RUN: Final = re.compile(r"[A-Za-z0-9_+/=.:-]{1,300}")
_LINE_START: Final = re.compile(r"\n[ \t>]{0,40}(?=[A-Za-z0-9_+/=.-]{4})")
# The next line going on with token characters, however few (a wrapped key's last piece).
_NEXT_LINE: Final = re.compile(r"\r?\n[ \t>]{0,40}(?=[A-Za-z0-9_+/=.-])")


_WRAP_LINES: Final = 12


def _wrapped_tokens(text: str) -> Iterator[tuple[str, int, int]]:
    """A token cut in two by a line break (a wrapped line, or two fields read one after the
    other): the word that ends a line and the one that starts the next, joined, when the
    joined word holds a secret the two halves do not."""
    backwards = text[::-1]  # the word ending a line is a prefix match here
    for match in _LINE_START.finditer(text):
        before = match.start() - (text[match.start() - 1:match.start()] == "\r")
        head_run = _TOKEN_RUN.match(backwards, len(text) - before)
        tail_run = _TOKEN_RUN.match(text, match.end())
        if head_run is None or tail_run is None:
            continue
        head, tail = head_run.group(0)[::-1], tail_run.group(0)
        # The two joined, and while the tail is its line whole, the next lines' too (a key cut
        # at a narrow width: `A` / `KIA...` / `SIG`; `d` / `da74...` / `...781-` / `us20`).
        chain, ends = [head + tail], [tail_run.end()]
        while len(chain) < _WRAP_LINES and len(chain[-1]) < _WRAP_CHARS:
            gap = _NEXT_LINE.match(text, ends[-1])
            more = _TOKEN_RUN.match(text, gap.end()) if gap else None
            if more is None:
                break
            chain.append(chain[-1] + more.group(0))
            ends.append(more.end())
        if len(chain[-1]) < 16 or not any(c.isdigit() or c.isupper() for c in chain[-1]) \
                or not _might_hold(chain[-1]):
            continue
        if len(chain) > 2 and not _candidates(chain[-1]):
            chain, ends = chain[:2], ends[:2]  # past two lines, only to reach a known shape
        for joined, end in zip(chain, ends, strict=True):
            hit = next(((kind, hit_end) for kind, hit_start, hit_end in _scan_plain(joined)
                        if hit_start < len(head) < hit_end), None)  # the secret spans the cut
            if hit is not None:
                yield hit[0], before - len(head), _wrapped_end(text, joined, hit[0], end)
                break
        else:
            if head.endswith("-") and head[-2:-1].isalnum() and tail[:1].isalnum():
                # A word hyphenated at the line's end, which a reader joins without the hyphen.
                joined = head[:-1] + tail
                found = next(((kind, hit_end) for kind, hit_start, hit_end in _scan_plain(joined)
                              if hit_start < len(head) - 1 < hit_end), None)
                if found is not None:
                    yield found[0], before - len(head), match.end() + found[1] - len(head) + 1


_WRAP_CHARS: Final = 300

# A line that a value may have been cut at the end of: it, the lines just before it (which
# may name the value: `- name: DB_PASSWORD` / `value: ...`, `machine ...` / `password ...`) or
# the next one hold a word or form that introduces a secret, and it ends inside a word or
# after one space (not at a key's `:` or code's `,;{}[]()`).
_VALUE_CONTEXT: Final = re.compile(
    r"(?i)key|token|secret|pass|pwd|auth|bearer|basic|://|sig=|\s-[pua]|--value|securestring")
_CUT_LINE_END: Final = re.compile(r"[^\s:,;{}\[\]()][ \t]{0,2}\r?\n[ \t>]{0,40}(?=\S)")
_CONTEXT_LINES: Final = 3
_FIRST_WORD: Final = re.compile(r"\S{1,300}")
_WORD_MARKS: Final = "\"'`*_()[]{}<>:,.;!?"
# The next line opening a statement of its own (`DB_HOST=db`, `host: db`), not the rest of a
# value cut at the line before (whose `=` is base64's padding).
_OWN_STATEMENT: Final = re.compile(
    r"[-*$@\"' \t]{0,3}([A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']?[ \t]{0,4}[:=](?!//)")
# Nor is a line that closes a bracket or goes on with a comment.
_NOT_GOING_ON: Final = ("}", ")", "]", "# ", "// ", "```", "**", "|")
# A Markdown list item, heading, quote or tag opening the next line.
_NEW_BLOCK: Final = re.compile(r"(?:[-*+>]|[0-9]{1,3}[.)]|#{1,6})[ \t]|</?[A-Za-z!]")
# Kinds whose shape says nothing of randomness: a value joined from lines must look generated.
_GENERIC_KINDS: Final = frozenset({"assigned-secret", "url-password", "basic-auth"})


def _wrapped_values(text: str) -> Iterator[tuple[str, int, int]]:
    """A value cut by line breaks after the name or form that says it is a secret (a
    `--password` value, a `clientSecret` string, a `Bearer` token, cut after a few characters):
    the line and the few before it read joined to the lines that go on with it (fragments
    without spaces or inside an open quote, then one more line), when a secret found there
    starts before the first cut and runs past it. The most lines that give one win, so a key
    wrapped over many is found whole and a value is not run into the next line's words."""
    for cut in _CUT_LINE_END.finditer(text):
        line_end = cut.start() + 1
        while text[line_end] in " \t":
            line_end += 1
        line_start = text.rfind("\n", 0, line_end) + 1
        if not _may_be_cut(text, line_start, line_end, cut.end()):
            continue
        window_start = line_start
        for _ in range(_CONTEXT_LINES):
            if window_start == 0 or line_end - window_start > 400:
                break
            window_start = text.rfind("\n", 0, window_start - 1) + 1
        next_end = text.find("\n", cut.end())
        if _VALUE_CONTEXT.search(text, max(window_start, line_end - 480), line_end) is None and \
                _VALUE_CONTEXT.search(text, cut.end(), len(text) if next_end < 0 else next_end) is None:
            continue
        head = text[window_start:line_end]
        # Each longer join, with where each piece starts (in `joined`, in `text`).
        chains: list[tuple[str, list[tuple[int, int]]]] = []
        joined, pieces, position = head, [(0, window_start)], cut.end()
        for _ in range(_WRAP_LINES):
            end = text.find("\n", position)
            end = len(text) if end < 0 else end
            line = text[position:end].rstrip("\r")
            pieces = [*pieces, (len(joined), position)]
            joined += line
            chains.append((joined, pieces))
            gap = _NEXT_LINE.match(text, end) if end < len(text) else None
            if gap is None or len(joined) - len(head) > _WRAP_CHARS or any(
                    c.isspace() for c in line) and text.count('"', line_start, end) % 2 == 0:
                break  # a line with spaces ends the value, unless a quote it is in is open
            position = gap.end()
        found = next((hit for chain in reversed(chains) for hit in [_spanning(chain, len(head))]
                      if hit is not None), None)
        if found is not None:
            kind, start, end = found
            yield kind, window_start + start, end


def _may_be_cut(text: str, line_start: int, line_end: int, next_start: int) -> bool:
    """Could the line break between `line_end` and `next_start` cut a value? The next line
    must not open a statement, a list item, a block or a tag of its own, close a bracket or
    go on with a comment; and unless the cut is inside an open quote (a passphrase of words),
    it must not start with a whole word (hard-wrapped prose does at every line, a random
    fragment of 4 letters or more almost never) and the word it goes through must look
    generated."""
    if text.startswith(_NOT_GOING_ON, next_start) or _NEW_BLOCK.match(text, next_start):
        return False
    first = _FIRST_WORD.match(text, next_start)
    own = _OWN_STATEMENT.match(text, next_start)
    if first is None or own is not None and (
            own.group(1).isupper() or own.group(1).islower() or is_wordy(own.group(1))):
        return False
    if text.count('"', line_start, line_end) % 2:
        return True
    start = first.group(0).rstrip(_WORD_MARKS)
    if len(start) >= 4 and start.isalpha() and (start.islower() or start.istitle() or start.isupper()):
        return False
    ending = text[max(line_start, line_end - 300):line_end].rstrip(" \t")
    word = (ending[max(ending.rfind(" "), ending.rfind("\t")) + 1:] + first.group(0)).strip(_WORD_MARKS)
    return len(word) >= 8 and (_classes(word) >= 3 or any(c.isdigit() for c in word) and (
        _classes(word) >= 2) or len(word) >= 16 and not is_wordy(word))


def _spanning(chain: tuple[str, list[tuple[int, int]]], cut: int) -> tuple[str, int, int] | None:
    """The first secret in a joined text that starts before `cut` and runs past it: its kind,
    its start in the joined text and its end in the original one."""
    joined, pieces = chain
    for kind, start, end in _scan_plain(joined):
        if not start < cut < end:
            continue
        value, before = joined[start:end], joined[start:cut].rstrip()
        if kind in _GENERIC_KINDS and not (
                _classes(value) >= 3 or _classes(value) >= 2 and len(value) >= 16):
            continue
        if len(before) >= 6 and is_wordy(before) and all(
                len(piece) >= 3 for piece in _CAMEL.sub(" ", before.strip("!?_-")).split()):
            continue  # a whole word (`String!`, `chatbotToken`) ends the line: no value cut
        base, origin = next((b, o) for b, o in reversed(pieces) if b < end)
        return kind, start, origin + end - base
    return None


def _wrapped_end(text: str, joined: str, kind: str, end: int) -> int:
    """Where a token found across a line break ends: while it runs to the end of the joined
    text and the next line goes on with token characters, a key wrapped over more lines (a
    long key at 40 or 64 columns) takes that line too."""
    for _ in range(_WRAP_LINES):
        gap = _NEXT_LINE.match(text, end)
        if gap is None:
            break
        tail_run = _TOKEN_RUN.match(text, gap.end())
        if tail_run is None:
            break
        longer = joined + tail_run.group(0)
        if not any(k == kind and e > len(joined) for k, _s, e in _scan_plain(longer)):
            break
        joined, end = longer, tail_run.end()
    return end


# Encoded once: a token base64-, hex- or percent-encoded is the token to anyone who decodes it.
# A hex run is a base64 run too: one scan finds both, and the run's letters say which it is.
# Up to 16,000 characters: a kubeconfig's `client-key-data` holds a 4096-bit key's PEM text
# in one line of about 4,300.
_BASE64_RUN: Final = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,16000}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")
_PERCENT_ESCAPE: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_WORD_END: Final = re.compile(r"[\s\"'`<>]")


def _percent_runs(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each word holding a percent escape: found from the escapes (a few in
    a card, if any), not by trying a pattern at every position."""
    end = -1
    for match in _PERCENT_ESCAPE.finditer(text):
        if match.start() < end:
            continue
        start = match.start()
        while start > 0 and start > match.start() - 300 and not _WORD_END.match(text[start - 1]):
            start -= 1
        found = _WORD_END.search(text, match.end(), match.end() + 4000)
        end = found.start() if found else min(len(text), match.end() + 4000)
        yield start, end


def _base64_bytes(run: str) -> bytes | None:
    import binascii

    padded = run + "=" * (-len(run.rstrip("=")) % 4) if "=" not in run else run
    try:
        return binascii.a2b_base64(padded.replace("-", "+").replace("_", "/"))
    except ValueError:
        return None


def _is_private_key_der(data: bytes) -> bool:
    """The binary body of a private key, its PEM header gone: an OpenSSH key, or DER that opens
    with a SEQUENCE and the version INTEGER 0 or 1 followed by what only a private key holds
    there (PKCS#1 RSA and DSA: an INTEGER; PKCS#8: the algorithm's SEQUENCE; SEC1 EC: an
    OCTET STRING). A certificate or a public key opens with a SEQUENCE inside the first."""
    if data.startswith(b"openssh-key-v1\x00"):
        return True
    if len(data) < 32 or data[0] != 0x30:
        return False
    size = data[1]
    offset = 2 + (size & 0x7F if size & 0x80 else 0)
    if size & 0x80 and not 1 <= size & 0x7F <= 3:
        return False
    return data[offset:offset + 2] == b"\x02\x01" and data[offset + 2] in (0, 1) \
        and data[offset + 3] in (0x02, 0x30, 0x04)


def _decoded_text(run: str, how: str) -> str | None:
    """`run` decoded (base64, standard or URL-safe; hex; percent-encoding) when that gives
    printable text, else None (random bytes: a hash, an image, not an encoded secret)."""
    try:
        if how == "hex":
            data: bytes | None = bytes.fromhex(run)
        elif how == "hex-bytes":
            data = bytes.fromhex(re.sub(r"0[xX]|[^0-9a-fA-F]", "", run))
        elif how == "decimal-bytes":
            data = bytes(int(number) for number in re.findall(r"[0-9]{2,3}", run))
        elif how == "percent":
            from urllib.parse import unquote

            return unquote(run, errors="strict") if len(run) < 4000 else None
        else:
            data = _base64_bytes(run)
        if data is None:
            return None
        decoded = data.decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return None
    if len(decoded) < 8 or not all(" " <= c <= "~" or c in "\t\r\n" for c in decoded):
        return None
    return decoded


# Lines of base64 as `base64`, PEM or a Kubernetes secret wrap them: runs of one width (a
# multiple of 4) one under the other, the last line shorter.
_LINE_GAP: Final = re.compile(r"\r?\n[ \t]{0,40}")
_LAST_LINE: Final = re.compile(r"\r?\n[ \t]{0,40}[A-Za-z0-9+/_-]{1,23}={0,2}(?=\r?\n|\Z)")
_WHITESPACE: Final = re.compile(r"\s+")
# Encodings peeled off one inside the other (base64 of percent-encoding, and so on).
_DECODE_DEPTH: Final = 3


def _wrapped_blocks(text: str, runs: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """(start, end) of each block of wrapped base64 lines among `runs` (the base64 runs of
    `text`, in order): two lines or more, the last one possibly shorter than a run."""
    index = 0
    while index < len(runs):
        start, end = runs[index]
        width, last = end - start, index
        if width % 4 == 0:
            while last + 1 < len(runs) and _LINE_GAP.fullmatch(text, runs[last][1], runs[last + 1][0]) \
                    and (runs[last + 1][1] - runs[last + 1][0] == width or last + 2 == len(runs)
                         or not _LINE_GAP.fullmatch(text, runs[last + 1][1], runs[last + 2][0])):
                last += 1
                if runs[last][1] - runs[last][0] != width:
                    break  # the short last line
            block_end = runs[last][1]
            if runs[last][1] - runs[last][0] == width and text[block_end - 1] != "=":
                tail = _LAST_LINE.match(text, block_end)
                block_end = tail.end() if tail else block_end
            if block_end > end:
                yield start, block_end
        index = last + 1


# Base64 hard-wrapped narrower than a run (`fold -w 16`, a YAML block scalar at 20 columns):
# lines of 4 to 23 base64 characters one under the other, the first possibly after a key
# (`client-key-data: `), the lines between the first and the last of one width, three lines
# at least. Tried at line starts only (`^` fails at once elsewhere).
_NARROW_BLOCK: Final = re.compile(
    r"(?m)^[ \t>]{0,40}(?:[\"']?[A-Za-z_][A-Za-z0-9_.-]{0,63}[\"']?[ \t]{0,4}[:=][ \t]{0,4}[|>]?[-+]?"
    r"[ \t]{0,4}(?:\r?\n[ \t]{0,40})?)?[\"']?([A-Za-z0-9+/_-]{4,23})[ \t]*\r?\n"
    r"(?:[ \t>]{0,40}[A-Za-z0-9+/_-]{1,23}={0,2}[\"']?[ \t]*(?:\r?\n|\Z)){2,4000}")
_NARROW_LINE: Final = re.compile(r"[A-Za-z0-9+/_-]{1,23}={0,2}")
# Two such lines one under the other: what any block holds, searched from its line break (far
# cheaper than trying the block at every line start of every card).
_NARROW_PAIR: Final = re.compile(r"\n[ \t>]{0,40}[A-Za-z0-9+/_-]{1,23}={0,2}[\"']?[ \t]*\r?\n"
                                 r"[ \t>]{0,40}[A-Za-z0-9+/_-]{1,23}={0,2}[\"']?[ \t]*(?:\r?\n|\Z)")


def _narrow_blocks(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each block of base64 wrapped narrower than `_BASE64_RUN` finds."""
    if _NARROW_PAIR.search(text) is None:
        return
    for block in _NARROW_BLOCK.finditer(text):
        lines = list(_NARROW_LINE.finditer(text, block.end(1), block.end()))
        width, end = lines[0].end() - lines[0].start(), lines[0].end()
        for line in lines[1:]:
            if line.end() - line.start() > width or text[end - 1] == "=":
                break
            end = line.end()
            if line.end() - line.start() < width:
                break  # the short last line
        if end > lines[1].start():
            yield block.start(1), end


# Bytes written out one by one: `0x67, 0x68, ...` (a C or Python array, over lines too),
# `67 68 70 5f ...` or `67:68:70:...`, `103, 104, 112, ...` (`String.fromCharCode`, a byte
# list). A reader who decodes them has the token as from a hex run. The bytes of printable
# ASCII are 0x20-0x7E (each starts with a digit 2-7) and 32-126; eight of them at least.
_BYTE_GAP: Final = r"(?:[ \t]{0,2}[,;:][ \t]{0,2}(?:\r?\n[ \t]{0,40})?|[ \t]{1,2}|\r?\n[ \t]{0,40})"
_HEX_BYTE: Final = r"(?:0[xX])?[2-7][0-9a-fA-F]"
_HEX_BYTES: Final = re.compile(rf"(?<![0-9A-Za-z]){_HEX_BYTE}(?:{_BYTE_GAP}{_HEX_BYTE}){{7,4000}}(?![0-9A-Za-z])")
_DECIMAL_BYTE: Final = r"(?:3[2-9]|[4-9][0-9]|1[01][0-9]|12[0-6])"
_DECIMAL_BYTES: Final = re.compile(rf"(?<![0-9A-Za-z.]){_DECIMAL_BYTE}(?:[ \t]{{0,2}},[ \t]{{0,2}}(?:\r?\n[ \t]{{0,40}})?"
                                   rf"{_DECIMAL_BYTE}){{7,4000}}(?![0-9A-Za-z.])")
# Two bytes of such a list, searched first: far cheaper than either pattern at every digit.
_HEX_PAIR: Final = re.compile(r"[2-7][0-9a-fA-F][ \t,;:\n]{1,3}(?:0[xX])?[2-7][0-9a-fA-F][ \t,;:\r\n]")
_DECIMAL_TRIPLE: Final = re.compile(r"[0-9],[ \t]{0,2}[0-9]{2,3},[ \t]{0,2}[0-9]{2,3},")
# A hex dump's line (`xxd`, `hexdump -C`, `od -A x -t x1z`): an offset, then bytes in groups,
# then the characters they stand for, which cut the token at every line.
_DUMP_LINE: Final = re.compile(r"(?m)^[ \t]{0,8}[0-9a-fA-F]{4,16}:?[ \t]{1,4}(?=[0-9a-fA-F]{2})")
_HEX_GROUP: Final = re.compile(r"[0-9a-fA-F]{2}(?:[0-9a-fA-F]{2}){0,3}")
_DUMP_WORD: Final = re.compile(r"([ \t]*)([^ \t]+)")


def _shown_bytes(hex_digits: str) -> str:
    """The characters column a hex dump shows for these bytes (`.` for what is not printable)."""
    return "".join(chr(b) if 0x20 < b < 0x7F else "." for b in bytes.fromhex(hex_digits))


def _dump_blocks(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, the bytes in hex) of each block of two hex dump lines or more one under the
    other: each line's groups of bytes after its offset, up to the characters they stand for."""
    block: list[tuple[int, int, str]] = []
    for line in [*_DUMP_LINE.finditer(text), None]:
        if line is None or block and line.start() != block[-1][1] + 1:
            if len(block) >= 2:
                yield block[0][0], block[-1][1], "".join(piece for _s, _e, piece in block)
            block = []
            if line is None:
                break
        end = text.find("\n", line.end())
        end = len(text) if end < 0 else end
        groups: list[str] = []
        for gap, word in _DUMP_WORD.findall(text, line.end(), end):
            # The characters column follows the bytes after two spaces, more on a short last
            # line (which may look like hex: `23456789`).
            if len(gap) > 2 or len(word) % 2 or len(word) > 8 or _HEX_GROUP.fullmatch(word) is None \
                    or groups and word == _shown_bytes("".join(groups)):
                break
            groups.append(word)
        block.append((line.start(), end, "".join(groups)))


def _encoded_secrets(text: str, depth: int = 1) -> Iterator[tuple[str, int, int]]:
    """Tokens under up to `_DECODE_DEPTH` encodings; each hit is the whole outer run."""
    base64_runs = [(m.start(), m.end()) for m in _BASE64_RUN.finditer(text)]
    runs = [("hex" if (end - start) % 2 == 0 and end - start >= 40
             and _HEX_DIGITS.issuperset(text[start:end]) else "base64", start, end)
            for start, end in base64_runs]
    if "\n" in text and len(base64_runs) >= 1:
        runs += [("base64", start, end) for start, end in _wrapped_blocks(text, base64_runs)]
    if "\n" in text:
        runs += [("base64", start, end) for start, end in _narrow_blocks(text)]
    if "%" in text:
        runs += [("percent", start, end) for start, end in _percent_runs(text)]
    if _HEX_PAIR.search(text) is not None:
        runs += [("hex-bytes", m.start(), m.end()) for m in _HEX_BYTES.finditer(text)]
    if _DECIMAL_TRIPLE.search(text) is not None:
        runs += [("decimal-bytes", m.start(), m.end()) for m in _DECIMAL_BYTES.finditer(text)]
    # A dump's offsets are zero-padded (`00000010`, od's `000010`).
    dumps = list(_dump_blocks(text)) if "\n" in text and "000" in text else []
    for how, start, end in runs + [("hex", start, end) for start, end, _hex in dumps]:
        run = text[start:end]
        joined = _WHITESPACE.sub("", run) if "\n" in run else run
        if how == "hex" and dumps and "\n" in run:
            joined = next(hex_ for s, e, hex_ in dumps if (s, e) == (start, end))
        if how == "base64" and len(joined) >= 44 and joined[:2] in ("MI", "MH", "MG", "MF", "ME", "MD",
                                                                   "MC", "b3"):
            data = _base64_bytes(joined[:64])
            if data is not None and _is_private_key_der(data):
                yield "private-key", start, end
                continue
        decoded = _decoded_text(joined, how)
        if decoded is None or decoded == run:
            continue
        found = next(_scan_plain(decoded), None)
        if found is None and depth < _DECODE_DEPTH:
            found = next(_encoded_secrets(decoded, depth + 1), None)
        if found is not None:
            yield found[0], start, end


# An environment variable that is a password (`PGPASSWORD=abc psql`, `DB_PASS=abc`): the name
# in capitals ends in the password word; not a setting about passwords
# (`MYSQL_ALLOW_EMPTY_PASSWORD=yes`, `PASSWORD_MIN_LENGTH=8`).
_ENV_PASSWORD_NAME: Final = re.compile(r"[A-Z0-9_]{0,40}(?:PASSWORD|PASSWD|PASS|PWD|PASSPHRASE)")
_NOT_A_PASSWORD_WORDS: Final = ("ALLOW", "EMPTY", "RANDOM", "GENERATE", "LENGTH", "MIN", "MAX",
                                "HASH", "RESET", "POLICY", "FILE", "TIMEOUT", "EXPIR", "ROUNDS")
# An INI section header (`[client]` in `.my.cnf`, `[global]` in pip.conf): a `password = x`
# line under one is the password, however short.
_INI_SECTION: Final = re.compile(r"(?m)^[ \t`>]{0,8}\[[A-Za-z0-9_. :-]{1,64}\][ \t]*\r?$")


def _says_password(text: str, match: re.Match[str], group: int) -> bool:
    """True when the form of the assignment says its value is the password: an environment
    variable's (`PGPASSWORD=abc`), or an INI line's (`password=abc` under `[client]`)."""
    name = match.group(1)
    sign = text[match.end(1):match.start(group)].strip("\"' \t")
    if sign != "=":
        return False
    if _ENV_PASSWORD_NAME.fullmatch(name) and text[match.end(1)] == "=" and not any(
            word in name for word in _NOT_A_PASSWORD_WORDS):
        return True
    line_start = text.rfind("\n", 0, match.start()) + 1
    line_end = text.find("\n", match.end(group))
    line_end = len(text) if line_end < 0 else line_end
    return not text[line_start:match.start()].strip() and not text[match.end(group):line_end].strip() \
        and _INI_SECTION.search(text, 0, line_start) is not None


def _pass_assignments(text: str, start: int, end: int) -> Iterator[tuple[str, int, int]]:
    for match in _PASS_ASSIGNMENT.finditer(text, start, end):
        if not is_secret_name(match.group(1)):
            continue
        group = next(g for g in (2, 3, 4) if match.group(g) is not None)
        value = match.group(group)
        if _is_password_value(value, group != 4) or len(value) < 6 and _says_password(
                text, match, group) and _is_password_value(value, group != 4, strong=True):
            yield "assigned-secret", match.start(group), match.end(group)


# Every (literal, pattern number) of the case-sensitive shapes, flat: one comprehension of
# substring tests picks the few patterns a text can match, instead of a loop per pattern.
_LITERALS: Final = tuple((keyword, number) for number, (kind, keywords, _p) in enumerate(_TOKEN_PATTERNS)
                         if kind not in _CASELESS_KEYWORDS for keyword in keywords)
_CASELESS: Final = tuple((keyword, number) for number, (kind, keywords, _p) in enumerate(_TOKEN_PATTERNS)
                         if kind in _CASELESS_KEYWORDS for keyword in keywords)
# A token written in capitals (`GHP_...`, `SK-ANT-...`, `SHPAT_` and a hex body): the
# literals with a lowercase letter, in capitals; a hit must then hold no lowercase letter.
_SHOUTED: Final = tuple((keyword.upper(), number) for keyword, number in _LITERALS
                        if keyword != keyword.upper())
_DISCORD: Final = next(n for n, entry in enumerate(_TOKEN_PATTERNS) if entry[0] == "discord-bot-token")


def _candidates(text: str) -> list[tuple[str, re.Pattern[str]]]:
    """The token patterns whose literals `text` holds, in table order (ties between equal
    spans are broken by the order in which they are found)."""
    numbers = {number for keyword, number in _LITERALS if keyword in text}
    if _DISCORD in numbers and text.count(".") < 2:
        numbers.discard(_DISCORD)  # its tokens hold two dots; a file name has one
    lowered = text.lower()
    numbers.update(number for keyword, number in _CASELESS if keyword in lowered)
    found = [(_TOKEN_PATTERNS[n][0], _TOKEN_PATTERNS[n][2]) for n in sorted(numbers)]
    shouted = {number for keyword, number in _SHOUTED if keyword in text}
    return found + [(_TOKEN_PATTERNS[n][0], _shouted(n)) for n in sorted(shouted)]


@lru_cache(maxsize=64)
def _shouted(number: int) -> re.Pattern[str]:
    """The token pattern `number` ignoring case, for a token written in capitals."""
    return re.compile(_TOKEN_PATTERNS[number][2].pattern, re.IGNORECASE)


def _might_hold(text: str) -> bool:
    """False when `_scan(text)` finds nothing, and nothing in any part of `text` either
    (every test here is for a literal, which a part can only hold if the whole does)."""
    return bool(_candidates(text)) or "-----BEGIN" in text or "PuTTY-User-Key-File-" in text \
        or "://" in text or "=" in text or ":" in text or "%" in text \
        or _BASE64_RUN.search(text) is not None


def _scan(text: str) -> Iterator[tuple[str, int, int]]:
    yield from _scan_plain(text)
    yield from _encoded_secrets(text)
    if "\n" in text:
        yield from _wrapped_tokens(text)
        yield from _wrapped_values(text)


def _scan_plain(text: str) -> Iterator[tuple[str, int, int]]:
    for match in _PRIVATE_KEY.finditer(text):
        yield "private-key", match.start(), match.end()
    if "PuTTY-User-Key-File-" in text:
        for match in _PUTTY_KEY.finditer(text):
            yield "private-key", match.start(), match.end()
    for kind, pattern in _candidates(text):
        for match in pattern.finditer(text):
            start, end = match.span(1) if pattern.groups else match.span()
            if not _is_generated(kind, text[start:end]):
                continue  # sk-learn-compatible-estimator, "Bearer authentication-header"
            if pattern.flags & re.IGNORECASE and any(c.islower() for c in text[start:end]):
                continue  # the case-sensitive pattern has judged this one
            yield kind, start, end
            if kind == "aws-access-key":
                yield from _aws_secrets_near(text, start, end)
    for match in _URL_PASSWORD.finditer(text):
        # `https://[REDACTED:url-token]@host`: a redacted user, not a user and a password.
        if not is_placeholder(match.group(1)) and not text.endswith(
                MARKER_PREFIX[:-1], 0, match.start(1) - 1):
            yield "url-password", match.start(1), match.end(1)
    if "@" in text and "://" in text:
        for match in _URL_USER_TOKEN.finditer(text):
            user, host = match.group(1), match.group(2).lower()
            if _looks_random(user) and not is_placeholder(user) and not any(
                    part in host for part in _PUBLIC_KEY_HOSTS):
                yield "url-token", match.start(1), match.end(1)
    if "=" in text or ":" in text:
        # Assignments never span lines: scan only the lines that hold a secret-like word (a
        # few in a typical card), not every position of the text.
        for start, end in _word_lines(text):
            for match in _ASSIGNMENT.finditer(text, start, end):
                name, value = match.group(1), match.group(3)
                if is_secret_name(name) and _is_secret_value(name, value):
                    yield "assigned-secret", match.start(3), match.end(3)
            yield from _pass_assignments(text, start, end)
    yield from _command_line_secrets(text)
    yield from _split_secrets(text)


def _word_lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line holding a secret-like word and an assignment sign."""
    last_end = -1
    for match in _SECRET_WORD.finditer(text):
        if match.start() < last_end:
            continue
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        end = len(text) if end < 0 else end
        last_end = end
        if text.find("=", start, end) >= 0 or text.find(":", start, end) >= 0:
            yield start, end


def _aws_secrets_near(text: str, start: int, end: int) -> Iterator[tuple[str, int, int]]:
    low = max(0, start - _AWS_NEIGHBOURHOOD)
    high = min(len(text), end + _AWS_NEIGHBOURHOOD)
    for match in _AWS_SECRET.finditer(text, low, high):
        value = match.group(0)
        if _classes(value) >= 3 and not value.startswith(("AKIA", "ASIA")):
            yield "aws-secret-key", match.start(), match.end()
    if text.find("\n", low, high) >= 0:
        yield from _aws_secrets_wrapped(text, low, high)


_AWS_PIECE: Final = re.compile(r"[A-Za-z0-9/+]{1,39}")
_LINE_TAIL: Final = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{1,39}[ \t]*\r?$", re.M)


def _aws_secrets_wrapped(text: str, low: int, high: int) -> Iterator[tuple[str, int, int]]:
    """A secret key (no prefix to join on) cut over lines next to its key id: the run that
    ends a line, then lines that are a run alone, adding up to 40 characters."""
    for tail in _LINE_TAIL.finditer(text, low, high):
        first = tail.group(0).rstrip()
        pieces, end = [first], tail.start() + len(first)
        while sum(map(len, pieces)) < 40:
            gap = _NEXT_LINE.match(text, end)
            piece = _AWS_PIECE.match(text, gap.end()) if gap else None
            if piece is None or piece.end() < len(text) and text[piece.end()] not in "\r\n \t":
                break
            pieces.append(piece.group(0))
            end = piece.end()
        value = "".join(pieces)
        if len(pieces) > 1 and len(value) == 40 and _classes(value) >= 3 \
                and not value.startswith(("AKIA", "ASIA")):
            yield "aws-secret-key", tail.start(), end


# Unicode format characters (zero-width space and joiners, bidi controls, soft hyphen, the
# whole tag block, its unassigned code points too) and the fillers that render as nothing:
# removed before scanning. At least every character the renderer deletes from a title
# (`engram.render`), or a token split by one would pass here and be joined on its way out.
_INVISIBLE: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e01ef]"
)


# Letters and signs drawn like ASCII ones, from any script (Cyrillic `р`, Greek `ο`, Armenian
# `հ`, Cherokee `Ꭺ`, IPA `ɡ`, a small capital `ꜱ`, the hyphen U+2010...): Unicode's confusables
# (UTS #39) whose ASCII look-alike NFKC does not give already, generated by
# `scripts/lookalikes.py`. Inside a run of text that also holds an ASCII letter, digit or `_`
# (`ghр_...`) they are read as ASCII, and so is a Latin letter with accents (`ǵ`): a reader
# sees the token and types it back. A word wholly of another script (prose) is left as it is.
# One character for one, so offsets do not move.
_LOOKALIKE_FROM: Final = (
    "\u00d7\u0131\u0184\u018d\u0196\u01a6\u01a7\u01b7\u01bc\u01bd\u01c0\u021c"
    "\u0222\u0223\u0251\u0261\u0263\u0269\u026a\u026f\u028b\u028f\u02d0\u02d7"
    "\u02db\u02f8\u037a\u037f\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c"
    "\u039d\u039f\u03a1\u03a4\u03a5\u03a7\u03b1\u03b3\u03b9\u03bd\u03bf\u03c1"
    "\u03c3\u03c5\u03d2\u03dc\u03e8\u03f1\u03f2\u03f3\u03f9\u03fa\u0405\u0406"
    "\u0408\u0410\u0412\u0415\u0417\u041a\u041c\u041d\u041e\u0420\u0421\u0422"
    "\u0423\u0425\u042c\u0430\u0431\u0433\u0435\u043e\u0440\u0441\u0443\u0445"
    "\u0455\u0456\u0458\u0461\u0474\u0475\u04ae\u04af\u04bb\u04bd\u04c0\u04cf"
    "\u04e0\u0501\u050c\u051b\u051c\u051d\u054d\u054f\u0555\u0561\u0563\u0566"
    "\u0570\u0578\u057c\u057d\u0581\u0584\u0585\u0589\u06f0\u06f1\u06f5\u06f7"
    "\u0903\u0966\u09e6\u09ea\u09ed\u0a66\u0a67\u0a6a\u0a83\u0ae6\u0b03\u0b20"
    "\u0b66\u0b68\u0be6\u0c02\u0c66\u0c82\u0ce6\u0d02\u0d20\u0d66\u0d6d\u0d82"
    "\u0e50\u0ed0\u101d\u1040\u10e7\u10ff\u1200\u12d0\u13a0\u13a1\u13a2\u13a5"
    "\u13a9\u13aa\u13ab\u13ac\u13b3\u13b7\u13bb\u13bd\u13c0\u13c2\u13c3\u13ce"
    "\u13cf\u13d2\u13d4\u13d5\u13d9\u13da\u13de\u13df\u13e2\u13e6\u13e7\u13ee"
    "\u13f3\u13f4\u1400\u142f\u144c\u146d\u146f\u1472\u148d\u14aa\u14bf\u1541"
    "\u157c\u157d\u1587\u15af\u15b4\u15c5\u15de\u15ea\u15f0\u15f7\u166d\u166e"
    "\u16b7\u16c1\u16d5\u16d6\u16ec\u16ed\u1735\u1803\u1809\u1d04\u1d0f\u1d11"
    "\u1d1c\u1d20\u1d21\u1d22\u1d26\u1d83\u1d8c\u1e9d\u1eff\u1fbe\u2010\u2011"
    "\u2012\u2013\u2041\u2043\u2044\u205a\u212e\u213d\u2212\u2215\u2223\u2228"
    "\u222a\u2236\u22a4\u22c1\u22c3\u22ff\u2373\u2374\u237a\u23fd\u2571\u2573"
    "\u2795\u2796\u27cb\u27d9\u292b\u292c\u29f8\u2a2f\u2c85\u2c8e\u2c92\u2c94"
    "\u2c98\u2c9a\u2c9e\u2c9f\u2ca2\u2ca3\u2ca4\u2ca5\u2ca6\u2ca8\u2cac\u2cba"
    "\u2cc6\u2cca\u2ccc\u2cd0\u2cd2\u2d38\u2d39\u2d4f\u2d54\u2d55\u2d5d\u2e40"
    "\u2f03\u3007\u3033\u30a0\u30ce\u31d3\u4e3f\ua4d0\ua4d1\ua4d2\ua4d3\ua4d4"
    "\ua4d6\ua4d7\ua4d9\ua4da\ua4dc\ua4dd\ua4df\ua4e0\ua4e1\ua4e2\ua4e3\ua4e6"
    "\ua4e7\ua4ea\ua4eb\ua4ec\ua4ee\ua4f0\ua4f2\ua4f3\ua4f4\ua4f8\ua4fd\ua4ff"
    "\ua60e\ua644\ua647\ua6df\ua6ef\ua731\ua75a\ua76a\ua76e\ua789\ua798\ua799"
    "\ua79f\ua7ab\ua7b2\ua7b3\ua7b4\uab32\uab35\uab3d\uab47\uab48\uab4e\uab52"
    "\uab5a\uab75\uab81\uab83\uab93\uaba9\uabaa\uabaf\ufe58\uffe8\U00010282\U00010286"
    "\U00010287\U0001028a\U00010290\U00010292\U00010295\U00010296\U00010297\U0001029b\U000102a0\U000102a1\U000102a2\U000102a5"
    "\U000102ab\U000102b0\U000102b1\U000102b2\U000102b4\U000102cf\U000102f5\U00010301\U00010302\U00010309\U00010311\U00010315"
    "\U00010317\U0001031a\U00010320\U00010322\U00010404\U00010415\U0001041b\U00010420\U0001042c\U0001043d\U00010448\U000104b4"
    "\U000104c2\U000104ce\U000104d2\U000104ea\U000104f6\U00010513\U00010516\U00010518\U0001051c\U0001051d\U00010525\U00010526"
    "\U00010527\U000114d0\U00011700\U00011706\U0001170a\U0001170e\U0001170f\U000118a0\U000118a2\U000118a3\U000118a4\U000118a6"
    "\U000118a9\U000118ac\U000118ae\U000118af\U000118b2\U000118b5\U000118b8\U000118bb\U000118bc\U000118c0\U000118c1\U000118c2"
    "\U000118c3\U000118c4\U000118c6\U000118c8\U000118ca\U000118cc\U000118d5\U000118d6\U000118d7\U000118d8\U000118dc\U000118e0"
    "\U000118e3\U000118e5\U000118e6\U000118e9\U000118ec\U000118ef\U000118f2\U00016f08\U00016f0a\U00016f16\U00016f28\U00016f35"
    "\U00016f3a\U00016f3b\U00016f40\U00016f42\U00016f43\U0001d16d\U0001d206\U0001d20d\U0001d212\U0001d213\U0001d216\U0001d22a"
    "\U0001d23a\U0001d6a4\U0001d6a8\U0001d6a9\U0001d6ac\U0001d6ad\U0001d6ae\U0001d6b0\U0001d6b1\U0001d6b3\U0001d6b4\U0001d6b6"
    "\U0001d6b8\U0001d6bb\U0001d6bc\U0001d6be\U0001d6c2\U0001d6c4\U0001d6ca\U0001d6ce\U0001d6d0\U0001d6d2\U0001d6d4\U0001d6d6"
    "\U0001d6e0\U0001d6e2\U0001d6e3\U0001d6e6\U0001d6e7\U0001d6e8\U0001d6ea\U0001d6eb\U0001d6ed\U0001d6ee\U0001d6f0\U0001d6f2"
    "\U0001d6f5\U0001d6f6\U0001d6f8\U0001d6fc\U0001d6fe\U0001d704\U0001d708\U0001d70a\U0001d70c\U0001d70e\U0001d710\U0001d71a"
    "\U0001d71c\U0001d71d\U0001d720\U0001d721\U0001d722\U0001d724\U0001d725\U0001d727\U0001d728\U0001d72a\U0001d72c\U0001d72f"
    "\U0001d730\U0001d732\U0001d736\U0001d738\U0001d73e\U0001d742\U0001d744\U0001d746\U0001d748\U0001d74a\U0001d754\U0001d756"
    "\U0001d757\U0001d75a\U0001d75b\U0001d75c\U0001d75e\U0001d75f\U0001d761\U0001d762\U0001d764\U0001d766\U0001d769\U0001d76a"
    "\U0001d76c\U0001d770\U0001d772\U0001d778\U0001d77c\U0001d77e\U0001d780\U0001d782\U0001d784\U0001d78e\U0001d790\U0001d791"
    "\U0001d794\U0001d795\U0001d796\U0001d798\U0001d799\U0001d79b\U0001d79c\U0001d79e\U0001d7a0\U0001d7a3\U0001d7a4\U0001d7a6"
    "\U0001d7aa\U0001d7ac\U0001d7b2\U0001d7b6\U0001d7b8\U0001d7ba\U0001d7bc\U0001d7be\U0001d7c8\U0001d7ca\U0001f74c\U0001f768"
)
_LOOKALIKE_TO: Final = (
    "xibgIR235sl388agyiiwuy:-i:iJABEZHIKMNOPTYXayivopouYF2pcjCMSIJABE3KMHOPCTYXba6reo"
    "pcyxsijwVvYyheli3dGqWwUSOwqqhnnugfo:.1oV:o089o98:o8O09oooooooo9oooooyoUODRTiYAJE"
    "WMHYGhZ4bRWSVSLCPKd6GB=VUPdbJL2xHxRbFADDMBXxXlKM:+/::coouvwzrgyfyi----/-/:ey-/lv"
    "U:TvUEipal/X+-/Txx/xrHIKMNOoPpCcTYX-/93L6VElOQX=/O/=///BPdDTGKJCZFMNLSRVHWXYAElO"
    "U.:=.2iV2s239:Ffu3JXBeforruuyirwzvsc-lBEFlXOPST+ABCFOMTYXHZBClMTX8lXOCLSocsROU7o"
    "uNOKCVFLX0mvwwwVFLYEZ9E4LOU5TvsFiz7o3969ouy0mZWCXWCVTLlRS3AUY.3V7FRL/iABEZHIKMNO"
    "PTYXayivopoupABEZHIKMNOPTYXayivopoupABEZHIKMNOPTYXayivopoupABEZHIKMNOPTYXayivopo"
    "upABEZHIKMNOPTYXayivopoupFCT"
)
_RUN: Final = re.compile(r"\S{2,}")


@lru_cache(maxsize=1)
def _lookalike_table() -> dict[int, str]:
    return {ord(a): b for a, b in zip(_LOOKALIKE_FROM, _LOOKALIKE_TO, strict=True)}


@lru_cache(maxsize=1)
def _lookalike_table_chars() -> frozenset[str]:
    return frozenset(_LOOKALIKE_FROM)


@lru_cache(maxsize=4096)
def _folded(c: str) -> str | None:
    """The ASCII character `c` is drawn like, else None."""
    found = _lookalike_table().get(ord(c))
    if found is not None:
        return found
    import unicodedata

    base = unicodedata.normalize("NFKD", c)
    if len(base) > 1 and base[0].isascii() and base[0].isalpha() and all(
            unicodedata.combining(mark) for mark in base[1:]):
        return base[0]  # a Latin letter with accents
    return None


def _fold_lookalikes(text: str) -> str:
    present = {c for c in set(text) if not c.isascii() and _folded(c) is not None}
    if not present:
        return text

    def fold(match: re.Match[str]) -> str:
        run = match.group(0)
        if not any(c in present for c in run) or not any(
                c.isascii() and (c.isalnum() or c == "_") for c in run):
            return run
        return "".join(_folded(c) or c if c in present else c for c in run)

    return _RUN.sub(fold, text)


# Line breaks other than `\n` (the renderer emits each as `\n`, so a token cut by one reaches
# the model on two lines): read as `\n`, so the two halves are joined like any wrapped token.
_OTHER_BREAKS: Final = frozenset("\u2028\u2029\u0085")
_ASCII_BREAK: Final = re.compile(r"\r(?!\n)|[\x0b\x0c\x1c-\x1e]")


def visible(text: str) -> tuple[str, list[int] | None]:
    """`text` without invisible characters (Unicode format characters, combining marks,
    fillers) and with compatibility forms folded (NFKC: a fullwidth `ｇｈｐ＿` is `ghp_` to any
    reader), look-alikes inside an ASCII word read as ASCII and other line breaks as `\n`,
    and for each character of the result its offset in `text` (None when nothing changed
    but look-alikes, which are replaced one for one)."""
    if text.isascii():
        if _ASCII_BREAK.search(text) is None:
            return text, None
        return _ASCII_BREAK.sub("\n", text), None  # one for one: offsets stay
    import unicodedata

    if _ASCII_BREAK.search(text) is not None:
        text = _ASCII_BREAK.sub("\n", text)
    dropped = {c for c in set(text) if not c.isascii() and (
        _INVISIBLE.match(c) or unicodedata.category(c) in ("Cf", "Mn", "Me"))}
    if not dropped and unicodedata.is_normalized("NFKC", text) and not _OTHER_BREAKS & set(text):
        return _fold_lookalikes(text), None
    chars: list[str] = []
    kept: list[int] = []
    for i, c in enumerate(text):
        if c.isascii():
            chars.append(c)
            kept.append(i)
        elif c in _OTHER_BREAKS:
            chars.append("\n")
            kept.append(i)
        elif c in _lookalike_table_chars():
            chars.append(c)  # before NFKC, which reads some as another script's (`Ϲ` as `Σ`)
            kept.append(i)
        elif c not in dropped:
            for folded in unicodedata.normalize("NFKC", c):
                chars.append(folded)
                kept.append(i)
    return _fold_lookalikes("".join(chars)), kept


# A string escape (JSON's `\u005f` and `\/`, `\x5f`, `\n`; Markdown's backslash before any
# ASCII punctuation, `ghp\_`, which converters from HTML write for every `_`) and an HTML
# character reference (`&#95;`, `&#x5f;`, `&lowbar;`, `&amp;`, which Markdown reads as the
# character): text quoted in JSON, code or Markdown is the text to anyone who reads it, so it
# is scanned unescaped too (`ghp\u005f...`, `postgres:\/\/admin:pw@db`,
# `"[client]\npassword=abc"`, `ghp&#95;...`).
_ESCAPE: Final = re.compile(r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
                            r"|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([nrtbf!-/:-@\[-`{-~])|(\r?\n))"
                            r"|&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));"
                            r"|\\([0-3][0-7]{2})")
_ESCAPED: Final = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}


# An escaped quote next to a `:` or `=` (`{\"password\": \"...\"}`, `PASSWORD=\"...\"`):
# JSON text in a JSON string (a structured log line, kubectl's last-applied-configuration, a
# tool's output in a transcript), whose names and values the scan must read unquoted. A `\"`
# anywhere else (`echo \"hi\"` in a code block) does not cost a card with code a second pass.
# So does a quoted value escaped after a name or flag that says it is a secret (`--password
# \"...\"` in a JSON string), a Markdown escape of a character a token or password holds
# inside a word (`ghp\_`, `DB\_PASSWORD`, `sk\-ant`: not `\|` in a table or `\(` in a regex,
# which would cost a second pass over many cards) and an HTML character reference.
_ESCAPE_HINT: Final = re.compile(r"\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[0-3][0-7]{2}\\[0-3][0-7]{2}|/"
                                 r"|[\"'][ \t]{0,3}[:=])"
                                 r"|[:=][ \t]{0,3}\\[\"']"
                                 r"|(?<=[A-Za-z0-9])\\{1,8}[-_.+=:@~*!#%&^$?](?=[A-Za-z0-9])"
                                 r"|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
# The same escape where a line break cuts the word (`ghp` / `\_...`, `ghp\_` / `...`), and
# Markdown's hard line break (a backslash ending a line) inside a word: found from the
# backslashes (a pattern that starts with one is searched for as fast as a string), the word
# around the line break checked by hand.
_CUT_ESCAPE: Final = re.compile(r"\\{1,8}(?:[-_.+=:@~*!#%&^$?](?=[A-Za-z0-9]|\r?\n[ \t>]{0,40}[A-Za-z0-9])"
                                r"|(?=\r?\n[ \t>]{0,40}[-_.+=:@~*!#%&^$?A-Za-z0-9]))")
_LINE_INDENT: Final = " \t>"


def _escape_cut_by_a_line(text: str) -> bool:
    for match in _CUT_ESCAPE.finditer(text):
        start, end = match.start(), match.end()
        if text[end:end + 1] in ("\r", "\n"):
            before = start  # an escape or a hard break ending its line: a word goes on before it
        else:
            # An escape opening a line (after its indentation or quote marks): the line before
            # must end inside a word.
            before = start
            while before > 0 and start - before <= 40 and text[before - 1] in _LINE_INDENT:
                before -= 1
            if before == 0 or text[before - 1] != "\n":
                continue
            before -= 1 + (text[before - 2:before - 1] == "\r")
        if before > 0 and text[before - 1].isascii() and text[before - 1].isalnum():
            return True
    return False


# Searched only in text holding an escaped quote: a pattern that can start at any letter costs
# every card a slower search.
_SECRET_QUOTE_HINT: Final = re.compile(r"(?i:pass(?:word|wd|phrase)?|pwd|token|secret|key|-[pau])[ \t]{0,4}\\[\"']")
# Text escaped up to four times: a JSON string of a JSON string of JSON (a tool's output
# quoting a log line), or of Markdown, and that read from a transcript's raw JSON lines.
_UNESCAPE_DEPTH: Final = 4


def _holds_escaped_lines(text: str) -> bool:
    """A line holding two `\\n` escapes or more: a file's text in a JSON string (a tool's
    output, a config value), not a `print("...\\n")` in a code block, whose scan would cost a
    second pass over every card with code."""
    position = text.find("\\n")
    while position >= 0:
        line_end = text.find("\n", position)
        if text.find("\\n", position + 2, len(text) if line_end < 0 else line_end) >= 0:
            return True
        position = -1 if line_end < 0 else text.find("\\n", line_end)
    return False


def _escape_read(match: re.Match[str]) -> str | None:
    """The text an escape or character reference stands for, None when it stands for none."""
    if match.group(1):  # a surrogate pair: one character beyond the BMP
        high, low = int(match.group(1), 16), int(match.group(2), 16)
        return chr(0x10000 + (high - 0xD800) * 0x400 + low - 0xDC00)
    code = match.group(3) or match.group(4)
    if code:
        return chr(int(code, 16))
    if match.group(5):
        return _ESCAPED.get(match.group(5), match.group(5))
    if match.group(6):
        return "\n"  # Markdown's hard line break: the backslash is not shown
    if match.group(10):
        return chr(int(match.group(10), 8))  # C's and Python's octal escape
    if match.group(9):
        from html.entities import html5

        return html5.get(match.group(9) + ";")
    number = int(match.group(7), 10) if match.group(7) else int(match.group(8), 16)
    return chr(number) if 0 < number <= 0x10FFFF and not 0xD800 <= number <= 0xDFFF else None


def _unescaped(text: str) -> tuple[str, list[int], list[int]] | None:
    """`text` with its string escapes read, and each character's start and end in `text`;
    None when it holds none that could hide a secret."""
    if _ESCAPE_HINT.search(text) is None and not ("\\n" in text and _holds_escaped_lines(text)) \
            and not (("\\\"" in text or "\\'" in text) and _SECRET_QUOTE_HINT.search(text)) \
            and not ("\\" in text and "\n" in text and _escape_cut_by_a_line(text)):
        return None
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    for match in _ESCAPE.finditer(text):
        read = _escape_read(match)
        if read is None:
            continue  # no character reference HTML knows: left as written
        for i in range(position, match.start()):
            chars.append(text[i])
            starts.append(i)
            ends.append(i + 1)
        for c in read:  # one character, or two for a few named references
            chars.append(c)
            starts.append(match.start())
            ends.append(match.end())
        position = match.end()
    if not starts:
        return None
    for i in range(position, len(text)):
        chars.append(text[i])
        starts.append(i)
        ends.append(i + 1)
    return "".join(chars), starts, ends


# Inline markup a Markdown reader does not read as text: emphasis and strikethrough marks,
# code span backticks, an HTML tag or comment, a link's brackets and target. Inside a word
# (`ghp_aBc*dEf*...`, `ghp_aBc<!-- -->dEf...`, `ghp_aBc`dEf`...`) the word reads whole to
# the model, so it is scanned with that markup taken out too.
_INLINE_MARKUP: Final = re.compile(
    r"(?:\*{1,3}|~{1,2}|`{1,3}|<!--[^\n]{0,200}?-->|</?[A-Za-z][A-Za-z0-9-]{0,15}"
    r"(?:[ \t][^<>\n]{0,100})?/?>|\]\([^()\s]{0,300}\)|\[)+")
# Two string literals joined (`"ghp_aBc" + "DeF..."`, Python's and C's `"..." "..."`, PHP's
# `.`, Lua's `..`, SQL's `||`, VB's `&`): code splits a token so, and a reader joins it back.
_CONCAT: Final = re.compile(r"[\"'][ \t]{0,4}(?:\+|\.{1,2}|&|\|\|)?[ \t]{0,4}[\"']")
_MARKUP_CHARS: Final = ("*", "~", "`", "<", "[", "]", "\"", "'")


def _markup_after_a_word(text: str) -> Iterator[int]:
    """Where a markup character follows a letter, digit, `_` or `-` (found with `str.find`:
    a pattern that may start at any of them scans slower than the whole detector)."""
    for mark in _MARKUP_CHARS:
        position = text.find(mark, 1)
        while position > 0:
            previous = text[position - 1]
            if previous.isalnum() or previous in "_-":
                yield position
            position = text.find(mark, position + 1)


def _unmarked(text: str) -> tuple[str, list[int]] | None:
    """The lines of `text` where inline markup sits inside a word that may be generated (8
    characters or more once read whole, a digit or a capital among them), that markup taken
    out, and for each character left its offset in `text`; None when there are none. Only
    those lines: a secret the markup hid runs across it (no markup spans a line break)."""
    lines: dict[int, list[tuple[int, int]]] = {}
    end = 0
    for start in sorted(_markup_after_a_word(text)):
        pattern = _CONCAT if text[start] in "\"'" else _INLINE_MARKUP
        match = pattern.match(text, start) if start >= end else None
        if match is None:
            continue
        end = match.end()
        if end == len(text) or not (text[end].isalnum() or text[end] in "_-"):
            continue
        before = text[max(0, start - 300):start].split()
        after = text[end:end + 300].split(None, 1)
        word = (before[-1] if before else "") + (after[0] if after else "")
        if len(word) >= 8 and any(c.isdigit() or c.isupper() for c in word):
            lines.setdefault(text.rfind("\n", 0, start) + 1, []).append((start, end))
    if not lines:
        return None
    kept: list[int] = []
    for line_start, cuts in lines.items():
        found = text.find("\n", cuts[-1][1])
        if kept:
            kept.append(line_start - 1)  # the line break before this line, twice (a blank
            if kept[-2] != line_start - 2:  # line) when lines were left out between
                kept.append(line_start - 1)
        line_end = len(text) if found < 0 else found
        position = line_start
        for start, end in cuts:
            kept.extend(range(position, start))
            position = end
        kept.extend(range(position, line_end))
    return "".join(text[i] for i in kept), kept


# Unicode's tag characters for printable ASCII (U+E0020-U+E007E): invisible when rendered,
# yet a model reads each as the ASCII character it stands for ("ASCII smuggling"). Scanned
# deleted (as a renderer shows the text) and read as ASCII (as the model may).
_TAG_ASCII: Final = {code: code - 0xE0000 for code in range(0xE0020, 0xE007F)}


# Control characters a terminal does not show (a colour's escape sequence, NUL, DEL, a
# character a backspace erases): a tool's coloured output (`grep --color` inside a token)
# reads whole on a screen and in a transcript to a reader who knows them, so text holding them
# is scanned without them too.
_CONTROL_CHAR: Final = re.compile(r"[\x00-\x08\x0e-\x1b\x1f\x7f]")
_ESCAPE_SEQUENCE: Final = re.compile(r"\x1b(?:\[[0-?]{0,32}[ -/]{0,4}[@-~]|\][^\x07\x1b\n]{0,256}(?:\x07|\x1b\\)?"
                                     r"|[@-Z\\-_])")


def _uncontrolled(text: str) -> tuple[str, list[int]]:
    """`text` as a terminal shows it, and for each character left its offset in `text`."""
    kept: list[int] = []
    position = 0
    for match in _CONTROL_CHAR.finditer(text):
        start = match.start()
        if start < position:
            continue  # inside an escape sequence already taken out
        sequence = _ESCAPE_SEQUENCE.match(text, start) if text[start] == "\x1b" else None
        kept.extend(range(position, start))
        if text[start] == "\x08" and kept and text[kept[-1]] != "\n":
            kept.pop()  # a backspace erases the character before it
        position = sequence.end() if sequence else start + 1
    kept.extend(range(position, len(text)))
    return "".join(text[i] for i in kept), kept


# A Markdown table's row: the model reads a table cell by cell, and a token cut between two
# cells side by side (`| ghp_aBcDeFgHiJ | kLmNo... |`) or one under the other in a column
# reads whole to it.
_TABLE_ROW: Final = re.compile(r"(?m)^[ \t>`]{0,8}\|[^\n]*\|[ \t`]*\r?$")
_CELL: Final = re.compile(r"[^|]+")


def _table_cells(text: str) -> Iterator[tuple[str, int, int]]:
    """Secrets cut between two cells of a Markdown table that sit side by side or one under
    the other, each as (kind, start of the first cell's text, end of the second's)."""
    table: list[list[tuple[int, int]]] = []
    previous_end = -2
    for row in _TABLE_ROW.finditer(text):
        if table and row.start() != previous_end + 1:
            yield from _cut_cells(text, table)  # the rows before were another table
            table = []
        cells = []
        for cell in _CELL.finditer(text, row.start(), row.end()):
            start, end = cell.start(), cell.end()
            while start < end and text[start] in " \t>`":
                start += 1
            while end > start and text[end - 1] in " \t\r`":
                end -= 1
            cells.append((start, end))
        table.append(cells)
        previous_end = row.end()
    yield from _cut_cells(text, table)


def _cut_cells(text: str, rows: list[list[tuple[int, int]]]) -> Iterator[tuple[str, int, int]]:
    pairs = [(a, b) for cells in rows for a, b in zip(cells, cells[1:], strict=False)]
    pairs += [(a, b) for upper, lower in zip(rows, rows[1:], strict=False)
              for a, b in zip(upper, lower, strict=False)]
    for (a_start, a_end), (b_start, b_end) in pairs:
        if b_end - b_start + a_end - a_start < 16:
            continue
        # The word ending the first cell and the one opening the second, read as one.
        space = max(text.rfind(" ", a_start, a_end), text.rfind("\t", a_start, a_end))
        first = text[max(a_start, space + 1):a_end]
        found = _FIRST_WORD.match(text, b_start, b_end)
        second = found.group(0) if found else ""
        joined = first + second
        if not first or len(joined) < 16 or not any(c.isdigit() or c.isupper() for c in joined) \
                or not _candidates(joined):
            continue
        for kind, start, end in _scan_plain(joined):
            if start < len(first) < end:
                yield kind, a_end - len(first) + start, b_start + end - len(first)
                break


def _spans(text: str) -> list[tuple[str, int, int]]:
    scanned, kept = visible(text)
    spans = list(_scan(scanned))
    if ("|\n" in scanned or "|\r\n" in scanned or scanned.rstrip(" \t`").endswith("|")) \
            and _TABLE_ROW.search(scanned) is not None:
        spans += list(_table_cells(scanned))
    if _CONTROL_CHAR.search(scanned) is not None:
        view, offsets = _uncontrolled(scanned)
        spans += [(kind, offsets[start], offsets[end - 1] + 1) for kind, start, end in _scan(view)]
    if any(c in scanned for c in _MARKUP_CHARS):
        unmarked = _unmarked(scanned)
        if unmarked is not None:
            view, offsets = unmarked
            spans += [(kind, offsets[start], offsets[end - 1] + 1) for kind, start, end in _scan(view)]
    if kept is not None:
        # Back to offsets in `text`: a span covers the invisible characters inside it.
        spans = [(kind, kept[start], kept[end - 1] + 1) for kind, start, end in spans]
    return spans


def find_secrets(text: str) -> list[SecretHit]:
    """Every secret in `text`, in order, overlaps merged (the earliest, then longest, wins)."""
    spans = _spans(text)
    if not text.isascii() and max(text) >= "\U000e0020" and any(
            "\U000e0020" <= c <= "\U000e007e" for c in text):
        spans += _spans(text.translate(_TAG_ASCII))  # one code point for one: offsets stay
    view = _unescaped(text)
    starts: list[int] = []
    ends: list[int] = []
    for depth in range(_UNESCAPE_DEPTH):
        if view is None:
            break
        unescaped, view_starts, view_ends = view
        # Offsets of each character of this view in `text`, through the views before it.
        starts = view_starts if depth == 0 else [starts[i] for i in view_starts]
        ends = view_ends if depth == 0 else [ends[i - 1] for i in view_ends]
        spans += [(kind, starts[start], ends[end - 1]) for kind, start, end in _spans(unescaped)]
        view = _unescaped(unescaped)
    spans.sort(key=lambda s: (s[1], -s[2]))
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


def redact(text: str, hits: list[SecretHit] | None = None) -> str:
    """`text` with every secret replaced by `[REDACTED:<kind>]`; idempotent. `hits` is
    `find_secrets(text)` when the caller has it already (the scan is not repeated)."""
    if hits is None:
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


# A card's frontmatter fields that engram may emit: one-line texts, then lists of them.
_TEXT_FIELDS: Final = ("title", "card")
_LIST_FIELDS: Final = ("tags", "applies_to", "depends_on")
CARD_FIELDS: Final = _TEXT_FIELDS + _LIST_FIELDS


def card_parts(card: object) -> list[str]:
    """Everything of a card that engram may emit or write anywhere, in the order the gate
    reads it: title, card line, tags, globs, depends_on and body (the id and file name are
    checked by `name_kind`). The title comes again right before the body, stripped, as a
    hook's answer shows them (`### engram memory: id — title`, then the body): a token cut
    between the two is read whole there."""
    parts = [str(getattr(card, name, "")) for name in _TEXT_FIELDS]
    for name in _LIST_FIELDS:
        parts.extend(str(value) for value in getattr(card, name, ()) or ())
    parts += (str(getattr(card, "title", "")), str(getattr(card, "body", "")).strip())
    return parts


def card_text(card: object) -> str:
    """The card as the gate reads it: `card_parts`, one a line."""
    return "\n".join(card_parts(card))


def frontmatter(card: object, text: str | None = None) -> str:
    """The card's frontmatter as its file writes it (`text`, else read from the card's path):
    YAML reads a line break inside a plain scalar, a folded block (`>`) or a flow list as a
    space, so a token wrapped over two lines there is two words in every parsed field, yet
    one token in the file, as in a wrapped body line."""
    lines = int(getattr(card, "body_line", 1) or 1) - 1
    if lines <= 0:
        return ""
    if text is None:
        try:
            with open(str(getattr(card, "path", "")), encoding="utf-8", errors="replace") as handle:
                text = handle.read(1 << 20)
        except OSError:
            return ""
    return "\n".join(text.replace("\r\n", "\n").split("\n", lines)[:lines])


def card_holds_secret(card: object, text: str | None = None) -> bool:
    """The gate's verdict on a card: its fields as the gate reads them (`card_text`), its
    frontmatter as the file writes it (`frontmatter`; `text` is the file's text when the
    caller has it), and its edges (`edge_fragments`)."""
    return has_secrets(card_text(card)) or has_secrets(frontmatter(card, text)) \
        or bool(edge_fragments(card))


_FRAGMENT_CUTS: Final = re.compile(r"[\s,\[\]\"'\\]+")


def fragments(text: str) -> list[str]:
    """The pieces of each secret in `text` that white space, commas, brackets or quotes
    separate (a token wrapped over lines, two items of a list), longest first: what a message
    quoting a value parsed from `text` may show of it, side by side."""
    found = {piece for hit in find_secrets(text)
             for piece in _FRAGMENT_CUTS.split(text[hit.start:hit.end]) if len(piece) >= 4
             and not _is_plain_word(piece.strip("-"))}  # a key block's `PRIVATE`, not a piece
    return sorted(found, key=len, reverse=True)


def _is_plain_word(word: str) -> bool:
    return word.isalpha() and (word.islower() or word.isupper() or word.istitle())


def scrub(text: str, pieces: list[str]) -> str:
    """`text` redacted, and each of `pieces` (see `fragments`) in it hidden too."""
    for piece in pieces:
        if piece in text:
            text = text.replace(piece, marker("fragment"))
    return redact(text)


def redact_parts(parts: list[str]) -> list[str]:
    """Each of `parts` redacted with what the secrets found in them read as one text (one a
    line) cover of it: a token cut between two parts is hidden in both, so no part shows a
    piece of one, and a part keeps its place (a line keeps its number)."""
    text = "\n".join(parts)
    hits = find_secrets(text)
    redacted: list[str] = []
    start = 0
    for part in parts:
        end = start + len(part)
        pieces: list[str] = []
        position = start
        for hit in hits:
            if hit.end <= position or hit.start >= end:
                continue
            pieces += (text[position:max(hit.start, position)], marker(hit.kind))
            position = min(hit.end, end)
        redacted.append("".join(pieces) + text[position:end])
        start = end + 1
    return redacted


def name_kind(*names: str) -> str | None:
    """The kind of the first secret in an id or file name (which the card would be delivered,
    listed and stored under), else None. A name has no `=` or spaces, so the value shapes are
    what count; separators are read as spaces so `x-AKIA...` is found."""
    for name in names:
        kind = _name_kind(name[:512])
        if kind:
            return kind
    return None


@lru_cache(maxsize=4096)  # reports redact the same folders and files over and over
def _name_kind(name: str) -> str | None:
    if not any(c.isdigit() or c.isupper() for c in name):
        # Generated tokens carry digits or capitals; a name of lowercase words holds none.
        return None
    if not _might_hold(visible(name)[0]):
        return None  # nor does any piece of it, nor the name with its separators as spaces
    return _scan_name(name)


def _scan_name(name: str) -> str | None:
    hits = find_secrets(name) or find_secrets(name.replace("-", " ").replace(".", " "))
    if hits:
        return hits[0].kind
    # A token glued to words by `_` (`deploy_ghp_...`, `AKIA..._notes`): every piece
    # between separators, as tokens may themselves hold one (`ghp_`, `github_pat_`).
    cuts = [0] + [i + 1 for i, c in enumerate(name) if c in "-._"][:24] + [len(name) + 1]
    for a, start in enumerate(cuts):
        for end in cuts[a + 1:]:
            piece = name[start:end - 1]
            if len(piece) >= 16 and any(c.isdigit() or c.isupper() for c in piece):
                hits = find_secrets(piece)
                if hits:
                    return hits[0].kind
    return None


def redact_path(path: str) -> str:
    """`path` safe to print: a file or folder name holding a secret is replaced whole by its
    marker (the extension kept), everything else redacted as text."""
    parts = path.replace("\\", "/").split("/")
    if len(parts) == 1 and "\\" in path:
        parts = path.split("\\")
    for index, part in enumerate(parts):
        kind = name_kind(part) if part else None
        if kind:
            suffix = next((s for s in (".instructions.md", ".md", ".mdc") if part.endswith(s)), "")
            parts[index] = marker(kind) + suffix
    return redact("/".join(parts))


# A card's edges. A hook's answer shows a card's id and title (or `- id: card line` when it
# folds it) first and its body's last line (or the card line) last, and the answers of one
# session sit in one context: a token cut between the end of one card and the start of
# another (`... ghp_aBcDeFgHiJ` ending a card of one answer, `kLmNo...` opening a card of a
# later one) reaches the model in two pieces, neither of which the gate finds alone. So a card
# is held back when its end is a token's head (a provider's prefix and more: random characters
# after it complete the token) or its start is a token's rest (a provider's prefix, or its
# first characters, put before it completes one, and what follows looks generated).
_EDGE_FILLERS: Final = (
    "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4bC6dE8fG0hJ2kL4mN6pQ8rS0tU2vW4xY6zA8bC0dE2fG4hJ6kL8mN0p",
    "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE",
    "3f9a2b7c4d1e8f6a0b5c9d2e7f1a4b8c3d6e0f9a2b5c8d1e4f7a0b3c6d9e2f5a8b1c4d7e0f3a6b9c2d5e8f1a4b7",
)
_EDGE_RUN: Final = re.compile(r"[A-Za-z0-9_+/=.:-]{1,300}")
_EDGE_PIECES: Final = re.compile(r"[-_.:/+=]")
# Kinds whose first characters are a fixed prefix (a literal opening the token), so that a
# start can be tried after each piece of it.
_EDGE_SKIPPED: Final = frozenset({"discord-bot-token", "mailchimp-key", "telegram-bot-token",
                                  "terraform-token"})


def _head_kind(line: str) -> tuple[str, int] | None:
    """The kind of token whose head ends `line`, and where that head starts, else None."""
    runs = list(_EDGE_RUN.finditer(line, max(0, len(line) - 300)))
    last = runs[-1] if runs else None
    if last is None or last.end() != len(line) or line[-1] in ".:":
        return None  # a sentence's or a label's end, a closing mark: nothing goes on from it
    head = last.group(0)
    candidates = _candidates(head)
    if not candidates or any(end == len(head) for _k, _s, end in _scan_plain(head)):
        return None  # a whole token ends the line: the gate's own finding, not a piece
    for kind, pattern in candidates:
        if kind in _CASELESS_KEYWORDS:
            continue
        literals = next(words for name, words, _p in _TOKEN_PATTERNS if name == kind)
        for filler in _EDGE_FILLERS:
            for size in range(1, len(filler) + 1):
                match = pattern.search(head + filler[:size] + " ")
                if match is None:
                    continue
                start, end = match.span(1) if pattern.groups else match.span()
                if not start < len(head) < end:
                    continue
                piece = head[start:]
                after, word = max(((piece.lower().rfind(word.lower()) + len(word), word)
                                   for word in literals if word.lower() in piece.lower()),
                                  default=(-1, ""))
                rest = piece[after:]
                if after < 0 or len(rest) >= 3 and len(set(rest.lower())) <= 2 \
                        or kind in _RANDOM_ONLY and rest and is_wordy(rest):
                    break  # a placeholder (`ghp_xxxx`), a word (`sk-learn`)
                if not rest and not (len(word) >= 3 and any(c in "_-." for c in word)):
                    break  # a prefix that is a word or two letters (`AKIA`, `SK`) ending a line
                return kind, last.start() + start
    return None


def _rest_kind(start: str) -> tuple[str, int] | None:
    """The kind of token whose rest opens `start` (a prefix, or its first characters, put
    before it completes one), and where that rest ends, else None."""
    first = _EDGE_RUN.match(start)
    if first is None or len(first.group(0)) < 8:
        return None
    rest = first.group(0)
    # Its longest piece between separators must look generated (not `release-2024-notes`,
    # `cursor-rules-v2`, `Context7-aware`): long enough when no prefix character is in it.
    longest = max(_EDGE_PIECES.split(rest), key=len)
    if not _looks_generated(longest) or len(longest) < 8:
        return None
    for keyword, number in _LITERALS:
        kind, _words, pattern = _TOKEN_PATTERNS[number]
        if kind in _EDGE_SKIPPED or len(keyword) < 2:
            continue
        for cut in range(1, len(keyword) + 1):
            if cut == len(keyword) and len(longest) < 16 or not rest.startswith(keyword[cut:]):
                continue
            match = pattern.match(keyword[:cut] + rest + " ")
            if match is not None and match.end() > cut and _is_generated(kind, match.group(0)):
                return kind, match.end() - cut
    return None


def _looks_generated(text: str) -> bool:
    """Digits among letters of both cases, or among capitals alone (an AWS key's body) when
    long, or among letters of one case when longer (a hash)."""
    has_lower = any(c.islower() for c in text)
    has_upper = any(c.isupper() for c in text)
    return any(c.isdigit() for c in text) and (
        has_lower and has_upper or len(text) >= 16 and not has_lower or len(text) >= 32)


def edge_fragments(card: object) -> list[tuple[str, str]]:
    """(kind, text) of each edge of a card (see `_EDGE_FILLERS`) that is a piece of a token
    another card could complete: the end of its body (or of its title, with no body) and of
    its card line, the start of its id, its title and its card line."""
    title = str(getattr(card, "title", "")).strip()
    line = " ".join(str(getattr(card, "card", "")).split())
    body = str(getattr(card, "body", "")).strip()
    found: list[tuple[str, str]] = []
    for text in {body[body.rfind("\n") + 1:] if body else title, line}:
        if text:
            text = text.rstrip()
            head = _head_kind(text)
            if head is not None:
                found.append((head[0], text[head[1]:]))
    for text in {str(getattr(card, "id", "")), title, line}:
        rest = _rest_kind(text) if text else None
        if rest is not None:
            found.append((rest[0], text[:rest[1]]))
    return found
