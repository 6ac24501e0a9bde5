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


def is_placeholder(value: str) -> bool:
    """Values that only stand for a secret: `changeme`, `<token>`, `${VAR}`, `xxxx`, `***`,
    an earlier redaction marker."""
    stripped = value.strip("\"'`")
    lowered = stripped.lower()
    if not stripped or lowered in _PLACEHOLDERS or stripped.startswith(MARKER_PREFIX):
        return True
    if stripped[0] in "<$%{[(" or "process.env" in stripped or "${" in stripped or "{{" in stripped:
        return True
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
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
    stripped = value.strip("\"'`")
    lowered = stripped.lower()
    return not stripped or lowered in _PLACEHOLDERS or stripped.startswith(MARKER_PREFIX) \
        or stripped[0] in "<$%{[(-" or "${" in stripped or "{{" in stripped \
        or any(word in lowered for word in _PLACEHOLDER_WORDS) or len(set(lowered)) == 1 \
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
# `Authorization: Basic <base64 of user:password>`.
_BASIC_AUTH: Final = re.compile(r"(?i:\bbasic)[ \t]{1,4}([A-Za-z0-9+/]{8,400}={0,2})(?![A-Za-z0-9+/=])")


def _command_line_secrets(text: str) -> Iterator[tuple[str, int, int]]:
    lowered = text.lower()
    if "pass" in lowered or "-pwd" in lowered:
        for match in _FLAG_PASSWORD.finditer(text):
            group = next(g for g in (1, 2, 3) if match.group(g) is not None)
            value = match.group(group)
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
# `.netrc`; a Dockerfile's `ENV NAME value`; prose that says what the password is.
_NETRC: Final = re.compile(r"(?im)(?:\bmachine[ \t]+\S{1,256}|^[ \t`]{0,8}default)"
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


_TOKEN_RUN: Final = re.compile(r"[A-Za-z0-9_+/=.-]{1,300}")
_LINE_START: Final = re.compile(r"\n[ \t]{0,40}(?=[A-Za-z0-9_+/=.-]{4})")


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
        joined = head + tail
        if len(head) < 4 or len(joined) < 16 or not any(c.isdigit() or c.isupper() for c in joined) \
                or not _might_hold(joined):
            continue
        for kind, hit_start, hit_end in _scan_plain(joined):
            if hit_start < len(head) < hit_end:  # the secret spans the cut
                yield kind, before - len(head), tail_run.end()
                break


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


def _encoded_secrets(text: str, depth: int = 1) -> Iterator[tuple[str, int, int]]:
    """Tokens under up to `_DECODE_DEPTH` encodings; each hit is the whole outer run."""
    base64_runs = [(m.start(), m.end()) for m in _BASE64_RUN.finditer(text)]
    runs = [("hex" if (end - start) % 2 == 0 and end - start >= 40
             and _HEX_DIGITS.issuperset(text[start:end]) else "base64", start, end)
            for start, end in base64_runs]
    if "\n" in text and len(base64_runs) >= 1:
        runs += [("base64", start, end) for start, end in _wrapped_blocks(text, base64_runs)]
    if "%" in text:
        runs += [("percent", start, end) for start, end in _percent_runs(text)]
    for how, start, end in runs:
        run = text[start:end]
        joined = _WHITESPACE.sub("", run) if "\n" in run else run
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
    for match in _AWS_SECRET.finditer(text, low, min(len(text), end + _AWS_NEIGHBOURHOOD)):
        value = match.group(0)
        if _classes(value) >= 3 and not value.startswith(("AKIA", "ASIA")):
            yield "aws-secret-key", match.start(), match.end()


# Unicode format characters (zero-width space and joiners, bidi controls, soft hyphen, the
# whole tag block, its unassigned code points too) and the fillers that render as nothing:
# removed before scanning. At least every character the renderer deletes from a title
# (`engram.render`), or a token split by one would pass here and be joined on its way out.
_INVISIBLE: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e01ef]"
)


# Cyrillic and Greek letters drawn like Latin ones. Inside a word that also holds a Latin
# letter or a digit (`ghр_...` with a Cyrillic `р`) they are read as the Latin letter: a
# reader sees the token and types it back. A word wholly Cyrillic or Greek (prose) is left
# as it is. One character for one, so offsets do not move.
_LOOKALIKES: Final = str.maketrans(
    "АВЕЅІЈКМНОРСТУХаеіјорсухѕԁһԛԝΑΒΕΖΗΙΚΜΝΟΡΤΥΧαιονρ",
    "ABESIJKMHOPCTYXaeijopcyxsdhqwABEZHIKMNOPTYXaiovp")
_LOOKALIKE_CHAR: Final = re.compile("[АВЕЅІЈКМНОРСТУХаеіјорсухѕԁһԛԝΑΒΕΖΗΙΚΜΝΟΡΤΥΧαιονρ]")
_WORD: Final = re.compile(r"[\w+/=.-]{2,}")


def _fold_lookalikes(text: str) -> str:
    if not _LOOKALIKE_CHAR.search(text):
        return text
    return _WORD.sub(lambda m: m.group(0).translate(_LOOKALIKES) if _LOOKALIKE_CHAR.search(m.group(0))
                     and any(c.isascii() and c.isalnum() for c in m.group(0)) else m.group(0), text)


def visible(text: str) -> tuple[str, list[int] | None]:
    """`text` without invisible characters and with compatibility forms folded (NFKC: a
    fullwidth `ｇｈｐ＿` is `ghp_` to any reader) and Cyrillic or Greek look-alikes inside a
    Latin word read as Latin, and for each character of the result its
    offset in `text` (None when nothing changed)."""
    if text.isascii():
        return text, None
    import unicodedata

    if not _INVISIBLE.search(text) and unicodedata.is_normalized("NFKC", text):
        return _fold_lookalikes(text), None
    chars: list[str] = []
    kept: list[int] = []
    for i, c in enumerate(text):
        if c.isascii():
            chars.append(c)
            kept.append(i)
        elif not _INVISIBLE.match(c):
            for folded in unicodedata.normalize("NFKC", c):
                chars.append(folded)
                kept.append(i)
    return _fold_lookalikes("".join(chars)), kept


def find_secrets(text: str) -> list[SecretHit]:
    """Every secret in `text`, in order, overlaps merged (the earliest, then longest, wins)."""
    scanned, kept = visible(text)
    spans = list(_scan(scanned))
    if kept is not None:
        # Back to offsets in `text`: a span covers the invisible characters inside it.
        spans = [(kind, kept[start], kept[end - 1] + 1) for kind, start, end in spans]
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


def card_text(card: object) -> str:
    """Everything of a card that engram may emit or write anywhere: title, card line, tags,
    globs, depends_on and body (the id and file name are checked by `name_kind`)."""
    fields = [getattr(card, name, "") for name in _TEXT_FIELDS]
    for name in _LIST_FIELDS:
        fields.extend(getattr(card, name, ()) or ())
    fields.append(getattr(card, "body", ""))
    return "\n".join(str(field) for field in fields)


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
