"""`engram import` of a file Git ignores, against Git itself as the oracle.

The promise: the text of a file Git ignores (`CLAUDE.local.md`: personal notes, often a
password) never becomes a file `git add -A` would stage, whatever the repository's ignore rules
are; an import that cannot keep that promise refuses, writes nothing and loses nothing; a file
Git does not ignore is imported into files Git sees (the team's cards are not hidden).

Generated: where the file is and its name (glob characters, a leading `!` or `#`, blanks,
trailing blanks), how Git ignores it (root or nested .gitignore, anchored or not, a glob,
`.git/info/exclude`, or not at all) or whether it is outside the repository (the user's own
`~/.claude/CLAUDE.md`: kept out of Git like an ignored file, and never replaced), root
rules that try to un-ignore engram's folder, a .gitignore of the user's own already in the
card folder or the archive, `--replace`, and a second import after the file gained a
section.

Budget: EXAMPLES repositories, derandomized (`ENGRAM_IGNORE_EXAMPLES=300` explores at random).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engram.cli import run

EXAMPLES = int(os.environ.get("ENGRAM_IGNORE_EXAMPLES") or 25)
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")
MEM = ".agents/.engram"
ARCHIVE = "archive"

NAMES = st.sampled_from([
    "CLAUDE.local.md", "notes/CLAUDE.local.md", "docs/my notes.md", "a[1]*.md", "!bang.md",
    "#hash.md", "trail .md", "blank.md  ", "deep/er/x?.md", "back\\slash.md",
])
USER_RULES = st.sampled_from([None, "# mine\n", "*\n", "*.md\n", "!*\n", "/staging.md\n",
                              "*\n!*.md\n"])
ROOT_EXTRAS = st.sampled_from(["", "!.agents/\n", f"!{MEM}/**\n", f"{MEM}/archive/\n",
                               "!*.md\n"])


def git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run([GIT or "git", "-C", str(root), *args], input=data,
                          capture_output=True, check=True).stdout


def visible(root: Path) -> list[str]:
    """What `git add -A` would stage: untracked files Git does not ignore."""
    out = git(root, "status", "--porcelain", "-z", "--untracked-files=all")
    return [entry[3:] for entry in out.decode("utf-8", "surrogateescape").split("\0") if entry]


def ignored_by_git(root: Path, relative: str) -> bool:
    return subprocess.run([GIT or "git", "-C", str(root), "check-ignore", "-q", "--", relative],
                          capture_output=True).returncode == 0


def engram(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(list(args))
    return code, out.getvalue() + err.getvalue()


def files_under(root: Path, folder: str) -> dict[str, bytes]:
    base = root / folder
    if not base.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(base.rglob("*")) if p.is_file()}


@st.composite
def repositories(draw: st.DrawFn) -> dict[str, object]:
    name = draw(NAMES, label="file")
    how = draw(st.sampled_from(["none", "basename", "anchored", "glob", "exclude", "nested",
                                "outside"]), label="ignored by")
    return {"name": name, "how": how, "root_extra": draw(ROOT_EXTRAS, label="root extra"),
            "card_rules": draw(USER_RULES, label="user .gitignore in the card folder"),
            "archive_rules": draw(USER_RULES, label="user .gitignore in archive/"),
            "replace": draw(st.booleans(), label="--replace"),
            "again": draw(st.booleans(), label="import again after an edit")}


def _escaped(name: str) -> str:
    escaped = "".join("\\" + c if c in "\\*?[]!#" else c for c in name)
    kept = escaped.rstrip(" ")
    return kept + "\\ " * (len(escaped) - len(kept))


def build(root: Path, case: dict[str, object], marker: str) -> str:
    """The repository, and the file to import as `engram import` is given it."""
    git(root, "init", "-q")
    name = str(case["name"])
    if case["how"] == "outside":  # the user's own file (`~/.claude/CLAUDE.md`), no Git's
        name = str(root.parent / "home" / ".claude" / name)
    source = root / name
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(f"# Notes\n\n## Staging\n\nThe staging host is {marker}-staging.\n\n"
                      f"## Style\n\nSmall pull requests, {marker}-style.\n", encoding="utf-8")
    folder, base = os.path.split(name)
    rules = {"none": "", "basename": _escaped(base) + "\n", "anchored": "/" + _escaped(name) + "\n",
             "glob": "*" + _escaped(base[2:]) + "\n",
             "exclude": "", "nested": "", "outside": ""}[str(case["how"])]
    (root / ".gitignore").write_text(rules + str(case["root_extra"]), encoding="utf-8")
    if case["how"] == "exclude":
        with open(root / ".git" / "info" / "exclude", "a", encoding="utf-8") as handle:
            handle.write("/" + _escaped(name) + "\n")
    if case["how"] == "nested":
        (root / folder / ".gitignore").write_text("/" + _escaped(base) + "\n", encoding="utf-8")
    for key, sub in (("card_rules", None), ("archive_rules", "archive")):
        if case[key] is not None:
            from engram.commands.import_cmd import folder_name

            stem = folder_name(name) if case["how"] != "outside" else \
                f"outside-{folder_name(os.path.basename(name))}"
            where = root / MEM / (sub or stem)
            where.mkdir(parents=True, exist_ok=True)
            (where / ".gitignore").write_text(str(case[key]), encoding="utf-8")
    return name


def check(root: Path, name: str, marker: str, case: dict[str, object], personal: bool,
          before: dict[str, bytes], source_before: bytes, code: int, said: str) -> None:
    shown = [path for path in visible(root)
             if (root / path).is_file() and marker.encode() in (root / path).read_bytes()]
    if personal:
        assert not shown, f"text of an ignored file Git would stage: {shown}\n{said}"
        assert code == 0 or "REFUSED" in said or "WARNING" in said, said
        if "REFUSED" in said:  # nothing of it written, the source as it was
            assert code == 1, said
            assert files_under(root, MEM) == before, said
            assert (root / name).read_bytes() == source_before
            return
    else:
        assert code == 0, said
    after = files_under(root, MEM)
    cards = [path for path, data in after.items()
             if marker.encode() in data and f"/{ARCHIVE}/" not in path]
    assert cards, f"no card holds the file's text\n{said}"
    if case["replace"]:  # the replaced text is kept, byte for byte
        assert source_before in after.values(), said
        assert (root / name).read_bytes() != source_before
    else:
        assert (root / name).read_bytes() == source_before
    if not personal and case["card_rules"] is None:
        assert set(cards) <= set(visible(root)) | set(before), \
            f"the team's cards were hidden from Git\n{said}"


@settings(max_examples=EXAMPLES, deadline=None,
          derandomize="ENGRAM_IGNORE_EXAMPLES" not in os.environ,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=repositories())
# Found by this test: a card folder holding the user's own .gitignore (engram never edits one)
# got the cards anyway, Git seeing them; the import said they were kept out of Git.
@example(case={"name": "CLAUDE.local.md", "how": "basename", "root_extra": "",
               "card_rules": "# mine\n", "archive_rules": None, "replace": False,
               "again": False})
@example(case={"name": "CLAUDE.local.md", "how": "anchored", "root_extra": "",
               "card_rules": None, "archive_rules": "# mine\n", "replace": True,
               "again": True})
# The user's own `~/.claude/CLAUDE.md` (outside the repository) was imported into files Git
# stages, and `--replace` left every other project a pointer to this repository's cards.
@example(case={"name": "CLAUDE.md", "how": "outside", "root_extra": "", "card_rules": None,
               "archive_rules": None, "replace": True, "again": False})
@example(case={"name": "CLAUDE.md", "how": "outside", "root_extra": "", "card_rules": None,
               "archive_rules": None, "replace": False, "again": True})
# Git drops a .gitignore line's trailing blanks: engram's line for the archived
# `blank.md  ` named `blank.md`, and the archived text was Git's to stage.
@example(case={"name": "blank.md  ", "how": "anchored", "root_extra": "", "card_rules": None,
               "archive_rules": None, "replace": True, "again": False})
def test_an_ignored_files_text_never_becomes_a_file_git_would_stage(
        case: dict[str, object]) -> None:
    marker = "zq" + os.urandom(4).hex()
    with tempfile.TemporaryDirectory(prefix="engram-ignore-") as temp:
        root = Path(temp) / "repo"
        root.mkdir()
        name = build(root, case, marker)  # absolute when outside the repository
        personal = case["how"] == "outside" or ignored_by_git(root, name)
        replace = bool(case["replace"])
        rounds = 2 if case["again"] else 1
        for round_ in range(rounds):
            before, source_before = files_under(root, MEM), (root / name).read_bytes()
            args = ["import", name, "--cwd", str(root)] + (["--replace"] if replace else [])
            code, said = engram(*args)
            check(root, name, marker, case, personal, before, source_before, code, said)
            if round_ + 1 < rounds:
                if replace and (root / name).read_bytes() != source_before:
                    # the pointer is engram's: the user writes the file anew, a section more
                    (root / name).write_bytes(source_before)
                with open(root / name, "a", encoding="utf-8") as handle:
                    handle.write(f"\n## Deploy\n\nDeploy with {marker}-deploy.\n")
