"""Regression tests for what trials broke in the installer: each reproduction as it was found,
and the promise that replaces it (edits verified before they replace a file, the user's file
given back byte for byte, nothing written outside the workspace, backups that can be used)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from installer_helpers import PINNED, check_golden, engram

from engram.installer import jsonc


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HOOK_EXECUTABLE", PINNED)


def scoped_card(workspace: Path) -> None:
    (workspace / ".agents" / ".engram" / "py-style.md").write_text(
        "---\nid: py-style\ntitle: Python style\napplies_to: ['**/*.py']\n---\nUse ruff.\n")


def native(workspace: Path) -> None:
    (workspace / ".agents" / "engram.json").write_text('{"hooks": {"path_rules": "native"}}')


def claude_settings(workspace: Path, text: str | None = None) -> Path:
    path = workspace / ".claude" / "settings.json"
    if text is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


USER_SETTINGS = """{
  "permissions": {"allow": ["Bash(npm test)"], "deny": []},
  "env": {"DEBUG": "1"},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
    ],
    "SessionStart": [
      {"hooks": [{"type": "command", "command": "echo hello"}]}
    ]
  },
  "model": "opus"
}
"""

STALE_EVENT = """{
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "/old/bin/engram hook claude"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "/old/bin/engram hook claude"}]}]
  }
}
"""


@pytest.mark.parametrize("start", [None, USER_SETTINGS, STALE_EVENT], ids=["fresh", "user", "stale"])
@pytest.mark.parametrize("upgrade", [False, True])
def test_path_rules_switches_keep_the_file_valid(start: str | None, upgrade: bool,
                                                  workspace: Path) -> None:
    """Found: link; path_rules hook + link; path_rules native + link (or upgrade) reported
    UPDATED and left `]atcher": ...` at line 47."""
    scoped_card(workspace)
    path = claude_settings(workspace, start)
    before = path.read_bytes() if start else None
    assert engram("link", "claude", cwd=workspace) == 0
    for mode in ("native", "hook", "native", "hook"):
        assert engram("config", "set", "hooks.path_rules", mode, cwd=workspace) == 0
        assert engram("upgrade" if upgrade else "link", *(() if upgrade else ("claude",)),
                      cwd=workspace) == 0
        document = jsonc.parse(path.read_text())  # strict JSON too:
        assert json.loads(path.read_text()) == document
        hooks = document["hooks"]
        assert ("PostToolUse" in hooks) == (mode == "hook")
        assert ("InstructionsLoaded" in hooks) == (mode == "native")
        if start == USER_SETTINGS:
            assert document["permissions"] == {"allow": ["Bash(npm test)"], "deny": []}
            assert {"type": "command", "command": "./guard.sh"} in \
                [h for g in hooks["PreToolUse"] for h in g["hooks"]]
    assert engram("unlink", "claude", cwd=workspace) == 0
    if before is None:
        assert not path.exists()
    elif start == USER_SETTINGS:
        assert path.read_bytes() == before
    else:  # it held only an older engram's entries: nothing of the user's to keep
        assert not path.exists()


def test_config_set_path_rules_relinks_and_says_so(workspace: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    scoped_card(workspace)
    assert engram("link", "claude", cwd=workspace) == 0
    capsys.readouterr()
    assert engram("config", "set", "hooks.path_rules", "native", cwd=workspace) == 0
    out = capsys.readouterr().out
    assert "re-linking" in out and "UPDATED .claude/settings.json" in out
    assert "InstructionsLoaded" in json.loads(claude_settings(workspace).read_text())["hooks"]
    assert (workspace / ".claude/rules/engram/py-style.md").exists()
    assert engram("config", "set", "hooks.path_rules", "hook", cwd=workspace) == 0
    assert "PostToolUse" in json.loads(claude_settings(workspace).read_text())["hooks"]
    assert not (workspace / ".claude").joinpath("rules").exists()


def test_a_patch_that_would_not_parse_back_is_refused(workspace: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture) -> None:
    """The verification, not the diff, is what keeps a file valid: break the diff and see."""
    path = claude_settings(workspace, USER_SETTINGS)
    monkeypatch.setattr(jsonc, "patch", lambda text, before, after: text[:-3])
    assert engram("link", "claude", cwd=workspace) == 1
    assert path.read_text() == USER_SETTINGS
    assert "could not be edited safely" in capsys.readouterr().err


def test_overlapping_edits_raise_instead_of_splicing() -> None:
    patcher = jsonc._Patcher('{"a": 1, "b": 2}')
    patcher.edit(1, 8, "")
    patcher.edit(5, 10, "x")
    with pytest.raises(jsonc.PatchError):
        patcher.apply()


# -- the round trip gives the user's file back ----------------------------------------------

ROUND_TRIP_STARTS = ["{}", "", "\n", '{"hooks": null}', '{"hooks": {}}', "{}\n",
                     '{ "hooks" : { } }\r\n', '\ufeff{"model": "x"}\n',
                     '{\n  // mine\n  "model": "x"\n}\n']
JSON_HOSTS = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
              "gemini": ".gemini/settings.json", "cursor": ".cursor/hooks.json",
              "windsurf": ".windsurf/hooks.json"}


@pytest.mark.parametrize("start", ROUND_TRIP_STARTS)
@pytest.mark.parametrize("host", sorted(JSON_HOSTS))
def test_link_unlink_gives_back_the_exact_bytes(host: str, start: str, workspace: Path) -> None:
    """Found: a `{}`, empty, `{"hooks": null}` or `{"hooks": {}}` file was deleted."""
    from engram import host_registry

    if "//" in start and host_registry.get(host).install.get("syntax") != "jsonc":
        # refused untouched where the host reads strict JSON:
        # test_a_strict_json_host_file_with_comments_is_refused_untouched
        pytest.skip("comments only where the host reads them")
    if start.startswith("\ufeff") and host_registry.get(host).install.get("syntax", "json") != "json":
        # Gemini CLI stops on a BOM, Codex runs none of the file's hooks:
        # test_a_file_its_host_cannot_read_is_refused_untouched
        pytest.skip("a byte order mark only where the host skips it")
    path = workspace / JSON_HOSTS[host]
    path.parent.mkdir(parents=True)
    path.write_bytes(start.encode())
    assert engram("link", host, cwd=workspace) == 0
    assert jsonc.parse(path.read_text("utf-8"))["hooks"]
    assert engram("link", host, "--session-end", cwd=workspace) in (0,)
    assert engram("unlink", host, cwd=workspace) == 0
    assert path.read_bytes() == start.encode()
    assert engram("unlink", host, cwd=workspace) == 0
    assert path.read_bytes() == start.encode()


@pytest.mark.parametrize("host", sorted(JSON_HOSTS))
@pytest.mark.parametrize("start", [
    '{"hooks": {"%s": []}}\n',
    '{\n  "hooks": {\n    "%s": [],\n    "Stop": [{"hooks": []}]\n  }\n}\n',
    '{\n  // the events I will fill one day\n  "hooks": {"%s": []}\n}\n',
], ids=["only", "beside-another", "jsonc"])
def test_an_empty_event_list_of_the_users_is_given_back(host: str, start: str,
                                                        workspace: Path) -> None:
    """Found (generated user files): link filled the user's empty list of one of engram's
    events; unlink then emptied it, dropped the key, and, with nothing else in the file,
    deleted the user's file (with its comment)."""
    from engram import host_registry

    if "//" in start and host_registry.get(host).install.get("syntax") != "jsonc":
        pytest.skip("comments only where the host reads them")
    event = host_registry.get(host).install["events"][0]["event"]
    text = start % event
    path = workspace / JSON_HOSTS[host]
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert engram("link", host, cwd=workspace) == 0
    assert engram("unlink", host, cwd=workspace) == 0
    assert path.exists() and path.read_text() == text


@pytest.mark.parametrize("start, comment", [
    ('{\n  "general": {"vimMode": true},\n  // engram and friends\n  "hooks": {}\n}\n',
     "// engram and friends"),
    ('{\n  "general": {"vimMode": true},\n  "hooks": {\n    // mine\n    "SessionStart": []\n'
     '  }\n}\n', "// mine"),
    ('{\r\n  "general": {"vimMode": true},\r\n  // engram\r\n  "hooks": {}\r\n}\r\n', "// engram"),
], ids=["above-hooks", "above-an-event", "crlf"])
def test_unlink_keeps_a_comment_above_what_it_removes_last(start: str, comment: str,
                                                          workspace: Path) -> None:
    """Found (generated user files): a comment between the user's last setting and a member
    unlink removes at the end of its object (a `hooks` left empty, an event list it emptied)
    made every later unlink refuse ("a comment ... this change would delete"), once the file
    was no longer the pre-engram original (Gemini changed a setting, the user edited it)."""
    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(start.encode())
    assert engram("link", "gemini", cwd=workspace) == 0
    path.write_bytes(path.read_bytes().replace(b'"vimMode": true', b'"vimMode": false'))
    assert engram("unlink", "gemini", cwd=workspace) == 0
    after = path.read_bytes().decode()
    assert comment in after and "engram hook" not in after
    assert jsonc.parse(after)["general"] == {"vimMode": False}
    assert ("\r\n" in start) == ("\r\n" in after) and "\r\r" not in after


def test_unlink_keeps_a_file_engram_made_once_the_user_commented_in_it(workspace: Path) -> None:
    """Found: a settings file engram created, in which the user then wrote a comment, was
    deleted by unlink, the comment with it (nothing but engram's entries was left)."""
    path = workspace / ".gemini" / "settings.json"
    assert engram("link", "gemini", cwd=workspace) == 0
    path.write_text(path.read_text().replace("{", "{\n  // keep hooks off on the CI box", 1))
    assert engram("unlink", "gemini", cwd=workspace) == 0
    assert path.read_text() == "{\n  // keep hooks off on the CI box\n}\n"


def test_a_group_that_goes_never_takes_the_place_of_the_users_group(workspace: Path) -> None:
    """Found (generated user files): an older engram's entry under a matcher engram no longer
    uses goes with its group; the array edit paired that group with the next one by position
    and rewrote it in place, so the user's handler in the next group was re-serialised (its
    spacing lost; a comment in it would have made link refuse)."""
    mine = '{"type": "command",   "command": "./audit.sh",   "timeout": 5}'
    text = ('{"hooks": {"SessionStart": [\n'
            '  {"matcher": "Bash", "hooks": [{"type": "command", "command": "engram hook claude"}]},\n'
            '  {"hooks": [{"type": "command", "command": "engram hook claude"}, ' + mine + ']}\n'
            ']}}\n')
    path = claude_settings(workspace, text)
    assert engram("link", "claude", cwd=workspace) == 0
    linked = path.read_text()
    assert mine in linked
    groups = json.loads(linked)["hooks"]["SessionStart"]
    assert [g.get("matcher") for g in groups] == [None]
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert mine in path.read_text()


def test_the_users_group_pairs_with_what_is_left_of_it_not_with_engrams_new_one(
        workspace: Path) -> None:
    """Found (generated user files): an older engram's entry shared a group with the user's
    handler under a matcher engram no longer uses; the group, stripped of it, and engram's
    new group were paired by text likeness, which engram's own commands won, so the user's
    group was written anew (its handler re-serialised)."""
    mine = '{"type":"command",   "command": ".\\/audit.sh"}'
    text = ('{"hooks": {"PostToolUse": [{"matcher": "", "hooks": [\n'
            '  {"type": "command", "command": "engram hook claude"},\n'
            '  {"type": "command", "command": "engram hook claude", "statusMessage": null},\n'
            '  ' + mine + ']}]}}\n')
    path = claude_settings(workspace, text)
    assert engram("link", "claude", cwd=workspace) == 0
    assert mine in path.read_text()
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert mine in path.read_text()


def test_an_old_group_that_goes_is_not_rewritten_into_the_users_when_engrams_new_one_follows(
        workspace: Path) -> None:
    """Found (a soak run of the generated user files, Gemini): the user's own engram entry in
    a group of its own, then the user's group with their handler and another engram entry.
    link leaves the user's group (without the engram entry) and adds engram's new group at the
    end: two groups before, two after. The array edit paired them by position because more
    pairs won over any likeness: the old engram group was rewritten into the user's (their
    handler re-serialised, a comment of engram's entry left inside it) and the user's group
    into engram's new one."""
    mine = '{"type": "command",   "command": "./audit.sh",   "timeout": 5}'
    text = ('{"hooks": {"PostToolUse": [\n'
            '  {"hooks": [{"type": "command", "command": "engram hook claude"}]},\n'
            '  {"matcher": "Bash", "hooks": [' + mine
            + ', {"type": "command", "command": "engram hook claude"}]}\n'
            ']}}\n')
    path = claude_settings(workspace, text)
    assert engram("link", "claude", cwd=workspace) == 0
    linked = path.read_text()
    assert '{"matcher": "Bash", "hooks": [' + mine in linked
    groups = json.loads(linked)["hooks"]["PostToolUse"]
    assert groups[0] == {"matcher": "Bash", "hooks": [json.loads(mine)]}
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert '{"matcher": "Bash", "hooks": [' + mine in path.read_text()


def test_a_gemini_users_handler_keeps_its_own_text_and_comments_through_link(
        workspace: Path) -> None:
    """The same, as the soak run drew it: a one-line Gemini file with a comment before every
    member. link moved the comment of engram's old entry into the user's handler."""
    mine = '{/* mine */ "type": "command", /* mine */ "command": "./audit.sh"}'
    text = ('{/* c */ "hooks": {/* c */ "AfterTool": [/* c */ {/* c */ "hooks": [/* c */ '
            '{/* c */ "type": "command", /* c */ "command": "engram hook gemini", /* old */ '
            '"timeout": null}]}, /* c */ {/* c */ "hooks": [/* c */ ' + mine + ', /* c */ '
            '{/* c */ "type": "command", /* c */ "command": "engram hook gemini"}]}]}}\n')
    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    assert engram("link", "gemini", cwd=workspace) == 0
    assert mine in path.read_text(encoding="utf-8")
    assert engram("unlink", "gemini", cwd=workspace) == 0
    assert mine in path.read_text(encoding="utf-8")


def test_absent_stays_absent_with_no_folder_left(workspace: Path) -> None:
    scoped_card(workspace)
    assert engram("link", "all", cwd=workspace) == 0
    assert engram("unlink", "all", cwd=workspace) == 0
    assert sorted(p.name for p in workspace.iterdir()) == [".agents", ".git"]


def test_a_user_edit_between_link_and_unlink_is_kept(workspace: Path) -> None:
    path = claude_settings(workspace, "{}")
    assert engram("link", "claude", cwd=workspace) == 0
    document = json.loads(path.read_text())
    document["model"] = "opus"
    path.write_text(json.dumps(document, indent=2))
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert json.loads(path.read_text()) == {"model": "opus"}


# -- refusals, each with a golden message -----------------------------------------------------

def refusal(workspace: Path, capsys: pytest.CaptureFixture, *args: str) -> str:
    capsys.readouterr()
    assert engram(*args, cwd=workspace) == 1
    err = capsys.readouterr().err
    return err.replace(str(workspace), "<ws>").replace(str(workspace.parent), "<tmp>")


def test_duplicate_hooks_keys_are_refused(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    """Found: the first copy's content was lost."""
    text = ('{\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]},\n'
            '  "hooks": {"SessionStart": []}\n}\n')
    path = claude_settings(workspace, text)
    check_golden(refusal(workspace, capsys, "link", "claude"), "refused-duplicate-key.txt")
    assert path.read_text() == text
    assert engram("unlink", "claude", cwd=workspace) == 1
    assert path.read_text() == text


def test_unparseable_file_is_refused(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    path = claude_settings(workspace, '{"model": "opus",\n')
    check_golden(refusal(workspace, capsys, "link", "claude"), "refused-not-json.txt")
    assert path.read_text() == '{"model": "opus",\n'


def test_rule_folder_leading_outside_is_refused(workspace: Path, isolated_dirs: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    scoped_card(workspace)
    native(workspace)
    (isolated_dirs / "rules").mkdir()
    folder = workspace / ".claude" / "rules" / "engram"
    folder.parent.mkdir(parents=True)
    folder.symlink_to(isolated_dirs / "rules")
    err = refusal(workspace, capsys, "link", "claude").replace(str(isolated_dirs), "<home>")
    check_golden(err, "refused-rules-folder-outside.txt")
    assert list((isolated_dirs / "rules").iterdir()) == []


def test_read_only_file_is_refused(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    """Found: a 0444 file was overwritten (os.replace does not ask the file's mode)."""
    path = claude_settings(workspace, '{"model": "opus"}\n')
    path.chmod(0o444)
    check_golden(refusal(workspace, capsys, "link", "claude"), "refused-read-only.txt")
    assert path.read_text() == '{"model": "opus"}\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_a_hard_linked_file_is_refused_not_split(workspace: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    """Found: a settings file hard-linked from a dotfiles folder was replaced by a new file
    (os.replace): the workspace got engram's entries, the dotfiles copy silently kept the old
    text, and the two were no longer one file."""
    text = '{"model": "opus"}\n'
    path = claude_settings(workspace, text)
    dotfiles = workspace / "dotfiles-settings.json"
    os.link(path, dotfiles)
    capsys.readouterr()
    assert engram("link", "claude", cwd=workspace) == 1
    assert "hard link" in capsys.readouterr().err
    assert path.read_text() == text and os.stat(path).st_ino == os.stat(dotfiles).st_ino


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_root_keeps_the_owner_of_the_file_it_edits(workspace: Path) -> None:
    """Found: `sudo engram link` (or any run as root) replaced a user's 0600 settings file
    with one owned by root, which the user's own host could then no longer read."""
    path = claude_settings(workspace, '{"model": "opus"}\n')
    os.chown(path, 4321, 4322)
    path.chmod(0o600)
    assert engram("link", "claude", cwd=workspace) == 0
    assert "engram hook" in path.read_text()
    info = os.stat(path)
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (4321, 4322, 0o600)
    assert engram("unlink", "claude", cwd=workspace) == 0
    info = os.stat(path)
    assert (info.st_uid, info.st_gid) == (4321, 4322)


@pytest.mark.parametrize("depth", [400, 5000])
def test_a_deeply_nested_file_is_refused_with_a_reason(depth: int, workspace: Path,
                                                       capsys: pytest.CaptureFixture) -> None:
    """Found: a settings file nesting 400 levels deep (valid JSON to every host) crashed
    link with a RecursionError (exit 3 and a crash log) instead of a refusal."""
    text = '{"x": ' + '{"a": ' * depth + "1" + "}" * depth + ', "y": ' + "[" * depth + \
        "]" * depth + "}\n"
    path = claude_settings(workspace, text)
    for args in (["link", "claude"], ["link", "claude", "--dry-run"], ["unlink", "claude"]):
        capsys.readouterr()
        assert engram(*args, cwd=workspace) == 1, args
        err = capsys.readouterr().err
        assert "nests deeper than 200 levels" in err, err
    assert engram("upgrade", cwd=workspace) == 0
    assert engram("doctor", cwd=workspace) in (0, 1)
    assert path.read_text() == text


def test_doctor_and_link_say_the_same_of_a_file_nested_too_deep(
        workspace: Path, capsys: pytest.CaptureFixture) -> None:
    """The host reads a 300-level file; engram does not. Doctor called it broken ("engram
    cannot read it") and told the user to fix it and run `engram link`, which then refused
    it again, and link's own fix pointed at `link --dry-run --json`, which refuses too. Both
    now give one reason (the host may read it; engram does not edit it) and one way out."""
    from engram.commands import doctor

    text = '{"x": ' + '{"a": ' * 300 + "1" + "}" * 300 + "}\n"
    path = claude_settings(workspace, text)
    row = next(c for r in doctor.collect(workspace)["hosts"] if r["host"] == "claude"
               for c in r["configured"] if c["scope"] == "project")
    capsys.readouterr()
    assert engram("link", "claude", "--json", cwd=workspace) == 1
    change = json.loads(capsys.readouterr().out)["changes"][0]
    assert change["action"] == "refused"
    assert row["problem"] == change["message"], (row["problem"], change["message"])
    assert row["fix"] == change["fix"]
    assert "nests deeper than 200 levels" in row["problem"] and "host" in row["problem"]
    assert "--dry-run" not in row["fix"] and "200" in row["fix"]
    assert path.read_text() == text


@pytest.mark.parametrize("hooks", ["[]", '"x"', "1", "true"])
def test_non_object_hooks_is_refused(hooks: str, workspace: Path,
                                     capsys: pytest.CaptureFixture) -> None:
    text = f'{{"hooks": {hooks}}}'
    path = claude_settings(workspace, text)
    err = refusal(workspace, capsys, "link", "claude")
    if hooks == "[]":
        check_golden(err, "refused-hooks-not-object.txt")
    assert "hooks is a" in err and path.read_text() == text


def test_symlink_out_of_the_workspace_is_refused(workspace: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    claude_settings(workspace).parent.mkdir(parents=True)
    claude_settings(workspace).symlink_to(outside)
    check_golden(refusal(workspace, capsys, "link", "claude"), "refused-symlink-outside.txt")
    assert outside.read_text() == "{}"


def test_link_to_the_users_global_settings_is_refused(workspace: Path, isolated_dirs: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    """Found: project hooks landed in ~/.claude/settings.json through a committed link."""
    global_file = isolated_dirs / ".claude" / "settings.json"
    global_file.parent.mkdir()
    global_file.write_text('{"model": "opus"}')
    claude_settings(workspace).parent.mkdir(parents=True)
    claude_settings(workspace).symlink_to(global_file)
    assert "leads outside the workspace" in refusal(workspace, capsys, "link", "claude")
    assert global_file.read_text() == '{"model": "opus"}'


def test_symlinked_config_folder_out_of_the_workspace_is_refused(
        workspace: Path, isolated_dirs: Path, capsys: pytest.CaptureFixture) -> None:
    (isolated_dirs / ".codex").mkdir()
    (workspace / ".codex").symlink_to(isolated_dirs / ".codex")
    assert "leads outside the workspace" in refusal(workspace, capsys, "link", "codex")
    assert list((isolated_dirs / ".codex").iterdir()) == []


def test_dangling_link_is_refused_and_its_target_not_created(
        workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Found: a dangling link made link create the target and its folders."""
    target = tmp_path / "nowhere" / "deep" / "settings.json"
    claude_settings(workspace).parent.mkdir(parents=True)
    claude_settings(workspace).symlink_to(target)
    check_golden(refusal(workspace, capsys, "link", "claude"), "refused-dangling-link.txt")
    assert not (tmp_path / "nowhere").exists()
    # even inside the workspace: a link to a missing file is not ours to create
    claude_settings(workspace).unlink()
    claude_settings(workspace).symlink_to(workspace / "missing.json")
    assert "does not exist" in refusal(workspace, capsys, "link", "claude")
    assert not (workspace / "missing.json").exists()


def test_global_link_through_a_symlink_out_of_the_host_folder_is_refused(
        workspace: Path, isolated_dirs: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture) -> None:
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text("{}")
    (isolated_dirs / ".claude").mkdir()
    (isolated_dirs / ".claude" / "settings.json").symlink_to(dotfiles)
    err = refusal(workspace, capsys, "link", "claude", "--global")
    assert "leads outside Claude Code's folder" in err
    assert "install.follow_symlinks true --global" in err
    assert dotfiles.read_text() == "{}"


# -- the rule folder a repository may commit as a symlink ------------------------------------

@pytest.mark.parametrize("linked", [".claude/rules/engram", ".claude/rules", ".claude"])
def test_rule_folder_symlinked_out_of_the_workspace_gets_nothing(
        linked: str, workspace: Path, isolated_dirs: Path,
        capsys: pytest.CaptureFixture) -> None:
    """Found: a repository committing `.claude/rules/engram -> ~/.claude/rules` got its rule
    files written into the user's global rules, by link and by the SessionStart hook."""
    scoped_card(workspace)
    native(workspace)
    victim = isolated_dirs / ".claude" / "rules"
    victim.mkdir(parents=True)
    link = workspace / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    depth = linked.count("/")
    link.symlink_to(victim if depth == 2 else victim.parent if depth == 1 else
                    isolated_dirs / ".claude")
    assert engram("link", "claude", cwd=workspace) == 1
    assert sorted(p.name for p in victim.iterdir()) == []
    from engram import hook

    payload = {"hook_event_name": "SessionStart", "session_id": "s1", "cwd": str(workspace),
               "source": "startup"}
    hook.handle("claude", json.dumps(payload).encode(), defer=False)  # syncs the rules
    assert sorted(p.name for p in victim.iterdir()) == []


def test_doctor_names_a_rule_folder_leading_outside(workspace: Path, isolated_dirs: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    (isolated_dirs / "rules").mkdir()
    folder = workspace / ".claude" / "rules" / "engram"
    folder.parent.mkdir(parents=True)
    folder.symlink_to(isolated_dirs / "rules")
    capsys.readouterr()
    assert engram("doctor", cwd=workspace) == 1
    out = capsys.readouterr().out
    assert "rule folder" in out and "install.follow_symlinks" in out


def test_hook_sync_never_writes_through_a_rule_folder_leading_outside(
        workspace: Path, isolated_dirs: Path) -> None:
    from engram import native_rules
    from engram.card import Card  # noqa: F401 - the sync takes cards

    victim = isolated_dirs / "rules"
    victim.mkdir()
    folder = workspace / ".claude" / "rules" / "engram"
    folder.parent.mkdir(parents=True)
    folder.symlink_to(victim)
    assert not native_rules.stays_inside(folder, workspace)
    assert native_rules.sync_rules(folder, [], root=workspace) == []
    inside = workspace / "real-rules"
    inside.mkdir()
    folder.unlink()
    folder.symlink_to(inside)
    assert native_rules.stays_inside(folder, workspace)


def test_generated_rule_folder_ignores_itself_in_git(workspace: Path) -> None:
    scoped_card(workspace)
    native(workspace)
    assert engram("link", "claude", cwd=workspace) == 0
    lines = (workspace / ".claude/rules/engram/.gitignore").read_text().splitlines()
    assert lines[1:] == ["/.gitignore", "/py-style.md"]


# -- backups and restore ----------------------------------------------------------------------

def test_the_pre_engram_original_outlives_backup_rotation(workspace: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    """Found: the backup of the user's original was rotated out after five changes."""
    path = claude_settings(workspace, USER_SETTINGS)
    scoped_card(workspace)
    assert engram("link", "claude", cwd=workspace) == 0
    for mode in ("hook", "native") * 4:
        assert engram("config", "set", "hooks.path_rules", mode, cwd=workspace) == 0
    path.write_text("{ broken")
    capsys.readouterr()
    assert engram("doctor", cwd=workspace) == 1
    assert "engram restore claude" in capsys.readouterr().out
    assert engram("restore", "claude", "--list", cwd=workspace) == 0
    listing = capsys.readouterr().out
    assert listing.count("original (before engram)") == 1 and listing.count("backup,") == 5
    assert engram("restore", "claude", "--original", cwd=workspace) == 0
    assert path.read_text() == USER_SETTINGS
    # the broken file it replaced was itself backed up, and can be put back
    out = capsys.readouterr().out
    backup_id = out.split("--backup ")[1].split("`")[0]
    assert engram("restore", "claude", "--backup", backup_id, cwd=workspace) == 0
    assert path.read_text() == "{ broken"
    assert engram("restore", "claude", cwd=workspace) == 0  # the latest: before the last change
    assert path.read_text() == USER_SETTINGS


def test_originals_keep_the_first_and_the_newest(workspace: Path) -> None:
    from engram.installer import filedance

    path = claude_settings(workspace, '{"n": 0}')
    for n in range(14):
        path.write_text(json.dumps({"n": n}))  # a new pre-engram state each time
        assert engram("link", "claude", cwd=workspace) == 0
    kept = [json.loads(b.path.read_text())["n"] for b in filedance.backups(path) if b.original]
    assert kept == [0] + list(range(5, 14))


def test_restore_original_of_a_file_engram_created_removes_it(workspace: Path) -> None:
    assert engram("link", "codex", cwd=workspace) == 0
    assert engram("restore", "codex", "--original", cwd=workspace) == 0
    assert not (workspace / ".codex").exists()


def test_restore_errors_are_user_errors(workspace: Path, capsys: pytest.CaptureFixture) -> None:
    assert engram("restore", "claude", cwd=workspace) == 1
    assert "no backup" in capsys.readouterr().err
    assert engram("restore", "claude", "--backup", "nope", cwd=workspace) == 1
    assert engram("restore", "all", cwd=workspace) == 1


# -- the personal file -----------------------------------------------------------------------

def test_link_local_writes_settings_local_and_keeps_it_out_of_git(
        workspace: Path, capsys: pytest.CaptureFixture) -> None:
    assert engram("link", "claude", "--local", cwd=workspace) == 0
    local = workspace / ".claude" / "settings.local.json"
    assert "SessionStart" in json.loads(local.read_text())["hooks"]
    assert not claude_settings(workspace).exists()
    assert "/.claude/settings.local.json" in (workspace / ".git/info/exclude").read_text()
    assert engram("link", "claude", cwd=workspace) == 0
    assert "runs both" in capsys.readouterr().out
    assert engram("unlink", "claude", "--local", cwd=workspace) == 0
    assert not local.exists() and claude_settings(workspace).exists()
    assert engram("link", "codex", "--local", cwd=workspace) == 1
    assert "no personal project file" in capsys.readouterr().err
    assert engram("link", "claude", "--local", "--global", cwd=workspace) == 1


LAUNCHED = "/opt/engram/bin/python3 -I -S /opt/engram/bin/engram-hook"


def _commands(path: Path) -> list[str]:
    document = json.loads(path.read_text())
    return [h["command"] for groups in document["hooks"].values() for g in groups for h in g["hooks"]]


def test_an_engram_upgrade_moves_personal_commands_to_the_launcher_once_and_unlink_removes_both(
        workspace: Path, isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A personal file written by an engram that ran `<bin>/engram hook claude`: after an
    upgrade that brings the launcher, `upgrade` rewrites each command once, a second run
    changes nothing, an entry left in either form is still engram's, and unlink removes them."""
    from engram.installer import command

    settings = isolated_dirs / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(USER_SETTINGS)
    assert engram("link", "claude", "--global", cwd=workspace) == 0
    assert set(_commands(settings)) >= {f"{PINNED} hook claude", "echo hello", "./guard.sh"}
    monkeypatch.delenv("ENGRAM_HOOK_EXECUTABLE")
    monkeypatch.setattr(command, "_launcher_prefix", lambda: LAUNCHED)
    assert engram("upgrade", cwd=workspace) == 0
    upgraded = settings.read_text()
    assert f"{LAUNCHED} claude" in _commands(settings)
    assert f"{PINNED} hook claude" not in upgraded
    check_golden(upgraded, "claude-global-launcher.after.json")
    assert engram("upgrade", cwd=workspace) == 0
    assert engram("link", "claude", "--global", cwd=workspace) == 0
    assert settings.read_text() == upgraded
    # an old-form entry next to a new one (an older engram linked again): still one per event
    document = json.loads(upgraded)
    document["hooks"]["UserPromptSubmit"].append(
        {"hooks": [{"type": "command", "command": f"{PINNED} hook claude", "timeout": 10}]})
    settings.write_text(json.dumps(document, indent=2))
    assert engram("link", "claude", "--global", cwd=workspace) == 0
    assert json.loads(settings.read_text()) == json.loads(upgraded)
    document["hooks"]["UserPromptSubmit"].append(
        {"hooks": [{"type": "command", "command": f"{PINNED} hook claude", "timeout": 10}]})
    settings.write_text(json.dumps(document, indent=2))
    assert engram("unlink", "claude", "--global", cwd=workspace) == 0
    assert json.loads(settings.read_text()) == json.loads(USER_SETTINGS)


def test_cursors_version_goes_with_engram_only_where_engram_knows_it_wrote_it(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cursor's hooks.json carries `"version": 1` beside `hooks`; link adds it when missing.
    Unlink takes it back exactly when engram knows it added it: the file engram made goes
    whole, a file of the user's gets its recorded bytes back. Where engram cannot know (no
    record: a committed file, another machine's link, a state dir removed), the version
    stays: it may be the user's, and Cursor reads a hooks.json with a version and no hooks as
    no hooks. Beside the user's own hooks it always stays: Cursor needs it there."""
    path = workspace / ".cursor" / "hooks.json"
    ours = {"command": f"{PINNED} hook cursor"}
    assert engram("link", "cursor", cwd=workspace) == 0
    assert json.loads(path.read_text())["version"] == 1
    assert engram("unlink", "cursor", cwd=workspace) == 0
    assert not path.exists() and not path.parent.exists()  # made by engram: gone whole
    path.parent.mkdir()
    original = '{"telemetry": false}\n'
    path.write_text(original)
    assert engram("link", "cursor", cwd=workspace) == 0
    assert engram("unlink", "cursor", cwd=workspace) == 0
    assert path.read_text() == original  # recorded: the user's bytes back, no version
    monkeypatch.setenv("ENGRAM_STATE_DIR", str(tmp_path / "another-state"))  # no record
    path.write_text(json.dumps({"version": 1, "hooks": {"sessionStart": [ours]}}))
    assert engram("unlink", "cursor", cwd=workspace) == 0
    assert not path.exists()  # nothing but engram's entries and the version: gone
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"version": 1, "telemetry": False,
                                "hooks": {"sessionStart": [ours]}}))
    assert engram("unlink", "cursor", cwd=workspace) == 0
    assert json.loads(path.read_text()) == {"version": 1, "telemetry": False}
    path.write_text(json.dumps({"version": 1, "hooks": {"sessionStart": [ours],
                                                        "stop": [{"command": "./a.sh"}]}}))
    assert engram("unlink", "cursor", cwd=workspace) == 0
    assert json.loads(path.read_text()) == {"version": 1, "hooks": {"stop": [{"command": "./a.sh"}]}}


STRICT_FILES = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json",
                "cursor": ".cursor/hooks.json", "windsurf": ".windsurf/hooks.json"}


@pytest.mark.parametrize("host", sorted(STRICT_FILES))
@pytest.mark.parametrize("text", ['{\n  // mine\n  "model": "x"\n}\n',
                                  '{\n  "model": "x", /* mine */ "y": 1\n}\n',
                                  '{\n  "model": "x",\n}\n'])
def test_a_strict_json_host_file_with_comments_is_refused_untouched(
        workspace: Path, host: str, text: str, capsys: pytest.CaptureFixture) -> None:
    """Claude Code (2.1.197: the file's hooks never ran; its users report "Invalid or
    malformed JSON" and the whole file discarded) and Codex (0.171.0: "failed to parse hooks
    config ... key must be a string") read their files as strict JSON. engram read every
    host's file as JSONC and linked such a file: its entries sat in a file the host ignores,
    doctor said linked. Cursor's and Windsurf's parsers are not known to take comments:
    strict too (a refusal costs a fix; a link in an ignored file delivers nothing)."""
    from engram.commands import doctor

    path = workspace / STRICT_FILES[host]
    path.parent.mkdir(parents=True)
    path.write_text(text)
    for args in (["link", host], ["link", host, "--dry-run"], ["unlink", host]):
        capsys.readouterr()
        assert engram(*args, cwd=workspace) == 1, args
        err = capsys.readouterr().err
        assert "strict JSON" in err, err
    assert engram("upgrade", cwd=workspace) == 0
    assert path.read_text() == text
    row = next(c for r in doctor.collect(workspace)["hosts"] if r["host"] == host
               for c in r["configured"] if c["scope"] == "project")
    assert row["state"] == "unreadable" and "strict JSON" in row["problem"], row


ALL_JSON_FILES = {**STRICT_FILES, "gemini": ".gemini/settings.json"}


@pytest.mark.parametrize("host", sorted(ALL_JSON_FILES))
@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_a_value_no_json_parser_reads_is_refused_untouched(
        workspace: Path, host: str, literal: str, capsys: pytest.CaptureFixture) -> None:
    """Python's json module reads `NaN`, `Infinity` and `-Infinity`; JSON has no such values,
    and every host's parser rejects the file whole (Claude Code's and Gemini CLI's JSON.parse:
    Gemini CLI 0.61.0 stops with "Error in .../settings.json: Unexpected token 'N'"; Codex's
    serde_json). engram linked a file holding `Infinity` (UPDATED, doctor: linked) and refused
    one holding `NaN` as its own bug ("please report the file's layout")."""
    from engram.commands import doctor

    path = workspace / ALL_JSON_FILES[host]
    path.parent.mkdir(parents=True)
    text = f'{{\n  "model": "x",\n  "limit": {literal}\n}}\n'
    path.write_text(text)
    for args in (["link", host], ["link", host, "--dry-run"], ["unlink", host]):
        capsys.readouterr()
        assert engram(*args, cwd=workspace) == 1, args
        err = capsys.readouterr().err
        assert f"{literal} (line 3)" in err and "engram bug" not in err, err
    assert engram("upgrade", cwd=workspace) == 0
    assert path.read_text() == text
    row = next(c for r in doctor.collect(workspace)["hosts"] if r["host"] == host
               for c in r["configured"] if c["scope"] == "project")
    assert row["state"] == "unreadable" and literal in row["problem"], row


@pytest.mark.parametrize("text, what", [
    ('{\n  // mine\n  "model": "x",\n}\n', "a trailing comma (line 3)"),
    ('{\n  "model": "x",\n  "hooks": {"Stop": [],}\n}\n', "a trailing comma (line 3)"),
    ('\ufeff{\n  // mine\n  "model": "x"\n}\n', "a byte order mark (line 1)"),
], ids=["object", "inner", "bom"])
def test_a_gemini_file_gemini_cannot_read_is_refused_untouched(
        workspace: Path, text: str, what: str, capsys: pytest.CaptureFixture) -> None:
    """Gemini CLI 0.61.0 reads its settings with strip-json-comments (3.x: comments only),
    then JSON.parse: a trailing comma or a byte order mark stops it at start ("Error in
    .../settings.json: Expected double-quoted property name ... Please fix the configuration
    file(s) and try again"). engram took its files for JSONC with trailing commas and a BOM
    and linked them (doctor: linked)."""
    from engram.commands import doctor

    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(text.encode())
    for args in (["link", "gemini"], ["link", "gemini", "--dry-run"], ["unlink", "gemini"]):
        capsys.readouterr()
        assert engram(*args, cwd=workspace) == 1, args
        err = capsys.readouterr().err
        assert what in err and "Gemini CLI" in err, err
    assert engram("upgrade", cwd=workspace) == 0
    assert path.read_bytes() == text.encode()
    row = next(c for r in doctor.collect(workspace)["hosts"] if r["host"] == "gemini"
               for c in r["configured"] if c["scope"] == "project")
    assert row["state"] == "unreadable" and what in row["problem"], row


@pytest.mark.parametrize("text, what", [
    ('\ufeff{\n  "hooks": {}\n}\n', "a byte order mark (line 1)"),
    ('{\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./a.sh",\n'
     '    "statusMessage": "\\ud83d"}]}]}\n}\n', "half a surrogate pair (line 3)"),
    ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./a.sh",'
     ' "statusMessage": "\\udc00 done"}]}]}}\n', "half a surrogate pair (line 1)"),
], ids=["bom", "high-half", "low-half"])
def test_a_codex_file_codex_cannot_read_is_refused_untouched(
        workspace: Path, text: str, what: str, capsys: pytest.CaptureFixture) -> None:
    """Codex 0.171.0 reads hooks.json with serde_json and runs none of its hooks when it
    starts with a byte order mark or escapes half of a surrogate pair (`"\\ud83d"` alone;
    JSON.parse takes both): engram linked such a file (doctor: linked). A whole pair
    (`"\\ud83d\\ude00"`) is read, and linked."""
    from engram.commands import doctor

    path = workspace / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_bytes(text.encode())
    for args in (["link", "codex"], ["link", "codex", "--dry-run"], ["unlink", "codex"]):
        capsys.readouterr()
        assert engram(*args, cwd=workspace) == 1, args
        err = capsys.readouterr().err
        assert what in err and "Codex CLI" in err, err
    assert path.read_bytes() == text.encode()
    row = next(c for r in doctor.collect(workspace)["hosts"] if r["host"] == "codex"
               for c in r["configured"] if c["scope"] == "project")
    assert row["state"] == "unreadable" and what in row["problem"], row
    paired = text.replace("\\ud83d", "\\ud83d\\ude00").replace("\\udc00", "\\ud83d\\ude00")
    path.write_text(paired.removeprefix("\ufeff"))
    assert engram("link", "codex", cwd=workspace) == 0


_USERS_HOOK = '{"type": "command", "command": "./audit.sh"%s}'
_PROMPT = '"UserPromptSubmit": [{"hooks": [' + _USERS_HOOK + ']}]'


@pytest.mark.parametrize("text, named", [
    ('{\n  "x": 1,\n  "hooks": {' + _PROMPT % "" + '}\n}\n', '"x" is a key'),
    ('{\n  "$schema": "https://example.com/hooks.json",\n  "hooks": {' + _PROMPT % "" + '}\n}\n',
     '"$schema" is a key'),
    ('{"hooks": {' + _PROMPT % "" + '}, "model": "o4", "x": null}\n', '"model", "x" are keys'),
    ('{"$schema": "s"}\n', '"$schema" is a key'),
    ('{"description": 1, "hooks": {}}\n', '"description" is not a string'),
    ('{"hooks": {"Stop": [{"matcher": 1, "hooks": []}]}}\n', "hooks.Stop[0].matcher is not a"),
    ('{"hooks": {' + _PROMPT.replace('"command"', '"Command"', 1) % "" + '}}\n',
     'hooks.UserPromptSubmit[0].hooks[0].type is "Command"'),
    ('{"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}}\n',
     "hooks.Stop[0].hooks[0].command is missing"),
    ('{"hooks": {' + _PROMPT % ', "timeout": "10"' + '}}\n', 'timeout is "10", not a whole'),
    ('{"hooks": {' + _PROMPT % ', "timeout": 10.0' + '}}\n', "timeout is 10.0, not a whole"),
    ('{"hooks": {' + _PROMPT % ', "timeout": -1' + '}}\n', "timeout is -1, not a whole"),
    ('{"hooks": {' + _PROMPT % ', "async": null' + '}}\n', "async is null, not true or false"),
    ('{"hooks": {"Stop": [{"hooks": [{"type": "mcp_tool", "server": "s"}]}]}}\n',
     "hooks.Stop[0].hooks[0].tool is missing"),
], ids=["x", "schema", "two-after-hooks", "schema-alone", "description", "matcher", "type",
        "no-command", "timeout-string", "timeout-float", "timeout-negative", "async-null",
        "mcp-no-tool"])
def test_a_codex_file_codex_ignores_is_refused_untouched(
        workspace: Path, text: str, named: str, capsys: pytest.CaptureFixture) -> None:
    """Codex 0.171.0 reads hooks.json into fixed types and runs none of its hooks (a warning
    at start: "unknown field `x`, expected `description` or `hooks`") when the top level holds
    any other key, or a value does not fit its type (each case seen with the real client:
    e2e `test_engram_links_exactly_the_hooks_files_codex_reads`). engram linked such a file
    and said linked; the user's own hooks there were already dead. Now link, dry run and
    upgrade refuse it naming the key, the file byte for byte as it was (no key of the user's
    is deleted), and doctor names it as a file Codex ignores; unlink still takes engram's
    entries out of one an older engram linked."""
    from engram.commands import doctor

    path = workspace / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_bytes(text.encode())
    for args in (["link", "codex"], ["link", "codex", "--dry-run"]):
        capsys.readouterr()
        assert engram(*args, cwd=workspace) == 1, args
        err = capsys.readouterr().err
        assert named in err and "Codex CLI then runs none of the file's hooks" in err, err
    assert engram("upgrade", cwd=workspace) == 0  # nothing of engram's in it: nothing to upgrade
    assert path.read_bytes() == text.encode()
    row = next(c for r in doctor.collect(workspace)["hosts"] if r["host"] == "codex"
               for c in r["configured"] if c["scope"] == "project")
    assert row["state"] == "unreadable" and named in row["problem"], row
    assert "runs none of the file's hooks" in row["problem"] and row["fix"], row


def test_unlink_takes_engrams_entries_out_of_a_file_codex_ignores(
        workspace: Path, capsys: pytest.CaptureFixture) -> None:
    """A file an older engram linked while it held a `$schema` (Codex ran none of it): upgrade
    refuses it, and unlink takes engram's entries out and leaves the user's key and hook as
    they were."""
    path = workspace / ".codex" / "hooks.json"
    path.parent.mkdir()
    mine = '{\n  "$schema": "https://example.com/hooks.json",\n  "hooks": {' + _PROMPT % "" + '}\n}\n'
    path.write_text(mine.replace('"$schema": "https://example.com/hooks.json",\n  ', ""))
    assert engram("link", "codex", cwd=workspace) == 0
    linked = json.loads(path.read_text())
    path.write_text(json.dumps({"$schema": "https://example.com/hooks.json", **linked}, indent=2))
    before = path.read_bytes()
    capsys.readouterr()
    assert engram("upgrade", cwd=workspace) == 1
    assert '"$schema" is a key' in capsys.readouterr().err
    assert path.read_bytes() == before
    assert engram("unlink", "codex", cwd=workspace) == 0
    assert json.loads(path.read_text()) == json.loads(mine)


def test_a_codex_file_of_the_types_codex_reads_is_linked(workspace: Path) -> None:
    """What Codex 0.171.0 reads (observed): a `description` (a string or null), an event it
    does not know, other keys of a group or a handler whatever they hold, a `statusMessage`
    of null, a timeout of 0, the fields of a prompt handler (not checked). (An event Codex
    does not know holding no list, which Codex skips, engram still refuses.)"""
    path = workspace / ".codex" / "hooks.json"
    path.parent.mkdir()
    text = ('{"description": null, "hooks": {"Later": [{"x": 1}], "Stop": [{"note": [1], "matcher": null,'
            ' "hooks": [{"type": "command", "command": "./a.sh", "statusMessage": null,'
            ' "timeout": 0, "async": false, "env": 1}, {"type": "prompt", "timeout": "x"}]}]}}\n')
    path.write_text(text)
    assert engram("link", "codex", cwd=workspace) == 0
    assert engram("unlink", "codex", cwd=workspace) == 0
    assert path.read_text() == text


_CLAUDE_HOOK = '"hooks": {"UserPromptSubmit": [{%s"hooks": [{"type": "command", "command": "./audit.sh"%s}]}]%s}'


def _claude(top: str = "", group: str = "", handler: str = "", other: str = "") -> str:
    return "{" + top + _CLAUDE_HOOK % (group, handler, other) + "}\n"


@pytest.mark.parametrize("text, named", [
    (_claude('"model": 1, '), '"model" is 1, not a string'),
    (_claude('"permissions": {"allow": "Bash"}, '), "permissions.allow is not a list"),
    (_claude(group='"matcher": null, '), "hooks.UserPromptSubmit[0].matcher is null"),
    (_claude(group='"matcher": 1, '), "hooks.UserPromptSubmit[0].matcher is 1"),
    (_claude(handler=', "timeout": 0'), "timeout is 0, not a number of seconds above 0"),
    (_claude(handler=', "timeout": "10"'), 'timeout is "10", not a number'),
    (_claude(handler=', "timeout": null'), "timeout is null, not a number"),
    (_claude(handler=', "async": "yes"'), 'async is "yes", not true or false'),
    (_claude(handler=', "statusMessage": 1'), "statusMessage is 1, not a string"),
    (_claude(other=', "Stop": [{"hooks": [{"type": "Command", "command": "true"}]}]'),
     'hooks.Stop[0].hooks[0].type is "Command"'),
    (_claude(other=', "Stop": [{"hooks": [{"type": "command"}]}]'),
     "hooks.Stop[0].hooks[0].command is missing"),
    (_claude(other=', "Stop": [{"matcher": ""}]'), 'hooks.Stop[0] has no "hooks" list'),
    (_claude('"env": "x", '), '"env" is "x", not an object'),
    (_claude('"cleanupPeriodDays": "x", '), '"cleanupPeriodDays" is "x", not a whole number'),
    (_claude('"includeCoAuthoredBy": "yes", '), '"includeCoAuthoredBy" is "yes", not true or'),
    (_claude('"apiKeyHelper": 1, '), '"apiKeyHelper" is 1, not a string'),
    (_claude('"statusLine": 1, '), '"statusLine" is 1, not an object'),
    (_claude('"enabledPlugins": 1, '), '"enabledPlugins" is 1, not an object'),
    (_claude('"outputStyle": 1, '), '"outputStyle" is 1, not a string'),
    (_claude('"$schema": 1, '), '"$schema" is 1, not a string'),
    (_claude('"sandbox": 1, '), '"sandbox" is 1, not an object'),
    (_claude('"disableAllHooks": "yes", '), '"disableAllHooks" is "yes", not true or false'),
    (_claude('"permissions": [], '), '"permissions" is a list, not an object'),
    (_claude('"permissions": {"defaultMode": "bogus"}, '), 'permissions.defaultMode is "bogus"'),
    (_claude('"permissions": {"additionalDirectories": "x"}, '),
     'permissions.additionalDirectories is "x", not a list of strings'),
    (_claude(handler=', "if": 1'), "hooks.UserPromptSubmit[0].hooks[0].if is 1, not a string"),
    (_claude(handler=', "shell": "fish"'), 'shell is "fish", not one of "bash", "powershell"'),
    (_claude(handler=', "once": "yes"'), 'once is "yes", not true or false'),
    (_claude('"cleanupPeriodDays": 0, '), '"cleanupPeriodDays" is 0, not a whole number above 0'),
    (_claude('"verbose": null, '), '"verbose" is null, not true or false'),
    (_claude('"feedbackSurveyRate": 2, '), '"feedbackSurveyRate" is 2, not a number from 0 to 1'),
    (_claude('"tui": "bogus", '), '"tui" is "bogus", not one of "default", "fullscreen"'),
    (_claude('"fallbackModel": [1], '), '"fallbackModel" is a list holding something else, not a list of strings'),
    (_claude('"statusLine": {"type": "command"}, '), '"statusLine" is not {"type": "command"'),
], ids=["model", "allow", "matcher-null", "matcher-number", "timeout-0", "timeout-text",
        "timeout-null", "async-text", "status-number", "type", "no-command", "no-hooks",
        "env", "cleanup-days", "co-authored", "key-helper", "status-line", "plugins",
        "output-style", "schema", "sandbox", "disable-all-text", "permissions-list",
        "default-mode", "directories", "handler-if", "handler-shell", "handler-once",
        "cleanup-days-0", "verbose-null", "survey-rate", "tui", "fallback-models",
        "status-line-command"])
def test_a_claude_settings_file_claude_ignores_is_refused_untouched(
        workspace: Path, text: str, named: str, capsys: pytest.CaptureFixture) -> None:
    """Claude Code checks its settings' types and runs none of the file's hooks when one does
    not fit (seen with the real clients, 2.1.197 and 2.1.332; a handler type it does not know,
    a command handler with no command and a group with no hooks list by 2.1.197 alone: e2e
    `test_engram_links_exactly_the_settings_claude_reads`). engram linked such a file and said
    linked. Now link, dry run and the personal file's link refuse it naming the key, the file
    byte for byte as it was, and doctor names it. Found again for settings beyond `model` and
    `permissions` (the second block, each seen with both clients: Claude Code reads every
    setting it knows into a type)."""
    from engram.commands import doctor

    for name, flag in (("settings.json", []), ("settings.local.json", ["--local"])):
        path = workspace / ".claude" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(text.encode())
        for args in (["link", "claude", *flag], ["link", "claude", *flag, "--dry-run"]):
            capsys.readouterr()
            assert engram(*args, cwd=workspace) == 1, args
            err = capsys.readouterr().err
            assert named in err and "Claude Code then runs none of the file's hooks" in err, err
        assert path.read_bytes() == text.encode()
    row = next(c for r in doctor.collect(workspace)["hosts"] if r["host"] == "claude"
               for c in r["configured"] if c["scope"] == "project")
    assert row["state"] == "unreadable" and named in row["problem"], row


def test_a_claude_settings_file_of_the_types_claude_reads_is_linked(workspace: Path) -> None:
    """What Claude Code reads (seen): keys it does not know (anything in them), a `$schema`,
    a timeout of 10.5, other keys of a group and a handler, a prompt handler, `env` values
    that are no strings, an empty `model`, a `forceLoginMethod` it does not know (read with a
    fallback), `allowManagedHooksOnly` in a project's file, `disableAllHooks` false."""
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir()
    text = _claude('"x": [1e400], "$schema": "s", "model": "", "permissions": {"allow": [], '
                   '"defaultMode": "plan"}, "env": {"A": 1}, "forceLoginMethod": "x", '
                   '"allowManagedHooksOnly": true, "disableAllHooks": false, '
                   '"cleanupPeriodDays": 10.0, ',
                   group='"x": 1, "description": 1, ', handler=', "timeout": 10.5, "env": 1',
                   other=', "Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]')
    path.write_text(text)
    assert engram("link", "claude", cwd=workspace) == 0
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert path.read_text() == text


def test_a_claude_settings_file_that_disables_all_hooks_is_refused_untouched(
        workspace: Path, capsys: pytest.CaptureFixture) -> None:
    """`"disableAllHooks": true`: Claude Code 2.1.197 and 2.1.332 read the file and run no
    hook at all (seen: the user's own hook beside it did not run). engram linked it and said
    linked. Now link and its dry run refuse it saying why, the file byte for byte as it was,
    doctor names it, and unlink still takes engram's entries out of it."""
    from engram.commands import doctor

    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir()
    plain = _claude()
    path.write_text(plain)
    assert engram("link", "claude", cwd=workspace) == 0
    linked = path.read_text()
    text = linked.replace("{", '{"disableAllHooks": true, ', 1)
    path.write_text(text)
    for args in (["link", "claude"], ["link", "claude", "--dry-run"]):
        capsys.readouterr()
        assert engram(*args, cwd=workspace) == 1, args
        err = capsys.readouterr().err
        assert '"disableAllHooks" is true: Claude Code runs no hook while it is set' in err, err
        assert path.read_text() == text
    row = next(c for r in doctor.collect(workspace)["hosts"] if r["host"] == "claude"
               for c in r["configured"] if c["scope"] == "project")
    assert "disableAllHooks" in row["problem"], row
    assert engram("unlink", "claude", cwd=workspace) == 0
    assert path.read_text() == plain.replace("{", '{"disableAllHooks": true, ', 1)


@pytest.mark.parametrize("setting, named", [
    ('"hooksConfig": {"enabled": false}',
     "hooksConfig.enabled is false: Gemini CLI runs no hook while it is set"),
    ('"hooksConfig": {"disabled": ["mine", "engram"]}',
     'hooksConfig.disabled names "engram": Gemini CLI skips every hook of that name'),
], ids=["hooks-off", "engram-disabled"])
def test_a_gemini_settings_file_that_turns_engrams_hooks_off_is_refused_untouched(
        workspace: Path, setting: str, named: str, capsys: pytest.CaptureFixture) -> None:
    """Gemini CLI 0.61.0 runs no hook with `hooksConfig.enabled` false, and none named in
    `hooksConfig.disabled` (`/hooks disable engram` writes it; engram's entries are named
    engram): seen with the real client, the user's own hook beside it did not run. engram
    linked such a file and said linked. Now link and its dry run refuse it saying why, the
    file byte for byte as it was, doctor names it, and unlink still takes engram's entries
    out of it."""
    from engram.commands import doctor

    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir()
    plain = '{"ui": {"hideTips": true}}\n'
    path.write_text(plain)
    assert engram("link", "gemini", cwd=workspace) == 0
    text = path.read_text().replace("{", "{" + setting + ", ", 1)
    path.write_text(text)
    for args in (["link", "gemini"], ["link", "gemini", "--dry-run"]):
        capsys.readouterr()
        assert engram(*args, cwd=workspace) == 1, args
        assert named in capsys.readouterr().err
        assert path.read_text() == text
    row = next(c for r in doctor.collect(workspace)["hosts"] if r["host"] == "gemini"
               for c in r["configured"] if c["scope"] == "project")
    assert named in row["problem"], row
    assert engram("unlink", "gemini", cwd=workspace) == 0
    assert path.read_text() == plain.replace("{", "{" + setting + ", ", 1)


def test_a_gemini_settings_file_that_keeps_engrams_hooks_on_is_linked(workspace: Path) -> None:
    """What Gemini CLI 0.61.0 still runs engram's hooks with (seen): `hooksConfig.enabled`
    true or not a boolean, another hook's name disabled, a known setting of another type."""
    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir()
    text = ('{"hooksConfig": {"enabled": "no", "disabled": ["mine"]}, "general": 1, '
            '"model": 1}\n')
    path.write_text(text)
    assert engram("link", "gemini", cwd=workspace) == 0
    assert engram("unlink", "gemini", cwd=workspace) == 0
    assert path.read_text() == text


@pytest.mark.parametrize("project, home, off", [
    ("[features]\nhooks = false\n", None, "project"),
    (None, "[features]\nhooks = false\n", "home"),
    ('model = "x"\n', "[features]\nhooks = false\n", "home"),
    ("[features]\nhooks = true\n", "[features]\nhooks = false\n", None),
    (None, "[features]\nhooks = true\n", None),
], ids=["project-off", "home-off", "home-off-project-silent", "project-on", "home-on"])
def test_a_codex_layer_whose_config_turns_hooks_off_is_refused(
        workspace: Path, isolated_dirs: Path, capsys: pytest.CaptureFixture, project: str | None,
        home: str | None, off: str | None) -> None:
    """Codex 0.171.0 runs none of a layer's hooks while `[features] hooks = false` is set in
    the config.toml it reads there (seen with the real client: the user's own hook in the
    project's hooks.json did not run), the nearer layer deciding: engram linked
    `.codex/hooks.json` and said linked. Now link refuses naming the file that turns them off,
    writes nothing, and doctor names it; a layer that turns them on again is linked."""
    import os

    from engram.commands import doctor

    codex_home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    for folder, text in ((workspace / ".codex", project), (codex_home, home)):
        if text is not None:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "config.toml").write_text(text)
    hooks = workspace / ".codex" / "hooks.json"
    capsys.readouterr()
    assert engram("link", "codex", cwd=workspace) == (1 if off else 0)
    err = capsys.readouterr().err
    if not off:
        assert hooks.exists()
        return
    named = workspace / ".codex" / "config.toml" if off == "project" else codex_home / "config.toml"
    assert f"{named} sets `[features] hooks = false`" in err, err
    assert not hooks.exists()
    hooks.parent.mkdir(exist_ok=True)
    hooks.write_text('{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", '
                     '"command": "engram hook codex"}]}]}}\n')
    row = next(c for r in doctor.collect(workspace)["hosts"] if r["host"] == "codex"
               for c in r["configured"] if c["scope"] == "project")
    assert f"{named} sets `[features] hooks = false`" in row["problem"], row
    assert engram("unlink", "codex", cwd=workspace) == 0


def test_gemini_reads_comments_and_keeps_them(workspace: Path) -> None:
    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir()
    text = '{\n  // mine\n  "model": "x" /* and this */\n}\n'
    path.write_text(text)
    assert engram("link", "gemini", cwd=workspace) == 0
    assert "// mine" in path.read_text()
    assert engram("unlink", "gemini", cwd=workspace) == 0
    assert path.read_text() == text


def _linked_then_unlinked_elsewhere(workspace: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, text: str) -> str:
    """The Gemini settings `text` linked, then unlinked with no record of the file (another
    state dir: a teammate's link, another machine): the text unlink leaves."""
    path = workspace / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(text)
    assert engram("link", "gemini", cwd=workspace) == 0
    monkeypatch.setenv("ENGRAM_STATE_DIR", str(tmp_path / "another-machine"))
    assert engram("unlink", "gemini", cwd=workspace) == 0
    return path.read_text()


@pytest.mark.parametrize("text, kept", [
    ('{"model": "x", /* mine */ "hooks": {}}', '{"model": "x"/* mine */}'),
    ('{"hooks": {} /* mine */, "model": "x"}', '{/* mine */"model": "x"}'),
    ('{"model": "x", "hooks": {"SessionStart": [] /* later */}}', '{"model": "x"/* later */}'),
    ('{"model": "x", // mine\n "hooks": {}}', '{"model": "x"// mine\n}'),
])
def test_unlink_keeps_a_comment_on_a_line_whose_code_stays(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
        kept: str) -> None:
    """A one-line Gemini settings file (every comment follows code on its line) linked
    elsewhere (no record of the file before engram: a teammate's link, another machine):
    unlink refused it whole for a `/* */` next to the member it removes. The comment now
    stays where it is and the member goes; the value is what the user had, less engram's
    entries (and the `hooks` they emptied)."""
    after = _linked_then_unlinked_elsewhere(workspace, tmp_path, monkeypatch, text)
    assert jsonc.comments(after) == jsonc.comments(text)
    assert jsonc.parse(after) == {"model": "x"}
    assert after == kept


SAME = "the file as it was"


@pytest.mark.parametrize("text, kept", [
    # found by a soak of test_installer_userfiles.py: a one-line file, each comment before a key
    ('{/* é */ "hooks": {/* é */ "SessionStart": [], /* é */ "BeforeAgent": []}}', SAME),
    ('{"model": "x", "hooks": {"SessionStart": [], /*x*/ "BeforeAgent": []}}', SAME),
    ('{"hooks": {"SessionStart": [] /* é */, "BeforeAgent": []}}',
     '{"hooks": {"SessionStart": []/* é */}}'),
    ('{\n  "hooks": {"SessionStart": [] /* a */, "BeforeAgent": [] /* b */}\n}\n', None),
    ('{\n  "hooks": {\n    "SessionStart": [], // é\n    "BeforeAgent": []\n  }\n}\n', SAME),
    ('{\n  "hooks": {\n    "SessionStart": [ // é\n    ],\n    "BeforeAgent": []\n  }\n}\n', None),
    ('{\n  "hooks": {\n    "SessionStart": [] /* é */\n  }\n}\n', None),
    ('{\n  "hooks": { // mine\n    "SessionStart": []\n  }\n}\n', SAME),
], ids=["soak", "model", "after-a-list", "two-after", "line-comment", "inside-a-list",
        "after-the-last", "after-the-brace"])
def test_unlink_with_no_record_keeps_a_comment_next_to_an_event_list_it_empties(
        workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
        kept: str | None) -> None:
    """Found by a soak of the generated user files: a Gemini file whose comments sit on the
    lines of the user's empty event lists, linked, then unlinked with no record of the file
    (a teammate's link, the state dir removed). Unlink emptied engram's event lists and
    deleted them, and their lines with the comments on them, so it refused the whole file
    ("a comment ... that this change would delete"). An event list a comment sits next to now
    stays, empty: every comment kept, byte for byte and in order, no entry of engram's left,
    every other setting as it was (`kept`: the whole text, where it is pinned)."""
    from installer_helpers import host_reads

    after = _linked_then_unlinked_elsewhere(workspace, tmp_path, monkeypatch, text)
    value = host_reads("gemini", after)
    assert jsonc.comments(after) == jsonc.comments(text)
    assert isinstance(value, dict)
    assert {k: v for k, v in value.items() if k != "hooks"} == \
        {k: v for k, v in jsonc.parse(text).items() if k != "hooks"}
    assert all(groups == [] for groups in value.get("hooks", {}).values())
    if kept is not None:
        assert after == (text if kept is SAME else kept)
