"""OpenCode's plugin file is a whole file engram generates. An edit of the user's inside it (a
longer timeout, a line of their own) is theirs: `link`, `upgrade` and `unlink` refuse to
replace or remove a file that is not exactly what some engram release wrote, say how to go on
(`--force`, a backup kept), and never claim only engram's entries were in it. A file exactly
as an earlier release wrote it (its template and a command engram writes) is still engram's."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from installer_helpers import PINNED, engram

from engram.installer import filedance
from engram.installer.merge import EARLIER_PLUGINS
from engram.resources import data_dir

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "opencode"
PLUGIN = ".opencode/plugins/engram.js"


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


def linked(workspace: Path) -> Path:
    assert engram("link", "opencode", cwd=workspace) == 0
    return workspace / PLUGIN


EDITS = [
    pytest.param(lambda t: t.replace("const TIMEOUT_MS = 10000;", "const TIMEOUT_MS = 30000;"),
                 id="timeout"),
    pytest.param(lambda t: t + "// my note: keep this plugin\n", id="line-added"),
    pytest.param(lambda t: t.replace(json.dumps(f"{PINNED} hook opencode"),
                                     json.dumps(f"GITHUB_TOKEN=x {PINNED} hook opencode")),
                 id="command-wrapped"),
    pytest.param(lambda t: t.replace(json.dumps(f"{PINNED} hook opencode"),
                                     json.dumps(f"{PINNED} hook opencode --debug")),
                 id="command-argument"),
]


@pytest.mark.parametrize("edit", EDITS)
def test_link_refuses_to_overwrite_the_users_edit_and_force_replaces_it_with_a_backup(
        edit, workspace: Path, capsys: pytest.CaptureFixture) -> None:
    path = linked(workspace)
    mine = edit(path.read_text())
    path.write_text(mine)
    capsys.readouterr()
    assert engram("link", "opencode", cwd=workspace) == 1
    assert path.read_text() == mine
    err = capsys.readouterr().err
    assert "REFUSED .opencode/plugins/engram.js" in err and "--force" in err
    assert engram("link", "opencode", "--dry-run", cwd=workspace) == 1
    assert path.read_text() == mine
    assert engram("link", "opencode", "--force", cwd=workspace) == 0
    assert path.read_text() != mine and "engram:opencode-plugin" in path.read_text()
    assert any(b.data() == mine.encode() for b in filedance.backups(path))
    out = capsys.readouterr().out
    assert "your edits" in out and "engram restore opencode" in out


@pytest.mark.parametrize("edit", EDITS)
def test_unlink_refuses_to_delete_the_users_edit_and_never_says_only_engrams_were_in_it(
        edit, workspace: Path, capsys: pytest.CaptureFixture) -> None:
    path = linked(workspace)
    mine = edit(path.read_text())
    path.write_text(mine)
    capsys.readouterr()
    assert engram("unlink", "opencode", cwd=workspace) == 1
    assert path.read_text() == mine
    captured = capsys.readouterr()
    assert "--force" in captured.err and "only engram's" not in captured.out
    assert engram("unlink", "opencode", "--force", cwd=workspace) == 0
    assert not path.exists()
    assert any(b.data() == mine.encode() for b in filedance.backups(path))
    out = capsys.readouterr().out
    assert "DELETED .opencode/plugins/engram.js" in out
    assert "only engram's" not in out and "your edits" in out
    assert engram("restore", "opencode", cwd=workspace) == 0
    assert path.read_text() == mine


def test_upgrade_refuses_an_edited_plugin_and_says_so(
        workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    path = linked(workspace)
    mine = path.read_text().replace("const TIMEOUT_MS = 10000;", "const TIMEOUT_MS = 30000;")
    path.write_text(mine)
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", "/usr/local/bin/engram")  # a new install
    capsys.readouterr()
    assert engram("upgrade", cwd=workspace) == 1
    assert path.read_text() == mine
    assert "--force" in capsys.readouterr().err
    assert engram("upgrade", "--force", cwd=workspace) == 0
    assert json.dumps("/usr/local/bin/engram hook opencode") in path.read_text()


def test_doctor_names_an_edited_plugin_and_the_way_out(
        workspace: Path, capsys: pytest.CaptureFixture) -> None:
    path = linked(workspace)
    path.write_text(path.read_text() + "// mine\n")
    capsys.readouterr()
    engram("doctor", "--json", cwd=workspace)
    document = json.loads(capsys.readouterr().out)
    rows = [row for row in json.dumps(document).split('"host": ') if row.startswith('"opencode"')]
    assert rows and "your own edits" in rows[0] and "--force" in rows[0]


@pytest.mark.parametrize("template", sorted(p.name for p in FIXTURES.glob("*.js")))
@pytest.mark.parametrize("command", [f"{PINNED} hook opencode",
                                     "/usr/bin/python3 -m engram hook opencode"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_plugin_an_earlier_release_wrote_is_engrams_to_replace_and_remove(
        template: str, command: str, newline: str, workspace: Path,
        capsys: pytest.CaptureFixture) -> None:
    """Exactly an earlier release's file (with CRLF line ends, as Git on Windows checks a
    committed file out) is engram's: upgraded and removed without --force."""
    text = (FIXTURES / template).read_text().replace('"__ENGRAM_HOOK_COMMAND__"',
                                                     json.dumps(command))
    path = workspace / PLUGIN
    path.parent.mkdir(parents=True)
    path.write_bytes(text.replace("\n", newline).encode())
    assert engram("link", "opencode", cwd=workspace) == 0
    assert json.dumps(f"{PINNED} hook opencode") in path.read_text()
    path.write_bytes(text.replace("\n", newline).encode())
    capsys.readouterr()
    assert engram("unlink", "opencode", cwd=workspace) == 0
    assert not path.exists()


def test_a_foreign_file_is_still_refused_even_with_force(workspace: Path) -> None:
    """--force is for engram's own file with the user's edits in it; a file that never was
    engram's (no marker) stays refused: it is another plugin under that name."""
    path = workspace / PLUGIN
    path.parent.mkdir(parents=True)
    path.write_text("export const Mine = async () => ({});\n")
    assert engram("link", "opencode", "--force", cwd=workspace) == 1
    assert engram("unlink", "opencode", "--force", cwd=workspace) == 1
    assert path.read_text() == "export const Mine = async () => ({});\n"


def test_every_template_a_release_shipped_is_known_and_kept_as_a_fixture() -> None:
    """A change of hosts/opencode-plugin.js must keep the files the old template generated
    engram's: add its sha256 to EARLIER_PLUGINS and its text to tests/fixtures/opencode/, then
    pin the new template's hash here."""
    current = hashlib.sha256((data_dir("hosts") / "opencode-plugin.js").read_bytes()).hexdigest()
    assert current == "2d62f74541a3783a438d031f180230e64bf7d17e16e549cb34310569efb6327f", \
        "the template changed: keep the old one's hash in EARLIER_PLUGINS and a fixture of it"
    fixtures = {hashlib.sha256(p.read_bytes()).hexdigest() for p in FIXTURES.glob("*.js")}
    assert fixtures == set(EARLIER_PLUGINS)
