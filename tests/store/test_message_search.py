"""The messages' BM25 leaves out the phrases too many messages hold (store/message_search.py)."""

from __future__ import annotations

import pytest

from memctl.context import Context
from memctl.model import now_iso
from memctl.store import message_search
from memctl.store.forget import forget_messages
from memctl.store.memories import MemoryFilter
from memctl.store.message_search import ABSENT, COMMON, RARE, phrase_kinds, search_messages
from tests.conftest import said_in_session

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


def test_counted_words_keep_their_kinds_through_writes_and_forgetting(ctx: Context) -> None:
    """maintain counts each word's messages; a recall then tells a common word from a rare
    one by the counts, widened by the messages written and taken away since, and steps over
    postings only when those bounds do not decide: every kind stays what the postings say."""
    said_in_session(ctx, [*NOTES, "the billing job moved to fridays"])
    asked = [("deploy",), ("billing",), ("kubernetes",), ("notes", "for"), ("the", "billing")]
    before = {bound: phrase_kinds(ctx.db, asked, bound) for bound in (1, 2, 8, 9)}
    assert message_search.stored_bounds(ctx.db, asked) == {}, "never counted"
    assert message_search.count_message_terms(ctx.db) > 0
    assert not message_search.counts_stale(ctx.db)
    bounds = message_search.stored_bounds(ctx.db, asked)
    assert bounds[("deploy",)] == (8, 8) and bounds[("kubernetes",)] == (0, 0)
    assert bounds[("notes", "for")] == (0, 8)  # a phrase: at most its rarer word's count
    assert {bound: phrase_kinds(ctx.db, asked, bound) for bound in (1, 2, 8, 9)} == before

    said_in_session(ctx, ["kubernetes runs the deploy"], "s2")
    assert message_search.counts_stale(ctx.db)
    assert message_search.stored_bounds(ctx.db, [("deploy",)]) == {("deploy",): (8, 9)}
    assert phrase_kinds(ctx.db, [("deploy",), ("kubernetes",)], 9) == {
        ("deploy",): COMMON,
        ("kubernetes",): RARE,
    }


def test_forgetting_a_session_takes_its_messages_out_of_the_counted_kinds(ctx: Context) -> None:
    """A word counted common while a session held it is no longer common, nor said at all,
    once that session is forgotten: the count no longer includes its messages."""
    said_in_session(ctx, NOTES)
    said_in_session(ctx, ["billing moved"], "s2")
    message_search.count_message_terms(ctx.db)
    assert phrase_kinds(ctx.db, [("deploy",)], 8) == {("deploy",): COMMON}
    with ctx.db.atomic():
        forget_messages(ctx.db, "s1", [1], now_iso(), bytes(32))  # one message redacted in place
    assert message_search.stored_bounds(ctx.db, [("deploy",)]) == {("deploy",): (7, 9)}
    assert phrase_kinds(ctx.db, [("deploy",)], 8) == {("deploy",): RARE}
    with ctx.db.atomic():
        forget_messages(ctx.db, "s1", None, now_iso(), bytes(32))
    assert phrase_kinds(ctx.db, [("deploy",)], 1) == {("deploy",): ABSENT}
    assert search_messages(ctx.db, [("deploy",)], 5, EVERYWHERE) == []
    message_search.count_message_terms(ctx.db)  # maintain counts again
    assert message_search.stored_bounds(ctx.db, [("deploy",), ("billing",)]) == {
        ("deploy",): (0, 0),
        ("billing",): (1, 1),
    }


# The messages' ranked search as one statement, before it was searched in parts: FTS5's best
# matches, then the filter (the reference the parts must reproduce, ties included).
ONE_STATEMENT = (
    "SELECT msg.session_id AS session_id, msg.seq AS seq, f.score AS score FROM ("
    "SELECT rowid, bm25(messages_fts) AS score FROM messages_fts WHERE messages_fts MATCH ? "
    "ORDER BY score LIMIT ?) f JOIN messages msg ON msg.rowid = f.rowid "
    "JOIN sessions s ON s.id = msg.session_id WHERE {clauses} ORDER BY f.score LIMIT ?"
)


def _sessions_in_two_scopes(ctx: Context) -> None:
    """400 messages over two scopes, of a few lengths, some texts repeated (tied scores):
    "priya" in every 3rd, "prefers" in every 4th, "tools" in every 7th."""
    import random

    from memctl.model import Message, Role, Session
    from memctl.store import sessions

    rng = random.Random(3)
    filler = ["the", "queue", "worker", "nightly", "config", "owner", "alerts", "retries"]
    with ctx.db.atomic():
        for number, scope in enumerate(("alpha", "beta")):
            session = f"s{number}"
            sessions.save_session(ctx.db, Session(id=session, client="generic", scope=scope))
            texts = []
            for n in range(200):
                words = rng.sample(filler, rng.randint(1, 6))
                words += ["priya"] * (n % 3 == 0) + ["prefers"] * (n % 4 == 0)
                words += ["tools"] * (n % 7 == 0)
                texts.append(" ".join(words) if n % 9 else "priya prefers tools")
            sessions.insert_messages(
                ctx.db,
                [Message(Role.USER, t, session_id=session, seq=n) for n, t in enumerate(texts, 1)],
            )


@pytest.mark.parametrize("scopes", [None, ("beta",)])
@pytest.mark.parametrize("lengths", [True, False])
def test_rare_words_searched_in_parts_rank_as_the_one_statement_did(
    ctx: Context,
    monkeypatch: pytest.MonkeyPatch,
    scopes: tuple[str, ...] | None,
    lengths: bool,
) -> None:
    """Scored from the messages' stored lengths (store/message_bm25.py) or, when they do not
    hold, searched by FTS5 in parts (store/pruned_bm25.py): the one statement's answer."""
    from memctl.store import message_bm25, pruned_bm25
    from memctl.store.fts import fts_phrases
    from memctl.store.message_search import count_message_terms, message_clauses

    monkeypatch.setattr(message_search, "COMMON_POSTINGS", 10_000)  # every word is rare
    _sessions_in_two_scopes(ctx)
    count_message_terms(ctx.db)
    if not lengths:
        monkeypatch.setattr(message_bm25, "lengths_hold", lambda db: False)
    answered: list[object] = []
    spied = (message_bm25, "best_messages") if lengths else (pruned_bm25, "_pruned")
    answer = getattr(*spied)
    monkeypatch.setattr(*spied, lambda *a: answered.append(answer(*a)) or answered[-1])
    where = MemoryFilter(scopes=scopes)
    clauses, params = message_clauses(where)
    shown: list[str] = []
    for phrases in ([("priya",), ("prefers",)], [("tools",), ("priya",), ("prefers",)]):
        for limit in (3, 10, 40):
            hits = search_messages(ctx.db, phrases, limit, where)
            expected = ctx.db.tuples(
                ONE_STATEMENT.format(clauses=clauses),
                [fts_phrases(phrases), limit * 4, *params, limit],
            )
            assert [(h.session_id, h.seq, h.score) for h in hits] == expected
            # the filter applies after the ranking, among limit x 4 matches, as it did
            assert len(hits) == limit or scopes
            shown.extend(h.session_id for h in hits)
    assert set(shown) == ({"s0", "s1"} if scopes is None else {"s1"})
    # the lengths answered every search, or the parts (their bound held) at least once
    assert len(answered) == 6 if lengths else any(found is not None for found in answered)
