"""engram.json_accel gives exactly what the `json` package gives, for every option the code
uses: the same values from the same texts and bytes, the same text from the same values, and
the same exception (type and message) from invalid input."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import json_accel

leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**80, 2**80),
                 st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30))
value = st.recursive(leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.tuples(inner, inner),
    st.dictionaries(st.text(max_size=10), inner, max_size=5)), max_leaves=25)
# Keys json turns into strings, and values it cannot encode at all.
odd_keys = st.dictionaries(st.one_of(st.integers(), st.floats(), st.booleans(), st.none(),
                                     st.text(max_size=5)), leaf, max_size=5)
unencodable = st.one_of(st.sets(st.integers(), max_size=2), st.binary(max_size=3),
                        st.builds(object), st.complex_numbers(max_magnitude=5),
                        st.dictionaries(st.tuples(st.integers()), leaf, min_size=1, max_size=2))
OPTIONS = [{}, {"ensure_ascii": False}, {"sort_keys": True, "separators": (",", ":")},
           {"separators": (",", ":")}, {"sort_keys": True}, {"indent": 2, "sort_keys": True},
           {"indent": 1, "ensure_ascii": False}, {"indent": 1}, {"indent": 0},
           {"indent": "\t", "ensure_ascii": False}, {"indent": 3}]
# Fragments invalid texts are built from: JSON tokens, broken ones, whitespace json does and
# does not skip, a BOM, lone surrogates, control characters inside strings.
fragments = st.sampled_from(['{', '}', '[', ']', ',', ':', '"a"', '"\\u00e9"', '"\\ud800"', '"\\x"',
                             '1', '-0', '1.5e3', '01', '1.', 'NaN', 'Infinity', '-Infinity',
                             'true', 'nul', ' ', '\t', '\n', '\r', '\x0b', '\u00a0', '\ufeff',
                             '"\x01"', '"é', '\ud800', '//', '"'])
texts = st.one_of(st.lists(fragments, max_size=12).map("".join), st.text(max_size=20),
                  value.map(json.dumps).flatmap(lambda s: st.sampled_from(
                      [s, " " + s + "\n", s + " x", s[:-1], "\ufeff" + s, s + "\r\n\t"])))


def outcome(call: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, str]:
    """What a call gives, comparable: repr of the result (NaN == NaN, order kept), or the
    exception's type and message."""
    try:
        return ("value", repr(call(*args, **kwargs)))
    except Exception as exc:  # noqa: BLE001 - the comparison is the point
        return (type(exc).__qualname__, str(exc))


@settings(max_examples=400, deadline=None)
@given(value, st.sampled_from(OPTIONS))
def test_dumps_equals_json(data: Any, options: dict[str, Any]) -> None:
    assert outcome(json_accel.dumps, data, **options) == \
        outcome(json.dumps, data, **options)


@settings(max_examples=200, deadline=None)
@given(st.one_of(odd_keys, unencodable, st.lists(unencodable, min_size=1, max_size=2)),
       st.sampled_from(OPTIONS))
def test_dumps_fails_and_converts_like_json(data: Any, options: dict[str, Any]) -> None:
    assert outcome(json_accel.dumps, data, **options) == \
        outcome(json.dumps, data, **options)


def test_dumps_circular_reference_like_json() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        json_accel.dumps(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        json_accel.dumps({"a": [loop]}, indent=1)
    shared = [1]
    assert json_accel.dumps([shared, shared]) == json.dumps([shared, shared])  # not a loop


@settings(max_examples=400, deadline=None)
@given(value)
def test_loads_round_trip_equals_json(data: Any) -> None:
    for text in (json.dumps(data), json.dumps(data, ensure_ascii=False),
                 json.dumps(data, indent=2)):
        assert outcome(json_accel.loads, text) == outcome(json.loads, text)
        for encoding in ("utf-8", "utf-16", "utf-16-le", "utf-32-be", "utf-8-sig"):
            raw = text.encode(encoding, "surrogatepass")
            assert outcome(json_accel.loads, raw) == outcome(json.loads, raw)


@settings(max_examples=800, deadline=None)
@given(texts)
def test_loads_of_any_text_equals_json(text: str) -> None:
    assert outcome(json_accel.loads, text) == outcome(json.loads, text)
    raw = text.encode("utf-8", "surrogatepass")
    assert outcome(json_accel.loads, raw) == outcome(json.loads, raw)
    assert outcome(json_accel.loads, bytearray(raw)) == \
        outcome(json.loads, bytearray(raw))


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=24))
def test_loads_of_any_bytes_equals_json(raw: bytes) -> None:
    assert outcome(json_accel.loads, raw) == outcome(json.loads, raw)


@pytest.mark.parametrize("document", ["", "   ", "[1] [2]", '{"a": 1,}', "[" * 100_000, 5, None,
                                      "1" * 5000, b"\xff\xfe\x00", "\ufeff{}"])
def test_loads_rejects_like_json(document: Any) -> None:
    got, want = outcome(json_accel.loads, document), outcome(json.loads, document)
    assert got == want and got[0] != "value"


def test_decode_errors_are_json_decode_errors() -> None:
    """Callers catch `json_accel.JSONDecodeError` (the json package's class, imported only
    when an `except` clause asks) and ValueError."""
    with pytest.raises(json_accel.JSONDecodeError) as caught:
        json_accel.loads('{"a": ')
    assert json_accel.JSONDecodeError is json.JSONDecodeError
    assert caught.value.lineno == 1 and caught.value.pos == 6
    with pytest.raises(AttributeError):
        json_accel.no_such_name  # noqa: B018


def test_special_floats_load_like_json() -> None:
    loaded = json_accel.loads("[NaN, Infinity, -Infinity, -0.0, 1e400]")
    assert math.isnan(loaded[0]) and loaded[1:3] == [math.inf, -math.inf]
    assert repr(loaded[3:]) == repr(json.loads("[-0.0, 1e400]"))


def test_module_imports_no_json_package() -> None:
    script = ("import sys; before = set(sys.modules)\n"  # what an editable install loaded
              "from engram import json_accel\n"
              "json_accel.dumps(json_accel.loads(b'{\"a\": [1, 2.5, null]}'), sort_keys=True)\n"
              "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules and m not in before))\n"
              "try:\n    json_accel.loads('{')\nexcept ValueError:\n    pass\n"
              "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules and m not in before))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.split("\n")[0] == "[]", done.stdout + done.stderr
    assert "json" in done.stdout.split("\n")[1], done.stdout  # positive control: it would see json


@pytest.mark.parametrize("document", ['{"a": 1,}', '["a" "b"]', '{"a": "\x01"}', '[1] x', "",
                                      "1" * 5000, "[" * 100_000, '"\\ud800"'])
def test_first_error_in_a_fresh_process_is_json_s(document: str) -> None:
    """An error before anything imported `json`: the C scanner can build JSONDecodeError only
    once json.decoder is loaded (before Python 3.12); the result is still json's exception."""
    script = ("import sys\nfrom engram import json_accel\n"
              "try:\n    print(repr(json_accel.loads(sys.argv[1])))\n"
              "except Exception as exc:\n    print(type(exc).__qualname__, exc)\n")
    done = subprocess.run([sys.executable, "-c", script, document], capture_output=True, text=True)
    got = outcome(json.loads, document)
    assert done.stdout.strip() == (got[1] if got[0] == "value" else f"{got[0]} {got[1]}"), \
        done.stderr


def test_nesting_limit_is_json_s() -> None:
    """Before Python 3.12 the scanner's limit counts the Python frames above it."""
    def deepest(loads: Callable[[str], Any]) -> int:
        low, high = 1, 20_000
        while low < high:
            middle = (low + high + 1) // 2
            try:
                loads("[" * middle + "]" * middle)
                low = middle
            except RecursionError:
                high = middle - 1
        return low

    assert deepest(json_accel.loads) == deepest(json.loads)
