"""The command host configs run, and how engram recognises its own entries.

Two forms. A file a team commits (a project's `.claude/settings.json`, `.codex/hooks.json`,
...) runs engram from PATH, guarded so that a clone without engram installed sees nothing:
`command -v engram-hook >/dev/null 2>&1 && exec engram-hook <host>; command -v engram
>/dev/null 2>&1 && exec engram hook <host> || true` (the launcher described below when it is
on PATH, else the `engram` script of an engram older than the launcher). `command -v` is a
shell builtin and `exec` replaces the shell, so the guard costs no extra process. A personal
file (`--global`, `--local`) names this installation by absolute path: no PATH lookup, right
for a host launched from a desktop menu with a short PATH, and never a pyenv/asdf shim (which
re-resolves the interpreter on every call, ~85 ms). The setting `hooks.command` picks another
form. Commands stay the same across upgrades, because Codex and Gemini re-ask trust for a
changed command.

The personal form runs the `engram-hook` launcher (scripts/engram-hook, installed beside the
`engram` script) rather than `engram hook`: the `engram` script pip generates imports `re`
before engram starts (25M instructions, where all of `python -c pass` is 38M). Where engram and the packages
its hook imports live in the site-packages folder of the launcher's own prefix (a venv, pipx,
`uv tool`), the command is `<python> -I -S <bin>/engram-hook <host>`: `-S` skips `site` (the
launcher adds that one folder itself) and `-I` keeps PYTHONPATH, the user site and the
script's folder out. Elsewhere (an editable install, a distribution's own layout) it is
`<bin>/engram-hook <host>`, run by its shebang. Both paths are the venv's own (`bin/python`
is a link the venv keeps when its Python changes), never a `lib/pythonX.Y` folder, so they
survive upgrades; a folder named after engram's version (Homebrew's Cellar, the Nix store)
would not, and there the `engram` script on PATH is named as before. Windows has no launcher
(pip makes .exe files for entry points only) and keeps `engram hook <host>`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Final, Iterable

from engram import __version__

# Set to pin the executable written into host configs (packagers; tests for stable goldens).
EXECUTABLE_ENV: Final = "ENGRAM_HOOK_EXECUTABLE"
LAUNCHER: Final = "engram-hook"  # scripts/engram-hook
# What the hook imports from outside the standard library: the `-S` form needs them all in the
# launcher's site-packages folder.
_HOOK_PACKAGES: Final = ("engram", "xxhash", "yaml")
_ISOLATED: Final = "-I -S"
_SHIM_DIRS: Final = ("shims",)  # pyenv, asdf, rbenv-style wrappers re-resolve per call
_SCRIPT_SUFFIXES: Final = (".exe", "-script.py", ".cmd", ".bat")
_PROGRAM_PREFIXES: Final = frozenset({"exec", "env", "command", "&&", ";", "||", "&"})
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _is_shim(path: Path) -> bool:
    return any(part in _SHIM_DIRS for part in path.parts[:-1])


def _interpreter_of(script: Path) -> Path | None:
    """The interpreter a POSIX console script's shebang names."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    return Path(words[0]) if words else None


def _belongs_here(script: Path) -> bool:
    """Is this `engram` script the one of the running installation?"""
    if not (script.is_file() and os.access(script, os.X_OK)) or _is_shim(script):
        return False
    if os.name == "nt":
        return True  # .exe launchers carry no readable shebang
    interpreter = _interpreter_of(script)
    if interpreter is None or _is_shim(interpreter):
        return False
    return os.path.realpath(interpreter) == os.path.realpath(sys.executable)


def _candidates(name: str) -> Iterable[Path]:
    yield Path(sys.executable).parent / name  # venv, pipx, uv tool: the script beside python
    for scheme in (None, f"{os.name}_user"):
        try:
            scripts = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        if scripts:
            yield Path(scripts) / name


def console_script() -> Path | None:
    """The absolute path of this installation's `engram` script, or None."""
    for candidate in _candidates("engram.exe" if os.name == "nt" else "engram"):
        if _belongs_here(candidate):
            # A PATH entry that is a symlink to it (pipx ~/.local/bin, Homebrew bin) outlives
            # upgrades that move the versioned target, so prefer that spelling.
            on_path = shutil.which("engram")
            if on_path and not _is_shim(Path(on_path)) and os.path.isabs(on_path) and (
                os.path.realpath(on_path) == os.path.realpath(candidate)
            ):
                return Path(on_path)
            return candidate
    return None


def _versioned(path: Path) -> bool:
    """Does a folder on the way carry engram's version (Homebrew's Cellar/engram/1.2, the Nix
    store's ...-engram-1.2), so that the next upgrade moves it?"""
    return any(part == __version__ or part.endswith(f"-{__version__}")
               for part in Path(os.path.realpath(path)).parts)


def launcher() -> Path | None:
    """This installation's `engram-hook` launcher, where it stays put across upgrades."""
    if os.name == "nt":
        return None
    for candidate in _candidates(LAUNCHER):
        if _belongs_here(candidate) and not _versioned(candidate):
            return candidate
    return None


def site_packages(script: Path) -> list[Path]:
    """The folders the launcher adds to sys.path under `-S`: <prefix>/lib/pythonX.Y/site-packages
    (and the platlibdir variant), the prefix being the parent of its scripts folder."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    prefix = script.parent.parent
    return [prefix / lib / version / "site-packages" for lib in dict.fromkeys((sys.platlibdir, "lib"))]


def _without_site_finds_all(script: Path) -> bool:
    """Would the launcher, under `-S`, import engram and its hook's packages from these folders?"""
    import importlib.util

    folders = {os.path.realpath(f) for f in site_packages(script)}
    for name in _HOOK_PACKAGES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec else None
        if not origin or os.path.realpath(Path(origin).parent.parent) not in folders:
            return False
    return True


def _launcher_prefix() -> str | None:
    script = launcher()
    if script is None:
        return None
    interpreter = _interpreter_of(script)
    if interpreter is not None and _without_site_finds_all(script):
        return f"{quote(str(interpreter))} {_ISOLATED} {quote(str(script))}"
    return quote(str(script))


def quote(word: str) -> str:
    """One word quoted for the shell the host hands commands to."""
    if os.name != "nt":
        return shlex.quote(word)
    # Windows hosts run commands through Git Bash, cmd or PowerShell: forward slashes work in
    # all three, and only a path with spaces needs quotes.
    word = word.replace("\\", "/")
    return f'"{word}"' if any(c in word for c in ' \t&()^;') else word


def hook_prefix(mode: str = "absolute") -> str:
    """Everything before the host name: `<python> -I -S <engram-hook>`, `<engram-hook>`,
    `<engram> hook` or `<python> -m engram hook`. `mode` is "absolute" (this installation),
    "path" (`engram` from PATH) or a path."""
    pinned = os.environ.get(EXECUTABLE_ENV)
    if pinned:
        return f"{quote(pinned)} hook"
    if mode == "path":
        return "engram hook"
    if mode != "absolute":
        return f"{quote(os.path.expanduser(mode))} hook"
    fast = _launcher_prefix()
    if fast is not None:
        return fast
    script = console_script()
    if script is not None:
        return f"{quote(str(script))} hook"
    return f"{quote(sys.executable)} -m engram hook"


def mode_for(setting: object, personal: bool) -> str:
    """The command form for a scope: `hooks.command` ("auto" picks "path" for files a team
    shares and "absolute" for personal ones)."""
    value = str(setting or "auto")
    if value == "auto":
        return "absolute" if personal else "path"
    return value


def hook_command(host: str, mode: str = "absolute") -> str:
    prefix = hook_prefix(mode)
    if prefix == "engram hook" and os.name != "nt":
        # Fail open on a clone where engram is not installed: exit 0, no output, no error
        # shown by the host. (Windows hosts hand commands to PowerShell or cmd, which lack
        # `command -v`; there the plain form is written and the README says what happens.)
        # The launcher first (no `import re` before engram), then the `engram` script: an
        # engram older than the launcher, on a teammate's PATH, still runs the hook.
        return _shared_forms(host)[0]
    return f"{prefix} {host}"


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command, posix=True)
    except ValueError:
        return command.split()


def _splits(command: str) -> list[list[str]]:
    """POSIX words, and (for Windows paths, whose backslashes POSIX quoting eats) plain words."""
    plain = [w.strip("'\"") for w in command.split()]
    return [_split(command), plain] if "\\" in command else [_split(command)]


def _base(word: str) -> str:
    base = word.replace("\\", "/").rsplit("/", 1)[-1].lower()
    for suffix in _SCRIPT_SUFFIXES:
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base


def _is_engram_executable(word: str) -> bool:
    return _base(word) == "engram"


def _is_program(words: list[str], i: int) -> bool:
    """Is words[i] the program run, not an argument (`echo engram hook claude`, `echo x=1
    engram ...`)? After `FOO=1` only where that assignment is itself where a command starts."""
    return i == 0 or words[i - 1] in _PROGRAM_PREFIXES or (
        _ASSIGNMENT.match(words[i - 1]) is not None and _is_program(words, i - 1))


def _interpreter_before(words: list[str], i: int) -> int | None:
    """The index of the Python that runs the script words[i] (`<python> -I -S <script>`)."""
    j = i - 1
    while j >= 0 and words[j].startswith("-"):
        j -= 1
    if j >= 0 and _base(words[j]).startswith(("python", "pypy")) and _is_program(words, j):
        return j
    return None


def _python_module_at(words: list[str], i: int) -> int | None:
    """For `<python> [options] -m engram` with words[i] the `-m`: the index of that Python.
    After any other program `-m engram` is that program's option (`git commit -m engram`)."""
    if words[i] != "-m" or words[i + 1: i + 2] != ["engram"]:
        return None
    j = i - 1
    while j >= 0:
        if words[j].startswith("-"):
            j -= 1
        elif j > 0 and words[j - 1] in ("-X", "-W"):  # `-X importtime`: an option's value
            j -= 2
        else:
            break
    if j >= 0 and _base(words[j]).startswith(("python", "pypy")) and _is_program(words, j):
        return j
    return None


def _launcher_at(words: list[str], i: int) -> bool:
    """Does words[i] run the `engram-hook` launcher (by its shebang or by a Python)?"""
    return _base(words[i]) == LAUNCHER and (_is_program(words, i) or _interpreter_before(words, i) is not None)


def is_ours(command: object, names: Iterable[str]) -> bool:
    """Is this command exactly one engram writes for one of `names` (a host's name and
    aliases), so that engram may rewrite (`link`, `upgrade`) or remove (`unlink`) its entry?

    Current forms: `[<python> -I -S] <...>/engram-hook <host>`, `<...>/engram hook <host>`
    and the shared guard form `hook_command` writes. Earlier forms, still recognised so
    `upgrade` and `unlink` find them: `<python> -m engram hook <host>`, the shared form before
    the launcher, and the TypeScript predecessor's `engram agent-hook --host <host>`
    (prior-art A3.1), which wrote a 10000-second timeout. Quoted as `quote` quotes, and
    nothing more: an environment assignment, a runner, an extra argument, a redirection or
    a chain around it makes the entry the user's own (`runs_engram_hook`), never engram's
    to edit.
    """
    if not isinstance(command, str):
        return False
    wanted = {n.lower() for n in names}
    if any(command in _shared_forms(host) for host in wanted):
        return True
    return any(_own_form(words, wanted) for words in _renderings(command))


def _shared_forms(host: str) -> tuple[str, str]:
    """The shared form `hook_command` writes, and the one before the launcher."""
    return (f"command -v {LAUNCHER} >/dev/null 2>&1 && exec {LAUNCHER} {host}; "
            f"command -v engram >/dev/null 2>&1 && exec engram hook {host} || true",
            f"command -v engram >/dev/null 2>&1 && exec engram hook {host} || true")


# Characters a shell gives a meaning even inside double quotes (POSIX shells, cmd), and those
# it gives one outside: a word engram writes for Windows is double-quoted for the second only.
_ACTIVE_QUOTED: Final = frozenset("$`%!\"'\n")
_ACTIVE_BARE: Final = _ACTIVE_QUOTED | frozenset(" \t&()^;|<>*?[]{}~#")


def _quote_windows(word: str) -> str | None:
    """`word` as `quote` writes it on Windows, or None where no such rendering is inert."""
    if not word or any(c in _ACTIVE_QUOTED for c in word):
        return None
    return f'"{word}"' if any(c in _ACTIVE_BARE for c in word) else word


def _renderings(command: str) -> list[list[str]]:
    """The word lists of which `command` is exactly engram's rendering: POSIX-quoted, or
    quoted for Windows (whose paths keep their backslashes in the plain split)."""
    found = []
    for words in ([*_splits(command), command.split(" ")] if "\\" in command else _splits(command)):
        if not words:
            continue
        windows = [_quote_windows(w) for w in words]
        if " ".join(shlex.quote(w) for w in words) == command or (
                None not in windows and " ".join(w or "" for w in windows) == command):
            found.append(words)
    return found


def _own_form(words: list[str], wanted: set[str]) -> bool:
    *body, host = words
    if host not in wanted or not body:
        return False
    python = _base(body[0]).startswith(("python", "pypy"))
    return (len(body) == 2 and _is_engram_executable(body[0]) and body[1] == "hook") or (
        len(body) == 1 and _base(body[0]) == LAUNCHER) or (
        len(body) == 4 and python and body[1:3] == ["-I", "-S"] and _base(body[3]) == LAUNCHER) or (
        len(body) == 4 and python and body[1:] == ["-m", "engram", "hook"]) or (
        len(body) == 3 and _is_engram_executable(body[0]) and body[1:] == ["agent-hook", "--host"])


def _mentions_hook(command: str, wanted: set[str]) -> bool:
    """Does engram's hook for `wanted` run somewhere in this command, wherever a command
    starts (after `FOO=1`, `cd x &&`, `exec`, ...)?"""
    return any(_runs_hook(words, wanted) for words in _splits(command))


def _runs_hook(words: list[str], wanted: set[str]) -> bool:
    for i, word in enumerate(words):
        if _launcher_at(words, i):
            # `exec engram-hook claude; ...`: the shell ends the command at the `;`
            if i + 1 < len(words) and words[i + 1].lower().rstrip(";") in wanted:
                return True
            continue
        tail = [w.lower() for w in words[i + 1: i + 4]]
        is_engram = (_is_engram_executable(word) and _is_program(words, i)) or (
            _python_module_at(words, i) is not None)
        if not is_engram:
            continue
        if word == "-m":
            tail = [w.lower() for w in words[i + 2: i + 5]]
        if len(tail) >= 2 and tail[0] == "hook" and tail[1] in wanted:
            return True
        if len(tail) >= 3 and tail[0] == "agent-hook" and tail[1] == "--host" and tail[2] in wanted:
            return True
    return False


# What a user may put in front of engram in an entry of their own: programs that run the rest
# of the line as a command, and those of their options that take a value.
_WRAPPERS: Final = frozenset({"env", "exec", "command", "nohup", "nice", "timeout", "time",
                              "uvx", "pipx", "uv", "run", "tool", "sudo", "doas"})
_VALUE_OPTIONS: Final = frozenset({"-n", "-s", "-k", "-u", "--signal", "--kill-after", "--with",
                                   "--from", "--python", "-p", "--spec", "--adjustment"})
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
# Windows: `cmd /c <command>` runs the rest of its line; PowerShell's `-Command` (`-c`, or any
# abbreviation of it) does too, and Windows PowerShell reads a bare first argument the same way
# (`pwsh` reads it as a script file). Options of theirs that take a value.
_CMD_RUNS: Final = frozenset({"/c", "/k", "/r"})
_POWERSHELLS: Final = frozenset({"powershell", "pwsh"})
_PS_VALUE_OPTIONS: Final = frozenset({"executionpolicy", "ep", "ex", "windowstyle", "w",
                                      "version", "v", "configurationname", "config",
                                      "workingdirectory", "wd", "outputformat", "of", "o",
                                      "inputformat", "if", "settingsfile", "psconsolefile",
                                      "encodedarguments", "ea"})
_SEPARATORS: Final = frozenset({"&&", "||", ";", "|", "&"})


def runs_engram_hook(command: object, names: Iterable[str], args: object = None) -> bool:
    """Does an entry run engram's hook for one of `names`, in any form a person may write:
    the forms `is_ours` knows, and behind a runner (`uvx engram hook claude`, `uv run ...`,
    `pipx run ...`, `timeout 5 ...`), a shell (`bash -c "engram hook claude"`), a Python
    running the script (`/usr/bin/python3 /opt/engram/bin/engram hook claude`, `-m
    engram.entry`), or in exec form (`command` "engram", `args` ["hook", "claude"]). Such an
    entry is the user's own: engram adds none beside it and never edits it."""
    if not isinstance(command, str):
        return False
    wanted = {n.lower() for n in names}
    if isinstance(args, list) and all(isinstance(a, str) for a in args):
        return _segment_runs_hook([command, *args], wanted, 0)
    if _mentions_hook(command, wanted):
        return True
    return any(_segment_runs_hook(words, wanted, 0) for words in _splits(command))


def _segment_runs_hook(words: list[str], wanted: set[str], depth: int) -> bool:
    start = 0
    for i, word in enumerate([*words, ";"]):
        if word in _SEPARATORS or (word.endswith(";") and i < len(words)):
            segment = words[start:i] + ([word.rstrip(";")] if word.endswith(";") and
                                        word not in _SEPARATORS else [])
            if _runs_hook_at_start(segment, wanted, depth):
                return True
            start = i + 1
    return False


def _runs_hook_at_start(words: list[str], wanted: set[str], depth: int) -> bool:
    i = 0
    while i < len(words):  # past assignments, wrappers and their options
        word, base = words[i], _base(words[i])
        if "=" in word and not word.startswith("-"):
            i += 1
        elif base in _WRAPPERS or word.startswith("-") or (i > 0 and word.isdigit()):
            i += 2 if word in _VALUE_OPTIONS else 1
        else:
            break
    rest = words[i:]
    if not rest:
        return False
    base = _base(rest[0])
    inner = _windows_shell_command(rest) if depth < 2 else None
    if inner is not None:
        return any(_segment_runs_hook(words, wanted, depth + 1) for words in _splits(inner))
    if base in _SHELLS and depth < 2:
        for j, word in enumerate(rest[1:-1], start=1):
            if word.startswith("-") and not word.startswith("--") and "c" in word:
                return any(_segment_runs_hook(inner, wanted, depth + 1)
                           for inner in _splits(rest[j + 1]))
        return False
    if base.startswith(("python", "pypy")) or base in ("py", "py3"):
        j = 1
        while j < len(rest) and rest[j].startswith("-") and rest[j] != "-m":
            j += 2 if rest[j] in ("-X", "-W") else 1
        if j + 1 < len(rest) and rest[j] == "-m" and rest[j + 1] in ("engram", "engram.entry"):
            return [w.lower() for w in rest[j + 2: j + 4]][:1] == ["hook"] and \
                rest[j + 3: j + 4] != [] and rest[j + 3].lower() in wanted
        rest = rest[j:]
        if not rest:
            return False
        base = _base(rest[0])
    tail = [w.lower().rstrip(";") for w in rest[1:3]]
    if base == LAUNCHER:
        return bool(tail) and tail[0] in wanted
    return base == "engram" and len(tail) == 2 and tail[0] == "hook" and tail[1] in wanted


def _windows_shell_command(words: list[str]) -> str | None:
    """The command line `cmd /c ...` or `powershell -Command ...` (words[0] the shell) runs,
    or None (another program, or a shell that runs a script file or nothing)."""
    base = _base(words[0])
    if base == "cmd":
        for j, word in enumerate(words[1:], start=1):
            if word.lower() in _CMD_RUNS:
                return " ".join(words[j + 1:])
            if not word.startswith("/"):
                return None
        return None
    if base not in _POWERSHELLS:
        return None
    j = 1
    while j < len(words):
        word = words[j]
        if not word.startswith(("-", "/")):
            return " ".join(words[j:]) if base == "powershell" else None
        name = word.lstrip("-/").lower()
        if name and "command".startswith(name):
            return " ".join(words[j + 1:])
        j += 2 if name in _PS_VALUE_OPTIONS else 1
    return None


def _programs(command: str) -> list[str]:
    """The engram programs a command may run, in the order the shell tries them: `engram`, a
    path to it or to `engram-hook`, or the python of `python -m engram`."""
    words = _split(command)
    found = []
    for i, word in enumerate(words):
        if _launcher_at(words, i) or (_is_program(words, i) and _is_engram_executable(word)):
            found.append(word)
        python = _python_module_at(words, i)
        if python is not None:
            found.append(words[python])
    return found


def executable_of(command: str) -> str | None:
    """The (first) engram program a command runs, for `doctor` to check."""
    programs = _programs(command)
    if programs:
        return programs[0]
    words = _split(command)
    return words[0] if words else None


def _interpreter_of_command(command: str) -> str | None:
    """The Python named before `engram-hook` in `<python> -I -S <engram-hook> <host>`."""
    words = _split(command)
    for i in range(len(words)):
        if _base(words[i]) == LAUNCHER:
            j = _interpreter_before(words, i)
            return words[j] if j is not None else None
    return None


def is_portable(command: str) -> bool:
    """Does the command find engram on PATH (no machine-specific path in it)?"""
    program = executable_of(command) or ""
    return bool(program) and "/" not in program and "\\" not in program


def locate(command: str, search_path: str | None = None) -> str | None:
    """Where the program this command runs is found (on `search_path`, default PATH): the first
    of its engram programs that is (the shared form tries `engram-hook`, then `engram`), or
    None (also when the Python that runs the `engram-hook` launcher is gone)."""
    interpreter = _interpreter_of_command(command)
    if interpreter is not None and _find(interpreter, search_path) is None:
        return None
    # no engram program in it: the command's first word, as executable_of says
    for program in _programs(command) or _split(command)[:1]:
        found = _find(program, search_path) if program else None
        if found:
            return found
    return None


def _find(program: str, search_path: str | None) -> str | None:
    if os.sep in program or "/" in program:
        path = Path(os.path.expanduser(program))
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(program, path=search_path)


def is_resolvable(command: str) -> bool:
    """Would the shell find the program this command starts with?"""
    return locate(command) is not None


def is_shim(path: str) -> bool:
    """A pyenv/asdf-style shim, which re-resolves the interpreter on every call."""
    return _is_shim(Path(path))
