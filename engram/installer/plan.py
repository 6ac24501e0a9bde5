"""From a host definition and the user's options to the entries engram wants, per config file;
and the link / unlink / upgrade of one host in one scope, as a Change record."""

from __future__ import annotations

import functools
import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from engram.host_adapter import Host
from engram.installer import command, jsonc, schema
from engram.installer.filedance import FOLLOW_SETTING, Place, change_file, original, read_config_bytes, target_of
from engram.installer.jsonc import MAX_DEPTH, DuplicateKey, JsoncError, TooDeep
from engram.installer.merge import (
    FORMATS,
    PLUGIN_PLACEHOLDER,
    Entry,
    Found,
    Ours,
    ShapeError,
    covers,
    plugin_edited,
)
from engram.resources import data_dir

_UNIT_FACTOR: Final = {"seconds": 1, "milliseconds": 1000}


@dataclass(frozen=True)
class Options:
    session_end: bool = False
    path_rules: str = "hook"  # the workspace's hooks.path_rules
    global_scope: bool = False
    local: bool = False  # the host's personal project file (Claude's settings.local.json)
    command: str = "auto"  # hooks.command
    force: bool = False  # replace or remove a generated file holding the user's edits

    @property
    def command_mode(self) -> str:
        return command.mode_for(self.command, personal=self.global_scope or self.local)


@dataclass(frozen=True)
class Change:
    """What happened (or would happen) to one host's config file."""

    host: str
    scope: str  # "project" | "local" | "global"
    path: Path
    action: str  # created | updated | deleted | unchanged | absent | skipped | refused
    entries: int = 0  # engram entries in the file afterwards
    events: tuple[str, ...] = ()  # "+Event", "-Event", "~Event": what changed, by event
    message: str = ""
    fix: str = ""
    backup: Path | None = None
    dry_run: bool = False
    kind: str = "config"  # "config" (a host config file) | "rules" (Claude's rule folder)

    def to_json(self) -> dict[str, Any]:
        return {"host": self.host, "scope": self.scope, "path": str(self.path),
                "action": self.action, "entries": self.entries, "events": list(self.events),
                "message": self.message, "fix": self.fix, "dry_run": self.dry_run,
                "backup": str(self.backup) if self.backup else None, "kind": self.kind}


def config_path(host: Host, global_scope: bool, project_root: Path, local: bool = False) -> Path:
    if local:
        raw = str(host.install.get("local_file") or "")
        return project_root / raw
    raw = str(host.install["global_file" if global_scope else "project_file"])
    if global_scope:
        default_file = Path(os.path.expanduser(raw))
        default_folder = Path(os.path.expanduser(str(host.install["global_folder"])))
        if default_file.is_relative_to(default_folder):
            # Where the host reads it: under its folder, wherever the user moved that.
            return host_folder(host) / default_file.relative_to(default_folder)
        return default_file
    return project_root / raw


def scope_name(global_scope: bool, local: bool) -> str:
    return "global" if global_scope else "local" if local else "project"


def scope_flag(global_scope: bool, local: bool) -> str:
    """The option that names a scope on engram's command line ("" for the project file)."""
    return " --global" if global_scope else " --local" if local else ""


def host_folder(host: Host) -> Path:
    """The host's own folder: what a --global link may write in (`paths.host_folder`)."""
    from engram import paths

    return Path(paths.host_folder(host.install))


def place_for(host: Host, global_scope: bool, project_root: Path, follow: bool) -> Place:
    if global_scope:
        return Place(host_folder(host), follow, f"{host.display_name}'s folder {host_folder(host)}")
    return Place(project_root, follow, f"the workspace {project_root}")


def follow_symlinks() -> bool:
    """The user's own opt-in (user scope only: a repository cannot grant it to itself)."""
    from engram import config, paths

    try:
        user = config.read_file(paths.user_config_file())
    except Exception:  # noqa: BLE001 - an unreadable user config grants nothing
        return False
    return config.effective(user, {}).get(FOLLOW_SETTING) is True


def _wanted(event: dict[str, Any], options: Options) -> bool:
    when = event.get("when")
    hook_trigger = options.path_rules == "hook" or options.global_scope
    return {None: True, "session_end": options.session_end,
            "path_rules_native": not hook_trigger, "path_rules_hook": hook_trigger}[when]


def desired_entries(host: Host, options: Options, hook_command: str) -> tuple[Entry, ...]:
    install = host.install
    unit = install.get("timeout_unit", "none")
    entries = []
    for event in install.get("events") or ():
        if not _wanted(event, options):
            continue
        handler: dict[str, Any] = dict(install.get("entry") or {})
        handler["command"] = hook_command
        seconds = event.get("timeout_seconds", install.get("timeout_seconds"))
        if unit in _UNIT_FACTOR and seconds is not None:
            handler["timeout"] = int(seconds * _UNIT_FACTOR[unit])
        if "async" in event:
            handler["async"] = bool(event["async"])
        entries.append(Entry(event["event"], tuple(handler.items()), event.get("matcher")))
    return tuple(entries)


def plugin_text(host: Host, hook_command: str) -> str:
    template = str(host.install.get("template") or "")
    if not template:
        return ""
    text = (data_dir("hosts") / template).read_text(encoding="utf-8")
    return text.replace(PLUGIN_PLACEHOLDER, json.dumps(hook_command))


def ours_for(host: Host, options: Options, path: Path | None = None) -> Ours:
    """engram's side of the config file at `path` (the events another file of its layer
    already runs engram for, `covered`, get no entry)."""
    hook = command.hook_command(host.name, options.command_mode)
    return replace(bare_ours(host, matchers=True), entries=desired_entries(host, options, hook),
                   wrapper=tuple((host.install.get("wrapper") or {}).items()),
                   plugin_text=plugin_text(host, hook), force=options.force,
                   covered=tuple(beside(host, path)) if path is not None else ())


def same_file(a: Path, b: Path) -> bool:
    """Do two paths name one file (links followed, whether or not it exists yet)?"""
    return os.path.realpath(a) == os.path.realpath(b)


def shares_global(host: Host, project_root: Path, local: bool = False) -> bool:
    """Is the host's project file its global file too? A workspace that is the home folder (a
    dotfiles repository at `~`) has `~/.claude/settings.json` as both, or a project folder
    linked to the host's own folder."""
    if local or not host.install.get("global_file") or not host.install.get("project_file"):
        return False
    return same_file(config_path(host, False, project_root), config_path(host, True, project_root))


def is_current(host: Host, path: Path, ours: Ours) -> bool:
    """Does the file at `path` hold `ours` exactly, so that a link would change nothing?"""
    fmt = FORMATS[host.install["format"]]
    try:
        document = load(host, read_config_bytes(target_of(path)).decode("utf-8"))
        return bool(fmt.found(document, ours)) and fmt.merge(document, ours) == document
    except (OSError, UnicodeDecodeError, ShapeError, JsoncError):
        return False


def ours_in_place(host: Host, options: Options, path: Path, project_root: Path) -> Ours:
    """engram's side of the file at `path` for a link or an upgrade. Where the project file
    is the global file, engram's entries current in the other scope's form (the portable
    command for the project, this installation's launcher for `--global`) count as current:
    `link` then `link --global` is one file linked once, not a rewrite each time."""
    ours = ours_for(host, options, path)
    if shares_global(host, project_root, options.local) and not is_current(host, path, ours):
        other = ours_for(host, replace(options, global_scope=not options.global_scope), path)
        if is_current(host, path, other):
            return other
    return ours


def bare_ours(host: Host, matchers: bool = False) -> Ours:
    """What finding engram's entries (and, with `matchers`, the user's own) in a host's file
    needs: its names, its container and the settings in it that are not events."""
    return Ours(names=host.names, container=str(host.install.get("container", "hooks")),
                matchers=event_matchers(host) if matchers else (),
                settings=tuple(str(k) for k in host.install.get("container_settings") or ()))


def event_matchers(host: Host) -> tuple[tuple[str, str], ...]:
    """(event, the matcher engram's entry has there) for each event that has one."""
    return tuple((str(e["event"]), str(e["matcher"])) for e in host.install.get("events") or ()
                 if e.get("matcher") is not None)


def _toml_reader() -> Any:
    """A reader of TOML 1.1, which Codex reads (an inline table over several lines, with a
    trailing comma; `\\e`): tomllib from Python 3.15, before it tomli (the library tomllib is
    made from, the same interface; 1.1 since 2.4), a dependency there alone. tomllib before
    3.15 reads 1.0 only: a user's engram entry in a file it cannot read would go unseen, and
    link would add engram's beside it (the hook run twice). Imported only where a host reads
    TOML beside its hooks file (Codex), never by the hook."""
    if sys.version_info >= (3, 15):
        import tomllib

        return tomllib
    import tomli

    return tomli


def beside(host: Host, path: Path) -> dict[str, tuple[Path, str]]:
    """The events a file the host reads hooks from beside `path` (`install.hooks_also_in`:
    Codex's config.toml next to its hooks.json, one layer) already runs engram's hook for,
    in any form: event -> (that file, the command). engram never writes there, so every such
    entry is the user's own."""
    found: dict[str, tuple[Path, str]] = {}
    tomllib = _toml_reader()
    ours = bare_ours(host)
    matchers = dict(event_matchers(host))
    for name in host.install.get("hooks_also_in") or ():
        other = path.parent / str(name)
        try:
            data = tomllib.loads(read_config_bytes(target_of(other)).decode("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
            # absent, unreadable, not TOML, or nested past the stack of Python's TOML reader
            # (it recurses per array: 5,000 `[` do it): the host reports the bad ones itself
            continue
        hooks = data.get(ours.container)
        for event in (ours.events(hooks) if isinstance(hooks, dict) else ()):
            groups = hooks[event]
            for group in groups if isinstance(groups, list) else ():
                handlers = group.get("hooks") if isinstance(group, dict) else None
                if isinstance(group, dict) and event in matchers and \
                        not covers(group.get("matcher"), matchers[event]):
                    continue  # selects fewer tools than engram's entry: that one is needed
                for handler in handlers if isinstance(handlers, list) else ():
                    if isinstance(handler, dict) and command.runs_engram_hook(
                            handler.get("command"), host.names, handler.get("args")):
                        found.setdefault(event, (other, str(handler.get("command"))))
    return found


def hooks_off(host: Host, path: Path, global_scope: bool, project_root: Path) -> Path | None:
    """The file that turns off the hooks of the file at `path`, or None: a config file the
    host reads beside it (`install.hooks_also_in`: Codex's config.toml) setting `[features]
    hooks = false`, with which Codex 0.171.0 runs none of that layer's hooks; for a project's
    file, the host's own folder's when the project's sets nothing (the nearer layer decides)."""
    layers = [path.parent]
    if not global_scope:
        layers.append(config_path(host, True, project_root).parent)
    tomllib = _toml_reader()
    for folder in layers:
        for name in host.install.get("hooks_also_in") or ():
            other = folder / str(name)
            try:
                data = tomllib.loads(read_config_bytes(target_of(other)).decode("utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
                continue  # absent or unreadable: the host reports the bad ones itself
            features = data.get("features")
            if isinstance(features, dict) and isinstance(features.get("hooks"), bool):
                return other if features["hooks"] is False else None
    return None


def hooks_off_reason(host: Host, off: Path) -> tuple[str, str]:
    """What `link` and `doctor` both say of a file that turns the host's hooks off."""
    return (f"is not run: {off} sets `[features] hooks = false`, with which "
            f"{host.display_name} runs none of this file's hooks (engram's none, yours none)",
            f"remove `hooks = false` from `[features]` in {off} (or set it to true) if you want "
            "hooks to run, then run the command again")


def _events_diff(before: list[Found], after: list[Found]) -> tuple[str, ...]:
    old = {f.event: f for f in before}
    new = {f.event: f for f in after}
    out = [f"+{e}" for e in new if e not in old]
    out += [f"~{e}" for e in new if e in old and (old[e].handler, old[e].matcher)
            != (new[e].handler, new[e].matcher)]
    out += [f"-{e}" for e in old if e not in new]
    counts_before = {e: sum(f.event == e for f in before) for e in old}
    out += [f"-{e} (duplicate)" for e, n in counts_before.items() if n > 1 and e in new]
    return tuple(out)


def apply(host: Host, scope_path: Path, scope: str, ours: Ours, remove: bool,
          dry_run: bool, place: Place) -> Change:
    """Merge (or strip, with `remove`) our entries into one file through the safe dance. An
    unlink that leaves exactly the user's pre-engram settings writes back the pre-engram bytes
    (or removes a file engram created), so `{}`, an empty file or `"hooks": {}` survive."""
    fmt = FORMATS[host.install["format"]]
    seen: dict[str, list[Found]] = {}
    edited: dict[str, bool] = {}

    def compute(text: str | None) -> str | None:
        if remove and text is None:
            return None
        document = load(host, text)
        # with --force only: what goes held the user's own edits
        edited["plugin"] = text is not None and host.install["format"] == "plugin" and \
            plugin_edited(text, ours)
        seen["before"] = fmt.found(document, ours)
        updated = fmt.strip(document, ours) if remove else fmt.merge(document, ours)
        if not remove:
            # a link into a file the host ignores whole would run nothing; unlink still takes
            # engram's entries out of it (the user's keys stay as they are)
            schema.check(host.install, updated, host.display_name)
        seen["after"] = fmt.found(updated, ours)
        if updated == document and text is not None:
            return text
        if remove:
            kept = original(scope_path)
            if kept is not None:
                before = kept.data()
                old = None if before is None else before.decode("utf-8", "replace")
                if fmt.same_as(updated, text, old, ours):
                    return old
        rendered = fmt.render(text, updated, ours)
        if rendered is not None:
            load(host, rendered)  # what engram writes, the host reads with its own rules
        if rendered is None and scope_path.is_symlink() and host.install["format"] != "plugin":
            rendered = "{}\n"  # keep the user's link pointing at a valid, empty config
        return rendered

    def is_original(text: str | None) -> bool:
        return not remove and fmt.is_pristine(text, ours)

    make = functools.partial(Change, host=host.name, scope=scope, path=scope_path, dry_run=dry_run)
    off = None if remove else hooks_off(host, scope_path, scope == "global", place.root)
    if off is not None:
        message, fix = hooks_off_reason(host, off)
        return make(action="refused", message=message, fix=fix)
    try:
        outcome = change_file(scope_path, compute, place, dry_run=dry_run, is_original=is_original)
    except (ShapeError, JsoncError, OSError) as exc:
        if isinstance(exc, ShapeError):
            message = f"{exc.key} {exc.problem}" if exc.key != "(file)" else exc.problem
            fix = exc.fix
        elif isinstance(exc, OSError):
            message = f"cannot be written ({exc.strerror or exc})"
            fix = "check the permissions of the file and its folder, then run the command again"
        elif isinstance(exc, TooDeep):
            message, fix = too_deep(exc, host, scope)
        elif isinstance(exc, jsonc.NotStrict):
            message, fix = not_strict(exc, host)
        elif isinstance(exc, DuplicateKey):
            message = f"is ambiguous: {exc}"
            fix = ("keep one copy of that key (hosts read only one of them), then run the "
                   "command again")
        else:
            message, fix = f"is not valid JSON: {exc}", "fix the syntax, then run the command again"
        return make(action="refused", message=message, fix=fix)
    after_found = seen.get("after", [])
    if outcome.before is None and outcome.after is None:
        action = "absent"
    elif not outcome.changed:
        action = "unchanged"
    elif outcome.before is None:
        action = "created"
    elif outcome.after is None:
        action = "deleted"
    else:
        action = "updated"
    theirs = edited.get("plugin", False) and action in ("updated", "deleted")
    return make(action=action, entries=len(after_found),
                events=_events_diff(seen.get("before", []), after_found), backup=outcome.backup,
                message=f"your edits in it are in the backup: `engram restore {host.name}"
                f"{scope_flag(scope == 'global', scope == 'local')}` puts them back"
                if theirs else "")


def not_strict(exc: JsoncError, host: Host) -> tuple[str, str]:
    """What `link` and `doctor` both say of what a file holds that its host's parser rejects
    (jsonc.check_syntax)."""
    syntax = _syntax(host)
    if syntax == "jsonc":
        return (f"is not valid to {host.display_name}: {exc}; it reads JSON with comments and "
                "nothing more, so it rejects the whole file (Gemini CLI stops at start) and "
                "none of its hooks run",
                "remove the trailing commas and any byte order mark at the start (save as "
                "UTF-8 without BOM), then run the command again")
    if syntax == "serde_json":
        return (f"is not valid JSON to {host.display_name}: {exc}; it reads strict JSON with "
                "no byte order mark and no half of a surrogate pair, so it ignores the whole "
                "file and none of its hooks run",
                "remove the comments and trailing commas, any byte order mark at the start "
                "(save as UTF-8 without BOM) and any `\\ud800`-`\\udfff` escape that is not "
                "part of a pair, then run the command again")
    return (f"is not valid JSON to {host.display_name}: {exc}; it reads strict JSON, so it "
            "ignores the whole file and none of its hooks run",
            "remove the comments and trailing commas, then run the command again")


def _syntax(host: Host) -> str:
    return str(host.install.get("syntax", "json"))


def too_deep(exc: TooDeep, host: Host, scope: str) -> tuple[str, str]:
    """What `link` and `doctor` both say of a file nested past what engram reads (valid JSON
    the host may well read): the reason and the way out, in the same words."""
    flag = scope_flag(scope == "global", scope == "local")
    return (f"{exc}: the host may read it, but engram does not read or edit a file nested "
            "that deep",
            f"nest that part of the file at most {MAX_DEPTH} levels deep and run `engram link "
            f"{host.name}{flag}` again, or add engram's hook entries by hand")


def load(host: Host, text: str | None) -> Any:
    """The host's config text as engram reads it: JSON with comments where the host's own
    parser takes them (`install.syntax: jsonc`, Gemini CLI), strict JSON elsewhere; never a
    trailing comma (each host rejects such a file whole: its hooks never run)."""
    fmt = FORMATS[host.install["format"]]
    if text is not None and host.install["format"] != "plugin":
        jsonc.check_syntax(text, _syntax(host))
    return fmt.load(text)


def own_entries(host: Host, path: Path) -> dict[str, tuple[Path, str]]:
    """Events the config file at `path`, or a file the host reads beside it, runs engram's hook
    for through an entry of the user's own form: event -> (file, command)."""
    fmt = FORMATS[host.install["format"]]
    found = beside(host, path)
    if not hasattr(fmt, "own_entries"):
        return found
    try:
        document = load(host, read_config_bytes(target_of(path)).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ShapeError, JsoncError):
        return found
    for event, command_text in fmt.own_entries(document, bare_ours(host, matchers=True)).items():
        found.setdefault(event, (path, command_text))
    return found


def installed(host: Host, path: Path) -> list[Found] | None:
    """Our entries in a config file; None when it is absent or unreadable."""
    fmt = FORMATS[host.install["format"]]
    try:
        return fmt.found(load(host, read_config_bytes(target_of(path)).decode("utf-8")), bare_ours(host))
    except (OSError, UnicodeDecodeError, ShapeError, JsoncError):
        return None
