"""`json.loads` and `json.dumps` straight over CPython's C accelerator `_json`, without
importing the `json` package: `json.decoder` and `json.encoder` import `re` and compile
patterns at import, which with `re`'s own imports (enum, functools, the pattern parser) costs
a hook process about two thirds of a bare interpreter start.

The results are exactly the `json` package's: it drives the same C scanner and encoder with
the same settings, from the same depth of Python frames (before 3.12 the scanner's nesting
limit counts them). `indent=` output of lists, dicts, strs, ints, booleans and None is laid
out the way the json package's Python encoder lays it out. Whatever this module does not do
itself (an interpreter without `_json`, other indented values, a payload in UTF-16/32 or with
a BOM, invalid JSON) is handed to the `json` package, so its exceptions (`JSONDecodeError`, a
ValueError) are the package's own."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from json import JSONDecodeError as JSONDecodeError
    from typing import Any

_accel: Any = None
if sys.implementation.name == "cpython":  # elsewhere `_json`, if any, may differ
    try:
        import _json as _accel
    except ImportError:  # pragma: no cover - a CPython built without the accelerator
        pass

# What `json.decoder.WHITESPACE` skips around the value.
_WHITESPACE = " \t\n\r"
# UTF-8 BOM, UTF-16 BOMs (the UTF-32 ones start with these or with NULs): `json.loads`
# decodes such bytes by their BOM, and NULs in the first four bytes by where they fall.
_NOT_PLAIN_UTF8 = (b"\xef\xbb\xbf", b"\xfe\xff", b"\xff\xfe")


class _Settings:
    """The attributes `_json.make_scanner` reads, with `json.JSONDecoder()`'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                      "NaN": float("nan")}.__getitem__


_scan: Any = (  # `_json.make_scanner`'s callable, None without the accelerator
    _accel.make_scanner(_Settings()) if _accel is not None else None)


def _stdlib() -> Any:
    import json

    return json


def __getattr__(name: str) -> Any:
    """`json_accel.JSONDecodeError` (for `except` clauses) imports `json` only when asked."""
    if name == "JSONDecodeError":
        return _stdlib().JSONDecodeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def loads(document: str | bytes | bytearray) -> Any:
    """`json.loads(document)`."""
    if _scan is None:
        return _stdlib().loads(document)
    if isinstance(document, str):
        text = document
        if text.startswith("\ufeff"):
            return _stdlib().loads(document)
    elif isinstance(document, (bytes, bytearray)) and not (
            0 in document[:4] or document.startswith(_NOT_PLAIN_UTF8)):
        text = document.decode("utf-8", "surrogatepass")
    else:
        return _stdlib().loads(document)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    failed = False
    try:
        value, end = _decode(text, start)
    except Exception:  # noqa: BLE001
        # StopIteration ("Expecting value"), or an error the scanner describes only when
        # `json.decoder` is already imported (before Python 3.12 it raises SystemError
        # otherwise): the json package raises its own exception for the same text.
        failed = True
    if failed or (end != len(text) and text[end:].lstrip(_WHITESPACE)):  # or "Extra data"
        return _stdlib().loads(text)
    return value


def _decode(text: str, start: int) -> tuple[Any, int]:
    # `json.loads` reaches the scanner through JSONDecoder.decode and raw_decode: two frames
    # this one and the next stand for, so the deepest nesting that loads is json's own.
    return _raw_decode(text, start)


def _raw_decode(text: str, start: int) -> tuple[Any, int]:
    result: tuple[Any, int] = _scan(text, start)
    return result


def _unserializable(value: object) -> Any:
    """`json.JSONEncoder.default`."""
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(value: Any, *, ensure_ascii: bool = True, separators: tuple[str, str] | None = None,
          sort_keys: bool = False, indent: int | str | None = None) -> str:
    """`json.dumps(value, ...)` for these options."""
    if _accel is not None and indent is not None and separators is None and not sort_keys:
        # The C encoder knows no indent; the json package's Python one does, for any value.
        # Lists, dicts with str keys, strs, ints, booleans and None (the session queue) are
        # laid out here as it lays them out; anything else goes to it.
        quote = _accel.encode_basestring_ascii if ensure_ascii else _accel.encode_basestring
        laid_out = _indented(value, indent if isinstance(indent, str) else " " * indent, "\n",
                             quote, set())
        if laid_out is not None:
            return laid_out
    if indent is not None or _accel is None:
        return str(_stdlib().dumps(value, ensure_ascii=ensure_ascii, separators=separators,
                                   sort_keys=sort_keys, indent=indent))
    quote = _accel.encode_basestring_ascii if ensure_ascii else _accel.encode_basestring
    if isinstance(value, str):
        return str(quote(value))
    item_separator, key_separator = separators if separators is not None else (", ", ": ")
    # What `json.JSONEncoder.iterencode` builds for a one-shot encode without indent: a fresh
    # circular-reference table, skipkeys off, NaN and the infinities allowed.
    encode = _accel.make_encoder({}, _unserializable, quote, None, key_separator,
                                 item_separator, sort_keys, False, True)
    return "".join(encode(value, 0))



def _indented(value: Any, indent: str, newline: str, quote: Any, open_ids: set[int]) -> str | None:
    """`value` as `json.dumps(value, indent=...)` writes it, `newline` being the line break
    and indent of the level it is at; None for a value of another type, or a container
    inside itself (the json package raises for that)."""
    kind = value.__class__
    if kind is str:
        return str(quote(value))
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is not list and kind is not dict:
        return None
    if not value:
        return "[]" if kind is list else "{}"
    if id(value) in open_ids:
        return None
    open_ids.add(id(value))
    inner = newline + indent
    parts: list[str] = []
    if kind is list:
        for item in value:
            laid_out = _indented(item, indent, inner, quote, open_ids)
            if laid_out is None:
                return None
            parts.append(laid_out)
    else:
        for key, item in value.items():
            laid_out = _indented(item, indent, inner, quote, open_ids)
            if key.__class__ is not str or laid_out is None:
                return None
            parts.append(f"{quote(key)}: {laid_out}")
    open_ids.discard(id(value))
    brackets = "[]" if kind is list else "{}"
    return brackets[0] + inner + ("," + inner).join(parts) + newline + brackets[1]
