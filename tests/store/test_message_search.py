"""The messages' BM25 leaves out the phrases too many messages hold, and counts the query's words
(store/message_search.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memctl.context import Context
from memctl.model import Message, Role, Session
from memctl.store import message_search, sessions
from memctl.store.database import Database
from memctl.store.memories import MemoryFilter
from memctl.store.message_search import (
    ABSENT,
    COMMON,
    RARE,
    phrase_kinds,
    search_and_count,
    search_messages,
)
from memctl.store.migrations import MIGRATIONS
from tests.conftest import said_in_session, store_at_version

BOUND = 5  # the test's bound: a phrase this many messages hold is common
EVERYWHERE = MemoryFilter()


@pytest.fixture
def bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(message_search, "COMMON_POSTINGS", BOUND)


NOTES = [f"deploy notes for the service, part {n}" for n in range(8)]


@pytest.mark.usefixtures("bounded")
def test_a_phrase_most_messages_hold_is_counted_up_to_the_bound_and_left_out(
    ctx: Context,
) -> None:
    said_in_session(ctx, [*NOTES, "the billing job moved to fridays"])
    kinds = phrase_kinds(ctx.db, [("deploy",), ("billing",), ("kubernetes",)], BOUND)
    assert kinds == {("deploy",): COMMON, ("billing",): RARE, ("kubernetes",): ABSENT}
    # the bound itself is common, one fewer is not
    assert phrase_kinds(ctx.db, [("notes", "for")], 8) == {("notes", "for"): COMMON}
    assert phrase_kinds(ctx.db, [("notes", "for")], 9) == {("notes", "for"): RARE}
    hits = search_messages(ctx.db, [("deploy",), ("billing",)], 10, EVERYWHERE)
    # "deploy" is in 8 messages: only the rare word ranks, and finds its message alone
    assert [h.key for h in hits] == ["s1#9"]


@pytest.mark.usefixtures("bounded")
def test_when_every_phrase_is_common_the_newest_messages_holding_all_come_back(
    ctx: Context,
) -> None:
    said_in_session(ctx, [*NOTES, "a service note"])
    hits = search_messages(ctx.db, [("deploy",), ("service",)], 3, EVERYWHERE)
    assert [h.key for h in hits] == ["s1#8", "s1#7", "s1#6"]
    assert all("deploy" in h.content and "service" in h.content for h in hits)
    # no message holds all of them: the newest holding any
    said_in_session(ctx, ["without a deploy" for _ in range(6)], "s2")
    hits = search_messages(ctx.db, [("service",), ("without",)], 2, EVERYWHERE)
    assert [h.key for h in hits] == ["s2#6", "s2#5"]


def test_the_bound_is_a_share_of_the_messages_never_below_its_floor(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    said_in_session(ctx, NOTES)  # 8 messages
    assert message_search.common_bound(ctx.db) == message_search.COMMON_POSTINGS
    monkeypatch.setattr(message_search, "COMMON_POSTINGS", 2)
    monkeypatch.setattr(message_search, "COMMON_SHARE", 0.5)
    assert message_search.common_bound(ctx.db) == 4


def test_a_store_below_the_bound_ranks_every_phrase_by_bm25(ctx: Context) -> None:
    said_in_session(ctx, [*NOTES, "deploy the billing service on fridays"])
    hits = search_messages(ctx.db, [("deploy",), ("billing",)], 3, EVERYWHERE)
    assert hits[0].key == "s1#9" and len(hits) == 3  # the others hold "deploy" alone
    assert hits[0].score < hits[1].score  # FTS5's BM25: lower is better


@pytest.mark.usefixtures("bounded")
def test_the_query_words_are_counted_up_to_the_bound_from_the_same_search(ctx: Context) -> None:
    said_in_session(ctx, [*NOTES, "the billing job moved to fridays", "billing runs nightly"])
    words = ["deploy", "billing", "friday", "kubernetes"]
    searched = search_and_count(ctx.db, [("billing",), ("friday",)], words, 10, EVERYWHERE)
    # "deploy" is in 8 messages, counted up to the bound; "friday" as the index stems it
    assert searched.counts == (10, {"deploy": BOUND, "billing": 2, "friday": 1})
    # a word counted is not searched: the hits are the phrases' own
    assert {h.key for h in searched.hits} == {"s1#9", "s1#10"}
    assert searched.hits == search_messages(ctx.db, [("billing",), ("friday",)], 10, EVERYWHERE)


def test_an_older_store_counts_the_messages_it_holds(home: Path) -> None:
    connection, old = store_at_version(home, len(MIGRATIONS) - 1)
    texts = ["the dentist moved", "a standup appointment", "the dentist"]
    sessions.save_session(old, Session(id="s1", client="generic", scope="global"))
    sessions.insert_messages(
        old, [Message(Role.USER, t, session_id="s1", seq=n) for n, t in enumerate(texts, 1)]
    )
    connection.close()
    with Database.open(home / "memctl.db") as db:
        searched = search_and_count(db, [("dentist",)], ["dentist", "appointment"], 5, EVERYWHERE)
    assert searched.counts == (3, {"dentist": 2, "appointment": 1})
