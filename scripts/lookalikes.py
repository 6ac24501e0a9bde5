"""Print the look-alike table `engram/secrets.py` embeds (`_LOOKALIKE_FROM`, `_LOOKALIKE_TO`):
every character Unicode's confusables data (UTS #39) says is drawn like an ASCII letter, digit
or one of `_-./+=:@`, that NFKC does not already fold to one.

    python scripts/lookalikes.py path/to/confusables.json

The JSON is the one the `confusable-homoglyphs` package ships (3.3.1: Unicode 15.1's
confusables.txt, each character with those it is confusable with). A character confusable with
several ASCII ones takes the one its Unicode name says (a capital, a small letter, a digit),
then a letter before a digit before a sign."""

from __future__ import annotations

import json
import sys
import unicodedata

TARGETS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./+=:@")


def rank(source: str, target: str) -> tuple[int, str]:
    name = unicodedata.name(source, "")
    if target.isupper():
        fit = 0 if "CAPITAL" in name else 2
    elif target.islower():
        fit = 0 if "SMALL" in name or "CAPITAL" not in name else 2
    elif target.isdigit():
        fit = 0 if "DIGIT" in name else 3
    else:
        fit = 1
    return fit, target


def table(data: dict[str, list[dict[str, str]]]) -> dict[str, str]:
    candidates: dict[str, set[str]] = {}
    for key, entries in data.items():
        group = {key, *(entry["c"] for entry in entries)}
        ascii_ones = {c for c in group if c in TARGETS}
        for source in group:
            if len(source) == 1 and not source.isascii() and ascii_ones:
                candidates.setdefault(source, set()).update(ascii_ones)
    found = {}
    for source, targets in candidates.items():
        folded = unicodedata.normalize("NFKC", source)
        if folded.isascii() or unicodedata.category(source) in ("Cf", "Mn", "Me", "Zs", "Cc"):
            continue  # NFKC folds it, or the scan drops it
        found[source] = min(targets, key=lambda t: rank(source, t))
    return dict(sorted(found.items()))


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as handle:
        found = table(json.load(handle))
    escape = lambda text: "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"  # noqa: E731
                                  for c in text)
    sources, targets = "".join(found), "".join(found.values())
    print(f"# {len(found)} characters")
    for name, text in (("_LOOKALIKE_FROM", sources), ("_LOOKALIKE_TO", targets)):
        print(f"{name}: Final = (")
        step = 12 if name == "_LOOKALIKE_FROM" else 80
        for i in range(0, len(text), step):
            chunk = text[i:i + step]
            print(f'    "{escape(chunk) if name == "_LOOKALIKE_FROM" else chunk}"')
        print(")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
