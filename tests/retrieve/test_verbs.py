"""Verbs in the past: a question in the present ("did I spend driving") reaches the turn
that tells it in the past ("I drove"), whose stem the full-text index does not join."""

from __future__ import annotations

from memctl.config import load_settings
from memctl.context import Context
from memctl.retrieve.pipeline import recall
from memctl.retrieve.vocabulary import VERBS_FILE, parse_verbs, verb_forms, verbs
from tests.conftest import said_in_session

DROVE = "I drove for five hours to the mountains in Tennessee, a tiring trip but worth it."
# what a question about driving matches word for word, and does not answer
CHAT = [
    DROVE,
    "How many hours of sleep should I get before a long trip?",
    "Driving at night makes me nervous, any tips for staying alert on the road?",
    "I spend too much on fuel; which cars have the best mileage?",
    "Road trip snacks that travel well: trail mix, fruit, jerky.",
    "My sister is visiting next week, what should we cook?",
]


def test_the_table_names_its_source_and_joins_only_what_the_stemmer_does_not() -> None:
    header = VERBS_FILE.read_text().split("\n\n")[0]
    assert "English grammar" in header and "MIT" in header
    table = verbs()
    assert table["driving"] == (("drove",), ("driven",))
    assert table["drove"] == (("drive",), ("driven",))
    assert table["won"] == (("win",),)
    assert "go" not in table and "went" not in table  # the vocabulary's empty verbs stay out
    assert "get" not in table and "got" not in table  # as empty as "have"
    assert "meeting" not in table and table["met"] == (("meet",),)  # a noun in -ing: out


def test_a_past_the_stemmer_joins_is_no_other_form() -> None:
    assert parse_verbs("show showing showed shown") == {
        "show": (("shown",),),
        "shows": (("shown",),),
        "showes": (("shown",),),
        "showing": (("shown",),),
        "shown": (("show",),),
    }
    assert parse_verbs("# a comment\n\nput putting put put") == {}


def test_a_question_s_verbs_and_their_other_forms() -> None:
    forms = verb_forms("How many hours did I spend driving to the coast?")
    assert forms == {"spend": (("spent",),), "driving": (("drove",), ("driven",))}
    assert verb_forms("what does the standup cover?") == {}


def test_a_question_in_the_present_reaches_the_turn_told_in_the_past(ctx: Context) -> None:
    said_in_session(ctx, CHAT)  # the chat kept verbatim, nothing distilled from it
    question = "How long did I spend driving on that trip?"

    def rank(context: Context) -> int:
        found = recall(context, question, touch=False, sessions=True)
        return [r.memory.content for r in found.results].index(DROVE) + 1

    with_verbs = rank(ctx)
    off = Context(load_settings(overrides={"recall.vocabulary_weight": 0}), ctx.embedder)
    try:
        without = rank(off)
    finally:
        off.close()
    assert with_verbs == 1 and without > with_verbs
