"""Terms for routing: Unicode word tokens on word boundaries, lowercased, stopwords dropped,
with a light suffix stemmer so "cards" finds "card" while "obsession" never finds "session"."""

from __future__ import annotations

import sys
from itertools import chain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

STOPWORDS: Final = frozenset("""
a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can cannot could couldn did didn do does doesn doing
don down during each else etc even ever every few for from further get gets got had hadn has
hasn have haven having he her here hers herself him himself his how however i if in into is
isn it its itself just let lets like ll make makes me might more most much must mustn my
myself need needs no nor not now of off on once only or other ought our ours ourselves out
over own please re really same shall she should shouldn so some such than thank thanks that
the their theirs them themselves then there these they this those through thus to too under
until up upon us use used uses using ve very via was wasn we were weren what when where
whether which while who whom why will with within without won would wouldn yes yet you your
yours yourself yourselves hello hi hey there okay ok sure great good nice cool awesome
want wants way ways thing things something anything everything one two new
look looks seem seems sound sounds perfect fine excellent wonderful appreciate appreciated
cheers bye goodbye
""".split())


def stem(word: str) -> str:
    """A deliberately small English suffix stripper; both sides of a match use it."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5:
        word = word[:-3]
        if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
            word = word[:-1]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
        if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
            word = word[:-1]
    if word.endswith("e") and len(word) > 4:
        # "route" and "routing" meet at "rout"; "cache" and "caching" at "cach".
        word = word[:-1]
    return word


_LOWER_OR_DIGIT: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_UPPER: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _camel_spaced(token: str) -> str:
    """A space between an ASCII lowercase letter or digit and the ASCII capital after it
    (`retryTimeout` -> "retry Timeout"), what the regex `(?<=[a-z0-9])(?=[A-Z])` marks."""
    cuts = [i for i in range(1, len(token))
            if token[i] in _UPPER and token[i - 1] in _LOWER_OR_DIGIT]
    if not cuts:
        return token
    return " ".join(token[start:end] for start, end in zip([0, *cuts], [*cuts, len(token)],
                                                           strict=True))


def _split_token(token: str) -> tuple[str, ...]:
    pieces = _camel_spaced(token).replace("_", " ").split() if (
        "_" in token or not token.islower()) else [token]
    lowered = [piece.lower() for piece in pieces if piece]
    if len(lowered) > 1:
        whole = token.lower().strip("_")
        return (whole, *lowered) if whole else tuple(lowered)
    return tuple(lowered)


# ASCII bytes that are word characters (what `\w` matches among them); every other byte
# becomes a space. For ASCII text, translate + split gives the regex `\w+`'s tokens about three
# times faster (a cold compile tokenises every card).
_WORD_BYTES: Final = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_ASCII_SPLIT: Final = bytes(c if c in _WORD_BYTES else 32 for c in range(256))


class WordChars(dict[int, int]):
    """A `str.translate` table that keeps word characters (what `\\w` matches in a str
    pattern: `isalnum()` or `_`) and the characters of `extra`, and turns every other
    character into a space; filled in as characters are met. No word character is
    whitespace, so `split()` then gives the regex `\\w+`'s tokens, without importing `re`."""

    def __init__(self, extra: str = "") -> None:
        super().__init__()
        self.extra = extra

    def __missing__(self, code: int) -> int:
        char = chr(code)
        kept = self[code] = code if char.isalnum() or char == "_" or char in self.extra else 32
        return kept


_WORD_CHARS: Final = WordChars()


def tokens(text: str) -> list[str]:
    """Word tokens (what the regex `\\w+` finds), in order."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_SPLIT).decode("ascii").split()
    if "re" in sys.modules:
        # Loaded anyway by whatever compiles cards: its scanner is about twice as fast as the
        # table on long non-ASCII text. A hook answering a prompt never pays for the import.
        import re

        return re.findall(r"\w+", text)
    return _table_tokens(text)


def _table_tokens(text: str) -> list[str]:
    return text.translate(_WORD_CHARS).split()


def words(text: str) -> list[str]:
    """Raw lowercased word tokens, split at camelCase and underscores too."""
    found: list[str] = []
    for token in tokens(text):
        found.extend(_split_token(token))
    return found


_TERM_CACHE: dict[str, tuple[str, ...]] = {}


_TERM_CACHE_MAX: Final = 200_000


def _terms_of(token: str) -> tuple[str, ...]:
    return tuple(stem(word) for word in _split_token(token)
                 if word not in STOPWORDS and not word.isdigit()
                 and not (len(word) < 2 and word.isascii()))


def _token_terms(token: str) -> tuple[str, ...]:
    cached = _TERM_CACHE.get(token)
    if cached is None:
        cached = _terms_of(token)
        if len(_TERM_CACHE) < _TERM_CACHE_MAX:
            _TERM_CACHE[token] = cached
    return cached


def terms(text: str) -> list[str]:
    """Routing terms: stemmed words minus stopwords, digits-only tokens and single letters."""
    found = tokens(text)
    cache = _TERM_CACHE
    missing = set(found).difference(cache)
    if missing and len(cache) + len(missing) > _TERM_CACHE_MAX:
        out: list[str] = []
        for token in found:
            out.extend(_token_terms(token))
        return out
    for token in missing:
        cache[token] = _terms_of(token)
    # Every token is cached now: the lookups and the flattening run in C (a cold compile
    # tokenises every card; a prompt's text is short either way).
    return list(chain.from_iterable(map(cache.__getitem__, found)))


def term_words(text: str) -> dict[str, str]:
    """Routing term -> the prompt word it came from (its first occurrence), in the order of
    `terms`: explanations show the words a user typed, never stems."""
    found: dict[str, str] = {}
    for token in tokens(text):
        pieces = _split_token(token)
        if len(pieces) == 1:
            for term in _token_terms(token):
                found.setdefault(term, token)
            continue
        # A compound token: its terms are the whole (kept as typed) and then each piece.
        for position, piece in enumerate(pieces):
            for term in _token_terms(piece)[:1] if position == 0 else _token_terms(piece):
                found.setdefault(term, piece)
    return found


def phrases(found: list[str]) -> list[str]:
    """Adjacent term pairs ("server action"), the head phrases the index keeps and a prompt
    looks up; a space never occurs inside a term, so a phrase never collides with one."""
    return [f"{first} {second}" for first, second in zip(found, found[1:], strict=False) if first != second]
