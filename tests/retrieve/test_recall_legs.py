"""The retrieval legs run side by side: the full-text search in a thread, the query
embedding (and the vector leg's first search) beside it."""

from __future__ import annotations

import threading

import pytest

from memctl.context import Context
from memctl.errors import StoreError
from memctl.memories import operations as memories
from memctl.retrieve.pipeline import recall
from memctl.retrieve.stages import candidates
from memctl.store.database import Database
from tests.conftest import said_in_session

FACTS = [
    "The production database is backed up every night at 2am",
    "The frontend uses pnpm as its package manager",
    "Office plants need watering on Fridays",
]


def test_both_legs_and_the_word_weights_reach_the_results(real_ctx: Context) -> None:
    ids = [memories.remember(real_ctx, fact).id for fact in FACTS]
    result = recall(real_ctx, "which package manager does the frontend use?", touch=False)
    assert result.results[0].memory.id == ids[1]
    assert set(result.results[0].ranks) == {"bm25", "vector"}
    assert result.run is not None and set(result.run.word_weights) == {
        "package",
        "manager",
        "frontend",
        "use",
    }


def test_a_failed_full_text_leg_leaves_a_note_and_the_vectors_answer(
    real_ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [memories.remember(real_ctx, fact).id for fact in FACTS]

    def broken(*_: object) -> list[tuple[str, float]]:
        raise StoreError("the full-text index is damaged")

    monkeypatch.setattr(candidates, "fts_rank", broken)  # a damaged index cannot be made
    result = recall(real_ctx, "which package manager does the frontend use?", touch=False)
    assert result.warnings == [
        "full-text search unavailable, results from vectors alone: the full-text index is damaged"
    ]
    assert result.results[0].memory.id == ids[1]
    assert result.results[0].ranks == {"vector": 1}
    # the query's word weights do not come from that leg: relevance still reads them
    assert result.run is not None and "frontend" in result.run.word_weights


def test_recall_inside_a_transaction_finds_what_it_wrote_by_words_too(
    real_ctx: Context,
) -> None:
    with real_ctx.db.atomic():
        memory = memories.remember(real_ctx, "The frontend uses pnpm as its package manager")
        # one connection, so the full-text search cannot run beside the word weights'
        # look-ups (it raised ThreadingViolationError now and then): asked again and again
        for _ in range(20):
            result = recall(real_ctx, "which package manager does the frontend use?", touch=False)
    assert result.results[0].memory.id == memory.id
    assert set(result.results[0].ranks) == {"bm25", "vector"}


def test_the_full_text_thread_never_asks_the_store_connection_anything(
    real_ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Choosing the reader asks the store's connection whether it is in a transaction; from
    # the thread, that raced the word weights' look-ups on the same connection and ended a
    # recall now and then with ThreadingViolationError ("internal error").
    memories.remember(real_ctx, FACTS[1])
    callers: list[str] = []
    chosen = Database.reader

    def reader(db: Database, lane: int = 0) -> Database:
        callers.append(threading.current_thread().name)
        return chosen(db, lane)

    monkeypatch.setattr(Database, "reader", reader)
    said_in_session(real_ctx, ["we settled on pnpm for the frontend packages"])
    result = recall(
        real_ctx, "which package manager does the frontend use?", touch=False, sessions=True
    )
    assert result.results and "bm25" in result.results[0].ranks
    assert any(r.is_message for r in result.results)  # the messages' thread found it
    assert len(callers) == 2 and set(callers) == {threading.main_thread().name}


def test_a_failed_message_search_leaves_a_note_and_the_memories_answer(
    real_ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [memories.remember(real_ctx, fact).id for fact in FACTS]
    said_in_session(real_ctx, ["we settled on pnpm for the frontend packages"])

    def broken(*_: object) -> list[object]:
        raise StoreError("the messages' index is damaged")

    monkeypatch.setattr(candidates, "search_messages", broken)
    result = recall(
        real_ctx, "which package manager does the frontend use?", touch=False, sessions=True
    )
    assert result.warnings == ["session search unavailable: the messages' index is damaged"]
    assert result.results[0].memory.id == ids[1]
    assert set(result.results[0].ranks) == {"bm25", "vector"}
    assert not any(r.is_message for r in result.results)


PRIYA = [
    "Priya: good morning everyone",
    "Priya: thanks for the review!",
    "Priya reviewed the migration script",
    "Priya: at home I mostly write Rust",
    "The release checklist lives in docs/release.md",
]


def test_a_name_most_memories_mention_leaves_the_query_vector_and_a_name_only_bm25(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    for fact in PRIYA:
        memories.remember(ctx, fact)
    embedded: list[str] = []
    embed = ctx.embedder.embed

    def spied(texts: list[str]) -> object:
        embedded.extend(texts)
        return embed(texts)

    monkeypatch.setattr(ctx.embedder, "embed", spied)
    asked = "Which programming languages does Priya code in?"
    found = recall(ctx, asked, touch=False)
    assert found.run is not None and found.run.common_names == {"Priya"}
    # searched and ranked without the name; the query as asked is the gate's evidence
    assert embedded == ["Which programming languages does code in?", asked]
    # no memory holds another of its words: BM25 on "Priya" alone would rank by length
    assert not any("bm25" in r.ranks for r in found.results)
    # each of its memories is found; the fake model reads no meaning, so none says anything
    # of languages, and the name alone makes none clear (fuse.unasked_names; with the real
    # model "at home I mostly write Rust" does, and all four are clear)
    assert {r.memory.content for r in found.results} >= set(PRIYA[:4])
    assert not any(r.clear for r in found.results)
    embedded.clear()
    found = recall(ctx, "what did Priya review?", touch=False)
    assert embedded == ["what did review?", "what did Priya review?"]
    # another word is in the store: BM25 searches every word, the name too
    by_words = {r.memory.content for r in found.results if "bm25" in r.ranks}
    assert by_words == set(PRIYA[:4])
    # two of them say "review": the name makes every one of its memories clear
    assert {r.memory.content for r in found.results if r.clear} == set(PRIYA[:4])
