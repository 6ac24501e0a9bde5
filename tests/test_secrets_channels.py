"""Never a secret, through any channel: a generated-input test with an oracle.

Each run plants fake secrets (from `tests/secret_corpus.py`, generated at test time) in random
places of a workspace: card bodies (in the line a card would hold them), titles, one-line
cards, tags, globs, `depends_on`, `priority` and `type`, ids and file names, a YAML-escaped
title, and the prompt. Then it runs every channel a person or an agent reads: hook answers
for four hosts, `route` (plain, `--explain`, `--json`, `--why-not` for every card), `show`
(plain and `--json`) for every card, `lint`, `doctor` (both forms) and the files engram wrote
(state dir, native rule files). The oracle: no planted value, nor an obvious re-encoding of it
(other case, base64, hex, percent- or JSON-escaped), appears in any of them.

The detector's coverage of each kind is `test_secrets_corpus.py`; this file is about the
channels, so every value planted is one the detector finds where it is planted."""

from __future__ import annotations

import base64
import json
import random
import re
import sys
import urllib.parse
from pathlib import Path

import pytest
from hookkit import call, make_workspace, payload
from installer_helpers import engram

from engram import cli, secrets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from secret_corpus import corpus  # noqa: E402

CORPUS = corpus(seed=29)
# Values found by their shape alone that fit in a frontmatter value, an id or a file name.
TOKENS = [secret for _kind, _text, secret in CORPUS
          if secret and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{15,110}", secret)
          and ".." not in secret and secrets.has_secrets(secret)]
# Every kind, in the line a card or a prompt would hold it (found by shape or by context).
LINES = [(text, secret) for _kind, text, secret in CORPUS if secret]
PLACES = ("body", "title", "card", "tags", "applies_to", "depends_on", "priority", "id",
          "file", "escaped-title")


def _card(rng: random.Random, n: int, place: str, token: str, line: str) -> tuple[str, str]:
    """(file stem, file text) of card `n` holding `token` (or `line`) at `place`."""
    card_id = f"card-{n}"
    fields = {"id": card_id, "title": f"Deploy notes {n}", "card": "How we deploy.",
              "tags": "[deploy, release]", "applies_to": '["deploy/**"]',
              "always": rng.choice(["true", "false"])}
    body = "Deploy with the release script.\n"
    stem = card_id
    if place == "body":
        body = f"Deploy with\n\n    {line}\n\nthen check the dashboard.\n"
    elif place in ("title", "card"):
        fields[place] = json.dumps(f"deploy {token}")
    elif place == "escaped-title":
        fields["title"] = f'"deploy \\x{ord(token[0]):02x}{token[1:]}"'
    elif place in ("tags", "depends_on"):
        fields[place] = f"[deploy, {token}]"
    elif place == "applies_to":
        fields[place] = json.dumps([f"src/{token}/**"])
    elif place == "priority":
        fields["priority"] = token
    elif place == "id":
        fields["id"] = token
    elif place == "file":
        del fields["id"]
        stem = token
    front = "".join(f"{key}: {value}\n" for key, value in fields.items())
    return stem, f"---\n{front}---\n{body}"


def _encodings(value: str) -> list[str]:
    """The value and the re-encodings a reader could trivially undo."""
    raw = value.encode()
    found = [value, value.lower(), value.upper(), base64.b64encode(raw).decode(),
             base64.urlsafe_b64encode(raw).decode().rstrip("="), raw.hex(),
             urllib.parse.quote(value, safe=""), json.dumps(value)[1:-1],
             json.dumps(value, ensure_ascii=True)[1:-1]]
    return [f for f in dict.fromkeys(found) if len(f) >= 8]


def _leaks(planted: list[str], channels: dict[str, str]) -> list[str]:
    found = []
    for value in planted:
        # A multi-line value (a key block) leaks if any of its long lines does.
        pieces = [p.strip() for p in value.splitlines() if len(p.strip()) >= 12] or [value]
        for piece in pieces:
            for form in _encodings(piece):
                for name, text in channels.items():
                    if form.lower() in text.lower() if form in (piece.lower(), piece.upper()) \
                            else form in text:
                        found.append(f"{piece[:12]}... as {form[:16]!r} in {name}")
    return found


def _run(ws: Path, capsys: pytest.CaptureFixture, *args: str, stdout: bool = False) -> str:
    """What `engram ARGS` prints (through `cli.run`, the real entry point: its error and
    crash handlers are channels too): stdout and stderr, or stdout alone."""
    capsys.readouterr()
    code = cli.run([*args, "--cwd", str(ws)])
    out = capsys.readouterr()
    return out.out if stdout else f"(exit {code})\n{out.out}\n{out.err}"


def _written(ws: Path, state: Path) -> dict[str, str]:
    files = {}
    for folder in (state, ws / ".claude", ws / ".agents"):
        for path in sorted(folder.rglob("*")) if folder.exists() else ():
            if path.is_file() and ".engram" not in path.relative_to(folder).parts[:1] \
                    and "index" not in path.relative_to(folder).parts[:1]:
                files[f"file {path.relative_to(folder.parent)}"] = \
                    path.name + "\n" + path.read_bytes().decode("utf-8", "replace")
    return files


@pytest.mark.parametrize("seed", range(6))
def test_no_planted_secret_leaves_engram_through_any_channel(
        seed: int, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rng = random.Random(seed)
    cards: dict[str, str] = {
        "clean": "---\nid: clean\ntitle: Deploy checklist\ntags: [deploy]\nalways: true\n"
                 "applies_to: [\"deploy/**\"]\n---\nRun the deploy checklist.\n"}
    planted: list[str] = []
    for n in range(10):
        place = PLACES[(seed + n) % len(PLACES)] if n < len(PLACES) else rng.choice(PLACES)
        token = rng.choice(TOKENS)
        line, secret = rng.choice(LINES) if place == "body" else (token, token)
        stem, text = _card(rng, n, place, token, line)
        cards[stem] = text
        planted.append(secret if place == "body" else token)
    prompt_line, prompt_secret = rng.choice(LINES)
    planted.append(prompt_secret)
    prompt = f"deploy notes release {prompt_line} checklist"
    ws = make_workspace(tmp_path / "proj", cards=cards,
                        config={"hooks": {"path_rules": "native"}, "proof": "compact"})
    assert engram("link", "claude", cwd=ws) == 0

    channels: dict[str, str] = {}
    touched = {"file_path": str(ws / "deploy" / "run.sh")}
    for host, name, changes in (
            ("claude", "SessionStart.json", {}),
            ("claude", "UserPromptSubmit.json", {"prompt": prompt}),
            ("claude", "PreToolUse.json", {"tool_name": "Read", "tool_input": touched}),
            ("codex", "UserPromptSubmit.json", {"prompt": prompt}),
            ("gemini", "BeforeAgent.json", {"prompt": prompt})):
        channels[f"hook {host} {name}"] = call(host, payload(host, name, ws, **changes))
    ids = [re.search(r"^id: (.*)$", text, re.M) for text in cards.values()]
    ids = [m.group(1) for m in ids if m] + [stem for stem, text in cards.items()
                                             if not re.search(r"^id: ", text, re.M)]
    for args in (("lint",), ("lint", "--json"), ("doctor",), ("doctor", "--json"),
                 ("route", prompt), ("route", prompt, "--explain"), ("route", prompt, "--json"),
                 ("route", "--path", "deploy/run.sh", "--explain")):
        channels[" ".join(args)] = _run(ws, capsys, *args)
    for card_id in ids:
        channels[f"why-not {card_id}"] = _run(ws, capsys, "route", prompt, "--why-not", card_id)
        channels[f"show {card_id}"] = _run(ws, capsys, "show", card_id)
        channels[f"show --json {card_id}"] = _run(ws, capsys, "show", card_id, "--json")
    channels.update(_written(ws, tmp_path / "state"))
    leaks = _leaks(planted, channels)
    assert not leaks, "\n".join(leaks[:20])


def test_show_and_route_redact_a_blocked_card_and_say_no_hook_injects_it(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # `engram show` is how an agent pulls a card in manual mode: it must not be the way round
    # the gate.
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    ws = make_workspace(tmp_path / "proj", cards={"deploy": (
        "---\nid: deploy\ntitle: Deploy\ntags: [deploy]\nalways: true\n---\n"
        f"Deploy with GITHUB_TOKEN={token}\n")})
    shown = _run(ws, capsys, "show", "deploy")
    assert token not in shown and "[REDACTED:github-token]" in shown
    assert "no hook injects it" in shown
    document = json.loads(_run(ws, capsys, "show", "deploy", "--json", stdout=True))
    assert document["holds_secret"] is True and token not in document["body"]
    listed = _run(ws, capsys, "route", "deploy")
    assert "deploy  Deploy" in listed and "holds a secret: no hook injects it" in listed


def test_route_blanks_a_prompts_secret_before_routing_and_explaining(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    ws = make_workspace(tmp_path / "proj", cards={"release": (
        "---\nid: release\ntitle: Release\ntags: [release]\n---\nTag the release.\n")})
    explained = _run(ws, capsys, "route", f"deploy with {token} now", "--why-not", "release")
    # The explanation lists the prompt's words, lowercased and cut at case changes: no
    # redaction of the output could recognise the pieces of a token.
    assert "None of the prompt's words ('deploy')" in explained
    assert token[4:12].lower() not in explained.lower()


def test_an_error_quoting_a_secret_is_redacted_on_screen_and_in_the_crash_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    # `int('ghp_...')`, a `repr()` of a card line: an exception's message may quote any value.
    import engram.commands.lint as lint_command
    from engram.errors import EngramError

    token = next(t for t in TOKENS if t.startswith("ghp_"))
    ws = make_workspace(tmp_path / "proj")
    for error in (ValueError(f"invalid literal for int() with base 10: {token!r}"),
                  EngramError(f"cannot use {token}", f"remove {token}")):
        def boom(**_: object) -> int:
            raise error  # noqa: B023 - called inside this iteration
        monkeypatch.setattr(lint_command, "run", boom)
        capsys.readouterr()
        assert cli.run(["lint", "--cwd", str(ws)]) in (1, 3)
        err = capsys.readouterr().err
        assert token not in err and "[REDACTED:github-token]" in err
    logs = list((tmp_path / "state" / "logs").glob("crash-*.log"))
    assert logs and all(token not in log.read_text() for log in logs)
    assert "[REDACTED:github-token]" in logs[0].read_text()


def test_the_index_holding_card_text_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    # The index stores every card's text, a blocked card's too: a card file its owner made
    # private must not become readable by every user through the state dir.
    import os
    import stat

    token = next(t for t in TOKENS if t.startswith("ghp_"))
    card = ("---\nid: deploy\ntitle: Deploy\nalways: true\n---\nDeploy with GITHUB_TOKEN="
            f"{token}\n")
    ws = make_workspace(tmp_path / "proj", cards={"deploy": card})
    (ws / ".agents" / ".engram" / "deploy.md").chmod(0o600)
    call("claude", payload("claude", "SessionStart.json", ws))
    folder = tmp_path / "state" / "index"
    files = [p for p in folder.iterdir() if ".sqlite" in p.name]
    assert any(token.encode() in p.read_bytes() for p in files)  # the text is there...
    for path in [folder, *files]:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path  # ...for its owner only
    # An index an older engram left readable by all is made private at its next refresh.
    for path in files:
        os.chmod(path, 0o644)
    (ws / ".agents" / ".engram" / "deploy.md").write_text(card.replace("Deploy with", "Ship with"))
    call("claude", payload("claude", "UserPromptSubmit.json", ws, prompt="deploy"))
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


@pytest.mark.parametrize("field", ["title", "card", "tags", "applies_to"])
def test_lint_reports_a_secret_only_the_parsed_frontmatter_shows(
        field: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # `"\x67hp_..."` is `ghp_...` once YAML reads it: the gate blocks the card, so lint must
    # say why, at the field's line, or the card vanishes without a reason.
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    escaped = f'"deploy \\x67{token[1:]}"'
    value = f"[{escaped}]" if field in ("tags", "applies_to") else escaped
    fields = {"id": "deploy", "title": "Deploy", field: value, "always": "true"}
    text = "---\n" + "".join(f"{k}: {v}\n" for k, v in fields.items()) + "---\nDeploy.\n"
    ws = make_workspace(tmp_path / "proj", cards={"deploy": text})
    assert token not in text
    report = json.loads(_run(ws, capsys, "lint", "--json", stdout=True))
    line = next(n for n, row in enumerate(text.split("\n"), 1) if row.startswith(f"{field}:"))
    assert [(Path(p["path"]).name, p["line"]) for p in report["problems"]
            if p["code"] == "secret"] == [("deploy.md", line)]


@pytest.mark.parametrize("invisible", ["\U000e0000", "\U000e0002", "\U000e001f", "\U000e0080",
                                       "\U000e00ff"])
def test_a_character_the_renderer_deletes_never_hides_a_token_from_the_gate(
        invisible: str, tmp_path: Path) -> None:
    # The renderer deletes the whole tag block (U+E0000-U+E01EF) from a title; a token split
    # by one of its unassigned code points must not pass the gate and be joined on the way out.
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    title = f"Deploy {token[:12]}{invisible}{token[12:]}"
    ws = make_workspace(tmp_path / "proj", cards={"deploy": (
        f"---\nid: deploy\ntitle: {json.dumps(title, ensure_ascii=False)}\nalways: true\n---\nDeploy.\n")})
    answer = call("claude", payload("claude", "SessionStart.json", ws))
    assert token not in answer and token not in json.loads(answer).get(
        "hookSpecificOutput", {}).get("additionalContext", "")


def test_the_detector_removes_every_character_the_renderer_deletes() -> None:
    from engram import render

    for code in render._INVISIBLE:
        assert secrets.visible(f"a{chr(code)}b")[0] == "ab", hex(code)


@pytest.mark.parametrize("where", ["body", "title-and-card", "crlf-indented", "title-and-body",
                                   "title-and-indented-body"])
def test_a_token_cut_over_two_lines_or_two_fields_is_not_sent(
        where: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # The model reads the two halves one after the other: a token cut in two still leaks. A
    # card's title is followed by its body in the hook's answer (`### engram memory: id —
    # title`, then the body, stripped), whatever fields come between them in the file.
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    head, tail = token[:15], token[15:]
    title, card, body = "Deploy", "How we deploy.", "Deploy with the script.\n"
    if where == "body":
        body = f"Use the token {head}\n{tail} to deploy.\n"
    elif where == "crlf-indented":
        body = f"Use the token\r\n    {head}\r\n    {tail}\r\nto deploy.\r\n"
    elif where == "title-and-card":
        title, card = f"Deploy with {head}", f"{tail} is the token"
    else:
        title = f"Deploy with {head}"
        body = f"{tail} is the token.\n" if where == "title-and-body" else \
            f"\n\n    {tail}\n\nis the token.\n"
    ws = make_workspace(tmp_path / "proj", cards={"deploy": (
        f"---\nid: deploy\ntitle: {title}\ncard: {card}\ntags: [deploy, release]\n"
        f"always: true\n---\n{body}")})
    answer = call("claude", payload("claude", "SessionStart.json", ws))
    assert head not in answer and tail not in answer
    shown = {"title-and-card": f"{title}\n{card}", "body": body, "crlf-indented": body}.get(
        where, f"{title}\n{body.strip()}")
    redacted = secrets.redact(shown)
    assert head not in redacted and tail not in redacted
    # lint says why the card is never injected, at the title's line.
    report = json.loads(_run(ws, capsys, "lint", "--json", stdout=True))
    assert [p["line"] for p in report["problems"] if p["code"] == "secret"][:1] == [
        {"body": 8, "crlf-indented": 9}.get(where, 3)], report["problems"]


def test_an_exception_quoting_a_card_never_reaches_the_hook_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The native rule sync runs on card text; whatever it raises is logged, and an
    # exception's message may quote what it was given.
    from engram import native_rules

    token = next(t for t in TOKENS if t.startswith("ghp_"))

    def fails(*_args: object, **_kwargs: object) -> None:
        raise ValueError(f"cannot write a rule for 'Deploy with {token}'")

    ws = make_workspace(tmp_path / "proj", cards={"deploy": (
        "---\nid: deploy\ntitle: Deploy\napplies_to: [\"deploy/**\"]\n---\nDeploy.\n")},
        config={"hooks": {"path_rules": "native"}})
    assert engram("link", "claude", cwd=ws) == 0
    monkeypatch.setattr(native_rules, "sync_rules", fails)
    call("claude", payload("claude", "SessionStart.json", ws))
    log = (tmp_path / "state" / "logs" / "hook.log").read_text()
    assert "native rule sync failed: ValueError" in log and token not in log


# Usage errors: click shows the offending argument back ("Got unexpected extra argument(s)
# (...)", "No such command '...'", "No such option: ..."), and a person pastes a prompt with
# its token in it, or a token where a command or option name belongs.
USAGE_ERRORS = (
    lambda v: ["route", f"fix {v}", "--bogus"],
    lambda v: ["route", "fix", v],
    lambda v: [v],
    lambda v: ["route", "fix", f"--{v}"],
    lambda v: ["route", "fix", "--limit", v],
    lambda v: ["show", "deploy", v],
    lambda v: ["config", "set", "load.limit", "3", v],
)


def test_a_usage_error_never_echoes_a_secret_given_on_the_command_line(
        capsys: pytest.CaptureFixture) -> None:
    shown: dict[str, str] = {}
    # Every kind the detector finds in the argument as given (a line of the corpus).
    given = [(text, secret) for text, secret in LINES if secret not in secrets.redact(text)]
    assert given == LINES  # every kind is found in its line alone
    for text, secret in given:
        for n, argv in enumerate(USAGE_ERRORS):
            capsys.readouterr()
            code = cli.run(argv(text))
            out = capsys.readouterr()
            assert code != 0, (n, text[:20])
            shown[f"usage error {n} for {secret[:10]}..."] = out.out + out.err
    leaks = _leaks([secret for _text, secret in given], shown)
    assert not leaks, "\n".join(leaks[:20])
    # What the error says beside the secret still reaches the person.
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    capsys.readouterr()
    assert cli.run(["route", "fix", token]) == 2
    err = capsys.readouterr().err
    assert "Got unexpected extra argument" in err and "[REDACTED:github-token]" in err
    assert "Try 'engram route -h' for help." in err


def test_a_usage_error_of_the_engram_process_never_echoes_a_secret(tmp_path: Path) -> None:
    import os
    import subprocess

    token = next(t for t in TOKENS if t.startswith("ghp_"))
    env = dict(os.environ, ENGRAM_STATE_DIR=str(tmp_path / "state"))
    for argv in ([f"fix {token}", "--bogus"], ["route", "fix", token], [token]):
        done = subprocess.run([sys.executable, "-m", "engram", *argv], capture_output=True,
                              text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
        assert done.returncode == 2 and token not in done.stdout + done.stderr, argv
        assert "Error:" in done.stderr


def test_a_secret_in_an_imported_heading_is_never_hidden_from_the_gate(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`engram import` makes a section's title, tags and id from its heading, without markup:
    stripping `_` and `*` turned `ghp_...` into `ghp...` (and `sk_live_...` into `sklive...`),
    which no detector knows, so the card passed the gate and the hook sent the token's random
    part in its title; the import table printed it, lowercased, as a tag. A heading holding a
    secret keeps its text as written (the gate blocks the card, lint names it) and no tag or id
    is made of the secret."""
    tokens = [t for t in TOKENS if re.search(r"[_*]", t)]
    assert len(tokens) >= 3
    headings = "".join(f"## Deploy with {token}\n\nUse the deploy script {n}.\n\n"
                       for n, token in enumerate(tokens))
    ws = make_workspace(tmp_path / "proj", cards={})
    (ws / "AGENTS.md").write_text(f"# Notes\n\n{headings}", encoding="utf-8")
    channels = {"import": _run(ws, capsys, "import", "AGENTS.md"),
                "import --json": _run(ws, capsys, "import", "AGENTS.md", "--dry-run", "--json"),
                "lint": _run(ws, capsys, "lint"),
                "route": _run(ws, capsys, "route", "how do we deploy", "--explain")}
    channels["hook"] = call("claude", payload("claude", "UserPromptSubmit.json", ws,
                                              prompt="how do we deploy with the script?"))
    channels["files"] = "\n".join(p.name for p in (ws / ".agents").rglob("*"))
    # The token's longest run of letters and digits, in any case, with any separator gone.
    runs = {t: max(re.findall(r"[A-Za-z0-9]+", t), key=len).lower() for t in tokens}
    leaks = [f"{token[:8]}... in {name}" for token, run in runs.items()
             for name, text in channels.items()
             if run in re.sub(r"[^a-z0-9]", "", text.lower())]
    assert not leaks, leaks
    report = json.loads(_run(ws, capsys, "lint", "--json", stdout=True))
    assert len([p for p in report["problems"] if p["code"] == "secret"]) == len(tokens)


@pytest.mark.parametrize("where", ["one-line", "wrapped"])
def test_lint_never_quotes_part_of_a_token_in_a_framing_line(
        where: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # lint quotes a body line that imitates engram's framing, cut at 40 characters: cut inside
    # a token, what it quotes is no token the output's redactor can recognise (`ghp_` and 22
    # characters). Wrapped over two lines, the line alone holds none either.
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    line = f"Engram proof: {token}" if where == "one-line" else \
        f"Engram proof: {token[:24]}\n{token[24:]}"
    ws = make_workspace(tmp_path / "proj", cards={"forged": (
        f"---\nid: forged\ntitle: Forged\n---\nFirst line.\n{line}\n")})
    shown = _run(ws, capsys, "lint") + _run(ws, capsys, "lint", "--json")
    assert "imitates engram's own framing ('Engram proof: " in shown
    for piece in (token[:12], token[4:16], token[12:24]):
        assert piece not in shown, piece


@pytest.mark.parametrize("change", ["edited", "deleted"])
def test_a_secret_taken_out_of_a_card_is_not_left_in_the_index(
        change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # SQLite leaves a deleted row's bytes in the file's free space unless `secure_delete` is
    # on: Debian's build turns it on by default, python.org's and most others do not. Each
    # connection here starts with it off, as those builds do.
    import sqlite3
    import types

    from engram import index

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        db = sqlite3.connect(*args, **kwargs)  # type: ignore[arg-type]
        db.execute("PRAGMA secure_delete = OFF")
        return db

    driver = types.ModuleType("sqlite3_secure_delete_off")
    driver.__dict__.update(sqlite3.__dict__)
    driver.connect = connect  # type: ignore[attr-defined]
    monkeypatch.setattr(index, "_driver", lambda: driver)
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    cards = {f"card-{n}": f"---\nid: card-{n}\ntitle: Card {n}\ntags: [t{n}]\n---\n"
             + f"Body text of card {n}.\n" * 40 for n in range(20)}
    cards["deploy"] = ("---\nid: deploy\ntitle: Deploy\ntags: [deploy]\n---\nDeploy with "
                       f"GITHUB_TOKEN={token}\n" + "Then check the dashboard.\n" * 30)
    ws = make_workspace(tmp_path / "proj", cards=cards)
    call("claude", payload("claude", "SessionStart.json", ws))
    folder = tmp_path / "state" / "index"
    index.close_connections()
    assert any(token.encode() in p.read_bytes() for p in folder.iterdir())  # it was there
    card = ws / ".agents" / ".engram" / "deploy.md"
    if change == "edited":
        card.write_text("---\nid: deploy\ntitle: Deploy\ntags: [deploy]\n---\nDeploy.\n")
    else:
        card.unlink()
    call("claude", payload("claude", "UserPromptSubmit.json", ws, prompt="deploy"))
    index.close_connections()
    for path in folder.iterdir():
        assert token[4:20].encode() not in path.read_bytes(), path.name


def test_an_upgraded_detector_judges_unchanged_cards_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The index stores each card's verdict and judges a card again only when its file
    # changes: a release whose detector knows a new kind must not go on sending a card an
    # older release's detector passed. Built by the current release with a detector that
    # misses the token, as the index an older release left (its tag: the Python alone).
    import sys as system

    from engram import index, index_compile

    older = f"{system.implementation.name}-{system.version_info[0]}.{system.version_info[1]}"
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    ws = make_workspace(tmp_path / "proj", cards={"deploy": (
        "---\nid: deploy\ntitle: Deploy\nalways: true\n---\nDeploy with GITHUB_TOKEN="
        f"{token}\n")})
    with monkeypatch.context() as older_release:
        for module in (index, index_compile):
            older_release.setattr(module, "PY_TAG", older)
        older_release.setattr(index_compile, "_holds_secret", lambda card: False)
        assert token in call("claude", payload("claude", "SessionStart.json", ws))
        index.close_connections()
    answer = call("claude", payload("claude", "SessionStart.json", ws, session_id="upgraded"))
    assert token not in answer


def test_the_detectors_revision_names_its_source() -> None:
    # A stored verdict is trusted while the index's tag names the detector that gave it: a
    # change of engram/secrets.py must come with a new SECRETS_REVISION (and this pin).
    import hashlib

    from engram import index_rows

    source = (Path(secrets.__file__).read_bytes()).replace(b"\r\n", b"\n")
    assert (index_rows.SECRETS_REVISION, hashlib.sha256(source).hexdigest()[:16]) == \
        (13, "5f0209649a4c4f17"), "engram/secrets.py changed: bump index_rows.SECRETS_REVISION"


@pytest.mark.parametrize("umask", [0o000, 0o002, 0o022])
def test_the_state_dir_is_its_owners_alone_whatever_the_umask(
        umask: int, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # The state dir holds the index (every card's text), settings backups, delivery records and
    # logs. Made by the first hook or command under umask 000 or 002, it was writable by every
    # user or the group: another user could put an index file of theirs in place of engram's
    # folder, which the hook then filled with the cards' text. Made 0700, nothing under it is
    # reachable by another user, whatever mode each file got.
    import os
    import shutil
    import stat

    state = tmp_path / "state"
    ws = make_workspace(tmp_path / "proj")
    old = os.umask(umask)
    try:
        call("claude", payload("claude", "SessionStart.json", ws))
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        shutil.rmtree(state)
        _run(ws, capsys, "lint")
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        # One an older engram made open to others is made its owner's at the next command.
        state.chmod(0o777)
        _run(ws, capsys, "doctor")
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
    finally:
        os.umask(old)


@pytest.mark.parametrize("owner", [4242, 0])
def test_a_state_dir_another_user_made_first_gets_nothing_written(
        owner: int, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # `ENGRAM_STATE_DIR=/tmp/engram` (a shared folder) that another user made first, open to
    # all: the hook filled it with the index (every card's text, blocked secrets too), logs
    # and delivery records, in folders that user owns and can read, rename or replace. Run as
    # user 4343 (the test runs as root: the process's uid is what engram asks), it now
    # refuses such a folder: the hook fails open writing nothing, a command says why. Root's
    # folder (and, under sudo, the user's own) stays usable.
    import os

    state = tmp_path / "state"
    state.mkdir(mode=0o777)
    state.chmod(0o777)
    os.chown(state, owner, owner)
    monkeypatch.setattr(os, "geteuid", lambda: 4343)
    secret = next(t for t in TOKENS if t.startswith("ghp_"))
    ws = make_workspace(tmp_path / "proj", cards={"deploy": (
        "---\nid: deploy\ntitle: Deploy\nalways: true\n---\nDeploy with care, release notes.\n"),
        "creds": f"---\nid: creds\ntitle: Creds\n---\nUse {secret} for the registry.\n"})
    if owner == 0:
        assert "Deploy with care" in call("claude", payload("claude", "SessionStart.json", ws))
        assert list(state.rglob("*"))
        return
    from engram import log
    from engram.errors import EngramError

    with pytest.raises(EngramError):  # the hook's entry point answers `{}` for any exception
        call("claude", payload("claude", "SessionStart.json", ws))
    log.note("hook claude failed open: EngramError", name="hook.log")  # as the entry point does
    assert sorted(p.relative_to(state).as_posix() for p in state.rglob("*")) == []
    printed = _run(ws, capsys, "doctor")
    assert "(exit 1)" in printed and "belongs to another user (uid 4242)" in printed, printed
    assert sorted(p.relative_to(state).as_posix() for p in state.rglob("*")) == []


@pytest.mark.parametrize("umask", [0o000, 0o022])
@pytest.mark.parametrize("which", [(), ("--original",)])
def test_a_settings_file_restore_makes_again_from_an_older_backup_is_its_owners_alone(
        umask: int, which: tuple[str, ...], tmp_path: Path) -> None:
    # Users keep API keys in their settings (`env`), in a file only they can read. A backup
    # records the file's mode beside it, but those an older engram made (every backup in a
    # user's state dir before that) hold no record: a restore onto a file that is gone (deleted
    # to start over) made it with the umask's mode, 0644 (0666 under umask 000), the key
    # readable by every user, from a copy engram kept 0600.
    import os
    import stat

    ws = make_workspace(tmp_path / "proj")
    settings = ws / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    key = next(t for t in TOKENS if t.startswith("sk-ant-"))
    settings.write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": key}}) + "\n", encoding="utf-8")
    settings.chmod(0o600)
    old = os.umask(umask)
    try:
        assert engram("link", "claude", cwd=ws) == 0
        records = list((tmp_path / "state" / "backups").rglob("*.meta.json"))
        assert records
        for record in records:  # as an older engram left its backups
            record.unlink()
        settings.unlink()
        assert engram("restore", "claude", *which, cwd=ws) == 0
        assert key in settings.read_text(encoding="utf-8")
        assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    finally:
        os.umask(old)


def test_a_relative_xdg_folder_never_puts_engrams_files_in_the_repository(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    # XDG_STATE_HOME=state (a relative path, which the XDG spec says to ignore) made the state
    # dir `state/engram` under whatever folder engram ran in: a hook or `link` run in a
    # repository put the index (every card's text), the settings backups (API keys in `env`)
    # and the logs there, for `git add -A` to commit. A relative XDG_CONFIG_HOME read the
    # user-level config from the repository, which may then allow queued transcripts from
    # anywhere.
    home = tmp_path / "home"
    ws = make_workspace(tmp_path / "proj")
    settings = ws / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    key = next(t for t in TOKENS if t.startswith("sk-ant-"))
    settings.write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": key}}) + "\n", encoding="utf-8")
    planted = ws / "config" / "engram" / "config.json"
    planted.parent.mkdir(parents=True)
    planted.write_text(json.dumps({"transcripts.allowed_dirs": ["/"]}), encoding="utf-8")
    for name in ("ENGRAM_STATE_DIR", "ENGRAM_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", "state")
    monkeypatch.setenv("XDG_CONFIG_HOME", "config")
    monkeypatch.chdir(ws)
    assert engram("link", "claude", cwd=ws) == 0
    call("claude", payload("claude", "SessionStart.json", ws))
    _run(ws, capsys, "doctor")
    from engram import observe, paths

    assert Path("/") not in observe.allowed_dirs()
    assert not (ws / "state").exists()
    state = home / ".local" / "state" / "engram"
    assert paths.state_dir() == state and (state / "backups").is_dir()
    holding = [p for p in ws.rglob("*") if p.is_file() and p != settings
               and key.encode() in p.read_bytes()]
    assert holding == []


@pytest.mark.parametrize("where", ["title-and-card", "title-and-body"])
def test_show_and_route_never_show_both_halves_of_a_token_cut_between_fields(
        where: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # The gate blocks such a card (its fields read joined); `show`, what an agent pulls in
    # manual mode, redacted each field alone, which holds no token: it printed both halves
    # a few lines apart.
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    head, tail = token[:15], token[15:]
    card, body = (f"{tail} is the token", "Deploy.\n") if where == "title-and-card" else \
        ("How we deploy.", f"{tail} is the token.\n")
    ws = make_workspace(tmp_path / "proj", cards={"deploy": (
        f"---\nid: deploy\ntitle: Deploy with {head}\ncard: {card}\ntags: [deploy]\n---\n{body}")})
    shown = {args: _run(ws, capsys, *args) for args in (
        ("show", "deploy"), ("show", "deploy", "--json"), ("route", "deploy"),
        ("route", "deploy", "--explain"), ("route", "deploy", "--json"))}
    for args, text in shown.items():
        assert not (head in text and tail in text), args
    assert "no hook injects it" in shown[("show", "deploy")]
    assert "[REDACTED:github-token]" in shown[("show", "deploy")]


def test_an_index_set_aside_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    # An index an older engram left readable by all (0644) holds every card's text; set aside
    # at an upgrade (another format) before any refresh made it private, its copy kept that
    # mode for good.
    import os
    import sqlite3
    import stat

    from engram import index

    token = next(t for t in TOKENS if t.startswith("ghp_"))
    ws = make_workspace(tmp_path / "proj", cards={"deploy": (
        "---\nid: deploy\ntitle: Deploy\nalways: true\n---\nDeploy with GITHUB_TOKEN="
        f"{token}\n")})
    call("claude", payload("claude", "SessionStart.json", ws))
    index.close_connections()
    (stored,) = (tmp_path / "state" / "index").glob("*.sqlite")
    with sqlite3.connect(stored) as db:
        db.execute("PRAGMA user_version = 3")  # an older format
    db.close()
    os.chmod(stored, 0o644)
    call("claude", payload("claude", "SessionStart.json", ws, session_id="upgraded"))
    index.close_connections()
    copies = list(stored.parent.glob(stored.name + ".corrupt*"))
    assert copies and any(token.encode() in p.read_bytes() for p in copies)
    for path in copies:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path.name


# A token wrapped over two lines in the frontmatter, as YAML reads it: a plain scalar or a
# folded block (`>`) reads the line break as a space, a flow sequence (`[...]`) too, or the
# two halves are two items of one list. The file holds the token as a wrapped line does (the
# detector joins it there, and lint says the card is never injected), so every channel must
# hide it as it would hide a body's wrapped token: the halves never shown side by side.
FOLDED_PLACES = {
    "title": "title: Deploy with {head}\n  {tail} now\n",
    "title-deep": "title: Deploy with {head}\n        {tail} now\n",
    "card-folded-block": "card: >\n  Deploy with {head}\n  {tail} now\n",
    "card-plain": "card: Deploy with {head}\n  {tail} now\n",
    "tags": "tags: [deploy, {head}\n  {tail}]\n",
    "tags-two-items": "tags: [deploy, {head}, {tail}]\n",
    "applies_to": "applies_to: [\"deploy/**\", \"src/{head}\n  {tail}/**\"]\n",
    "depends_on": "depends_on: [{head}\n  {tail}]\n",
    "depends_on-two-items": "depends_on: [{head}, {tail}]\n",
    "priority": "priority: {head}\n  {tail}\n",
}


def _joined_by_a_reader(text: str) -> str:
    """`text` with the white space, commas and quotes between words taken out: two halves of
    a token a reader sees side by side read whole here."""
    return re.sub(r"[\s,'\"\\]+", "", text)


@pytest.mark.parametrize("place", sorted(FOLDED_PLACES))
def test_a_token_folded_over_lines_in_the_frontmatter_never_leaves_engram(
        place: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    token = next(t for t in TOKENS if t.startswith("ghp_"))
    head, tail = token[:18], token[18:]
    field = FOLDED_PLACES[place].format(head=head, tail=tail)
    fields = {"title": "title: Deploy notes\n", "card": "card: How we deploy.\n",
              "tags": "tags: [deploy, release]\n",
              "applies_to": "applies_to: [\"deploy/**\"]\n"}
    fields[place.split("-")[0]] = field
    front = "".join(fields.values())
    ws = make_workspace(tmp_path / "proj", cards={
        "deploy": f"---\nid: deploy\n{front}always: true\n---\nDeploy with the release script.\n",
        "filler": "---\nid: filler\ntitle: Deploy filler\ntags: [deploy]\nalways: true\n---\n"
                  + " ".join(f"deploy step {i} of many." for i in range(2000)) + "\n"},
        config={"hooks": {"path_rules": "native"}})
    assert engram("link", "claude", cwd=ws) == 0
    channels: dict[str, str] = {}
    prompt = "deploy notes release script"
    for host, name, changes in (
            ("claude", "SessionStart.json", {}),
            ("claude", "UserPromptSubmit.json", {"prompt": prompt}),
            ("claude", "PreToolUse.json", {"tool_name": "Read",
                                           "tool_input": {"file_path": str(ws / "deploy/x.sh")}}),
            ("codex", "UserPromptSubmit.json", {"prompt": prompt}),
            ("gemini", "BeforeAgent.json", {"prompt": prompt})):
        channels[f"hook {host} {name}"] = call(host, payload(host, name, ws, **changes))
    for args in (("lint",), ("lint", "--json"), ("doctor",), ("doctor", "--json"),
                 ("route", prompt), ("route", prompt, "--explain"), ("route", prompt, "--json"),
                 ("route", prompt, "--why-not", "deploy"), ("show", "deploy"),
                 ("show", "deploy", "--json")):
        channels[" ".join(args)] = _run(ws, capsys, *args)
    channels.update(_written(ws, tmp_path / "state"))
    leaked = [name for name, text in channels.items() if token in _joined_by_a_reader(text)]
    assert not leaked, {name: channels[name][:3000] for name in leaked}
