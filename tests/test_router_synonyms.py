"""Synonyms and abbreviations (engram.synonyms): a prompt naming a card's subject in other
common words ("PR" for pull requests) selects it; unrelated words never do."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_card
from test_router import MEM, fillers, reasons, route

from engram import synonyms, text


@pytest.fixture
def store(workspace: Path) -> Path:
    mem = workspace / MEM
    fillers(mem)
    write_card(mem, "review.md", "---\ntitle: Code review\n"
               "card: Small changes, a description that says why, one approval.\n"
               "tags: [pull-request]\n---\nKeep changes small.\n")
    write_card(mem, "a11y.md", "---\ntitle: Interface rules\ntags: [a11y]\n---\n"
               "Every input has a label.\n")
    write_card(mem, "perf.md", "---\ntitle: Rendering\n"
               "card: Lazy-load pages, virtualize long lists, keep the bundle small.\n"
               "tags: [performance]\n---\nMeasure before memoizing.\n")
    # A concept in a short title counts as a headline word (no tag needed).
    write_card(mem, "storage.md", "---\ntitle: Database access\n---\nQueries go through the repository.\n")
    write_card(mem, "sessions.md", "---\ntitle: Cookies\n"
               "card: The login rate limit is 5 a minute.\n---\nNothing else.\n")
    return workspace


@pytest.mark.parametrize(("prompt", "card"), [
    ("Open a PR for this", "review"),
    ("what do the PRs need before merge?", "review"),
    ("who approves a merge request?", "review"),
    ("screen readers don't announce the badge", "a11y"),
    ("make this accessible per WCAG", "a11y"),
    ("the sidebar is slow", "perf"),
    ("speed up the perf of the page", "perf"),
])
def test_a_prompt_naming_a_subject_in_other_words_selects_its_card(store: Path, prompt: str,
                                                                  card: str) -> None:
    assert route(store, prompt, include_always=False).ids == [card]


def test_an_abbreviation_weighs_what_its_full_words_weigh(store: Path) -> None:
    """A concept in a title is one headline word like any other: "db access" routes exactly
    as "database access" does."""
    assert route(store, "db access", include_always=False).ids == ["storage"]
    assert route(store, "database access", include_always=False).ids == ["storage"]


def test_the_card_side_expands_too(store: Path) -> None:
    """The abbreviation in the card, the full words in the prompt."""
    assert route(store, "accessibility of the form", include_always=False).ids == ["a11y"]


def test_a_synonym_through_a_tag_is_explained_by_the_tag_and_the_typed_words(store: Path) -> None:
    result = route(store, "screen readers", include_always=False)
    found = reasons(result, "a11y")
    assert found["tag"] == ["a11y"]
    assert any('"screen readers" in the tags' in detail for detail in found["text"])


def test_a_synonym_in_a_description_alone_does_not_select(store: Path) -> None:
    """The description says "login" in passing: a prompt about auth is not about this card."""
    assert "sessions" not in route(store, "how does auth work here", include_always=False).ids


@pytest.mark.parametrize("prompt", ["pull the latest data", "the reader of the screen file",
                                    "slowly but surely", "hello there", "thanks!"])
def test_unrelated_words_select_nothing(store: Path, prompt: str) -> None:
    assert route(store, prompt, include_always=False).ids == []


def test_every_member_of_the_table_is_one_term_or_one_phrase() -> None:
    """A member that stems or stopwords away to something else would match the wrong words."""
    for line in synonyms.TABLE.strip().splitlines():
        name, _, members = line.partition(":")
        assert name.strip() and members.strip(), line
        for member in members.split(","):
            member = member.strip()
            found = text.terms(member)
            assert 1 <= len(found) <= 2, member
            assert len(found) == len(member.replace("-", " ").replace(".", " ").split()), member


def test_lookup_maps_stemmed_terms_and_phrases_to_concepts() -> None:
    table = synonyms.lookup()
    assert "~pull-request" in table["pr"]
    assert "~pull-request" in table[text.phrases(text.terms("pull requests"))[0]]
    assert all(synonyms.is_concept(c) for concepts in table.values() for c in concepts)


def test_the_index_stores_the_stemmed_table(store: Path) -> None:
    """A hook is a fresh process: it reads the table the compile stemmed, never stems it."""
    from engram import index, workspace

    loaded = workspace.load(store)
    assert loaded is not None
    assert index.load_or_build(loaded).meta("synonyms") == synonyms.lookup()
