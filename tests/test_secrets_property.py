"""Never a secret, attacked with generated inputs: hypothesis draws a realistic secret of every
kind the detector claims (`tests/secret_corpus.py`, each kind in the line it would sit in, its
random parts drawn anew), or a password of any class and length in every form that says what
it is (`mysql -p`, `sshpass -p`, `--password`, `PGPASSWORD=`, `.pgpass`, `.netrc`, `.my.cnf`,
a URL), disguises it the ways a reader still reads through (look-alike letters of any script,
invisible characters, fullwidth forms, combining accents, a line break or three, JSON escapes,
Markdown's backslash escapes, HTML character references),
and plants it in a channel: the detector's redaction, `observe`'s sanitizer, a card's hook
answer, a prompt, `route`, `show`, `lint`, `doctor`, a transcript's trace and inbox note.

The oracle reads each output the way a person would (escapes and references decoded, NFKC, invisible
characters and accents dropped, look-alikes read as ASCII, line breaks joined) and fails when
any 8 characters in a row of the secret (the whole of a shorter one, as a word) are still
there. `ENGRAM_SECRET_EXAMPLES=N` explores further."""

from __future__ import annotations

import html
import html.entities
import json
import os
import re
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engram import sanitize, secrets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from secret_corpus import corpus  # noqa: E402

EXAMPLES = int(os.environ.get("ENGRAM_SECRET_EXAMPLES", "120"))
CHANNEL_EXAMPLES = max(EXAMPLES // 10, 12)
SHORTEST = 8  # a run of the secret this long, still readable in an output, is a leak

# Kinds whose secret is one token in its line (a multi-line key, a whole wrapped block or an
# encoded blob is the corpus test's business: disguising it letter by letter means nothing).
_KINDS = [kind for kind, text, secret in corpus(seed=1)
          if secret and "\n" not in secret and secret in text and len(secret) >= 12
          and secret.isascii()
          and not re.search(r"(?i)base64|hex|percent|wrapped|encoded|b64|markdown|html", kind)
          and kind not in ("putty-private-key", "key-wrapped-over-three-lines",
                           "json-unicode-escaped-token", "kube-client-key-data-4096")]

# Lookalikes per ASCII character, from the table the detector folds (what a reader reads as
# the ASCII letter; the oracle reads them back through the same table).
_LOOKS: dict[str, list[str]] = {}
for _source, _target in zip(secrets._LOOKALIKE_FROM, secrets._LOOKALIKE_TO, strict=True):
    _LOOKS.setdefault(_target, []).append(_source)
_READ = {ord(a): b for a, b in zip(secrets._LOOKALIKE_FROM, secrets._LOOKALIKE_TO, strict=True)}
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u034f", "\u180b",
             "\u180e", "\u2064", "\ufe0f", "\U000e0041", "\U0001d173", "\u17b4", "\u115f"]
BREAKS = ["\n", "\r\n", "\n    ", "\u2028", "\n  > "]
# A named HTML character reference for each ASCII character that has one (`&lowbar;`).
_NAMED = {value: name for name, value in sorted(html.entities.html5.items(), reverse=True)
          if len(value) == 1 and value.isascii() and name.endswith(";")}


def _read(text: str) -> str:
    """An output as a person (or a model reading Markdown) reads it: escapes decoded (JSON's,
    Markdown's backslash before punctuation, HTML character references), NFKC, format
    characters and marks dropped, look-alikes read as ASCII."""
    text = html.unescape(text)
    text = re.sub(r"\\u([0-9a-fA-F]{4})\\u([0-9a-fA-F]{4})", lambda m: (
        chr(int(m.group(1), 16)) + chr(int(m.group(2), 16))).encode("utf-16", "surrogatepass")
        .decode("utf-16", "replace"), text)
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    text = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)
    text = text.replace("\\/", "/")
    for _level in range(2):  # Markdown in a JSON string: `ghp\\_`
        text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)
    text = "".join(c for c in unicodedata.normalize("NFKD", text)
                   if unicodedata.category(c) not in ("Cf", "Mn", "Me")
                   and not "\U000e0000" <= c <= "\U000e01ef" and c not in "\u115f\u1160\u3164\uffa0")
    return unicodedata.normalize("NFKC", text).translate(_READ)


def _joined(text: str) -> str:
    """The output with its line breaks (and the indentation or quoting after them) gone: a
    token cut over lines is read joined."""
    return re.sub(r"(?:\r?\n|\u2028)[ \t>]*", "", text)


def _shared_start(kind: str) -> str:
    """What every secret of `kind` starts with, whatever the seed: the format's (a provider's
    prefix, a webhook's `https://hooks.slack.com/services/T`), not the secret."""
    secrets_of = [s for s in (next(s for k, _t, s in corpus(seed) if k == kind)
                              for seed in (1, 2, 3)) if s]
    start = os.path.commonprefix(secrets_of)
    # A kind whose value is the same at every seed (a fixed passphrase) is all secret.
    return start if secrets_of and len(start) < min(map(len, secrets_of)) else ""


FORMAT_STARTS = sorted({start for kind, _text, _secret in corpus(seed=1)
                        if len(start := _shared_start(kind)) >= SHORTEST}, key=len, reverse=True)


def leaked(secret: str, output: str) -> str | None:
    """The part of `secret` (plain ASCII) a person still reads in `output`, if any. A run wholly
    inside the start its format gives every secret of its kind (`https://hooks.sl`) is no part
    of the secret: another line of the output may hold it (a URL's `https://`)."""
    public = next((len(start) for start in FORMAT_STARTS if secret.startswith(start)), 0)
    read = _read(output)
    for view in (read, _joined(read)):
        if len(secret) < SHORTEST:
            if re.search(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", view):
                return secret
            continue
        for start in range(max(public - SHORTEST + 1, 0), len(secret) - SHORTEST + 1):
            piece = secret[start:start + SHORTEST]
            if piece in view:
                return piece
    return None


# ----------------------------------------------------------------- what is drawn


@st.composite
def disguised(draw: st.DrawFn, secret: str) -> str:
    """`secret` as a reader still reads it: some of its characters drawn like others, or split
    by invisible characters, or cut over lines, or JSON-escaped."""
    how = draw(st.sampled_from(["plain", "lookalike", "invisible", "fullwidth", "accent",
                                "wrapped", "json", "mixed", "markdown", "html"]))
    chars = list(secret)
    positions = draw(st.lists(st.integers(0, len(chars) - 1), min_size=1, max_size=4, unique=True))
    if how in ("lookalike", "mixed"):
        for i in positions:
            if _LOOKS.get(chars[i]):
                chars[i] = draw(st.sampled_from(_LOOKS[chars[i]]))
    if how in ("invisible", "mixed"):
        for i in positions:
            chars[i] = chars[i] + draw(st.sampled_from(INVISIBLE))
    if how == "fullwidth":
        chars = [chr(ord(c) + 0xFEE0) if "!" <= c <= "~" and draw(st.booleans()) else c
                 for c in chars]
    if how == "accent":
        for i in positions:
            if chars[i].isalpha():
                chars[i] = chars[i] + draw(st.sampled_from(["\u0301", "\u0300", "\u0308", "\u0327"]))
    if how == "json":
        for i in positions:
            if chars[i].isascii():
                chars[i] = f"\\u{ord(chars[i]):04x}"
    if how == "markdown":
        # A converter's escape of every punctuation character inside a word (`ghp\\_`).
        chars = ["\\" + c if i and i + 1 < len(secret) and not c.isalnum() and c.isascii()
                 and secret[i - 1].isalnum() and secret[i + 1].isalnum() else c
                 for i, c in enumerate(chars)]
    if how == "html":
        for i in positions:
            named = _NAMED.get(chars[i])
            chars[i] = draw(st.sampled_from([f"&#{ord(chars[i])};", f"&#x{ord(chars[i]):X};",
                                             *([f"&{named}"] if named else [])]))
    text = "".join(chars)
    if how == "wrapped" and len(secret) >= 20:
        # A wrapper fills the line it is on (any length), then cuts at its width (16 or more).
        first = draw(st.integers(1, len(secret) - 1))
        width = draw(st.integers(16, 64))
        cuts = [first, *range(first + width, len(secret), width)]
        pieces = [secret[a:b] for a, b in zip([0, *cuts], [*cuts, len(secret)], strict=True)]
        text = draw(st.sampled_from(BREAKS)).join(pieces)
    return text


@st.composite
def token_lines(draw: st.DrawFn) -> tuple[str, str]:
    """(a line holding a disguised secret of a corpus kind, the secret in plain ASCII)."""
    kind = draw(st.sampled_from(_KINDS))
    seed = draw(st.integers(0, 10**6))
    text, secret = next((t, s) for k, t, s in corpus(seed) if k == kind)
    assume(secret in text)
    return text.replace(secret, draw(disguised(secret)), 1), secret


_PLACEHOLDERS = {"password", "passwd", "pass", "pwd", "secret", "token", "changeme", "test",
                 "none", "null", "true", "false", "yes", "example", "sample", "dummy", "xxx",
                 "placeholder", "redacted", "undefined", "nil", "key", "stdin", "testing"}
PASSWORD = st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789!#%^*_+~",
                   min_size=3, max_size=24).filter(
    lambda p: p.lower() not in _PLACEHOLDERS and len(set(p)) > 1 and p[0].isalnum()
    and not any(w in p.lower() for w in ("password", "changeme", "dummy", "xxxx", "placeholder",
                                         "redacted")))
FORMS = [
    "mysql -u root -p{} app",
    "mysqldump --user=deploy --password={} app > dump.sql",
    "sshpass -p {} ssh deploy@db.internal",
    "sshpass -p{} rsync -a build/ deploy@web:/srv",
    "tool login --password {} --user deploy",
    "PGPASSWORD={} psql -h db.internal -U deploy app",
    "export DB_PASSWORD={}",
    "db.internal:5432:app:deploy:{}",
    "*:*:*:deploy:{}",
    "machine api.example.com login deploy password {}",
    "machine api.example.com\n  login deploy\n  password {}",
    "[client]\nuser=root\npassword={}\nhost=db.internal",
    "https://deploy:{}@git.example.com",
    "DATABASE_URL=postgres://admin:{}@db.internal:5432/app",
    "docker login -u deploy -p {} registry.example.com",
    "redis-cli -h cache -a {} ping",
    "openssl genrsa -aes256 -passout pass:{} -out key.pem 2048",
]


@st.composite
def password_lines(draw: st.DrawFn) -> tuple[str, str]:
    """(a line whose form says what its password is, the password: any class, 3 to 24)."""
    form = draw(st.sampled_from(FORMS))
    password = draw(PASSWORD)
    context = form.replace("{}", " ")
    # A password that is a word of its line already would be found there whatever happens.
    assume(not re.search(rf"(?<![A-Za-z0-9]){re.escape(password)}(?![A-Za-z0-9])", context))
    assume(len(password) < SHORTEST or all(password[i:i + SHORTEST] not in context
                                            for i in range(len(password) - SHORTEST + 1)))
    return form.format(password), password


SECRET_LINES = st.one_of(token_lines(), password_lines())
PROSE = st.sampled_from(["", "Deploy notes.\n", "Run `make deploy` after the checks.\n\n",
                         "# Release\n\nSteps:\n", "see the runbook;\n", "café résumé — ok\n"])


# ----------------------------------------------------------------- the detector and observe


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True)
@given(line=SECRET_LINES, before=PROSE, after=PROSE)
def test_no_disguised_secret_survives_redaction(line: tuple[str, str], before: str,
                                                 after: str) -> None:
    text, secret = line
    document = f"{before}{text}\n{after}"
    redacted = secrets.redact(document)
    assert leaked(secret, redacted) is None, (document, redacted)
    # observe's sanitizer (traces and inbox notes) and a JSON string of the same text.
    assert leaked(secret, sanitize.sanitize(document).text) is None, document
    quoted = json.dumps(document)
    assert leaked(secret, secrets.redact(quoted)) is None, quoted


# ----------------------------------------------------------------- every channel


def _card(body: str, title: str = "Deploy notes") -> str:
    return (f"---\nid: deploy-notes\ntitle: {json.dumps(title)}\ntags: [deploy, release]\n"
            f"always: true\napplies_to: [\"deploy/**\"]\n---\nDeploy with:\n\n{body}\n\nThen check.\n")


@pytest.fixture(scope="module")
def engram_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@settings(max_examples=CHANNEL_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(card_line=SECRET_LINES, prompt_line=SECRET_LINES, turn_line=SECRET_LINES)
def test_no_disguised_secret_leaves_engram_through_any_channel(
        card_line: tuple[str, str], prompt_line: tuple[str, str], turn_line: tuple[str, str],
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from hookkit import call, make_workspace, payload

    from engram import cli

    root = tmp_path_factory.mktemp("ws")
    home = root / "home"
    for name, value in (("HOME", home), ("ENGRAM_STATE_DIR", root / "state"),
                        ("ENGRAM_CONFIG_DIR", root / "config"), ("XDG_STATE_HOME", root / "xs"),
                        ("XDG_CONFIG_HOME", root / "xc")):
        monkeypatch.setenv(name, str(value))
    ws = make_workspace(root / "proj", cards={"deploy-notes": _card(card_line[0])})
    prompt = f"deploy notes release {prompt_line[0]} checklist"
    channels: dict[str, str] = {}
    for host, name, changes in (
            ("claude", "SessionStart.json", {}),
            ("claude", "UserPromptSubmit.json", {"prompt": prompt}),
            ("codex", "UserPromptSubmit.json", {"prompt": prompt}),
            ("gemini", "BeforeAgent.json", {"prompt": prompt})):
        channels[f"hook {host} {name}"] = call(host, payload(host, name, ws, **changes))
    for args in (["route", prompt], ["route", "--explain", prompt], ["show", "deploy-notes"],
                 ["show", "--json", "deploy-notes"], ["lint"], ["doctor"], ["doctor", "--json"]):
        capsys.readouterr()
        code = cli.run([*args, "--cwd", str(ws)])
        out = capsys.readouterr()
        channels[" ".join(args[:2])] = f"(exit {code})\n{out.out}\n{out.err}"
    # A transcript holding the third line (a user's turn and a tool's output), observed.
    folder = home / ".claude" / "projects" / "-home-dev-proj"
    folder.mkdir(parents=True)
    transcript = folder / "89911e3f-d66a-438d-a2b9-8e2499b304dd.jsonl"
    turns = [{"type": "user", "sessionId": "s1", "timestamp": "2026-11-30T09:00:00Z",
              "message": {"role": "user", "content": f"Remember: deploy with {turn_line[0]}"}},
             {"type": "assistant", "sessionId": "s1", "timestamp": "2026-11-30T09:00:01Z",
              "message": {"role": "assistant", "content": [
                  {"type": "text", "text": f"Noted; the config says:\n{turn_line[0]}\nDone."}]}}]
    transcript.write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
    capsys.readouterr()
    code = cli.run(["observe", "--file", str(transcript), "--cwd", str(ws)])
    out = capsys.readouterr()
    channels["observe"] = f"(exit {code})\n{out.out}\n{out.err}"
    for folder_name in ("state", "proj/.agents/.engram/traces", "proj/.agents/.engram/inbox",
                        "proj/.claude"):
        base = root / folder_name
        for path in sorted(base.rglob("*")) if base.exists() else ():
            if path.is_file() and "index" not in path.relative_to(root).parts:
                channels[f"file {path.relative_to(root)}"] = path.read_bytes().decode("utf-8", "replace")
    for inbox in sorted((ws / ".agents" / ".engram" / "inbox").glob("*.md")):
        capsys.readouterr()
        code = cli.run(["save-session", "--file", str(inbox), "--yes", "--cwd", str(ws)])
        out = capsys.readouterr()
        channels["save-session"] = f"(exit {code})\n{out.out}\n{out.err}"
    found = [f"{secret[:6]}... as {piece!r} in {name}"
             for secret in (card_line[1], prompt_line[1], turn_line[1])
             for name, text in channels.items()
             for piece in [leaked(secret, text)] if piece]
    assert found == [], (card_line, prompt_line, turn_line, found)
