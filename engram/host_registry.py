"""Host definitions (hosts/*.yaml) through one registry.

The hook runtime imports this module on every hook call, so it stays import-light: no yaml,
or typer at import time. `load_host` reads a JSON cache of all parsed definitions
in the state dir, keyed by the YAML files' names, sizes and mtimes; yaml is imported only when
that cache is stale or missing, and a cache that cannot be written is simply skipped.
"""

from __future__ import annotations

import os
import time

from engram import __version__, json_accel, paths

# The hook path must not pay for `typing` or `dataclasses` (tests/test_hook_process.py), so the
# Host adapter lives in engram.host_adapter and is imported on first use.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Final

    from engram.host_adapter import Host

CACHE_FORMAT: Final = 1
MAX_CACHE_BYTES: Final = 8 * 1024 * 1024

_memo: dict[str, Any] = {}


class UnknownHost(LookupError):
    """No host definition has this name or alias."""


def _hosts_folder() -> str:
    """engram.resources.data_dir("hosts") as a string, without importing pathlib or typing
    (the hook path avoids both; a test pins the two to the same folder)."""
    package = os.path.dirname(os.path.realpath(__file__))
    installed = os.path.join(package, "hosts")
    return installed if os.path.isdir(installed) else os.path.join(os.path.dirname(package), "hosts")


def hosts_dir() -> "Path":
    from pathlib import Path

    return Path(_hosts_folder())


def _stamp(folder: str) -> list[list[Any]]:
    """What the cache is keyed by: every definition's file name, size and mtime."""
    rows: list[list[Any]] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.endswith(".yaml") and entry.is_file():
                info = entry.stat()
                rows.append([entry.name, info.st_size, info.st_mtime_ns])
    return sorted(rows)


def _cache_path() -> str:
    return os.path.join(paths.state_dir_str(), "cache", f"hosts-{__version__}.json")


def _parse_all(folder: str) -> dict[str, dict[str, Any]]:
    import yaml  # only on a cache miss: ~15 ms of import the hook path should not pay

    definitions: dict[str, dict[str, Any]] = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            document = yaml.safe_load(handle.read())
        if isinstance(document, dict) and isinstance(document.get("name"), str):
            definitions[document["name"]] = document
    return definitions


def _set_aside(cache: str, exc: BaseException) -> None:
    try:
        os.replace(cache, f"{cache}.corrupt-{int(time.time())}")
        from engram import log

        log.note(f"hosts cache {os.path.basename(cache)} was unreadable ({type(exc).__name__}); "
                 "set aside and rebuilt")
    except OSError:
        pass


def _write_cache(cache: str, payload: dict[str, Any]) -> None:
    try:
        from engram.fileio import atomic_write_text

        atomic_write_text(cache, json_accel.dumps(payload, sort_keys=True))
    except OSError:
        pass  # a read-only state dir costs a YAML parse per call, nothing more


def all_definitions() -> dict[str, dict[str, Any]]:
    """Every host definition by canonical name (parsed YAML as plain JSON values)."""
    folder = _hosts_folder()
    stamp = _stamp(folder)
    if _memo.get("stamp") == stamp:
        memoized: dict[str, dict[str, Any]] = _memo["hosts"]
        return memoized
    cache = _cache_path()
    hosts: dict[str, dict[str, Any]] | None = None
    try:
        from engram.fileio import read_bounded

        cached = json_accel.loads(read_bounded(cache, MAX_CACHE_BYTES))
        if cached.get("format") == CACHE_FORMAT and cached.get("stamp") == stamp:
            hosts = cached["hosts"]
            if not isinstance(hosts, dict) or not all(isinstance(h, dict) for h in hosts.values()):
                raise ValueError("hosts cache of the wrong shape")
    except FileNotFoundError:
        hosts = None
    except (OSError, ValueError, KeyError, AttributeError, TypeError, RecursionError) as exc:
        # A cache is rebuilt from the YAML, never trusted past damage: one that nests past the
        # recursion limit or has another shape would otherwise fail every hook call for good.
        hosts = None
        _set_aside(cache, exc)
    if hosts is None:
        hosts = _parse_all(folder)
        _write_cache(cache, {"format": CACHE_FORMAT, "stamp": stamp, "hosts": hosts})
    _memo.update(stamp=stamp, hosts=hosts)
    return hosts


def _compiled(key: str, build: "Callable[[dict[str, dict[str, Any]]], Any]") -> Any:
    """`build(definitions)`, built once per set of definitions. Reuses the definitions this
    process already loaded (no second stamp of the folder: the memory scan asks on every hook
    call, after `load_host`) and loads them only when none are."""
    hosts = _memo.get("hosts")
    if hosts is None:
        hosts = all_definitions()
    found = _memo.get(key)
    if found is None or found[0] is not hosts:
        found = _memo[key] = (hosts, build(hosts))
    return found[1]


def _native(relative: str) -> str:
    return relative.strip("/").replace("/", os.sep)


def rules_of(definition: dict[str, Any]) -> tuple[str, str, str, str, str] | None:
    """A host's own rules folder (`rules` in its definition) as (folder, suffix, label, host,
    format): the folder relative to a workspace folder with `/` separators, the one kind of
    file the host loads from it, what `engram init` calls those files (`<display_name> rules`
    unless `label` says), the host's display name, and the rule format of files there whose
    suffix names none ('' when unset). None when the host has no rules folder."""
    rules = definition.get("rules")
    if not isinstance(rules, dict) or not rules.get("folder") or not rules.get("suffix"):
        return None
    owner = str(definition.get("display_name") or definition["name"])
    return (str(rules["folder"]).strip("/"), str(rules["suffix"]),
            str(rules.get("label") or f"{owner} rules"), owner, str(rules.get("format") or ""))


def _rule_folders(hosts: dict[str, dict[str, Any]]) -> tuple[tuple[str, str, str], ...]:
    rows = []
    for name in sorted(hosts):
        rules = rules_of(hosts[name])
        if rules is not None:
            folder, suffix, _label, owner, _format = rules
            rows.append((os.sep + _native(folder) + os.sep, suffix, owner))
    return tuple(rows)


def _rule_formats(hosts: dict[str, dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    rows = []
    for name in sorted(hosts):
        rules = rules_of(hosts[name])
        if rules is not None and rules[4]:
            rows.append((f"/{rules[0]}/", rules[4]))
    return tuple(rows)


def rule_formats() -> tuple[tuple[str, str], ...]:
    """(folder marker, format) for every host rules folder whose definition names the rule
    format of its files (`rules.format`): the marker is `/.claude/rules/` with `/` separators,
    as in a path's as_posix()."""
    formats: tuple[tuple[str, str], ...] = _compiled("rule_formats", _rule_formats)
    return formats


def rule_folders() -> tuple[tuple[str, str, str], ...]:
    """(folder marker, suffix, host) for every host's own rules folder (`rules` in its
    definition): the marker is `/.cursor/rules/` with the platform's separator, the suffix the
    one kind of file the host loads from that folder."""
    folders: tuple[tuple[str, str, str], ...] = _compiled("rule_folders", _rule_folders)
    return folders


def _generated_folders(hosts: dict[str, dict[str, Any]]) -> tuple[str, ...]:
    rows = set()
    for definition in hosts.values():
        folder = (definition.get("install") or {}).get("native_rules")
        if isinstance(folder, str) and folder.strip("/"):
            rows.add(_native(folder))
    return tuple(sorted(rows))


def generated_folders() -> tuple[str, ...]:
    """Every folder engram writes generated rule copies into (`install.native_rules`, e.g.
    `.claude/rules/engram`), relative to the workspace root with the platform's separator: a
    memory scan never descends into one there, also when a memory root holds it. A folder of
    the same name elsewhere is the user's."""
    folders: tuple[str, ...] = _compiled("generated_folders", _generated_folders)
    return folders


def canonical_name(name: str, definitions: dict[str, dict[str, Any]] | None = None) -> str:
    """The host's own name for a name or alias; UnknownHost when there is none."""
    key = name.strip().lower()
    if definitions is None:
        definitions = all_definitions()
    if key in definitions:
        return key
    for host_name, definition in definitions.items():
        if key in (definition.get("aliases") or []):
            return host_name
    raise UnknownHost(name)


def load_host(name: str) -> dict[str, Any]:
    """The definition of a host, by name or alias, as a dict (see schemas/host.schema.json).
    One stamp of the hosts folder per call: the hook calls it once per payload."""
    definitions = all_definitions()
    return definitions[canonical_name(name, definitions)]


def __getattr__(name: str) -> object:
    if name == "Host":
        from engram.host_adapter import Host

        return Host
    raise AttributeError(name)


def get(name: str) -> "Host":
    """The Host adapter for a name or alias; UnknownHost when there is none."""
    from engram.host_adapter import Host

    return Host.from_definition(load_host(name))


def instruction_files(hosts: list[dict[str, Any]]) -> list[str]:
    """Files a host loads whole at every session start (`instruction_files`): candidates for
    `engram import`."""
    found: list[str] = []
    for definition in hosts:
        for name in definition.get("instruction_files") or ():
            if str(name) not in found:
                found.append(str(name))
    return found


def ordered_definitions() -> list[dict[str, Any]]:
    """Every host definition, supported ones first, then by name: the order `engram link`
    lists hosts in."""
    return sorted(all_definitions().values(),
                  key=lambda d: (not d.get("supported", False), str(d["name"])))


def registry() -> "tuple[Host, ...]":
    """Every known host, supported ones first, then by name."""
    from engram.host_adapter import Host

    return tuple(Host.from_definition(d) for d in ordered_definitions())
