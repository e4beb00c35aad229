"""A word a question writes joined ("sub-agent") is a word, not an identifier it spells
out: every session message that mentions a sub-agent was a clear match for any question
naming one, however little else of it the message held. The message that answers stays
clear by its share of the question's words. The real model, a real OpenCode session."""

from __future__ import annotations

import pytest

from memctl.api.recall import RecallRequest, recall
from memctl.context import Context
from tests.ingest.test_compaction import ingest_file
from tests.ingesting import REAL_SESSIONS

LEDGER = REAL_SESSIONS / "opencode-written-ledger.json"  # a session that runs a sub-agent


@pytest.fixture(scope="module")
def ledger(real_store: Context) -> Context:
    ingest_file(real_store, LEDGER)
    return real_store


def clear_texts(ctx: Context, question: str) -> list[str]:
    found = recall(ctx, RecallRequest(question, limit=8, all_scopes=True, touch=False))
    return [r.memory.content for r in found.result.results if r.clear]


def test_a_joined_word_of_the_question_lends_no_clear_label(ledger: Context) -> None:
    """The session never says which model a sub-agent should use: its messages that
    mention one ("The sub-agent found one more: …") are possible matches at most."""
    clear = clear_texts(ledger, "which model should a sub-agent use for small, cheap jobs?")
    assert clear == []


def test_the_message_that_answers_stays_clear(ledger: Context) -> None:
    clear = clear_texts(ledger, "did a sub-agent check the other routes for null fields?")
    assert any("I'll have a sub-agent scan the other routes" in text for text in clear), clear


def test_a_question_spelling_an_identifier_out_still_names_it(ledger: Context) -> None:
    """Written apart, two words name the identifier joining them: the message that writes
    "billing address" only as ``customer.billingAddress`` is clear."""
    clear = clear_texts(ledger, "where is billing address read?")
    opening = "The route dereferences `customer.billingAddress`"
    assert any(text.startswith(opening) for text in clear), clear
