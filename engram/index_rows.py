"""The layout of the compiled index database, shared by its reader (engram.index) and its
compiler (engram.index_compile): the format version, the positions in a stored card tuple and
a light row, the meta table's encoding, and the conversions between stored tuples and Cards
and Problems. It imports nothing of engram's at module level (only the file reader, when
a card's text is read), so both sides can depend on it."""

from __future__ import annotations

import marshal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, Iterable, Sequence

    from engram.card import Card
    from engram.problems import Problem

INDEX_FORMAT: Final = 15  # 10: cards carry lint warnings (unknown keys) and every error
# 11: head sizes per card and head counts per term (routing by what a card says it is about)
# 12: heads carry the synonym concepts they name (engram.synonyms)
# 13: cards carry the names they give as code (engram.code_names)
# 14: globs are stored as engram.glob_match specs (the regex only where a spec cannot say it)
# 15: cards carry the hash of what the model reads of them (the delivery key's)

# The secret detector's revision (engram/secrets.py). The index stores each card's verdict and
# judges a card again only when its file changes, so a detector that learns a new kind must
# not trust an older one's verdicts: its revision is part of the tag an index is built for,
# and another tag rebuilds the index as another Python does. tests/test_secrets_channels.py
# pins the revision to the detector's source: change one, bump the other.
SECRETS_REVISION: Final = 13
# What an index was built for: the Python (marshal's format, unicodedata's tables) and the
# secret detector.
PY_TAG: Final = (f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"
                 f"+secrets{SECRETS_REVISION}")

# Card tuple positions (the whole card, body included).
(K_ID, K_TITLE, K_CARD, K_TYPE, K_TAGS, K_APPLIES, K_ALWAYS, K_PRIORITY, K_DEPENDS, K_FORMAT,
 K_BODY_LINE, K_PROVENANCE, K_BODY, K_HASH, K_PATH, K_ROOT, K_VIEW) = range(17)
# Light row positions: the card without its body, plus where the body lies in the file.
(C_ID, C_TITLE, C_CARD, C_TYPE, C_TAGS, C_APPLIES, C_ALWAYS, C_PRIORITY, C_DEPENDS, C_FORMAT,
 C_BODY_LINE, C_PROVENANCE, C_BODY_SPAN, C_HASH, C_PATH, C_ROOT, C_VIEW) = range(17)


class Row(tuple):  # type: ignore[type-arg]
    """A light row read by name (`row.id`, `row.applies_to`) instead of by position. The
    stored form is the plain tuple (marshal cannot store this class); the index wraps each row
    it reads once, and the wrapper costs no copy of the values."""

    __slots__ = ()

    @property
    def id(self) -> str:
        value: str = self[C_ID]
        return value

    @property
    def title(self) -> str:
        value: str = self[C_TITLE]
        return value

    @property
    def card(self) -> str:
        value: str = self[C_CARD]
        return value

    @property
    def type(self) -> str:
        value: str = self[C_TYPE]
        return value

    @property
    def tags(self) -> tuple[str, ...]:
        value: tuple[str, ...] = self[C_TAGS]
        return value

    @property
    def applies_to(self) -> tuple[str, ...]:
        value: tuple[str, ...] = self[C_APPLIES]
        return value

    @property
    def always(self) -> bool:
        value: bool = self[C_ALWAYS]
        return value

    @property
    def priority(self) -> int:
        value: int = self[C_PRIORITY]
        return value

    @property
    def depends_on(self) -> tuple[str, ...]:
        value: tuple[str, ...] = self[C_DEPENDS]
        return value

    @property
    def format(self) -> str:
        value: str = self[C_FORMAT]
        return value

    @property
    def body_line(self) -> int:
        value: int = self[C_BODY_LINE]
        return value

    @property
    def provenance(self) -> tuple[tuple[str, Any], ...]:
        value: tuple[tuple[str, Any], ...] = self[C_PROVENANCE]
        return value

    @property
    def body_span(self) -> tuple[int, int]:
        value: tuple[int, int] = self[C_BODY_SPAN]
        return value

    @property
    def hash(self) -> str:
        value: str = self[C_HASH]
        return value

    @property
    def view(self) -> str:
        """The hash of what the model reads of the card (`card.view_hash`)."""
        value: str = self[C_VIEW]
        return value

    @property
    def path(self) -> str:
        value: str = self[C_PATH]
        return value

    @property
    def root(self) -> str:
        value: str = self[C_ROOT]
        return value


def card_from_tuple(row: tuple[Any, ...], body: str) -> Card:
    from engram.card import Card

    return Card(id=row[K_ID], title=row[K_TITLE], card=row[K_CARD], type=row[K_TYPE],
                tags=tuple(row[K_TAGS]), applies_to=tuple(row[K_APPLIES]), always=row[K_ALWAYS],
                priority=row[K_PRIORITY], depends_on=tuple(row[K_DEPENDS]), format=row[K_FORMAT],
                body_line=row[K_BODY_LINE], provenance=row[K_PROVENANCE], body=body,
                content_hash=row[K_HASH], path=row[K_PATH], root=row[K_ROOT])


def read_text(path: str) -> str:
    """A card file's text as the parser saw it (UTF-8, CRLF folded to LF)."""
    from engram.fileio import read_bounded
    from engram.store import MAX_CARD_BYTES

    return read_bounded(path, MAX_CARD_BYTES).decode("utf-8").replace("\r\n", "\n")


def problem_tuple(problem: Problem) -> tuple[Any, ...]:
    return (problem.path, problem.line, problem.severity, problem.message, problem.code)


def problem_from_tuple(row: tuple[Any, ...]) -> Problem:
    from engram.problems import Problem

    return Problem(row[0], row[1], row[2], row[3], row[4])


def roots_signature(roots: list[tuple[str, str]], follow: bool) -> list[Any]:
    return [list(r) for r in roots] + [["follow", str(follow)]]


# A file system stamps a file no finer than its granularity (2 s on FAT, 1 s on HFS+ and ext3,
# a clock tick on ext4, whose stamps come from a coarse clock): a card saved again, at the
# same size, within the tick the compiler read it in keeps the mtime stored for it, and the
# stat comparison alone would never see the edit (a session holding the old body would be
# told `already loaded:` for good). So the compiler stores a file whose mtime is this close
# to the time it read it with no mtime (SMUDGED), and keeps its real stat and content hash in
# the meta's `racy`: the freshness check reads such a file again (a few microseconds) and
# finds it changed when its bytes are not those. A refresh for any other reason stores the
# stamps that are old enough by then; past RACY_SETTLE such files, the check asks for that
# refresh itself. A stamp far ahead of the clock (the clock set back since) is not smudged:
# no save can reach it before the clock does. Git's "racily clean" index entries, the same way.
RACY_NS = 2 * 1_000_000_000
RACY_SETTLE = 32
SMUDGED = -1


def stat_signature(paths: Sequence[str], roots: Sequence[str], mtimes: Sequence[int],
                   sizes: Sequence[int]) -> tuple[str, str, bytes]:
    """The card files' stats as three flat values, in scan order (roots in order, then paths
    sorted): a hook compares these with what the compiler stored instead of looking each file
    up in the `stat` dict (unmarshalling it is a thousand tuples on every call). NUL cannot
    occur in a path, so the joined forms are unambiguous."""
    from struct import pack  # the bytes of array("q"), without array's import of collections

    numbers = pack(f"{len(mtimes) + len(sizes)}q", *mtimes, *sizes)
    return "\0".join(paths), "\0".join(roots), numbers


def read_meta(db: Any, keys: Iterable[str]) -> dict[str, Any]:
    wanted = list(keys)
    marks = ",".join("?" * len(wanted))
    return {key: marshal.loads(value) for key, value in
            db.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", wanted)}


def write_meta(db: Any, values: dict[str, Any]) -> None:
    db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                   [(key, marshal.dumps(value)) for key, value in values.items()])
