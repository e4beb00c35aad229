"""Questions written by rule for a memory stored without a host's (ingest/asked.py): their
shapes from the note's structure, none for a chat turn, and stored and searched as a host's
questions are. The store tests run the real model (the floor is a cosine of MiniLM)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memctl.api import memory as api
from memctl.api.maintain import MaintainRequest, maintain
from memctl.context import Context
from memctl.ingest.asked import derived_questions
from memctl.memories.questions import on_topic
from memctl.model import Category, Kind, Memory, Tier
from memctl.retrieve.pipeline import start
from memctl.retrieve.stages.candidates import candidates
from memctl.store.memories import insert_memory
from memctl.store.questions import questions_of
from tests.fakes import HashEmbedder

OWNED = "Priya Raman owns the search service; ask her before changing the ranking."
RETRO = "Retro happens every second Thursday."
NAMED = "To reset the Postgres cache: `redis-cli FLUSHALL`."  # searched with its names


@pytest.mark.parametrize(
    ("note", "category", "asked"),
    [
        ("Releases: `just publish` from the release branch.", None, "how do I run releases?"),
        ("To reset the cache: `redis-cli FLUSHALL`.", None, "how do I reset the cache?"),
        ("Export the fixtures with `./bin/dump --all`.", None, "how do I export the fixtures?"),
        ("Priya Raman owns the search service.", None, "who owns the search service?"),
        ("Design reviews go to Tomas Berg.", None, "who handles design reviews?"),
        ("Retro happens every second Thursday.", None, "when is retro?"),
        ("The staging box sits in the Leeds office.", None, "where is the staging box?"),
        (
            "We picked Redis over Memcached because we need persistence.",
            None,
            "why did we picked Redis over Memcached?",
        ),
        ("Avoid moment.js; use date-fns.", None, "should I use moment.js?"),
        (
            "Login timeouts were traced to a slow DNS resolver.",
            None,
            "what happened with login timeouts?",
        ),
        (
            "Tabs, not spaces, in Makefiles.",
            "preferences",
            "what do I prefer about tabs, not spaces, in Makefiles?",
        ),
    ],
)
def test_a_note_is_asked_by_its_shape(note: str, category: str | None, asked: str) -> None:
    found = derived_questions(note, category)
    assert asked in found and len(found) <= 3


def test_software_is_asked_by_what_it_is_and_a_chat_turn_is_not_asked() -> None:
    assert "which database system do we use?" in derived_questions("Reports read from PostgreSQL.")
    assert derived_questions("[8 May 2023] Caroline: I went to the support group.") == []
    assert derived_questions("ok") == []


def test_a_remembered_note_is_found_by_its_written_questions_and_a_hosts_stand(
    real_ctx: Context,
) -> None:
    stored = api.remember(real_ctx, api.RememberRequest(OWNED)).memory
    asked = questions_of(real_ctx.db, stored.id)
    assert "who owns the search service?" in asked
    hosted = ("which engineer is responsible for search?",)
    given = api.remember(
        real_ctx, api.RememberRequest("Search relevance is Priya's.", questions=hosted)
    )
    assert questions_of(real_ctx.db, given.memory.id) == list(hosted)
    for text in ("The billing service retries webhooks three times.", "Retro is on Fridays."):
        api.remember(real_ctx, api.RememberRequest(text))
    run = start(real_ctx, "who is in charge of the search service?", limit=3)
    ranks = {c.id: c.ranks for c in candidates(run, [])}
    assert ranks[stored.id].get("question_vector") == 1


def test_maintain_writes_questions_for_a_memory_stored_without_them_once(
    real_ctx: Context,
) -> None:
    note = Memory(content=OWNED, kind=Kind.SEMANTIC, category=Category.ENTITIES, tier=Tier.WORKING)
    gone = Memory(content=RETRO, kind=Kind.SEMANTIC, category=Category.EVENTS, tier=Tier.WORKING)
    for memory in (note, gone):  # as sync, an import or an older memctl write them
        insert_memory(real_ctx.db, memory, real_ctx.vectors([memory.content])[0])
    api.delete(real_ctx, gone.id)
    first = maintain(real_ctx, MaintainRequest(only="upkeep"))
    assert "who owns the search service?" in questions_of(real_ctx.db, note.id)
    assert questions_of(real_ctx.db, gone.id) == []  # a deleted memory's questions stay gone
    assert first.task("upkeep").counts.get("questions_written")
    again = maintain(real_ctx, MaintainRequest(only="upkeep"))
    assert "questions_written" not in again.task("upkeep").counts


def test_a_remembered_notes_content_is_embedded_once_for_its_vector_and_its_questions(
    make_ctx: Callable[..., Context],
) -> None:
    """Its questions are held against the vector the store holds for its content (a named
    note's kept beside its searched one): the same questions kept as by the content
    embedded again, for one forward pass less."""
    ctx = make_ctx(remember__question_floor=0.1)
    for text in (OWNED, NAMED):
        stored = api.remember(ctx, api.RememberRequest(text)).memory
        embedded = [t for call in ctx.embedder.calls for t in call]
        assert embedded.count(text) == 1, text
        derived = derived_questions(text, stored.category)
        own, *vectors = [v.tobytes() for v in HashEmbedder().embed([text, *derived])]
        kept = on_topic(derived, vectors, own, 0.1).kept
        assert questions_of(ctx.db, stored.id) == [q for q, _ in kept] != []


def test_a_question_many_notes_ask_is_embedded_once(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx(remember__question_floor=0.1)
    notes = [
        Memory(content=text, kind=Kind.SEMANTIC, category=Category.EVENTS, tier=Tier.WORKING)
        for text in (RETRO, "Retro happens every Friday at four.")
    ]
    for note in notes:  # as sync, an import or an older memctl write them: no questions
        insert_memory(ctx.db, note, ctx.vectors([note.content])[0])
    seen = len(ctx.embedder.calls)
    maintain(ctx, MaintainRequest(only="upkeep"))
    embedded = [t for call in ctx.embedder.calls[seen:] for t in call]
    assert embedded.count("when is retro?") == 1
    assert all(questions_of(ctx.db, note.id) == ["when is retro?"] for note in notes)
