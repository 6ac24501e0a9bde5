"""Frontmatter, leniently. Real rule files are often not valid YAML (`globs: **/*` starts with
an alias marker), carry two blocks or none; Cursor and Claude accept them, so engram does too,
and says what it had to guess. Only the index compiler imports this module."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

MAX_FRONTMATTER_CHARS: Final = 64 * 1024
_FENCE = re.compile(r"^---[ \t]*$")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
_KEY_LINE = re.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$")
_ITEM_LINE = re.compile(r"^[ \t]*-[ \t]+(.*)$")


@dataclass(frozen=True)
class Parsed:
    data: dict[str, Any]
    body: str
    body_line: int  # 1-based line of the body's first line
    parser: str  # "yaml", "lenient" or "none"
    notes: tuple[str, ...] = ()
    error: str | None = None  # set when the frontmatter could not be read at all
    error_line: int | None = None
    raw_values: dict[str, str] = field(default_factory=dict)  # lenient parse: unquoted text


def _block_end(lines: list[str], start: int) -> int | None:
    for index in range(start, len(lines)):
        if _CLOSE.match(lines[index]):
            return index
    return None


def split(text: str) -> tuple[list[str] | None, int, list[str] | None, str, int, list[str]]:
    """(first block lines, its first line number, second block lines or None, body, body line,
    notes). A block is only recognised when the file starts with `---`."""
    notes: list[str] = []
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first >= len(lines) or not _FENCE.match(lines[first]):
        return None, 0, None, text, 1, notes
    end = _block_end(lines, first + 1)
    if end is None:
        notes.append("frontmatter opened with --- but never closed; read as body")
        return None, 0, None, text, 1, notes
    block = lines[first + 1:end]
    block_line = first + 2
    rest = end + 1
    second: list[str] | None = None
    probe = rest
    while probe < len(lines) and not lines[probe].strip():
        probe += 1
    if probe < len(lines) and _FENCE.match(lines[probe]):
        second_end = _block_end(lines, probe + 1)
        if second_end is not None and any(_KEY_LINE.match(line) for line in lines[probe + 1:second_end]):
            second = lines[probe + 1:second_end]
            notes.append(f"a second frontmatter block at line {probe + 1} was merged into the first")
            rest = second_end + 1
    body = "\n".join(lines[rest:])
    return block, block_line, second, body, rest + 1, notes


# Where YAML would read an anchor (`&a`) or an alias (`*a`): at the start of a node. Blocks
# without one are parsed by libyaml (about 10x faster); the others by the pure-Python loader,
# which refuses them with its line (real rule files write `globs: **/*`, an alias to YAML).
_ANCHOR_OR_ALIAS = re.compile(r"(?:^|[\s:?\[{,-])[&*]", re.MULTILINE)


def _fast_loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) \
        else None


def _yaml_load(block_text: str) -> Any:
    import yaml

    fast = _fast_loader()
    if fast is not None and not _ANCHOR_OR_ALIAS.search(block_text):
        return yaml.load(block_text, Loader=fast)  # noqa: S506 - the safe loader, in C

    class _NoAliasLoader(yaml.SafeLoader):
        """Aliases are how YAML bombs grow; frontmatter never needs them."""

        def fetch_alias(self) -> None:
            raise yaml.scanner.ScannerError(None, None, "aliases are not allowed",
                                            self.get_mark())

        def fetch_anchor(self) -> None:
            raise yaml.scanner.ScannerError(None, None, "anchors are not allowed",
                                            self.get_mark())

    return yaml.load(block_text, Loader=_NoAliasLoader)  # noqa: S506 - safe subclass


def _unquote(value: str) -> tuple[str, bool]:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1], True
    return value, False


def _scalar(value: str) -> Any:
    text, quoted = _unquote(value)
    if quoted:
        return text
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "~", ""):
        return None
    if re.fullmatch(r"-?\d{1,9}", text):
        return int(text)
    return text


def _flow_list(text: str) -> list[Any]:
    inner = text.strip()[1:-1]
    from engram.globs import split_top_level

    return [_scalar(part) for part in split_top_level(inner) if part.strip()]


def lenient(block: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """Line-wise `key: value` with `- item` lists, multi-line flow lists and folded
    continuation lines; values stay strings unless plainly bool/int/null."""
    data: dict[str, Any] = {}
    raw: dict[str, str] = {}
    key: str | None = None
    pending_flow: list[str] | None = None
    for line in block:
        if pending_flow is not None and key is not None:
            pending_flow.append(line.strip())
            joined = " ".join(pending_flow)
            if joined.rstrip().endswith("]"):
                data[key] = _flow_list(joined)
                raw[key] = joined
                pending_flow = None
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY_LINE.match(line)
        if match and not line[0].isspace():
            key, value = match.group(1), (match.group(2) or "").strip()
            raw[key] = value
            if value.startswith("[") and not value.rstrip().endswith("]"):
                pending_flow = [value]
                continue
            if value.startswith("[") and value.endswith("]"):
                data[key] = _flow_list(value)
            elif value in ("|", ">", "|-", ">-", "|+", ">+"):
                data[key] = ""
            else:
                data[key] = _scalar(value)
            continue
        item = _ITEM_LINE.match(line)
        if item and key is not None:
            current = data.get(key)
            if not isinstance(current, list):
                current = [] if current in (None, "") else [current]
            current.append(_scalar(item.group(1)))
            data[key] = current
            continue
        if key is not None and line[:1].isspace():
            # A folded continuation of the previous scalar (`description:` spanning lines).
            previous = data.get(key)
            if isinstance(previous, str) or previous is None:
                data[key] = ((previous or "") + " " + line.strip()).strip()
    if pending_flow is not None and key is not None:
        data[key] = _flow_list(" ".join(pending_flow) + "]")
    return data, raw


def parse(text: str) -> Parsed:
    block, block_line, second, body, body_line, notes = split(text)
    if block is None:
        return Parsed({}, body, body_line, "none", tuple(notes))
    blocks = [block] + ([second] if second is not None else [])
    merged: dict[str, Any] = {}
    raw_values: dict[str, str] = {}
    parser = "yaml"
    for lines in blocks:
        block_text = "\n".join(lines)
        if len(block_text) > MAX_FRONTMATTER_CHARS:
            return Parsed({}, body, body_line, "none", tuple(notes),
                          error=f"frontmatter is larger than {MAX_FRONTMATTER_CHARS} characters",
                          error_line=block_line)
        data: Any
        try:
            data = _yaml_load(block_text) if block_text.strip() else {}
            if data is None:
                data = {}
            if not isinstance(data, dict):
                raise ValueError("frontmatter is not a mapping")
        except Exception as exc:  # yaml errors, recursion, bad types: fall back line-wise
            data, raw = lenient(lines)
            raw_values.update(raw)
            parser = "lenient"
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {block_line + mark.line})" if mark is not None else ""
            reason = getattr(exc, "problem", None) or str(exc).split("\n")[0]
            notes.append(f"frontmatter is not valid YAML{where}: {reason}; read it line by line")
            if not data and any(line.strip() for line in lines):
                return Parsed({}, body, body_line, "lenient", tuple(notes),
                              error="frontmatter could not be read", error_line=block_line)
        for key, value in data.items():
            merged.setdefault(str(key), value)
    return Parsed(merged, body, body_line, parser, tuple(notes), raw_values=raw_values)
