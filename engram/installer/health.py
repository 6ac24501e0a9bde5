"""What `doctor` checks about one host: what its config holds (configured) and what the hook
runtime saw firing (observed), kept apart because a perfect config can still never fire."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from engram.host_adapter import Host
from engram.installer import command, jsonc, schema
from engram.installer.filedance import FOLLOW_SETTING, backups, read_config_bytes, target_of
from engram.installer.merge import FORMATS, Found, plugin_edited, same_matcher
from engram.installer.plan import (
    Options,
    bare_ours,
    beside,
    config_path,
    desired_entries,
    follow_symlinks,
    hooks_off,
    hooks_off_reason,
    load,
    not_strict,
    ours_for,
    same_file,
    scope_flag,
    scope_name,
    shares_global,
    too_deep,
)

# A timeout this large in a seconds field was almost certainly meant as milliseconds (the
# predecessor's 10000 = 2.8 hours); this small in a milliseconds field, as seconds.
MAX_SECONDS: Final = 600
MIN_MILLISECONDS: Final = 1000
# What a program started from a desktop launcher typically gets (launchd on macOS, a bare
# systemd user session): no ~/.local/bin, no Homebrew, no pyenv.
LAUNCHER_PATH: Final = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


@dataclass(frozen=True)
class Configured:
    host: str
    scope: str
    path: Path
    exists: bool
    state: str  # linked | partial | stale | not linked | unreadable
    present: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    command_resolvable: bool | None = None
    timeout_unit_ok: bool | None = None
    problem: str = ""
    fix: str = ""
    # The command of each of our entries, in file order (not in the JSON): doctor's command
    # warnings read them from here instead of parsing the file a second time.
    commands: tuple[str, ...] = ()
    # Events an entry of the user's own form runs engram's hook for (this file, or one the
    # host reads beside it), and events that run engram's hook more than once.
    own: tuple[str, ...] = ()
    twice: tuple[str, ...] = ()
    own_in: tuple[str, ...] = ()  # the files those entries of the user's are in

    @property
    def broken(self) -> bool:
        return bool(self.problem)

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "path": str(self.path), "exists": self.exists,
                "state": self.state, "present": list(self.present), "stale": list(self.stale),
                "missing": list(self.missing), "command_resolvable": self.command_resolvable,
                "timeout_unit_ok": self.timeout_unit_ok, "own_entries": list(self.own),
                "twice": list(self.twice), "broken": self.broken,
                "problem": self.problem, "fix": self.fix}


def timeout_ok(handler: dict[str, Any], unit: str) -> bool:
    value = handler.get("timeout")
    if value is None:
        return True
    if unit == "none" or isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return value <= MAX_SECONDS if unit == "seconds" else value >= MIN_MILLISECONDS


def _link_command(host: Host, global_scope: bool, local: bool = False) -> str:
    return f"engram link {host.name}{scope_flag(global_scope, local)}"


def _unreadable_fix(host: Host, path: Path, global_scope: bool, local: bool) -> str:
    scope = scope_flag(global_scope, local)
    if backups(path):
        return (f"fix {path} by hand, or put back the version before engram's last change: "
                f"`engram restore {host.name}{scope}` (`--list` shows every saved version, "
                f"`--original` the one before engram)")
    return f"fix {path}, then run `{_link_command(host, global_scope, local)}`"


def inspect(host: Host, project_root: Path, global_scope: bool, path_rules: str,
            command_setting: str = "auto", local: bool = False) -> Configured:
    row = _inspect(host, project_root, global_scope, path_rules, command_setting, local)
    if row.state in ("not linked", "unreadable"):
        return row
    off = hooks_off(host, row.path, global_scope, project_root)
    if off is None:
        return row
    problem, fix = hooks_off_reason(host, off)  # the same words as link's refusal
    return Configured(**{**row.__dict__, "problem": "; ".join(p for p in (problem, row.problem) if p),
                         "fix": fix})


def _inspect(host: Host, project_root: Path, global_scope: bool, path_rules: str,
             command_setting: str, local: bool) -> Configured:
    scope = scope_name(global_scope, local)
    path = config_path(host, global_scope, project_root, local)
    make = functools.partial(Configured, host=host.name, scope=scope, path=path)
    fmt = FORMATS[host.install["format"]]
    try:
        text = read_config_bytes(target_of(path)).decode("utf-8")
    except FileNotFoundError:  # a file the host reads beside it may still run the hook
        beside_found = beside(host, path)
        return make(exists=False, state="not linked", own=tuple(beside_found),
                    own_in=tuple(dict.fromkeys(str(f) for f, _c in beside_found.values())))
    except (OSError, UnicodeDecodeError) as exc:
        return make(exists=True, state="unreadable", problem=f"cannot read: {exc}",
                          fix=_unreadable_fix(host, path, global_scope, local))
    bare = bare_ours(host, matchers=True)
    try:
        document = load(host, text)
        if hasattr(fmt, "validate"):
            fmt.validate(document, bare)
        schema.check(host.install, document, host.display_name)
        found = fmt.found(document, bare)
    except jsonc.TooDeep as exc:  # valid to the host, maybe; engram does not read it
        problem, fix = too_deep(exc, host, scope)
        return make(exists=True, state="unreadable", problem=problem, fix=fix)
    except jsonc.NotStrict as exc:
        problem, fix = not_strict(exc, host)
        return make(exists=True, state="unreadable", problem=problem, fix=fix)
    except schema.Ignored as exc:  # the same words as link's refusal
        return make(exists=True, state="unreadable", problem=f"{exc.key} {exc.problem}", fix=exc.fix)
    except Exception as exc:  # JsoncError, ShapeError: the host cannot read it either
        return make(exists=True, state="unreadable", problem=f"does not parse: {exc}",
                          fix=_unreadable_fix(host, path, global_scope, local))
    own: dict[str, tuple[Path, str]] = {}
    if hasattr(fmt, "own_entries"):
        own = {**beside(host, path),
               **{event: (path, command) for event, command in fmt.own_entries(document, bare).items()}}
    make = functools.partial(make, own_in=tuple(dict.fromkeys(str(f) for f, _c in own.values())))
    if not found:
        return make(exists=True, state="not linked", own=tuple(own))
    events = [f.event for f in found]
    twice = tuple(dict.fromkeys(e for e in events if e in own or events.count(e) > 1))
    make = functools.partial(make, commands=tuple(str(f.handler.get("command")) for f in found),
                             own=tuple(own), twice=twice)
    options = Options(session_end=any(f.event == "SessionEnd" for f in found),
                      path_rules=path_rules, global_scope=global_scope, local=local,
                      command=command_setting)
    hook = command.hook_command(host.name, options.command_mode)
    if host.install["format"] == "plugin":
        ours = ours_for(host, options)
        if plugin_edited(document, ours):
            flag = scope_flag(global_scope, local)
            return make(exists=True, state="edited", problem="holds your own edits (not the file "
                        "any engram release generates), so `engram upgrade` leaves it as it is",
                        fix="move what you added into a plugin file of your own, then run "
                        f"`engram link {host.name}{flag} --force` (the edited file is backed up)")
        current = fmt.merge(document, ours) == document
        state = "linked" if current else "stale"
        resolvable = command.is_resolvable(hook)
        return _finish(host, global_scope, make(
            exists=True, state=state, present=("plugin",) if current else (),
            stale=() if current else ("plugin",), command_resolvable=resolvable,
            timeout_unit_ok=True), hook)
    wanted = {e.event: e for e in desired_entries(host, options, hook) if e.event not in own}
    present, stale = [], []
    seen: set[str] = set()
    for item in found:
        want = wanted.get(item.event)
        if want and item.event not in seen and _matches(item, want.as_dict(), want.matcher):
            present.append(item.event)
            seen.add(item.event)
        else:
            stale.append(item.event)
    missing = tuple(e for e in wanted if e not in {f.event for f in found})
    unit = str(host.install.get("timeout_unit", "none"))
    state = "linked" if not stale and not missing else ("stale" if stale else "partial")
    commands = {str(f.handler.get("command")) for f in found}
    return _finish(host, global_scope, make(
        exists=True, state=state, present=tuple(present), stale=tuple(stale), missing=missing,
        command_resolvable=all(command.is_resolvable(c) for c in commands),
        timeout_unit_ok=all(timeout_ok(f.handler, unit) for f in found)),
        min(commands))


def _matches(item: Found, want: dict[str, Any], matcher: str | None) -> bool:
    return same_matcher(item.matcher, matcher) and all(item.handler.get(k) == v for k, v in want.items()) \
        and not ("timeout" in item.handler and "timeout" not in want)


def _finish(host: Host, global_scope: bool, row: Configured, hook: str) -> Configured:
    problems = []
    fix = "engram upgrade"
    if row.command_resolvable is False:
        if command.is_portable(hook):
            problems.append("`engram` is not on this user's PATH, so the hooks do nothing "
                            "(they exit quietly)")
            fix = f"install engram where your PATH finds it ({_install_hint()})"
        else:
            problems.append("the hook command no longer resolves")
    if row.timeout_unit_ok is False:
        problems.append(f"a timeout is not in {host.install.get('timeout_unit')}")
    if row.twice:
        problems.append("engram's hook runs twice per event for " + ", ".join(row.twice)
                        + " (two entries run it: engram's and your own, or two of engram's)")
    if row.stale:
        problems.append("stale entries: " + ", ".join(row.stale))
    if row.missing:
        problems.append("missing entries: " + ", ".join(row.missing))
    if not problems:
        return row
    if fix != "engram upgrade" and (row.stale or row.missing):
        fix += ", then run `engram upgrade`"
    if row.twice and row.command_resolvable is not False:
        # link (like upgrade) drops engram's entry beside the user's own and keeps one of two
        fix = f"{_link_command(host, global_scope, row.scope == 'local')} (keeps one entry per event)"
    # upgrade rewrites commands, timeouts and matchers and adds missing events, in every scope
    return Configured(**{**row.__dict__, "problem": "; ".join(problems), "fix": fix})


def _install_hint() -> str:
    script = command.console_script()
    where = f", or add {script.parent} to PATH" if script else ""
    return f"`pipx install engram` or `uv tool install engram`{where}"


def command_warnings(commands: list[str]) -> list[dict[str, str]]:
    """What slows or silences a portable command (`engram` from PATH) for this user: a shim on
    PATH (every hook call pays for re-resolving the interpreter), or an `engram` that a host
    started from a desktop launcher, with its short PATH, would not find."""
    portable = [c for c in commands if command.is_portable(c)]
    if not portable:
        return []
    found = command.locate(portable[0])
    if found is None:
        return []  # reported as a problem by the host rows
    local = _local_links()
    warnings = []
    if command.is_shim(found):
        warnings.append({
            "warning": f"`engram` on PATH is a shim ({found}): every hook call re-resolves the "
                       "interpreter first (tens of milliseconds per prompt)",
            "fix": "install engram with `pipx install engram` or `uv tool install engram` (a "
                   "direct script), or write this installation's path into your personal files "
                   "only: " + " / ".join([*local, "`engram link HOST --global`"])})
    if command.locate(portable[0], LAUNCHER_PATH) is None:
        folder = str(Path(found).parent)
        warnings.append({
            "warning": f"`engram` is found in {folder}, which a host started from a desktop "
                       "launcher (not a terminal) may not have on its PATH; such a host would run "
                       "the hooks without effect",
            "fix": f"add {folder} to the PATH your desktop session starts with (~/.profile on "
                   "Linux; `sudo launchctl config user path ...` on macOS), or link that host "
                   "for yourself with its absolute path: `engram link HOST --global`"
                   + (f" (or {' / '.join(local)})" if local else "")})
    return warnings


def layered_links(rows: list[Configured]) -> list[dict[str, str]]:
    """A host linked in more than one of its files (project, personal, global): the host
    reads them all, so engram's hook runs once per file on every event (the second call
    sends no body again, but costs a process and lists what the first sent)."""
    warnings = []
    for host in dict.fromkeys(row.host for row in rows):
        linked: list[Configured] = []
        for row in rows:
            if row.host == host and row.state not in ("not linked", "unreadable") and \
                    not any(same_file(row.path, other.path) for other in linked):
                linked.append(row)  # a file two scopes name (a workspace at `~`) is one
        if len(linked) > 1:
            warnings.append({
                "warning": f"{host} runs engram's hook once per file that links it, on every "
                           f"event: {', '.join(f'{row.scope} ({row.path})' for row in linked)}",
                "fix": "keep one: " + " / ".join(
                    f"`engram unlink {host}{scope_flag(row.scope == 'global', row.scope == 'local')}`"
                    for row in linked)})
    return warnings + twice_across_files(rows)


def host_rows(host: Host, project_root: Path, path_rules: str,
              command_setting: str = "auto") -> list[Configured]:
    """Each file of the host's (project, personal where it has one, global), inspected."""
    scopes = [(False, False)] + ([(False, True)] if host.install.get("local_file") else []) \
        + [(True, False)]
    rows = [inspect(host, project_root, g, path_rules, command_setting, local)
            for g, local in scopes]
    if shares_global(host, project_root):
        # One file under two names (a workspace at `~`): engram's entries in either scope's
        # form are current there (`ours_in_place`), so the file is judged by the form it holds.
        project, personal = rows[0], rows[-1]
        if personal.state == "linked" and project.state != "linked":
            rows[0] = replace(personal, scope=project.scope, path=project.path)
        elif project.state == "linked" and personal.state != "linked":
            rows[-1] = replace(project, scope=personal.scope, path=personal.path)
    return rows


def twice_across_files(rows: list[Configured]) -> list[dict[str, str]]:
    """An event engram's entries in one file and the user's own engram entry in another file
    of the host (their global settings, Codex's config.toml) both run the hook for: the host
    reads every file and runs it twice. (Within one file, `twice` says so.)"""
    warnings = []
    for host in dict.fromkeys(row.host for row in rows):
        mine = [row for row in rows if row.host == host]
        for linked in (row for row in mine if row.present):
            for other in (row for row in mine if row is not linked and row.own):
                events = [e for e in linked.present if e in other.own]
                if events:
                    flag = scope_flag(linked.scope == "global", linked.scope == "local")
                    warnings.append({
                        "warning": f"{host} runs engram's hook twice for {', '.join(events)}: "
                                   f"through your own entry in {', '.join(other.own_in)} "
                                   f"({other.scope}) and engram's in {linked.path} "
                                   f"({linked.scope}); the host reads both",
                        "fix": f"remove your own entry, or `engram unlink {host}{flag}`"})
    return warnings


def _local_links() -> list[str]:
    """`engram link NAME --local` for each host with a personal project file (install.local_file)."""
    from engram import host_registry

    return [f"`{_link_command(host, False, True)}`" for host in host_registry.registry()
            if host.supported and host.install.get("local_file")]


def rule_folder_problems(project_root: Path) -> list[dict[str, str]]:
    """A generated rule folder (Claude's .claude/rules/engram) that a symlink leads out of the
    workspace: link refuses it and the SessionStart hook writes nothing there, so say why."""
    from engram import host_registry, native_rules

    if follow_symlinks():  # the user let links lead anywhere: nothing to refuse
        return []
    found = []
    for host in host_registry.registry():
        folder_name = host.install.get("native_rules") if host.install else None
        if not folder_name:
            continue
        folder = project_root / str(folder_name)
        if not os.path.lexists(folder) or native_rules.stays_inside(folder, project_root):
            continue
        found.append({"host": host.name, "scope": "project", "path": str(folder),
                      "problem": "the generated rule folder (or a folder above it) is a symlink "
                                 "leading outside the workspace, so engram writes no rule "
                                 "files there",
                      "fix": "replace the link with a real folder (or remove it), or, if you "
                             f"meant it, `engram config set {FOLLOW_SETTING} true --global`"})
    return found


def observed(host: Host, workspace_key: str | None = None) -> dict[str, dict[str, Any]]:
    """What the hook runtime recorded for this host (in that workspace when a key is given);
    {} when never observed or unreadable."""
    from engram import firing_log as observed_log

    data = observed_log.read(workspace_key)
    events: dict[str, dict[str, Any]] = {}
    for name in host.names:
        entry = data.get(name)
        if isinstance(entry, dict):
            events.update({k: v for k, v in entry.items() if isinstance(v, dict)})
    return events


def _last_failure(log_path: Path) -> tuple[str, str] | None:
    """(ISO time, reason) of the last `failed open` line of the hook log, if any."""
    try:
        with open(log_path, encoding="utf-8", errors="replace") as handle:
            lines = handle.readlines()[-200:]
    except OSError:
        return None
    for line in reversed(lines):
        if "failed open:" in line:
            stamp, _, rest = line.strip().partition(" ")
            return stamp, rest.split("failed open:", 1)[1].strip()
    return None


def state_problems() -> list[dict[str, str]]:
    """What stops the hook runtime from using the state dir (a file where a folder belongs, a
    folder it cannot write), and a last hook call that failed open more recently than any
    call answered. Each: {"path", "problem", "fix"}. Probes by writing, as the hook would:
    file modes say nothing on a read-only mount or to root."""
    import os

    from engram import firing_log as observed_log
    from engram import paths

    state = paths.state_dir()
    redirect = "or point ENGRAM_STATE_DIR at a writable folder"
    found: list[dict[str, str]] = []
    for folder in (state, state / "delivery", state / "index", state / "logs"):
        if folder.exists() and not folder.is_dir():
            found.append({"path": str(folder), "problem": "a file is where engram's state folder "
                          "belongs, so every hook call fails open and delivers nothing",
                          "fix": f"move {folder} away, {redirect}"})
    if not found:
        probe = state / f".doctor-probe-{os.getpid()}"
        try:
            state.mkdir(parents=True, exist_ok=True)
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            found.append({"path": str(state), "problem": f"the state dir cannot be written "
                          f"({exc.strerror or exc}), so every hook call fails open and delivers "
                          "nothing", "fix": f"make {state} writable, {redirect}"})
    found += _foreign_state(state)
    failure = _last_failure(state / "logs" / "hook.log")
    if failure is not None:
        answered = [info.get("last_fired") or "" for events in observed_log.read().values()
                    for info in events.values() if isinstance(info, dict)]
        if not answered or failure[0] > max(answered):
            found.append({"path": str(state / "logs" / "hook.log"),
                          "problem": f"the last hook call failed open ({failure[1]}) at "
                                     f"{failure[0]}, after the last one that answered",
                          "fix": "run the host again; if it keeps failing, see the log and run "
                                 "`engram doctor` after fixing what it names"})
    return found


def _foreign_state(state: Path) -> list[dict[str, str]]:
    """State files the user whose hooks use them does not own (a `sudo engram ...` left them
    root's): the hook cannot take those locks or replace those caches, and fails open."""
    from engram.installer.filedance import state_entries, state_owner

    if not hasattr(os, "geteuid"):
        return []
    owner = state_owner() if os.geteuid() == 0 else (os.geteuid(), os.getegid())
    if owner is None:
        return []
    foreign = [path for path, uid, _gid in state_entries() if uid != owner[0]]
    if not foreign:
        return []
    return [{"path": foreign[0],
             "problem": f"{len(foreign)} files or folders in the state dir belong to another "
                        f"user (first: {foreign[0]}; a `sudo engram ...` leaves them root's), so "
                        "the hooks cannot write them and fail open",
             "fix": f"sudo chown -R {owner[0]}:{owner[1]} {state}"}]
