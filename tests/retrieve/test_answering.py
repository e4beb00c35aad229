"""A row that stands for folded messages shows the member's sentences that answer (issue 33,
retrieve/answering.py): the member chosen by its stored vectors, with its SESSION#N, the
sentence by the query's words, and nothing embedded at query time. Real SQLite and the real
model: the member is chosen by meaning."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.embed import Embedder
from memctl.ingest.message_vectors import embed_messages, parts
from memctl.integrations.mcp_search import hit
from memctl.model import Message, Role, Session
from memctl.retrieve.answering import (
    ANSWER_CHARS,
    best_sentence,
    reply_to,
    said_already,
    says_something,
    shown,
)
from memctl.retrieve.excerpt import query_words
from memctl.retrieve.pipeline import recall
from memctl.store import sessions
from tests.retrieve.test_message_vectors import _digest

# the answer said in the session, in words other than the question's, after a short opening
OPENING = "Noted."
ANSWER = "We found the integration suite runs serially, so CI takes forty minutes."
WORK = [
    (Role.USER, "I had pizza for lunch today, the new place on Main Street."),
    (Role.ASSISTANT, f"{OPENING} {ANSWER}"),
    (Role.USER, "ok, shard it"),
    (Role.ASSISTANT, "Done, pushed to main."),
]
DONE = "We split it into four shards, so it takes ten minutes now."
QUESTION = "How long does CI take these days?"
# asked again in other words: the question is the member closest in meaning (cosine 0.40, its
# reply 0.36), folded into the digest
ASKED_AGAIN = "what is the duration of our build pipeline?"
ASKED = [
    (Role.USER, QUESTION),
    (Role.ASSISTANT, f"{DONE} Before that it took forty minutes."),
    (Role.USER, "thanks!"),
]


class Counting:
    """The real embedder, keeping every text it was asked to embed."""

    def __init__(self, embedder: Embedder) -> None:
        self.inner, self.texts = embedder, list[str]()
        self.name, self.dim = embedder.name, embedder.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return self.inner.embed(texts)


def _session(ctx: Context, said: list[tuple[Role, str]], session_id: str) -> None:
    with ctx.db.atomic():
        sessions.save_session(ctx.db, Session(id=session_id, client="generic", scope="global"))
        sessions.insert_messages(
            ctx.db,
            [Message(r, t, session_id=session_id, seq=n) for n, (r, t) in enumerate(said, 1)],
        )


def test_a_digest_shows_its_member_closest_in_meaning_and_embeds_nothing(
    home: Path, local_embedder: Embedder
) -> None:
    counting = Counting(local_embedder)
    with Context(load_settings(overrides={"recall.message_vectors": True}), counting) as on:
        _session(on, WORK, "s1")
        digest = _digest(on, "Session: CI; Outcome: pushed to main", "s1")
        embed_messages(on.db, on.embedder, 100)
        before = len(counting.texts)
        found = recall(on, "why are our builds so slow?", touch=False, sessions=True, answers=parts)
        budgeted = recall(on, "why are our builds so slow?", touch=False, budget=400)
    row = next(r for r in found.results if r.memory.id == digest.id)
    assert row.answering is not None and row.answering.message == "s1#2"
    # no sentence holds the query's words: the opening, short, with the sentence after it
    assert row.answering.text == f"{OPENING} {ANSWER}"
    assert hit(row)["from"]["text"] == row.to_dict()["from"]["text"] == row.answering.text
    # the query alone was embedded, no sentence of a member's (main embedded the part's)
    assert not [t for t in counting.texts[before:] if "serially" in t]
    # a context block's rows show their own text: its budget is unchanged
    assert all(r.answering is None for r in budgeted.results)


def test_a_users_question_gives_way_to_the_reply_after_it(
    home: Path, local_embedder: Embedder
) -> None:
    with Context(load_settings(overrides={"recall.message_vectors": True}), local_embedder) as on:
        _session(on, ASKED, "s2")
        digest = _digest(on, "Session: CI timing; Outcome: answered", "s2")
        embed_messages(on.db, on.embedder, 100)
        found = recall(on, ASKED_AGAIN, touch=False, sessions=True, answers=parts)
    row = next(r for r in found.results if r.memory.id == digest.id)
    # the question is the closest member (it is the query): its reply is what answers
    assert row.answering is not None and row.answering.message == "s2#2"
    assert row.answering.text.startswith(DONE)


def test_a_sentence_the_row_holds_already_is_told_by_its_words() -> None:
    digest = "Session — CI; Outcome: **Run** `make release` to deploy the billing service."
    assert said_already("Run make release to deploy the billing service.", digest)
    fact = "Prepare a focused plan with clear steps for tracking."
    assert said_already("great, prepare a focused plan with clear steps for tracking.", fact)
    # a digest quoting it cut short does not show its rest
    quoted = "Found: **Workflows**: - pr-review: code review on PRs - inline…"
    said = "Workflows: pr-review: code review on PRs; inline-fix: fixes lint errors in place."
    assert not said_already(said, quoted)
    assert not said_already("The threshold is 0.9 for the billing service.", digest)


def test_the_sentence_holding_the_most_query_words_is_chosen_else_the_opening() -> None:
    pieces = ["We looked at the logs.", "The billing alerts fire at 0.9.", "Then we pushed."]
    assert best_sentence(pieces, query_words("when do the billing alerts fire?")) == 1
    assert best_sentence(pieces, query_words("why are our builds so slow?")) == 0


def test_a_short_sentence_takes_the_next_and_a_long_one_is_cut() -> None:
    assert shown(["Done.", "The threshold is 0.9.", "Bye."], 0) == "Done. The threshold is 0.9."
    alone = "The integration suite runs serially, so CI takes forty minutes."
    assert shown([alone, "word " * 60], 0) == alone
    long = shown(["word " * 100], 0)
    assert len(long) == ANSWER_CHARS and long.endswith("…")


# A user's request, the assistant's announcement, its call and the call's output, then the
# message saying what came of it (fresh9's shape: docs/benchmarks.md, "fresh9 studied")
REQUEST = "Read every markdown document in docs/provenance/ first."
FOUND = "I found 19 markdown files under docs/provenance/, the task first."
READ_ALL = [
    (Role.USER, REQUEST),
    (Role.ASSISTANT, "I’ll read `docs/provenance/TASK.md` first, then every `*.md` under it."),
    (Role.ASSISTANT, "[tool exec_command: rg --files docs/provenance -g '*.md']"),
    (Role.TOOL, "[tool result exec_command: docs/provenance/TASK.md · docs/provenance/a.md]"),
    (Role.ASSISTANT, f"{FOUND} Reading the rest now."),
    (Role.USER, "what is in TASK.md?"),
    (Role.ASSISTANT, "[tool exec_command: cat docs/provenance/TASK.md]"),
]


def test_a_reply_is_the_first_message_of_the_turn_that_says_something(home: Path) -> None:
    with Context(load_settings()) as on:
        _session(on, READ_ALL, "s3")
        # past the announcement (a curly apostrophe's "I’ll"), the call and its output
        assert reply_to(on.db, "s3#1") == "s3#5"
        # a turn of tool notes only: its first message, as before
        assert reply_to(on.db, "s3#6") == "s3#7"
        # the user speaks before any assistant does: no reply
        assert reply_to(on.db, "s3#5") is None
    assert not says_something("[tool exec_command: ls]\nLet me read it next.")
    assert says_something(f"{FOUND}\n[tool exec_command: ls]")


def test_a_users_message_row_shows_its_reply(home: Path, local_embedder: Embedder) -> None:
    with Context(load_settings(overrides={"recall.message_vectors": True}), local_embedder) as on:
        _session(on, READ_ALL, "s4")
        embed_messages(on.db, on.embedder, 100)
        asked = "how many markdown documents were in the provenance docs folder?"
        found = recall(on, asked, touch=False, sessions=True, answers=parts)
    row = next(r for r in found.results if r.memory.id == "s4#1")
    # the request restates the question; what came of it is the reply's sentence
    assert row.answering is not None and row.answering.message == "s4#5"
    assert row.answering.text.startswith(FOUND)
