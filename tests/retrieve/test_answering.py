"""A row that stands for folded messages shows the member's sentences that answer (issue 33,
retrieve/answering.py): chosen by meaning, with its SESSION#N. Real SQLite and the real
model: meaning is what is tested."""

from __future__ import annotations

from pathlib import Path

from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.embed import Embedder
from memctl.ingest.message_vectors import embed_messages, parts
from memctl.integrations.mcp_search import hit
from memctl.retrieve.answering import ANSWER_CHARS, shown
from memctl.retrieve.pipeline import recall
from tests.conftest import said_in_session
from tests.retrieve.test_message_vectors import SAID, SESSION_END, _digest

# the answer said in the session, after a sentence about something else
ANSWER = "We found the integration suite runs serially, so CI takes forty minutes."
MEMBER = f"I had pizza for lunch today. {ANSWER}"


def test_a_digest_shows_its_member_sentence_closest_in_meaning(
    home: Path, local_embedder: Embedder
) -> None:
    with Context(load_settings(overrides={"recall.message_vectors": True}), local_embedder) as on:
        said_in_session(on, [*SAID[:2], MEMBER, *SESSION_END], "s1")
        digest = _digest(on, "Session: the integration suite; Outcome: split into shards", "s1")
        embed_messages(on.db, on.embedder, 100)
        question = "why are our builds so slow?"
        slow = recall(on, question, touch=False, sessions=True, answers=parts)
        budgeted = recall(on, question, touch=False, budget=400, answers=parts)
    first = slow.results[0]
    assert first.memory.id == digest.id and "s1#3" in first.members
    assert first.answering is not None
    assert first.answering.message == "s1#3"
    assert first.answering.text == ANSWER  # not the pizza: the sentence closest in meaning
    assert first.to_dict()["from"]["message"] == "s1#3"
    assert hit(first)["from"]["text"] == ANSWER
    # a context block's rows show their own text: its budget is unchanged
    assert all(r.answering is None for r in budgeted.results)


def test_a_short_sentence_takes_the_next_and_a_long_one_is_cut() -> None:
    assert shown(["Done.", "The threshold is 0.9.", "Bye."], 0) == "Done. The threshold is 0.9."
    long = shown(["word " * 100], 0)
    assert len(long) == ANSWER_CHARS and long.endswith("…")
