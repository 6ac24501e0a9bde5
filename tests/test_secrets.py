"""The value-shaped secret detector: every kind found and redacted, ordinary prose and code
left alone, bounded on adversarial input, and redaction never leaves a planted secret."""

from __future__ import annotations

import string
import subprocess
import sys
from pathlib import Path

import pytest
from bounds import HANG_LIMIT_S
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.secrets import find_secrets, is_secret_name, marker, redact

# (kind, text, the secret value that must disappear). Values are fake but shaped like real ones.
PLANTED = [
    ("aws-access-key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("assigned-secret", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("github-token", "export GH=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
     "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
    ("github-token", "use github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz here",
     "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
    ("openai-key", 'client = OpenAI(api_key="sk-proj-Ab3dEfGhIjKlMnOpQrStUvWx1234567890")',
     "sk-proj-Ab3dEfGhIjKlMnOpQrStUvWx1234567890"),
    ("anthropic-key", "key sk-ant-api03-AbCdEf0123456789_ghIJklMNopQRstUVwx-yz",
     "sk-ant-api03-AbCdEf0123456789_ghIJklMNopQRstUVwx-yz"),
    ("slack-token", "token xoxb-1234567890-abcdefghij1 in the bot", "xoxb-1234567890-abcdefghij1"),
    ("slack-webhook", "post to https://hooks.slack.com/services/T0000/B0000/XXXXabcdXXXXabcd1234",
     "T0000/B0000/XXXXabcdXXXXabcd1234"),
    ("google-api-key", "maps AIzaSyA1234567890abcdefghijklmnopqrstuv",
     "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    ("stripe-key", "stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("jwt", "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("url-password", "DATABASE_URL=postgres://admin:s3cr3tPa55@db.internal:5432/app", "s3cr3tPa55"),
    ("assigned-secret", "DB_PASSWORD=hunter22", "hunter22"),
    ("assigned-secret", '  "clientSecret": "Zx81kLmQ9vTw"', "Zx81kLmQ9vTw"),
    ("assigned-secret", "STRIPE_WEBHOOK_TOKEN: 9f8e7d6c5b4a3f2e1d0c", "9f8e7d6c5b4a3f2e1d0c"),
    ("bearer-token", 'curl -H "Authorization: Bearer abcDEF123456ghiJKL789mno"',
     "abcDEF123456ghiJKL789mno"),
    ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
     "-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA-truncated",
     "MIIEowIBAAKCAQEA-truncated"),
]


@pytest.mark.parametrize("kind,text,secret", PLANTED)
def test_each_kind_is_found_and_redacted(kind: str, text: str, secret: str) -> None:
    hits = find_secrets(text)
    assert [h.kind for h in hits] == [kind]
    redacted = redact(text)
    assert secret not in redacted
    assert marker(kind) in redacted


def test_assignment_keeps_the_name_and_redacts_only_the_value() -> None:
    assert redact("API_KEY=Zx81kLmQ9vTw1") == "API_KEY=[REDACTED:assigned-secret]"
    assert redact("postgres://u:pa55Word@h/db") == "postgres://u:[REDACTED:url-password]@h/db"


def test_hits_carry_line_numbers_and_offsets() -> None:
    text = "intro\n\nDB_PASSWORD=hunter22\nok\nkey AKIAIOSFODNN7EXAMPLE"
    hits = find_secrets(text)
    assert [(h.line, h.kind) for h in hits] == [(3, "assigned-secret"), (5, "aws-access-key")]
    assert [text[h.start:h.end] for h in hits] == ["hunter22", "AKIAIOSFODNN7EXAMPLE"]


def test_an_assignment_hidden_behind_another_is_still_found() -> None:
    assert find_secrets("config: API_KEY=abc123XYZdef")[0].kind == "assigned-secret"


NOT_SECRETS = """
Use sk-learn-compatible-estimators for this. The primary_key = user_id.
SORT_KEY=created_at
password: str
api_key = os.environ["API_KEY"]
SECRET_KEY = settings.SECRET_KEY
TOKEN = None
postgres://user:password@localhost/db
postgres://user:${DB_PASSWORD}@localhost/db
cache_key = f"user:{id}"
PUBLIC_KEY=ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ
token: ${{ secrets.GITHUB_TOKEN }}
MAX_TOKENS=4096
The key: remember to run tests. Password policy: min 12 chars.
ssh_key = ~/.ssh/id_rsa
def get_token(self): return self._token
headers = {"Authorization": f"Bearer {token}"}
Bearer authentication-required-here-always
commit 3f2a9c8e1b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f and uuid 89911e3f-d66a-438d-a2b9-8e2499b304dd
API_KEY=your-api-key-here
GITHUB_TOKEN=<token>
AWS_SECRET_ACCESS_KEY=xxxxxxxxxxxxxxxxxxxx
Set `OPENAI_API_KEY` in your environment; never commit it.
primaryKey: "id", sortKey: "createdAt"
mysql -u root -p app, then type it; mysql -h db -P 3306 -p$MYSQL_PWD app; mysql -pchangeme
localhost:5432:*:postgres:password in ~/.pgpass; *:*:*:deploy:${PGPASSWORD}
dsn: https://89911e3fd66a438da2b98e2499b304dd@o4504.ingest.sentry.io/4505; ssh://git@github.com/a/b
https://jane.doe@example.com/x and https://build-bot@ci.example.com/ and mailto:team@example.com
Пароль хранится в Vault; ключ API: см. раздел 2; Ρυθμίσεις: κλειδί API στο Vault
GHP_TOKEN_FILE=~/.gh; SK-II skincare; GLSL and OpenGL; NPM_CONFIG_REGISTRY; HF_HOME=/data
src/app.py:12:5: E501 line too long; at 12:30:45:120 ms; fe80::1ff:fe23:4567:890a
MYSQL_ALLOW_EMPTY_PASSWORD=yes MYSQL_RANDOM_ROOT_PASSWORD=1 PASSWORD_MIN_LENGTH=8
conn = connect(user=user, password=pw); password=abc (not in an INI section)
echo "$TOKEN" | docker login -u deploy --password-stdin ghcr.io; docker login -p "$TOKEN" r.io
openssl rsa -passin env:KEY_PASS -passout file:pass.txt; sshpass -p "$PASS" ssh h; sshpass -e ssh h
redis-cli -h cache -p 6379 ping; redis-cli -a "$REDIS_PASSWORD"; kubeadm join --token $TOKEN
Give it with --password or -p; the --password option.
Set the default password for encrypted files; each machine has password rotation.
at 2024:01:02:03:04 the job ran; --api-key ${{ secrets.API_KEY }}; --token <token>
"""


def test_ordinary_prose_and_code_are_not_flagged() -> None:
    assert [(h.kind, NOT_SECRETS[h.start:h.end]) for h in find_secrets(NOT_SECRETS)] == []


def test_real_source_files_are_not_flagged() -> None:
    import engram.config
    import engram.observe
    import engram.promote

    for module in (engram.config, engram.observe, engram.promote):
        text = Path(str(module.__file__)).read_text(encoding="utf-8")
        assert find_secrets(text) == [], module.__name__


@pytest.mark.parametrize("name,expected", [
    ("API_KEY", True), ("aws_secret_access_key", True), ("GITHUB_TOKEN", True),
    ("DB_PASSWORD", True), ("passwordHash", True), ("clientSecret", True), ("apiKey", True),
    ("PUBLIC_KEY", False), ("SORT_KEY", False), ("MAX_TOKENS", False), ("key", False),
    ("TOKEN_URL", False), ("primaryKey", False), ("KEY_PATH", False),
])
def test_secret_names(name: str, expected: bool) -> None:
    assert is_secret_name(name) is expected


def test_redact_is_idempotent_and_leaves_nothing_to_find() -> None:
    text = "\n".join(t for _, t, _ in PLANTED)
    once = redact(text)
    assert redact(once) == once
    assert find_secrets(once) == []
    for _, _, secret in PLANTED:
        assert secret not in once


@pytest.mark.parametrize("text", [
    "a=" * 100_000, "a:" * 100_000, "a_key=b" * 30_000, "x_key= " * 30_000,
    "-----BEGIN PRIVATE KEY-----" * 5_000, "x://" + ":" * 100_000, "eyJ" + "a." * 100_000,
    "Bearer " * 30_000, "sk-" * 60_000, "mysql -p" * 30_000, "a:12:" * 50_000,
    ("QUJD" * 19 + "\n") * 5_000, ("JTQx" * 19 + "\n") * 5_000, "A" * 63 + "_KEY=" + "b" * 100_000,
])
def test_adversarial_input_is_bounded(text: str) -> None:
    # In a child process with a hard timeout: a catastrophic pattern fails the test instead
    # of hanging the suite. No clock threshold (the machine's load would be measured too).
    code = ("import sys\nfrom engram.secrets import find_secrets, redact\n"
            "text = sys.stdin.read()\nfind_secrets(text)\nredact(text)\n")
    subprocess.run([sys.executable, "-c", code], input=text, text=True, check=True,
                   capture_output=True, timeout=HANG_LIMIT_S)


def test_import_is_light() -> None:
    code = ("import sys, engram.secrets; "
            "print(','.join(sorted(m for m in sys.modules if m.startswith('engram'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "engram,engram.secrets"


_SEPARATORS = st.sampled_from([" ", "\n", "\t", " : ", "\n\n", ". "])
_PROSE = st.text(alphabet=string.ascii_letters + string.digits + " .,:;=_-/\n'\"", max_size=200)


@settings(max_examples=300, deadline=None)
@given(before=_PROSE, after=_PROSE, planted=st.sampled_from(PLANTED), left=_SEPARATORS,
       right=_SEPARATORS)
def test_redact_never_leaves_a_planted_secret(before: str, after: str, planted: tuple[str, str, str],
                                              left: str, right: str) -> None:
    _, text, secret = planted
    document = before + left + text + right + after
    redacted = redact(document)
    assert secret not in redacted
    assert redact(redacted) == redacted
    # Hits a caller already has (sanitize scans once) redact exactly as a fresh scan does.
    assert redact(document, find_secrets(document)) == redacted


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_redact_is_total_and_idempotent_on_any_text(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@pytest.mark.parametrize("seed", range(20))
def test_an_aws_secret_key_starting_with_a_slash_is_found(seed: int) -> None:
    """40 base64 characters may start with `/`: `AWS_SECRET_ACCESS_KEY=/...` is a key, not a
    path (it passed the gate whole). A path under a secret-sounding name stays one."""
    import random

    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "+"
    value = "/" + "".join(rng.choice(alphabet) for _ in range(39))
    for line in (f"AWS_SECRET_ACCESS_KEY={value}", f"aws_secret_access_key = {value}",
                 f'export AWS_SECRET_ACCESS_KEY="{value}"'):
        assert value not in redact(line), line
    for path in ("SECRET_DIR=/var/lib/secrets/app/keys/production01",
                 "SECRET_FILE=/run/secrets/abcdefghijklmnopqrstuvwxyz0123456789ABCD"):
        assert redact(path) == path


@pytest.mark.parametrize("seed", range(20))
def test_an_aws_secret_key_starting_with_a_slash_and_holding_others_is_found(seed: int) -> None:
    """A generated key is base64: after a leading `/`, another `/` among the other 39
    characters comes with nearly half of them. Under the AWS secret key's own name no path is
    meant; a path under another secret-sounding name stays one."""
    import random

    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "+/"
    middle = "".join(rng.choice(alphabet) for _ in range(37))
    value = f"/{middle[:18]}/{middle[18:]}A"
    for line in (f"AWS_SECRET_ACCESS_KEY={value}", f"aws_secret_access_key = {value}",
                 f'export AWS_SECRET_ACCESS_KEY="{value}"', f'"SecretAccessKey": "{value}"',
                 f"secret-access-key: {value}"):
        assert value not in redact(line), line
    for path in ("SECRET_DIR=/var/lib/secrets/app/keys/production01",
                 "SECRET_FILE=/run/secrets/abcdefghijklmnopqrstuvwxyz0123456789ABCD",
                 "CLIENT_SECRET_PATH=/home/deploy/Secrets/k8s/prod/client01"):
        assert redact(path) == path


@pytest.mark.parametrize("cut", ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\u2028", "\u2029",
                                 "\x85"])
def test_a_token_cut_by_any_line_break_the_renderer_emits_is_found(cut: str) -> None:
    """The renderer sends every line break as `\\n`: a token cut by a lone `\\r`, a vertical
    tab, a form feed or a file separator reaches the model on two lines, which a reader joins."""
    token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    text = f"token {token[:21]}{cut}{token[21:]} ok"
    assert redact(text) == "token [REDACTED:github-token] ok"


def test_a_generated_token_holding_four_xs_is_no_placeholder() -> None:
    """`xxxx` marks an example when the x's are a third of the value or more; a generated
    token may hold four in a row (the property test drew this one, eight x's in 32)."""
    token = "JFIJjLaYBXSWxkwBPl6AXxxXVFkrrXXE"
    assert redact(f'{{"identitytoken": "{token}"}}') == '{"identitytoken": "[REDACTED:assigned-secret]"}'
    assert find_secrets("API_KEY=abcxxxxxxxxxxx123 and AKIAxxxxxxxxxxxxxxxx") == []


@pytest.mark.parametrize("written", [
    "ghp\\_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",  # Markdown, as converters from HTML write it
    "ghp&#95;aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "ghp&#x5F;aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "ghp&lowbar;aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "&#103;&#104;&#112;&#95;aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "ghp_aBcDeFgHiJ&#8203;kLmNoPqRsTuVwXyZ0123456789",  # a zero-width space by reference
])
def test_a_token_in_markdown_escapes_or_html_references_is_found(written: str) -> None:
    """Markdown reads `\\_` and `&#95;` as `_`: the model reading the card reads the token,
    alone, in a JSON string (a tool's output in a transcript: `ghp\\\\_`) and in one of those."""
    import json

    for text in (f"use {written} here", json.dumps({"note": f"use {written} here"}),
                 json.dumps(json.dumps({"note": f"use {written} here"}))):
        assert [hit.kind for hit in find_secrets(text)] == ["github-token"], text
        assert "aBcDeFgHiJ" not in redact(text), text


def test_escapes_and_references_that_hide_no_secret_are_left_alone() -> None:
    """Unknown and invalid references, regex escapes and table pipes change no verdict."""
    text = ("| a \\| b | `r\"foo\\.bar\"` | &notanentity; &#0; &#x110000; &amp; &lt;token&gt; |\n"
            "password: &lt;your password&gt;\nDB\\_PASSWORD=\\<secret\\>\n")
    assert find_secrets(text) == []


@pytest.mark.parametrize("line", [
    "docker login --username deploy --password {} registry.example.com",
    "export DB_PASSWORD={}",
    '  "clientSecret": "{}",',
    'curl -H "Authorization: Bearer {}" https://api.example.com',
    "DATABASE_URL=postgres://admin:{}@db.internal:5432/app",
    "env:\n  - name: DB_PASSWORD\n    value: \"{}\"",
    "database:\n  password:\n    {}\n  host: db.internal",
    "machine api.example.com\n  login deploy\n  password {}",
    "FROM python:3.12\nENV API_TOKEN {}\nRUN make",
    '{{"Parameter": {{"Name": "/prod/app/db", "Type": "SecureString", "Value": "{}", "Version": 3}}}}',
    'password: "{}"',
])
@pytest.mark.parametrize("first", [1, 3, 9])
@pytest.mark.parametrize("width", [16, 64])
def test_a_value_cut_over_lines_after_its_name_is_found(line: str, first: int, width: int) -> None:
    """A value the line names as a secret, cut by line breaks (a wrapper fills the line it is
    on, then cuts at its width): the model reads the lines joined, so no piece may survive."""
    value = "correct horse battery staple" if line.startswith("password:") else \
        "q9#a0oCyPK1B4DxW7mZ2kR8vT5nL" if "PASSWORD" in line.upper() else "q9Ka0oCyPK1B4DxW7mZ2kR8vT5nL"
    cuts = [first, *range(first + width, len(value), width)]
    pieces = [value[a:b] for a, b in zip([0, *cuts], [*cuts, len(value)], strict=True)]
    text = line.format("\n".join(pieces))
    redacted = redact(text)
    assert [piece for piece in pieces if len(piece) >= 6 and piece in redacted] == [], redacted


def test_hard_wrapped_prose_and_code_next_to_secret_words_is_left_alone() -> None:
    """Lines joined across a break must not make a secret of prose or code around a secret's
    name: a type, a variable, a list, a statement of its own on the next line."""
    text = ("mutation AuthenticateWithEmail(\n  $email: String!\n  $password: String!\n"
            "  $verificationCode: String\n) {\n"
            "const line = new DirectLine({\n      token: chatbotToken\n    });\n"
            "Keep the API token in the vault and rotate it\nevery 90 days; the password\n"
            "policy is enforced by the gateway.\nAPI_KEY=\n"
            "- set `API_KEY`\n- then run `make deploy`\n")
    assert find_secrets(text) == []


@pytest.mark.parametrize("written", [
    "ghp\n\\_{rest}",  # the escape opens the next line
    "ghp\n    \\_{rest}",  # indented
    "> ghp\n> \\_{rest}",  # in a quote
    "ghp\\_\n{rest}",  # the escape ends the line
    "ghp\\\n_{rest}",  # Markdown's hard line break inside the word
    "gh\\\np\\_{rest}",
])
def test_a_markdown_escape_where_a_line_cuts_the_token_is_read(written: str) -> None:
    """A wrapper that cuts a token next to a Markdown escape (`ghp` / `\\_...`): the model
    reads `_` for `\\_` and the two lines joined, so it reads the token."""
    rest = "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    text = "use " + written.format(rest=rest) + " here"
    assert [hit.kind for hit in find_secrets(text)] == ["github-token"], text
    assert "aBcDeFgHiJ" not in redact(text), text


def test_escapes_and_hard_breaks_at_line_ends_that_hide_no_secret_are_left_alone() -> None:
    text = ("docker run --rm \\\n  -e MODE=dev \\\n  app\nline one\\\nline two\n"
            "\\- not a list\nfoo\n\\_bar\\_ and `a\\`\nAPI\\_KEY is set in the vault\n")
    assert find_secrets(text) == []


def _narrow(blob: str, width: int, indent: str) -> str:
    return "\n".join(indent + blob[i:i + width] for i in range(0, len(blob), width))


@pytest.mark.parametrize("width", [4, 8, 12, 16, 20, 23, 24, 64])
def test_base64_wrapped_narrower_than_a_run_is_decoded(width: int) -> None:
    """A kubeconfig's `client-key-data` (a PEM key in base64) or a base64 token hard-wrapped
    at any width, after its key or in a block scalar: no line of it survives; a certificate
    wrapped the same way (public) is left alone."""
    import base64
    import random

    rng = random.Random(width)
    alphabet = string.ascii_letters + string.digits + "+/"
    pem = ("-----BEGIN RSA PRIVATE KEY-----\n"
           + "\n".join("".join(rng.choice(alphabet) for _ in range(64)) for _ in range(12))
           + "\n-----END RSA PRIVATE KEY-----\n")
    key = base64.b64encode(pem.encode()).decode()
    token = base64.b64encode(b"GITHUB_TOKEN=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789\n").decode()
    for blob, kind in ((key, "private-key"), (token, "github-token")):
        for text in ("users:\n- name: admin\n  user:\n    client-key-data: "
                     + _narrow(blob, width, "      ").lstrip(),
                     "users:\n- name: admin\n  user:\n    client-key-data: |\n" + _narrow(blob, width, "      "),
                     "token.b64:\n" + _narrow(blob, width, "") + "\nend of file"):
            redacted = redact(text)
            assert [hit.kind for hit in find_secrets(text)] == [kind], text
            assert [line for line in _narrow(blob, width, "").split("\n")
                    if len(line) >= 4 and line in redacted.replace(" ", "")] == [], redacted
    certificate = base64.b64encode(pem.replace("RSA PRIVATE KEY", "CERTIFICATE").encode()).decode()
    assert find_secrets("certificate-authority-data: |\n" + _narrow(certificate, width, "  ")) == []


@pytest.mark.parametrize("written", [
    "ghp_aBcDeFgHiJ*kLmNoPqRsTuVwXyZ0123456789*",  # the rest in emphasis
    "**ghp_aBcDeFgHiJ**kLmNoPqRsTuVwXyZ0123456789",
    "ghp_aBcDeFgHiJ~~kLmNo~~PqRsTuVwXyZ0123456789",
    "ghp_aBcDeFgHiJ`kLmNoPqRsTuVwXyZ0123456789`",
    "ghp_aBcDeFgHiJ<!-- -->kLmNoPqRsTuVwXyZ0123456789",
    "ghp_aBcDeFgHiJ<span class=\"x\">kLmNoPqRsTuVwXyZ0123456789</span>",
    "ghp_aBcDeFgHiJ<b></b>kLmNoPqRsTuVwXyZ0123456789",
    "[ghp_aBcDeFgHiJ](https://example.com)kLmNoPqRsTuVwXyZ0123456789",
    "DB_PASSWORD=Zq8v*Lm2K*x9Tr",
])
def test_a_token_cut_by_inline_markdown_is_found(written: str) -> None:
    """Emphasis, strikethrough and code marks, an HTML tag or comment, a link inside a word:
    Markdown shows the word whole, and the model reads it so."""
    text = f"use {written} here\nand more"
    assert find_secrets(text), text
    assert "aBcDeFgHiJ" not in redact(text) and "Lm2K" not in redact(text), redact(text)


def test_inline_markdown_inside_ordinary_words_is_left_alone() -> None:
    text = ("**Note**: run `make test`; a*b*c is `x`; List<String>foo and Map<K, V>;\n"
            "see [the docs](https://example.com/a)and **Bold**Text, snake_case*2 and v1.2`3`\n")
    assert find_secrets(text) == []


def test_a_token_in_unicode_tag_characters_is_found() -> None:
    """Tag characters (U+E0020-U+E007E) are invisible when shown, yet a model reads each as the
    ASCII character it stands for: a token written in them is found, and so is one split by
    one of them (read deleted)."""
    token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    hidden = "".join(chr(0xE0000 + ord(c)) for c in token)
    assert [hit.kind for hit in find_secrets(f"see {hidden} ok")] == ["github-token"]
    assert redact(f"see {hidden} ok") == "see [REDACTED:github-token] ok"
    split = token[:20] + chr(0xE0041) + token[20:]
    assert [hit.kind for hit in find_secrets(split)] == ["github-token"]


@pytest.mark.parametrize("written", [
    'ID = "ghp_aBcDeFgHiJ" + "kLmNoPqRsTuVwXyZ0123456789"',
    "ID = 'sk-ant-api03-' 'Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7'",
    '$id = "AKIAIOSF" . "ODNN7EXAMPLE";',
    'local id = "glpat-" .. "Ab3Cd5Ef7Gh9Ij1Kl3Mn"',
])
def test_a_token_split_into_joined_string_literals_is_found(written: str) -> None:
    """Code that splits a token into two literals it joins (as some do to get past a push
    scanner): a reader joins them back."""
    assert find_secrets(written), written
    assert find_secrets("it's 'fine' and \"ok\" + \"Done\"; x = \"abc\" + \"Def123456\"") == []


@pytest.mark.parametrize("cut", [
    "\x1b[31m",  # a colour, as `grep --color=always` marks a match inside the token
    "\x1b[01;31m\x1b[K",
    "\x1b]8;;https://example.com\x07",  # a terminal hyperlink
    "\x00", "\x7f", "x\x08",  # NUL, DEL, a character a backspace erases
])
def test_a_token_cut_by_what_a_terminal_does_not_show_is_found(cut: str) -> None:
    """A tool's output in a transcript (`observe`) or pasted into a card: a terminal shows the
    token whole, and so does a reader who knows the codes; in the JSON of a transcript too."""
    import json

    token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    text = f"out: {token[:15]}{cut}{token[15:]}\x1b[0m done"
    for written in (text, json.dumps({"output": text})):
        assert [hit.kind for hit in find_secrets(written)] == ["github-token"], written
        assert "aBcDeFgHiJ" not in redact(written) and "kLmNoPq" not in redact(written)
    assert find_secrets("\x1b[1mbold\x1b[0m text, ab\x08c and a \x00 byte") == []


def test_a_token_hyphenated_at_a_line_end_is_found() -> None:
    """A word cut at a line's end with a hyphen, which a reader joins without it."""
    token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    text = f"use {token[:15]}-\n{token[15:]} here"
    assert [hit.kind for hit in find_secrets(text)] == ["github-token"]
    assert redact(text) == "use [REDACTED:github-token] here"
    assert find_secrets("a well-\nknown pre-\nprocessing step") == []


def _xxd(data: bytes, group: int = 2, width: int = 16) -> str:
    """`data` as `xxd -g GROUP -c WIDTH` prints it."""
    lines = []
    for offset in range(0, len(data), width):
        chunk = data[offset:offset + width]
        groups = " ".join(chunk[i:i + group].hex() for i in range(0, len(chunk), group))
        full = width * 2 + (width + group - 1) // group - 1
        shown = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        lines.append(f"{offset:08x}: {groups.ljust(full)}  {shown}")
    return "\n".join(lines) + "\n"


def _hexdump_c(data: bytes) -> str:
    """`data` as `hexdump -C` prints it."""
    lines = []
    for offset in range(0, len(data), 16):
        chunk = data[offset:offset + 16]
        left = " ".join(f"{b:02x}" for b in chunk[:8])
        right = " ".join(f"{b:02x}" for b in chunk[8:])
        shown = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        lines.append(f"{offset:08x}  {left.ljust(23)}  {right.ljust(23)}  |{shown}|")
    return "\n".join(lines + [f"{len(data):08x}"]) + "\n"


def _od(data: bytes) -> str:
    """`data` as `od -A x -t x1z` prints it."""
    lines = []
    for offset in range(0, len(data), 16):
        chunk = data[offset:offset + 16]
        shown = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        lines.append(f"{offset:06x} {' '.join(f'{b:02x}' for b in chunk).ljust(47)}  >{shown}<")
    return "\n".join(lines + [f"{len(data):06x}"]) + "\n"


BYTES_OF = {
    "0x-list": lambda b: "key = [" + ", ".join(f"0x{c:02x}" for c in b) + "]",
    "0x-list-tight": lambda b: "{" + ",".join(f"0x{c:02X}" for c in b) + "}",
    "c-array-over-lines": lambda b: "static const char k[] = {\n" + ",\n".join(
        "    " + ", ".join(f"0x{c:02x}" for c in b[i:i + 8]) for i in range(0, len(b), 8)) + "\n};",
    "spaced-hex": lambda b: "bytes: " + " ".join(f"{c:02x}" for c in b),
    "spaced-hex-capitals": lambda b: " ".join(f"{c:02X}" for c in b),
    "colon-hex": lambda b: ":".join(f"{c:02x}" for c in b),
    "decimal-list": lambda b: "[" + ", ".join(str(c) for c in b) + "]",
    "from-char-code": lambda b: "String.fromCharCode(" + ",".join(str(c) for c in b) + ")",
    "decimal-over-lines": lambda b: "bytes([\n" + ",\n".join(
        "    " + ", ".join(str(c) for c in b[i:i + 10]) for i in range(0, len(b), 10)) + "\n])",
    "octal-escapes": lambda b: 'k = "' + "".join(f"\\{c:03o}" for c in b) + '"',
    "xxd": _xxd,
    "xxd-g1": lambda b: _xxd(b, 1),
    "xxd-g4-c8": lambda b: _xxd(b, 4, 8),
    "hexdump-C": _hexdump_c,
    "od-x1z": _od,
}


@pytest.mark.parametrize("form", sorted(BYTES_OF))
def test_a_token_written_out_byte_by_byte_is_found(form: str) -> None:
    """A token's bytes one by one (a C array, a byte list, a hex dump of the file holding it,
    as a tool's output in a transcript shows it): decoded as a hex run is, and the whole list
    redacted, so no byte of it is left to decode."""
    token = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
    written = BYTES_OF[form](token.encode())
    assert [hit.kind for hit in find_secrets(written)] == ["github-token"], written
    redacted = redact(written)
    # No run of the token's bytes is left: neither its characters nor their codes.
    for piece in (token[4:12], token[20:28]):
        for encoded in (piece, " ".join(f"{c:02x}" for c in piece.encode()),
                        "".join(f"{c:02x}" for c in piece.encode()),
                        ", ".join(str(c) for c in piece.encode())):
            assert encoded not in redacted, (encoded, redacted)


@pytest.mark.parametrize("form", sorted(BYTES_OF))
def test_bytes_written_out_that_hide_no_secret_are_left_alone(form: str) -> None:
    text = BYTES_OF[form](b"Hello, world! This is only a test of the byte list reader.")
    assert find_secrets(text) == [], text
    assert find_secrets("MAC 00:1a:2b:3c:4d:5e, IPv6 fe80::1ff:fe23:4567:890a, "
                        "ports 3306, 5432, 6379, 8080, 9090, 9200, 27017, 11211") == []
    assert find_secrets(_xxd(bytes(range(256)))) == []


TABLE_TOKEN = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
TABLES = {
    "side-by-side": f"| name | value |\n|---|---|\n| token | {TABLE_TOKEN[:14]} | {TABLE_TOKEN[14:]} |\n",
    "side-by-side-among-words": f"| step | how |\n|---|---|\n| 1 | use {TABLE_TOKEN[:14]} | "
                                f"{TABLE_TOKEN[14:]} then push |\n",
    "one-under-the-other": f"| name | value |\n|---|---|\n| token | {TABLE_TOKEN[:14]} |\n"
                           f"| rest | {TABLE_TOKEN[14:]} |\n",
    "first-column": f"| {TABLE_TOKEN[:20]} | a |\n| {TABLE_TOKEN[20:]} | b |\n",
    "one-row-quoted": f"> | {TABLE_TOKEN[:14]} | {TABLE_TOKEN[14:]} |",
    "crlf": f"| a | {TABLE_TOKEN[:14]} |\r\n| b | {TABLE_TOKEN[14:]} |\r\n",
}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_a_token_cut_between_markdown_table_cells_is_found(table: str) -> None:
    """A model reads a Markdown table cell by cell: a token cut between two cells side by side,
    or one under the other in a column, reads whole to it."""
    text = TABLES[table]
    assert [hit.kind for hit in find_secrets(text)] == ["github-token"], text
    redacted = redact(text)
    assert TABLE_TOKEN[4:14] not in redacted and TABLE_TOKEN[20:] not in redacted, redacted


def test_tables_whose_cells_hold_no_cut_token_are_left_alone() -> None:
    text = ("| Name | Value |\n|---|---|\n| ghp_ | GitHub PAT prefix |\n| AKIA | AWS key id |\n"
            "| sk-ant- | Anthropic API2024 keys |\n| xoxb- | SlackBot2 tokens |\n"
            "| v2Release | Build42Pipeline |\n")
    assert find_secrets(text) == []


def _edged(title: str = "Deploy notes", card: str = "", body: str = "Deploy it.",
           card_id: str = "deploy") -> list[tuple[str, str]]:
    from types import SimpleNamespace

    from engram.secrets import edge_fragments

    return edge_fragments(SimpleNamespace(id=card_id, title=title, card=card, body=body))


GH = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


@pytest.mark.parametrize("where", [
    {"body": f"Release with\n\n    {GH[:14]}"},  # the first piece ends the body
    {"body": f"Use {GH[:6]}"},
    {"body": "Tokens go here: ghp_"},  # the prefix alone, nothing closing it
    {"body": "Use sk-ant-api03-AbCd"},
    {"body": "key AKIAIOSF"},
    {"title": f"Deploy {GH[:15]}", "body": ""},  # a card with no body ends with its title
    {"card": f"deploy with {GH[:20]}"},  # folded, a card shows its card line alone
    {"title": f"{GH[14:]} notes"},  # the rest opens the title
    {"title": f"{GH[4:]} notes"},
    {"title": f"{GH[2:]} notes"},  # the prefix cut too
    {"title": "IOSFODNN7EXAMPLE notes"},  # an AWS key id's rest
    {"card": f"{GH[20:]} notes"},
    {"card_id": "3f9a2b7c4d1e8f6a0b5c9d2e7f1a4b8c"},  # 32 hex digits: a token's rest
])
def test_a_card_edge_that_is_a_piece_of_a_token_is_found(where: dict[str, str]) -> None:
    """A card shown in one answer ending with a token's first piece, or opening with its
    rest, is half of a token another card of a later answer may complete."""
    assert _edged(**where), where


def test_ordinary_card_edges_are_left_alone() -> None:
    for where in ({"body": "Tokens look like ghp_xxxxxxxx"}, {"body": f"Use {GH[:14]}."},
                  {"body": "Use sk-learn"}, {"body": "Run make test"},
                  {"body": "AWS key ids start with AKIA"}, {"body": "tokens start with `ghp_`"},
                  {"body": f"export GH={GH}"},  # a whole token: the gate's own finding
                  {"title": "OAuth2 PKCE flows"}, {"title": "Context7-aware tools"},
                  {"title": "HTTP2 server push"}, {"card_id": "release-2024-notes"},
                  {"card_id": "cursor-rules-pack-v2-cursorrules-prompt-file"},
                  {"card_id": "dotnet-maui-9-to-dotnet-maui-10-upgrade"},
                  {"title": "3f9a2b7 fixed the build"}, {"card": "Deploy with care."}):
        assert _edged(**where) == [], where
