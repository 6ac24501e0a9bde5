"""What `link`, `unlink` and `upgrade` do for one host in one scope, and how it is reported."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Final

from engram import config, host_registry, native_rules, workspace
from engram.errors import EngramError
from engram.fileio import atomic_write_bytes
from engram.host_adapter import Host
from engram.installer.filedance import (
    Place,
    check_place,
    created_for,
    give,
    make_parents,
    missing_parents,
    new_owner,
    note_created,
    original,
    prune,
    prune_made,
    remember_made,
    target_of,
)
from engram.installer.merge import ShapeError
from engram.installer.plan import (
    Change,
    Options,
    apply,
    config_path,
    follow_symlinks,
    installed,
    ours_for,
    ours_in_place,
    place_for,
    same_file,
    scope_name,
    shares_global,
)

_VERBS = {"created": "CREATED", "updated": "UPDATED", "deleted": "DELETED",
          "unchanged": "UNCHANGED", "absent": "ABSENT", "skipped": "SKIPPED",
          "refused": "REFUSED"}
# Every file a host may hold engram's entries in, as (global_scope, local): the shared project
# file, the personal project file, the global file.
SCOPES: Final = ((False, False), (False, True), (True, False))


def resolve(host_arg: str) -> list[Host]:
    """The hosts a `HOST|all` argument names (every known host for `all`)."""
    if host_arg.strip().lower() == "all":
        return list(host_registry.registry())
    try:
        return [host_registry.get(host_arg)]
    except host_registry.UnknownHost:
        names = ", ".join(h.name for h in host_registry.registry())
        raise EngramError(f"unknown host {host_arg!r}",
                          f"hosts: {names}, all (aliases: cascade, antigravity)") from None


def check_scopes(global_scope: bool, local: bool) -> None:
    if global_scope and local:
        raise EngramError("--global and --local name different files",
                          "use one: --local is this project, for you only; --global is every "
                          "project, for you only")


def require_local(targets: list[Host], local: bool) -> None:
    """--local for one host that has no personal project file is a user error, not a skip."""
    if local and len(targets) == 1 and targets[0].supported and \
            not targets[0].install.get("local_file"):
        host = targets[0]
        raise EngramError(f"{host.display_name} reads no personal project file",
                          f"use `engram link {host.name} --global` for hooks only you run")


def project_root(cwd: Path) -> Path:
    return workspace.find_root(cwd) or cwd


def path_rules(cwd: Path) -> str:
    ws = workspace.load(cwd)
    return str(ws.settings["hooks.path_rules"]) if ws else \
        str(config.SETTINGS_BY_KEY["hooks.path_rules"].default)


def command_setting(cwd: Path) -> str:
    ws = workspace.load(cwd)
    if ws is not None:
        return str(ws.settings["hooks.command"])
    from engram import paths

    return str(config.effective(config.read_file(paths.user_config_file()), {})["hooks.command"])


def skipped(host: Host, scope: str, message: str = "") -> Change:
    return Change(host=host.name, scope=scope, path=Path(), action="skipped",
                  message=message or host.reason)


def _rules_dir(host: Host, root: Path) -> Path | None:
    folder = host.install.get("native_rules")
    return root / folder if folder else None


def _rules_refused(host: Host, folder: Path, root: Path) -> Change | None:
    try:
        check_place(folder, Place(root, follow_symlinks(), f"the workspace {root}"))
    except ShapeError as exc:
        return Change(host=host.name, scope="project", path=folder, action="refused",
                      message=exc.problem, fix=exc.fix, kind="rules")
    return None


def sync_native_rules(host: Host, cwd: Path, dry_run: bool) -> Change | None:
    """Claude with hooks.path_rules=native, project scope: write the rule files now, so they
    exist before the first session (the SessionStart hook keeps them current afterwards)."""
    root = project_root(cwd)
    folder = _rules_dir(host, root)
    ws = workspace.load(cwd)
    if folder is None or ws is None:
        return None
    try:
        from engram.index import load_cards
    except ImportError:
        return Change(host=host.name, scope="project", path=folder, action="skipped",
                      message="card store unavailable; the rules follow at the next session start",
                      kind="rules")
    cards, _problems = load_cards(ws)
    # Claude's own rule files (and an imported CLAUDE.md still in place) get no copy.
    patterns = tuple(host.runtime.get("loads_natively") or ())
    native = native_rules.loaded_natively(patterns, root)
    count = sum(1 for c in cards if c.applies_to and native_rules.is_safe_id(c.id)
                and not (native and native(c)))
    if not count and not folder.exists():
        return None
    refused = _rules_refused(host, folder, root)
    if refused:
        return refused
    had = folder.exists()
    missing = missing_parents(folder / "x")
    created = [d for d in missing if d != str(folder)]
    owner = new_owner(folder / "x")
    changed = native_rules.sync_rules(folder, cards, dry_run=dry_run, root=root,
                                      follow=follow_symlinks(), loads_natively=patterns)
    if not dry_run:
        made = [d for d in missing if os.path.isdir(d)]
        give([*map(Path, made), *(p for p in (*changed, folder / native_rules.IGNORE_FILE)
                                  if p.exists())], owner)
        remember_made(made)
    if created and not dry_run:
        note_created(folder, created)
    action = "unchanged" if not changed else ("updated" if had else "created")
    return Change(host=host.name, scope="project", path=folder, action=action, entries=count,
                  kind="rules", dry_run=dry_run, events=tuple(f"~{p.stem}" for p in changed))


def remove_native_rules(host: Host, cwd: Path, dry_run: bool) -> Change | None:
    root = project_root(cwd)
    folder = _rules_dir(host, root)
    if folder is None or not os.path.lexists(folder):
        return None
    refused = _rules_refused(host, folder, root)
    if refused:
        return refused
    created = created_for(folder)
    removed = native_rules.remove_rules(folder, dry_run=dry_run)
    gone = not folder.exists() or dry_run
    if gone and not dry_run:
        prune(created)
        prune_made(folder.parent)
    return Change(host=host.name, scope="project", path=folder,
                  action="deleted" if removed and gone else ("updated" if removed else "unchanged"),
                  entries=len(removed), dry_run=dry_run, kind="rules")


def target(host: Host, cwd: Path, global_scope: bool, local: bool) -> tuple[Path, Place] | None:
    root = project_root(cwd)
    if local and not host.install.get("local_file"):
        return None
    path = config_path(host, global_scope, root, local)
    return path, place_for(host, global_scope, root, follow_symlinks())


def _no_local(host: Host) -> Change:
    return skipped(host, "local", f"{host.display_name} reads no personal project file; use "
                   f"`engram link {host.name} --global` for hooks only you run")


def link_one(host: Host, cwd: Path, global_scope: bool, session_end: bool,
             dry_run: bool, local: bool = False, force: bool = False) -> list[Change]:
    scope = scope_name(global_scope, local)
    if not host.supported or not host.install:
        return [skipped(host, scope)]
    where = target(host, cwd, global_scope, local)
    if where is None:
        return [_no_local(host)]
    path, place = where
    rules = path_rules(cwd)
    # An opt-in SessionEnd stays on when link runs again without --session-end.
    session_end = session_end or any(f.event == "SessionEnd" for f in installed(host, path) or ())
    options = Options(session_end=session_end, path_rules=rules, global_scope=global_scope,
                      local=local, command=command_setting(cwd), force=force)
    changes = [apply(host, path, scope, ours_in_place(host, options, path, project_root(cwd)),
                     remove=False, dry_run=dry_run, place=place)]
    if local and changes[0].action == "created" and not dry_run:
        keep_out_of_git(project_root(cwd), path)
    if changes[0].action != "refused" and not global_scope and _rules_dir(host, cwd):
        extra = (sync_native_rules(host, cwd, dry_run) if rules == "native"
                 else remove_native_rules(host, cwd, dry_run))
        if extra:
            changes.append(extra)
    return changes


def unlink_one(host: Host, cwd: Path, global_scope: bool, dry_run: bool,
               local: bool = False, force: bool = False) -> list[Change]:
    scope = scope_name(global_scope, local)
    if not host.supported or not host.install:
        return [skipped(host, scope)]
    where = target(host, cwd, global_scope, local)
    if where is None:
        return [_no_local(host)]
    path, place = where
    changes = [apply(host, path, scope, ours_for(host, Options(global_scope=global_scope,
                                                               local=local, force=force)),
                     remove=True, dry_run=dry_run, place=place)]
    if not global_scope and not _linked_elsewhere(host, cwd, local):
        extra = remove_native_rules(host, cwd, dry_run)
        if extra:
            changes.append(extra)
            kept = original(path)
            if not dry_run and kept and kept.absent and not os.path.lexists(path):
                prune(kept.created_dirs())  # the rule folder was inside them
            if not dry_run and not os.path.lexists(path):
                prune_made(path.parent)
    if local and not dry_run and not os.path.lexists(path):
        take_back_from_git_exclude(project_root(cwd), path)
    return changes


def _git_dir(root: Path) -> Path | None:
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:  # a worktree or submodule: ".git" is a file naming the real folder
        line = _small_text(dot_git).strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not line.startswith("gitdir:"):
        return None
    git_dir = (root / line.split(":", 1)[1].strip()).resolve()
    try:
        common = _small_text(git_dir / "commondir").strip()
        return (git_dir / common).resolve()
    except (OSError, UnicodeDecodeError):
        return git_dir


# Git's own small files and the exclude and ignore lists: a FIFO, a socket or a link to
# /dev/zero in their place must neither hang `link --local` nor fill its memory.
_GIT_FILE_MAX: Final = 16 * 1024 * 1024


def _small_text(path: Path) -> str:
    from engram.fileio import read_bounded

    return read_bounded(path, _GIT_FILE_MAX).decode("utf-8")


def keep_out_of_git(root: Path, path: Path) -> None:
    """A personal file must never be committed by accident: list it in the repository's own
    exclude file (.git/info/exclude, never committed), unless a .gitignore line already names
    it. Claude Code does the same when it creates settings.local.json itself."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return
    rel = "/" + path.relative_to(root).as_posix()
    names = {rel, rel.lstrip("/"), path.name}
    exclude = git_dir / "info" / "exclude"
    for listed in (root / ".gitignore", exclude):
        try:
            if names & {line.strip() for line in _small_text(listed).splitlines()}:
                return
        except (OSError, UnicodeDecodeError):
            continue
    try:
        had = os.path.lexists(exclude)
        text = _small_text(exclude) if had else ""
        owner = new_owner(exclude)
        make_parents(exclude, owner)
        sep = "" if not text or text.endswith("\n") else "\n"
        _rewrite(exclude, f"{text}{sep}{_EXCLUDE_NOTE}{rel}\n", owner if not had else None)
        _note_exclude(exclude, rel, {"sep": sep, "created": not had})
    except (OSError, UnicodeDecodeError):
        pass  # the file still works; `git status` will show it


_EXCLUDE_NOTE: Final = "# engram link --local: a personal file\n"


def _rewrite(exclude: Path, text: str, new_owner: tuple[int, int] | None) -> None:
    """Replace the exclude file whole or not at all (a write that fails midway, disk full,
    must not leave the user's lines cut), keeping its mode, owner and attributes, through a
    link to where it points."""
    target = target_of(exclude)
    try:
        info = target.stat()
        owner: tuple[int, int] | None = (info.st_uid, info.st_gid)
    except FileNotFoundError:
        owner = new_owner
    atomic_write_bytes(target, text.encode("utf-8"), owner=owner, keep_attributes=True)


def _exclude_record() -> Path:
    from engram.installer.filedance import backup_root

    return backup_root() / "git-exclude.json"


def _exclude_notes() -> dict[str, dict[str, object]]:
    try:
        value = json.loads(_exclude_record().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in value.items() if isinstance(v, dict)} \
        if isinstance(value, dict) else {}


def _note_exclude(exclude: Path, rel: str, note: dict[str, object] | None) -> None:
    """Remember (None: forget) the lines keep_out_of_git added to `exclude` for `rel`. One
    record serves every repository: two links at once in two of them each keep their note."""
    from engram import paths
    from engram.fileio import LockTimeout, exclusive_lock

    try:
        with exclusive_lock(paths.state_dir() / "locks" / "git-exclude.lock", timeout=15.0):
            notes = _exclude_notes()
            key = f"{exclude}\n{rel}"
            if note is None:
                notes.pop(key, None)
            else:
                notes[key] = note
            atomic_write_bytes(_exclude_record(), json.dumps(notes, indent=0).encode(),
                               mode=0o600)
    except LockTimeout:
        pass  # unrecorded, the lines stay at unlink: a line too many in the exclude file


def take_back_from_git_exclude(root: Path, path: Path) -> None:
    """The personal file is gone: remove the two lines keep_out_of_git added for it, exactly
    those (and the line break it put before them), when engram added them; every other byte of
    the exclude file stays. A line the user wrote is never engram's: nothing was added then."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return
    exclude = git_dir / "info" / "exclude"
    rel = "/" + path.relative_to(root).as_posix()
    note = _exclude_notes().get(f"{exclude}\n{rel}")
    if note is None:
        return
    lines = f"{_EXCLUDE_NOTE}{rel}\n"
    try:
        text = _small_text(exclude)
        sep = str(note.get("sep", ""))
        kept: str | None = None  # None: the user changed those lines, they are theirs now
        if text.endswith(sep + lines):
            kept = text[:len(text) - len(sep + lines)]
        elif text.startswith(lines) or "\n" + lines in text:
            at = 0 if text.startswith(lines) else text.rindex("\n" + lines) + 1
            kept = text[:at] + text[at + len(lines):]
        if kept == "" and note.get("created") is True:
            exclude.unlink()
        elif kept is not None:
            _rewrite(exclude, kept, None)
        _note_exclude(exclude, rel, None)
    except (OSError, UnicodeDecodeError):
        pass  # a line too many in the exclude file hides nothing that exists


def _linked_elsewhere(host: Host, cwd: Path, local: bool) -> bool:
    """Does the other project file (shared or personal) still hold our entries? Then the
    rule folder still serves it."""
    other = target(host, cwd, False, not local)
    return bool(other and installed(host, other[0]))


def upgrade_one(host: Host, cwd: Path, global_scope: bool, dry_run: bool,
                local: bool = False, force: bool = False) -> list[Change]:
    """Re-link a host where engram entries already are; SessionEnd kept, never added."""
    if not host.supported or not host.install:
        return []
    where = target(host, cwd, global_scope, local)
    if where is None:
        return []
    path, place = where
    found = installed(host, path)
    if not found or (global_scope and shares_global(host, project_root(cwd))):
        return []  # the project's upgrade did that file (a workspace at `~`)
    scope = scope_name(global_scope, local)
    options = Options(session_end=any(f.event == "SessionEnd" for f in found),
                      path_rules=path_rules(cwd), global_scope=global_scope, local=local,
                      command=command_setting(cwd), force=force)
    changes = [apply(host, path, scope, ours_in_place(host, options, path, project_root(cwd)),
                     remove=False, dry_run=dry_run, place=place)]
    if not global_scope and _rules_dir(host, cwd) and changes[0].action != "refused":
        # Rule files left by a native link would make Claude load a card a second time
        # beside the hook's delivery once the hook trigger is in place.
        extra = (sync_native_rules(host, cwd, dry_run) if options.path_rules == "native"
                 else remove_native_rules(host, cwd, dry_run))
        if extra:
            changes.append(extra)
    return changes


def linked_scopes(host: Host, cwd: Path) -> list[tuple[bool, bool]]:
    """(global_scope, local) pairs whose file holds engram's entries for this host; a file
    two scopes name (the project's is the global one: a workspace at `~`) counts once."""
    scopes: list[tuple[bool, bool]] = []
    files: list[Path] = []
    for global_scope, local in SCOPES:
        where = target(host, cwd, global_scope, local)
        if where and not any(same_file(where[0], f) for f in files) and installed(host, where[0]):
            scopes.append((global_scope, local))
            files.append(where[0])
    return scopes


def display(path: Path, cwd: Path) -> str:
    """A path as the user would type it: relative to cwd, else from ~, else absolute."""
    for base, prefix in ((cwd, ""), (Path(os.path.expanduser("~")), "~/")):
        try:
            return prefix + path.relative_to(base).as_posix()
        except ValueError:
            continue
    return str(path)


def _count(change: Change) -> str:
    noun = ("rule", "rules") if change.kind == "rules" else ("entry", "entries")
    # A forced replace or removal of a generated file the user had edited says so.
    forced = change.message if change.action in ("updated", "deleted") else ""
    if change.action == "deleted":
        return forced or ("only engram's files were in it" if change.kind == "rules"
                          else "only engram's entries were in it")
    removed = sum(1 for e in change.events if e.startswith("-"))
    counted = f"removed {removed} {noun[removed != 1]}" if removed and not change.entries \
        else f"{change.entries} {noun[change.entries != 1]}"
    return f"{counted}; {forced}" if forced else counted


def change_line(change: Change, cwd: Path, quiet_absent: bool) -> str | None:
    if change.action == "skipped" and change.path == Path():
        return f"SKIPPED {change.host}: {change.message}"
    where = display(change.path, cwd)
    if change.action == "refused" or (change.action == "absent" and quiet_absent):
        return None
    if change.action == "absent":
        return f"ABSENT {where} (no engram entries to remove)"
    if change.action == "skipped":
        return f"SKIPPED {where}: {change.message}"
    if change.dry_run and change.action != "unchanged":
        return f"WOULD {_VERBS[change.action][:-1]} {where} ({' '.join(change.events) or _count(change)})"
    return f"{_VERBS[change.action]} {where} ({_count(change)})"
