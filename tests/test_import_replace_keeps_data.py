"""`engram import FILE --replace` turns the user's instruction file into engram's pointer. The
text it replaces is the user's: it must be kept, whole, every time, and the file replaced must
stay theirs (owner, mode, a hard link's other names)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from engram.cli import run

FIRST = "# Rules\n\n## Testing\n\nRun pytest with -x always.\n\n## Style\n\nUse black.\n"
SECOND = ("# Rules\n\n## Testing\n\nRun pytest with -q now, the new rule.\n\n## Deploy\n\n"
          "Deploy with make ship only on fridays.\n")
ARCHIVE = Path(".agents/.engram/archive")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".agents" / ".engram").mkdir(parents=True)
    return root


def import_replace(repo: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code = run(["import", "CLAUDE.md", "--replace", "--cwd", str(repo)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    return out + err


def test_a_second_replace_keeps_the_rewritten_file_it_replaces(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pointer the user replaced with new instructions, imported with --replace again: the
    old archive already held the first text, so the new text was in no archive, its changed
    section was kept out of the cards (a card of that id existed), and CLAUDE.md became the
    pointer: the new rule was nowhere."""
    (repo / "CLAUDE.md").write_text(FIRST)
    import_replace(repo, capsys)
    (repo / "CLAUDE.md").write_text(SECOND)
    out = import_replace(repo, capsys)
    kept = {p.read_text() for p in (repo / ARCHIVE).iterdir()}
    assert kept == {FIRST, SECOND}
    assert (repo / ARCHIVE / "CLAUDE.md").read_text() == FIRST
    named = out.split("the original is in ", 1)[1].split()[0]
    assert (repo / named).read_text() == SECOND
    (repo / "CLAUDE.md").write_text(SECOND)
    import_replace(repo, capsys)  # the same text a third time: no third copy
    assert len(list((repo / ARCHIVE).iterdir())) == 2


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_replace_as_root_keeps_the_users_file_theirs(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = repo / "CLAUDE.md"
    path.write_text(FIRST)
    os.chown(path, 4321, 4321)
    os.chmod(path, 0o640)
    import_replace(repo, capsys)
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4321, 4321, 0o640)


def test_replace_refuses_a_hard_linked_file(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Replacing one name of a hard-linked file would leave the other with the old text and
    this one a new file: the user's link silently split."""
    path = repo / "CLAUDE.md"
    path.write_text(FIRST)
    os.link(path, repo / "AGENTS.md")
    code = run(["import", "CLAUDE.md", "--replace", "--cwd", str(repo)])
    out, err = capsys.readouterr()
    assert code == 1 and "hard link" in err, out + err
    assert path.read_text() == FIRST and os.stat(path).st_nlink == 2
