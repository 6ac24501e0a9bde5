"""A corpus of fake secrets, one or more per kind, generated in the providers' documented
formats (prefix, alphabet, length) from a fixed seed: never real credentials, but shaped so a
detector that misses one would miss the real thing. Used by tests/test_secrets_corpus.py and
bench/secrets_coverage.py."""

from __future__ import annotations

import base64
import json
import random
import string
from urllib.parse import quote

UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"


def _pick(rng: random.Random, alphabet: str, length: int) -> str:
    # Every generated value mixes classes the way a real generator does (a token of 36
    # characters from ALNUM without a digit is vanishingly rare).
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(length))
        if length < 8 or (any(c.isdigit() for c in value) or not set(alphabet) & set(DIGITS)) and (
                any(c.isupper() for c in value) or not set(alphabet) & set(UPPER)):
            return value


def corpus(seed: int = 13) -> list[tuple[str, str, str]]:
    """(kind tried, text holding it, the secret value that must not survive redaction)."""
    rng = random.Random(seed)
    p = lambda alphabet, n: _pick(rng, alphabet, n)  # noqa: E731
    aws_id = "AKIA" + p(UPPER + DIGITS, 16)
    aws_secret = p(B64, 40)
    putty = ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
             f"Public-Lines: 2\n{p(B64, 64)}\n{p(B64, 12)}\nPrivate-Lines: 1\n{p(B64, 44)}\n"
             f"Private-MAC: {p(HEX, 64)}")
    rsa_body = p(B64, 64)
    three_lines = ("ANTHROPIC_API_KEY=\n" + _wrapped("sk-ant-api03-" + p(B64URL, 93) + "AA", 40)
                   + "\nthen restart the worker")
    rows = [
        ("aws-access-key-id", f"aws_access_key_id = {aws_id}", aws_id),
        ("aws-secret-next-to-key-id", f"[default]\naws_access_key_id={aws_id}\n{aws_secret}", aws_secret),
        ("aws-secret-assigned", f"AWS_SECRET_ACCESS_KEY={aws_secret}", aws_secret),
        ("github-classic-pat", None, "ghp_" + p(ALNUM, 36)),
        ("github-oauth", None, "gho_" + p(ALNUM, 36)),
        ("github-app-user", None, "ghu_" + p(ALNUM, 36)),
        ("github-app-server", None, "ghs_" + p(ALNUM, 36)),
        ("github-refresh", None, "ghr_" + p(ALNUM, 36)),
        ("github-fine-grained-pat", None, "github_pat_11" + p(UPPER + DIGITS, 20) + "_" + p(ALNUM, 59)),
        ("gitlab-pat", None, "glpat-" + p(B64URL, 20)),
        ("gitlab-deploy-token", None, "gldt-" + p(B64URL, 20)),
        ("gitlab-runner-token", None, "glrt-" + p(B64URL, 20)),
        ("npm-token", None, "npm_" + p(ALNUM, 36)),
        ("huggingface-token", None, "hf_" + p(UPPER + LOWER, 34)),
        ("huggingface-org-token", None, "api_org_" + p(UPPER + LOWER, 34)),
        ("pypi-token", None, "pypi-AgEIcHlwaS5vcmc" + p(B64URL, 60)),
        ("telegram-bot-token", None, str(rng.randint(10**8, 10**9)) + ":AA" + p(B64URL, 33)),
        ("slack-bot-token", None, f"xoxb-{rng.randint(10**10, 10**11)}-{rng.randint(10**10, 10**11)}-" + p(ALNUM, 24)),
        ("slack-user-token", None, f"xoxp-{rng.randint(10**10, 10**11)}-" + p(LOWER + DIGITS, 32)),
        ("slack-app-token", None, f"xapp-1-A{p(UPPER + DIGITS, 10)}-{rng.randint(10**12, 10**13)}-" + p(HEX, 64)),
        ("slack-webhook", None, "https://hooks.slack.com/services/T" + p(UPPER + DIGITS, 8) + "/B"
         + p(UPPER + DIGITS, 8) + "/" + p(ALNUM, 24)),
        ("sendgrid-key", None, "SG." + p(B64URL, 22) + "." + p(B64URL, 43)),
        ("openai-project-key", None, "sk-proj-" + p(B64URL, 48)),
        ("openai-legacy-key", None, "sk-" + p(ALNUM, 20) + "T3BlbkFJ" + p(ALNUM, 20)),
        ("anthropic-key", None, "sk-ant-api03-" + p(B64URL, 93) + "AA"),
        ("google-api-key", None, "AIza" + p(B64URL, 35)),
        ("google-oauth-client-secret", None, "GOCSPX-" + p(B64URL, 28)),
        ("stripe-live-secret", None, "sk_live_" + p(ALNUM, 24)),
        ("stripe-restricted", None, "rk_live_" + p(ALNUM, 24)),
        ("stripe-webhook-secret", None, "whsec_" + p(ALNUM, 32)),
        ("twilio-api-key", None, "SK" + p(HEX, 32)),
        ("mailchimp-key", None, p(HEX, 32) + "-us" + str(rng.randint(1, 20))),
        ("discord-bot-token", None, "M" + p(ALNUM, 23) + "." + p(B64URL, 6) + "." + p(B64URL, 27)),
        ("square-access-token", None, "EAAA" + p(B64URL, 60)),
        ("square-oauth-secret", None, "sq0csp-" + p(B64URL, 43)),
        ("shopify-access-token", None, "shpat_" + p(HEX, 32)),
        ("digitalocean-pat", None, "dop_v1_" + p(HEX, 64)),
        ("doppler-token", None, "dp.pt." + p(ALNUM, 43)),
        ("databricks-token", None, "dapi" + p(HEX, 32)),
        ("linear-api-key", None, "lin_api_" + p(ALNUM, 40)),
        ("postman-key", None, "PMAK-" + p(HEX, 24) + "-" + p(HEX, 34)),
        ("planetscale-token", None, "pscale_tkn_" + p(ALNUM, 43)),
        ("pulumi-token", None, "pul-" + p(HEX, 40)),
        ("rubygems-key", None, "rubygems_" + p(HEX, 48)),
        ("docker-hub-pat", None, "dckr_pat_" + p(B64URL, 27)),
        ("grafana-cloud-token", None, "glc_" + p(B64, 64)),
        ("grafana-service-account", None, "glsa_" + p(ALNUM, 32) + "_" + p(HEX, 8)),
        ("newrelic-user-key", None, "NRAK-" + p(UPPER + DIGITS, 27)),
        ("sentry-token", None, "sntrys_" + p(B64, 80)),
        ("age-secret-key", None, "AGE-SECRET-KEY-1" + p("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
        ("vault-token", None, "hvs." + p(B64URL, 90)),
        ("terraform-cloud-token", None, p(ALNUM, 14) + ".atlasv1." + p(B64URL, 67)),
        ("alibaba-access-key", None, "LTAI" + p(ALNUM, 20)),
        ("groq-key", None, "gsk_" + p(ALNUM, 52)),
        ("replicate-token", None, "r8_" + p(ALNUM, 37)),
        ("perplexity-key", None, "pplx-" + p(ALNUM, 48)),
        ("xai-key", None, "xai-" + p(ALNUM, 80)),
        ("supabase-token", None, "sbp_" + p(HEX, 40)),
        ("figma-token", None, "figd_" + p(B64URL, 40)),
        ("mapbox-secret-token", None, "sk.eyJ1IjoiZGV2IiwiYSI6I" + p(B64URL, 20) + "." + p(B64URL, 22)),
        ("atlassian-api-token", None, "ATATT3xFfGF0" + p(B64URL, 180)),
        ("azure-storage-key", None, p(B64, 86) + "=="),
        ("dynatrace-token", None, "dt0c01." + p(UPPER + DIGITS, 24) + "." + p(UPPER + DIGITS, 64)),
        ("jwt", None, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + p(B64URL, 20) + "." + p(B64URL, 43)),
        ("bearer-token", None, p(ALNUM, 32)),
        ("rsa-private-key", None, rsa_body),
        ("openssh-private-key", None, "b3BlbnNzaC1rZXktdjEAAAAA" + p(B64, 40)),
        ("putty-private-key", putty, putty.split("\n")[-2]),
        ("url-password", None, p(ALNUM, 14)),
        ("env-password", None, p(ALNUM + "!@#", 14)),
        ("json-client-secret", None, p(ALNUM, 24)),
        ("passphrase-of-words", 'password: "correct horse battery staple"', "correct horse battery staple"),
        ("password-with-colons", "PASSWORD=ab:" + "cd:" + "ef12", "ab:cd:ef12"),
        ("short-lowercase-passphrase", "passphrase: swordfish", "swordfish"),
        ("ghp-split-by-zero-width-space", None, None),
        # Generic `.env` and connection-string names, command-line and header forms.
        ("db-pass-env", None, p(ALNUM, 16)),
        ("mysql-pwd-env", None, p(ALNUM, 16)),
        ("odbc-pwd", None, p(ALNUM, 16)),
        ("rails-secret-key-base", None, p(HEX, 128)),
        ("basic-auth-header", None, base64.b64encode(f"deploy:{p(ALNUM, 16)}".encode()).decode()),
        ("authorization-token-header", None, p(ALNUM, 40)),
        ("curl-user-password", None, p(ALNUM, 16)),
        ("password-flag", None, p(ALNUM, 16)),
        ("google-oauth-access-token", None, "ya29.a0" + p(B64URL, 60)),
        # A name and its value apart: two lines of YAML, a `.netrc`, a Dockerfile, a sentence;
        # a base64 `user:password` under `auth`; an Azure SAS signature.
        ("kubernetes-env-pair", None, p(ALNUM, 18)),
        ("yaml-value-on-next-line", None, p(ALNUM, 18)),
        ("netrc-password", None, p(ALNUM, 18)),
        ("dockerfile-env", None, p(ALNUM, 18)),
        ("password-in-a-sentence", None, p(ALNUM + "!#", 14)),
        ("docker-config-auth", None, base64.b64encode(f"deploy:{p(ALNUM, 16)}".encode()).decode()),
        ("azure-sas-signature", None, p(ALNUM, 40) + "%3D"),
        # A token wrapped over two lines (the hook sends both lines; a reader joins them).
        ("token-wrapped-over-two-lines", None, "ghp_" + p(ALNUM, 36)),
        # A shape-detectable token in a form any reader decodes: fullwidth letters (NFKC),
        # base64, hex, percent-encoding.
        ("fullwidth-github-token", None, _fullwidth("ghp_" + p(ALNUM, 36))),
        ("base64-wrapped-token", None, base64.b64encode(("ghp_" + p(ALNUM, 36)).encode()).decode()),
        ("hex-wrapped-token", None, ("ghp_" + p(ALNUM, 36)).encode().hex()),
        ("percent-encoded-token", None, "ghp%5F" + p(ALNUM, 36)),
        # A PostgreSQL password file line; a MySQL password glued to its flag (`-pSECRET`)
        # or given as `--password=`.
        ("pgpass-line", None, p(ALNUM, 16)),
        ("mysql-glued-p-flag", None, p(ALNUM, 16)),
        ("mysql-password-flag", None, p(ALNUM, 16)),
        # A token as a URL's user with no password (`git clone https://<token>@host/...`),
        # in no provider's format: an old 40-hex GitHub token, a random one.
        ("url-userinfo-hex-token", None, p(HEX, 40)),
        ("url-userinfo-token", None, p(ALNUM, 32)),
        # Base64 as `base64` prints it, wrapped at 76 columns (the secret is the whole block:
        # tests/test_secrets_corpus.py checks that no line of it survives).
        ("base64-wrapped-over-lines", None, _wrapped(base64.b64encode(
            f"ANTHROPIC_API_KEY=sk-ant-api03-{p(B64URL, 93)}AA\n".encode()).decode(), 76)),
        # Encoded twice: base64 of base64, percent-encoded base64 (a URL parameter), base64
        # of a percent-encoded token.
        ("base64-of-base64-token", None, base64.b64encode(base64.b64encode(
            ("ghp_" + p(ALNUM, 36)).encode())).decode()),
        ("percent-encoded-base64-token", None, quote(base64.b64encode(
            ("ghp_" + p(ALNUM, 36) + "\n").encode()).decode(), safe="")),
        ("base64-of-percent-encoded-token", None, base64.b64encode(
            "".join(f"%{ord(c):02X}" for c in "ghp_" + p(ALNUM, 36)).encode()).decode()),
        # Cyrillic and Greek look-alike letters inside a known prefix (`ghр_` with a Cyrillic
        # `р`, `ѕk-ant-` with a Cyrillic `ѕ`, `xοxb-` with a Greek omicron).
        ("cyrillic-lookalike-github-token", None, "gh\u0440_" + p(ALNUM, 36)),
        ("cyrillic-lookalike-anthropic-key", None, "\u0455k-ant-api03-" + p(B64URL, 93) + "AA"),
        ("greek-lookalike-slack-token", None, f"x\u03bfxb-{rng.randint(10**10, 10**11)}-" + p(ALNUM, 24)),
        # A token written in capitals: a hex body loses nothing (`SHPAT_` + hex, `DOP_V1_`),
        # a mixed-case one keeps all but its case.
        ("upper-cased-shopify-token", None, ("shpat_" + p(HEX, 32)).upper()),
        ("upper-cased-github-token", None, ("ghp_" + p(ALNUM, 36)).upper()),
        ("upper-cased-digitalocean-token", None, ("dop_v1_" + p(HEX, 64)).upper()),
        # Credential files whose format says what the password is, whatever it looks like:
        # one class of characters, or short.
        ("pgpass-single-class", None, p(LOWER, 9)),
        ("netrc-one-line-short", None, p(LOWER + DIGITS, 4)),
        ("netrc-default-entry", None, p(ALNUM, 10)),
        ("my-cnf-short", None, p(LOWER, 5)),
        ("git-credentials-short", None, p(LOWER, 4)),
        ("docker-config-identity-token", None, p(ALNUM, 32)),
        ("npmrc-auth-token-uuid", None, "-".join(p(HEX, n) for n in (8, 4, 4, 4, 12))),
        ("pip-conf-index-url", None, p(LOWER, 8)),
        ("kube-bootstrap-token", None, p(LOWER + DIGITS, 6) + "." + p(LOWER + DIGITS, 16)),
        ("kube-client-key-data-4096", None, base64.b64encode(
            ("-----BEGIN RSA PRIVATE KEY-----\n" + _wrapped(p(B64, 3200), 64)
             + "\n-----END RSA PRIVATE KEY-----\n").encode()).decode()),
        ("private-key-body-without-header", None, _wrapped(base64.b64encode(
            bytes.fromhex("308204a40201000282010100") + rng.randbytes(300)).decode(), 64)),
        ("private-key-in-json-escapes", None, p(B64, 64)),
        # Passwords on a command line under 6 characters, in any class.
        ("mysql-glued-p-short", None, p(LOWER, 3)),
        ("sshpass-p-short", None, p(LOWER, 3)),
        ("password-flag-short", None, p(LOWER, 3)),
        ("pgpassword-env-short", None, p(LOWER, 3)),
        ("docker-login-p-short", None, p(LOWER + DIGITS, 5)),
        ("openssl-passout", None, p(LOWER, 5)),
        # Look-alikes from other scripts and forms: Armenian and IPA letters, Cherokee capitals,
        # a small capital, a letter with a combining accent, Unicode hyphens; invisible
        # characters that are no zero-width space (a Mongolian variation selector, a musical
        # format control); a line separator; a key wrapped over three lines; JSON escapes.
        ("armenian-ipa-lookalike-github-token", None, "\u0261\u0570p_" + p(ALNUM, 36)),
        ("cherokee-lookalike-aws-key", None, "\u13aa\u13e6I\u13aa" + p(UPPER + DIGITS, 16)),
        ("small-capital-anthropic-key", None, "\ua731k-ant-api03-" + p(B64URL, 93) + "AA"),
        ("combining-accent-github-token", None, "g\u0301hp_" + p(ALNUM, 36)),
        ("unicode-hyphen-anthropic-key", None, "sk\u2010ant\u2011api03\u2010" + p(ALNUM, 93) + "AA"),
        ("mongolian-selector-in-token", None, "ghp_" + p(ALNUM, 10) + "\u180b" + p(ALNUM, 26)),
        ("musical-format-control-in-token", None, "ghp_" + p(ALNUM, 10) + "\U0001d173" + p(ALNUM, 26)),
        ("token-split-by-line-separator", None, "ghp_" + p(ALNUM, 12) + "\u2028" + p(ALNUM, 24)),
        # (the last line is the secret checked: the first is found by its prefix alone)
        ("key-wrapped-over-three-lines", three_lines, three_lines.split("\n")[-2]),
        ("json-unicode-escaped-token", None, "ghp\\u005f" + p(ALNUM, 36)),
        ("json-escaped-url-password", None, p(ALNUM, 14)),
        # JSON text inside a JSON string, its quotes escaped (`\"`) and no other escape on the
        # line: a structured log line, kubectl's last-applied-configuration, a tool's output
        # quoted in a transcript.
        ("json-in-a-string-password", None, p(ALNUM + "!#%&", 14)),
        ("json-in-a-string-client-secret", None, p(ALNUM, 24)),
        ("json-in-a-string-docker-auth", None,
         base64.b64encode(f"deploy:{p(ALNUM, 16)}".encode()).decode()),
        ("escaped-quotes-env-password", None, p(ALNUM, 16)),
        # A name and its value as JSON members of one object (`kubectl -o json`, ECS).
        ("json-env-pair", None, p(ALNUM + "!#%&", 18)),
        ("json-env-pair-over-lines", None, p(ALNUM, 24)),
        # Markdown's backslash escapes (an HTML-to-Markdown converter writes `\_` for every
        # `_`) and HTML character references, which Markdown reads as the character: a model
        # reading the card reads the token.
        ("markdown-escaped-github-token", None, "ghp\\_" + p(ALNUM, 36)),
        ("markdown-escaped-anthropic-key", None, "sk\\-ant\\-api03\\-" + p(B64URL.replace("_", ""), 93) + "AA"),
        ("markdown-escaped-env-password", None, p(ALNUM, 16)),
        ("html-decimal-reference-github-token", None, "ghp&#95;" + p(ALNUM, 36)),
        ("html-hex-reference-stripe-key", None, "sk&#x5f;live&#x5F;" + p(ALNUM, 24)),
        ("html-named-reference-azure-sas", None, p(ALNUM + "+/", 43) + "%3D"),
        # A password flag's quoted value in a JSON string (a command a transcript records).
        ("password-flag-in-a-json-string", None, p(ALNUM + "!#%", 14)),
        # AWS Systems Manager parameters: a SecureString's value on the command line that
        # stores it, and in the JSON `get-parameter --with-decryption` prints.
        ("ssm-put-parameter-value", None, p(ALNUM, 20)),
        ("ssm-secure-string-json", None, p(ALNUM + "!#%", 18)),
        # JSON text escaped three levels deep (a JSON string of a JSON string of JSON).
        ("json-escaped-three-levels", None, p(ALNUM, 16)),
        # A token's bytes one by one: a C array, spaced hex, a decimal list (the whole list is
        # what must not survive: each byte is the token to whoever decodes it).
        *[(kind, f"static const char key[] = {{{listed}}};", listed) for kind, listed in (
            ("token-as-a-c-byte-array", ", ".join(f"0x{b:02x}" for b in ("npm_" + p(ALNUM, 36)).encode())),
            ("token-as-a-decimal-byte-list", ", ".join(str(b) for b in ("glpat-" + p(B64URL, 20)).encode())),
        )],
        ("token-as-spaced-hex-bytes", None, " ".join(f"{b:02x}" for b in ("sk_live_" + p(ALNUM, 24)).encode())),
        # A token cut between two cells of a Markdown table, side by side and one under the other.
        *[(kind, layout.format(token[:14], token[14:]), token) for kind, layout, token in (
            ("token-cut-between-table-cells", "| name | value |\n|---|---|\n| token | {} | {} |",
             "ghp_" + p(ALNUM, 36)),
            ("token-cut-down-a-table-column", "| name | value |\n|---|---|\n| token | {} |\n| rest | {} |",
             "npm_" + p(ALNUM, 36)),
        )],
    ]
    out: list[tuple[str, str, str]] = []
    for kind, text, secret in rows:
        if text is None:
            text = _context(kind, secret)
        out.append((kind, text, secret))
    return out


def _wrapped(text: str, width: int) -> str:
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


_CONTEXTS = {
    "db-pass-env": "DB_PASS={}",
    "mysql-pwd-env": "export MYSQL_PWD={}",
    "odbc-pwd": "Driver={{ODBC Driver 18}};Server=db;Uid=sa;Pwd={};Encrypt=yes",
    "rails-secret-key-base": "SECRET_KEY_BASE={}",
    "basic-auth-header": 'curl -H "Authorization: Basic {}" https://api.example.com',
    "authorization-token-header": "Authorization: Token {}",
    "curl-user-password": "curl -u deploy:{} https://api.example.com/upload",
    "password-flag": "docker login --username deploy --password {} registry.example.com",
    "base64-wrapped-token": "echo {} | base64 -d > ~/.token",
    "hex-wrapped-token": "the token, hex: {}",
    "percent-encoded-token": "curl https://api.example.com/repos?access={}",
    "url-userinfo-hex-token": "git clone https://{}@github.com/acme/app.git",
    "url-userinfo-token": "git remote set-url origin https://{}@git.example.com/acme/app.git",
    "base64-wrapped-over-lines": "kubectl get secret app -o jsonpath='{{.data.env}}' gave:\n{}\n",
    "base64-of-base64-token": "TOKEN_B64={}",
    "percent-encoded-base64-token": "https://api.example.com/hook?t={}&v=2",
    "base64-of-percent-encoded-token": "stored as {} in the vault",
    "pgpass-line": "echo 'db.internal:5432:app:deploy:{}' >> ~/.pgpass",
    "mysql-glued-p-flag": "mysql -h db.internal -u deploy -p{} app < dump.sql",
    "mysql-password-flag": "mysqldump --user=deploy --password={} app > dump.sql",
    "kubernetes-env-pair": "env:\n  - name: DB_PASSWORD\n    value: \"{}\"",
    "yaml-value-on-next-line": "database:\n  password:\n    {}\n  host: db.internal",
    "netrc-password": "machine api.example.com\n  login deploy\n  password {}",
    "dockerfile-env": "FROM python:3.12\nENV API_TOKEN {}\nRUN make",
    "password-in-a-sentence": "The staging password is {} until Friday.",
    "docker-config-auth": '{{"auths": {{"registry.example.com": {{"auth": "{}"}}}}}}',
    "azure-sas-signature": "https://acct.blob.core.windows.net/c?sv=2022-11-02&se=2026-12-31&sp=r&sig={}",
    "pgpass-single-class": "db.internal:5432:app:deploy:{}",
    "netrc-one-line-short": "machine api.example.com login deploy password {}",
    "netrc-default-entry": "default login anonymous password {}",
    "my-cnf-short": "[client]\nuser=root\npassword={}\nhost=db.internal",
    "git-credentials-short": "https://deploy:{}@git.example.com",
    "docker-config-identity-token": '{{"auths": {{"r.example.com": {{"identitytoken": "{}"}}}}}}',
    "npmrc-auth-token-uuid": "//registry.npmjs.org/:_authToken={}",
    "pip-conf-index-url": "[global]\nindex-url = https://deploy:{}@pypi.example.com/simple",
    "kube-bootstrap-token": "users:\n- name: kubelet\n  user:\n    token: {}",
    "kube-client-key-data-4096": "users:\n- name: admin\n  user:\n    client-key-data: {}",
    "private-key-body-without-header": "the deploy key, pasted without its header:\n{}\n",
    "private-key-in-json-escapes": '{{"type": "service_account", "private_key": "-----BEGIN PRIVATE '
                                   'KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n"}}',
    "mysql-glued-p-short": "mysql -u root -p{} app",
    "sshpass-p-short": "sshpass -p {} ssh deploy@db.internal",
    "password-flag-short": "tool login --password {} --user deploy",
    "pgpassword-env-short": "PGPASSWORD={} psql -h db.internal -U deploy app",
    "docker-login-p-short": "docker login -u deploy -p {} registry.example.com",
    "openssl-passout": "openssl genrsa -aes256 -passout pass:{} -out key.pem 4096",
    "markdown-escaped-env-password": "export DB\\_PASSWORD={}",
    "html-named-reference-azure-sas": "<a href=\"https://acct.blob.core.windows.net/c?sv=2022-11-02"
                                      "&amp;se=2026-12-31&amp;sp=r&amp;sig={}\">the export</a>",
    "password-flag-in-a-json-string": '{{"command": "tool login --password \\"{}\\" --user deploy"}}',
    "ssm-put-parameter-value": "aws ssm put-parameter --name /prod/app/db --type SecureString --value {}",
    "ssm-secure-string-json": '{{"Parameter": {{"Name": "/prod/app/db", "Type": "SecureString", '
                              '"Value": "{}", "Version": 3}}}}',
}


def _context(kind: str, secret: str | None) -> str:
    """The token in a line a card or a transcript would plausibly hold."""
    if kind == "json-unicode-escaped-token":
        return '{"name": "deploy", "note": "' + secret + '"}'
    if kind == "json-escaped-url-password":
        return '{"url": "postgres:\\/\\/admin:' + secret + '@db.internal:5432\\/app"}'
    if kind == "json-in-a-string-password":
        return '{"level": "info", "msg": "login", "body": "{\\"user\\": \\"deploy\\", \\"password\\": \\"' \
            + secret + '\\"}"}'
    if kind == "json-in-a-string-client-secret":
        return ('"kubectl.kubernetes.io/last-applied-configuration": "{\\"clientId\\":\\"web\\",'
                '\\"clientSecret\\":\\"' + secret + '\\"}"')
    if kind == "json-in-a-string-docker-auth":
        return ('{"config": "{\\"auths\\": {\\"registry.example.com\\": {\\"auth\\": \\"'
                + secret + '\\"}}}"}')
    if kind == "escaped-quotes-env-password":
        return '{"command": "export DB_PASSWORD=\\"' + secret + '\\" && ./deploy.sh"}'
    if kind == "json-env-pair":
        return ('"env": [{"name": "DB_HOST", "value": "db.internal"}, '
                '{"name": "DB_PASSWORD", "value": "' + secret + '"}]')
    if kind == "json-env-pair-over-lines":
        return ('"environment": [\n  {\n    "name": "STRIPE_WEBHOOK_SECRET",\n    "value": "'
                + secret + '"\n  }\n]')
    if kind == "json-escaped-three-levels":
        return json.dumps(json.dumps(json.dumps(json.dumps({"user": "deploy", "password": secret}))))
    if kind == "token-wrapped-over-two-lines":
        return f"deploy token: {secret[:17]}\n    {secret[17:]}\nthen run make deploy"
    if kind in _CONTEXTS:
        return _CONTEXTS[kind].format(secret)
    if kind == "bearer-token":
        return f'curl -H "Authorization: Bearer {secret}" https://api.example.com'
    if kind == "rsa-private-key":
        return f"-----BEGIN RSA PRIVATE KEY-----\n{secret}\n-----END RSA PRIVATE KEY-----"
    if kind == "openssh-private-key":
        return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{secret}\n-----END OPENSSH PRIVATE KEY-----"
    if kind == "url-password":
        return f"DATABASE_URL=postgres://admin:{secret}@db.internal:5432/app"
    if kind == "env-password":
        return f"export DB_PASSWORD={secret}"
    if kind == "json-client-secret":
        return f'  "clientSecret": "{secret}",'
    if kind == "azure-storage-key":
        return f"DefaultEndpointsProtocol=https;AccountName=dev;AccountKey={secret};EndpointSuffix=core.windows.net"
    return f"Use this one: {secret} (do not share)"


def split_ghp() -> tuple[str, str]:
    token = "ghp_" + _pick(random.Random(7), ALNUM, 36)
    return f"token {token[:12]}\u200b{token[12:]} here", token
