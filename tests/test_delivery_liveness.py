"""The other half of "each memory once, as the model sees it": a card the session asks for
reaches the model whole, once, whatever the session start had to fold or drop to fit the
host's budget. Hypothesis draws a store (always cards and others, priorities, bodies up to
3/5 of the budget), a host, and the order in which prompts ask for the cards; each card asked
for twice in a row must by then have been sent whole, and no card is ever sent twice."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hookkit import already, call, context, make_workspace, payload
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import render

WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
FILLER = ("keep", "tests", "green", "review", "every", "change", "before", "merge")
# Host: (budget unit and limit, as in hosts/*.yaml or the default load.max_tokens).
HOSTS = {"claude": ("chars", 9500), "codex": ("tokens", 2400), "gemini": ("tokens", 1600)}


def _bodies(text: str) -> dict[str, str]:
    lines = text.split("\n")
    return {line[len(render.HEADER_PREFIX):].split(" — ")[0]: lines[n + 1]
            for n, line in enumerate(lines) if line.startswith(render.HEADER_PREFIX)}


cards = st.lists(st.tuples(st.booleans(), st.integers(0, 100), st.integers(20, 100)),
                 min_size=2, max_size=len(WORDS))


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(host=st.sampled_from(sorted(HOSTS)), store=cards, data=st.data())
def test_every_card_asked_for_reaches_the_model_whole_once(host: str, store: list,
                                                           data: st.DataObject) -> None:
    unit, limit = HOSTS[host]
    # Bodies up to 3/5 of the budget: each fits alone, two large ones do not fit together.
    room = (limit * 4 if unit == "tokens" else limit) * 3 // 5
    base = Path(tempfile.mkdtemp(prefix="engram-live-"))
    saved = os.environ.get("ENGRAM_STATE_DIR")
    os.environ["ENGRAM_STATE_DIR"] = str(base / "state")
    try:
        texts, expected, always_of = {}, {}, {}
        for word, (always, priority, share) in zip(WORDS, store, strict=False):
            words = (FILLER * (room // 10))[: max(1, room * share // 100 // 8)]
            body = f"{word} rule: " + " ".join(words) + "."
            expected[word] = body
            always_of[word] = always
            texts[word] = (f"---\ntitle: {word.title()} notes\ntags: [{word}]\n"
                           f"{'always: true' + chr(10) if always else ''}priority: {priority}\n"
                           f"---\n{body}\n")
        ws = make_workspace(base / "proj", texts)
        name = "BeforeAgent.json" if host == "gemini" else "UserPromptSubmit.json"
        sent: dict[str, int] = {}

        def record(text: str) -> None:
            for card_id, body in _bodies(text).items():
                assert body == expected[card_id]
                sent[card_id] = sent.get(card_id, 0) + 1
                assert sent[card_id] == 1, f"{card_id} sent twice"

        record(context(call(host, payload(host, "SessionStart.json", ws, session_id="S",
                                          source="startup"))))
        order = data.draw(st.lists(st.sampled_from(sorted(expected)), min_size=1, max_size=12))
        for word in order:
            # Asked twice: the first answer may fold it when other cards of that moment (the
            # session start's share, on Gemini) fill the budget; the second has only it.
            for _ in range(2):
                text = context(call(host, payload(host, name, ws, session_id="S",
                                                  prompt=f"tell me about the {word} notes")))
                record(text)
            assert sent.get(word) == 1, \
                f"{word} asked for twice, never sent whole (answer: {text[:200]!r})"
            # Listed when sent before; an always card is session context and never listed.
            assert word in _bodies(text) or word in already(text) or always_of[word], \
                f"{word} neither sent nor listed"
    finally:
        if saved is None:
            os.environ.pop("ENGRAM_STATE_DIR", None)
        else:
            os.environ["ENGRAM_STATE_DIR"] = saved
        shutil.rmtree(base, ignore_errors=True)
