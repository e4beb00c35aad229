"""The memories' (and the stored questions') BM25 searched in parts, without scoring every row
that holds one common word alone, gives FTS5's own answer (store/pruned_bm25.py)."""

from __future__ import annotations

import random

import pytest

from memctl.context import Context
from memctl.model import Memory
from memctl.store import pruned_bm25
from memctl.store.database import QUESTIONS_FTS
from memctl.store.fts import fts_phrases
from memctl.store.memories import MemoryFilter, fts_rank, insert_memory, word_document_counts
from memctl.store.pruned_bm25 import best_matches, search_of
from memctl.store.questions import add_questions, delete_questions, question_fts
from memctl.store.questions import question_word_counts as question_counts

FILLER = ["the", "queue", "worker", "retries", "nightly", "config", "owner", "alerts"]


def _texts(count: int, common_share: float) -> list[str]:
    """``count`` texts of several lengths (some twice: tied scores): "service" in
    ``common_share`` of them, "deploy" in every 10th, "billing" in every 13th."""
    rng = random.Random(7)
    texts = []
    for n in range(count):
        words = rng.sample(FILLER, rng.randint(1, 6))
        if rng.random() < common_share:
            words += ["service"] * rng.randint(1, 2)
        if n % 10 == 0:
            words.append("deploy")
        if n % 13 == 0:
            words.append("billing")
        texts.append(" ".join(words) if n % 11 else "deploy the billing service")
    return texts


def _store(ctx: Context, count: int, common_share: float) -> None:
    """``count`` memories, ``_texts``."""
    with ctx.db.atomic():
        for text in _texts(count, common_share):
            insert_memory(ctx.db, Memory(content=text, scope="global"), None)


def _asked(ctx: Context, count: int, common_share: float) -> list[str]:
    """``count`` memories, each with two stored questions: ``_texts`` and its words in
    the other order; their ids."""
    vector = bytes(4 * ctx.embedder.dim)
    ids = []
    with ctx.db.atomic():
        for n, text in enumerate(_texts(count, common_share)):
            memory = Memory(content=f"note {n}", scope="global")
            insert_memory(ctx.db, memory, None)
            backwards = " ".join(reversed(text.split()))
            asked = [(f"{text}?", vector), (f"why {backwards}?", vector)]
            add_questions(ctx.db, memory.id, asked, ctx.embedder.name)
            ids.append(memory.id)
    return ids


def _full(ctx: Context, phrases: list[tuple[str, ...]], fetch: int) -> list[tuple[int, float]]:
    return ctx.db.tuples(search_of("memories_fts"), (fts_phrases(phrases), fetch))


def _counted(ctx: Context, words: list[str]) -> tuple[int, dict[str, int]]:
    rows, held = word_document_counts(ctx.db, words)
    return rows, {w: held.get(w, 0) for w in words}


def _searches(monkeypatch: pytest.MonkeyPatch, ctx: Context) -> list[str]:
    """The MATCH expression of each full-text search the store runs from now on."""
    matches: list[str] = []
    tuples = ctx.db.tuples

    def spied(sql: str, params: object = ()) -> list[tuple[object, ...]]:
        if " MATCH " in sql and isinstance(params, tuple):
            matches.append(str(params[0]))
        return tuples(sql, params)

    monkeypatch.setattr(ctx.db, "tuples", spied)
    return matches


def _whole(phrases: list[tuple[str, ...]]) -> str:
    return fts_phrases(phrases) or ""


@pytest.mark.parametrize("share", [0.4, 0.8])
@pytest.mark.parametrize(
    "words",
    [
        ["deploy", "billing", "service"],
        ["deploy", "service", "billing"],  # the common word between the others
        ["service", "deploy"],
        ["billing", "service"],
        ["billing", "nowhere", "service"],  # a word no memory holds
    ],
)
def test_the_search_in_parts_gives_the_full_searchs_rows_scores_and_order(
    ctx: Context, monkeypatch: pytest.MonkeyPatch, share: float, words: list[str]
) -> None:
    _store(ctx, 400, share)
    rows, held = _counted(ctx, words)
    phrases = [(w,) for w in words]
    searches = _searches(monkeypatch, ctx)
    for fetch in (5, 20, 60):
        assert best_matches(ctx.db, phrases, fetch, held, rows) == _full(ctx, phrases, fetch)
    # the full search never ran through best_matches (the spy saw _full's own three), and at
    # the shallowest depth the common word's rows holding it alone were never scored
    assert searches.count(_whole(phrases)) == 3
    first = searches[: searches.index(_whole(phrases))]
    assert not any(m.startswith('"service" NOT') for m in first)


def test_when_the_bound_does_not_hold_the_rows_holding_one_word_alone_are_searched_too(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(ctx, 400, 0.3)
    rows, held = _counted(ctx, ["billing", "service"])
    phrases = [("billing",), ("service",)]
    searches = _searches(monkeypatch, ctx)
    # deeper than the memories holding both words, rows holding "service" alone must fill in
    fetch = held["billing"] + 20
    found = best_matches(ctx.db, phrases, fetch, held, rows)
    assert found == _full(ctx, phrases, fetch)
    assert len(found) == fetch
    # the parts are finished, not given up for the full search (which scores every row again)
    assert '"service" NOT ("billing")' in searches
    assert searches.count(_whole(phrases)) == 1  # _full's own


def test_words_always_said_together_are_scored_once_not_again_by_the_full_search(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two words the store always says together ("rate limit"), asked deeper than their
    rows: the rows holding both are the answer, each word's search alone finds nothing to
    score, and the full search (every row scored once more) never runs."""
    with ctx.db.atomic():
        for n in range(120):
            text = f"the rate limit of gateway {n}" + " retries" * (n % 7)
            insert_memory(ctx.db, Memory(content=text, scope="global"), None)
    rows, held = _counted(ctx, ["rate", "limit"])
    phrases = [("rate",), ("limit",)]
    searches = _searches(monkeypatch, ctx)
    fetch = 200  # deeper than every row: the bound never holds
    found = best_matches(ctx.db, phrases, fetch, held, rows)
    assert len(found) == 120
    assert found == _full(ctx, phrases, fetch)
    # bounds alike: the phrases alone in the query's order
    assert searches[:3] == ['"rate" AND ("limit")', '"rate" NOT ("limit")', '"limit" NOT ("rate")']


def test_phrases_of_several_words_or_uncounted_are_searched_whole(ctx: Context) -> None:
    _store(ctx, 200, 0.8)
    rows, held = _counted(ctx, ["deploy", "service"])
    assert not pruned_bm25._countable([("deploy",), ("billing", "service")], held, rows)
    assert not pruned_bm25._countable([("deploy",), ("billing",)], held, rows)  # not counted
    assert pruned_bm25._countable([("deploy",), ("service",)], held, rows)
    phrases = [("deploy",), ("billing", "service")]
    assert best_matches(ctx.db, phrases, 10, held, rows) == _full(ctx, phrases, 10)


def test_recall_s_bm25_leg_is_the_same_with_the_counts(ctx: Context) -> None:
    _store(ctx, 400, 0.8)
    phrases = [("deploy",), ("billing",), ("service",)]
    everywhere = MemoryFilter()
    counted = _counted(ctx, ["deploy", "billing", "service"])
    assert fts_rank(ctx.db, phrases, 10, everywhere, counted) == fts_rank(
        ctx.db, phrases, 10, everywhere
    )


def test_the_stored_questions_searched_in_parts_give_the_full_search(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _asked(ctx, 300, 0.6)
    words = ["deploy", "service", "billing"]
    phrases = [(w,) for w in words]
    searches = _searches(monkeypatch, ctx)

    def same(fetch: int) -> None:
        counts = question_counts(ctx.db, words)
        full = ctx.db.tuples(search_of(QUESTIONS_FTS), (fts_phrases(phrases), fetch))
        rows, held = counts
        assert best_matches(ctx.db, phrases, fetch, held, rows, QUESTIONS_FTS) == full
        everywhere = MemoryFilter()
        limit = fetch // 12  # question_fts reads 12 questions a memory asked for
        found = question_fts(ctx.db, phrases, limit, everywhere, counts)
        assert found == question_fts(ctx.db, phrases, limit, everywhere)
        assert found

    service_alone = '"service" NOT ("deploy" OR "billing")'
    same(12)
    assert service_alone not in searches  # the bound held at the shallowest depth
    for fetch in (60, 240):
        same(fetch)
    # the questions' average length as bm25() reads it: every token of the index, a row each
    average = pruned_bm25.average_length(ctx.db, QUESTIONS_FTS)
    tokens = ctx.db.value("SELECT sum(cnt) FROM memory_questions_vocab")
    assert average == pytest.approx(tokens / (2 * len(ids)))
    with ctx.db.atomic():  # its record is written at the commit: not read before
        assert pruned_bm25.average_length(ctx.db, QUESTIONS_FTS) == float("inf")
    rows, held = question_counts(ctx.db, words)
    alone = ctx.db.tuples(search_of(QUESTIONS_FTS), ('"service" NOT ("deploy" OR "billing")', 1))
    assert 0 < -alone[0][1] < pruned_bm25._bound(held["service"], rows, average)
    # deeper than the questions holding two of the words: one that fails the bound
    assert held["service"] > held["deploy"] + held["billing"]
    searches.clear()
    same(12 * (held["deploy"] + held["billing"]))
    assert service_alone in searches
    # the counts are the index's own after questions go: fewer, and the same answer
    delete_questions(ctx.db, ids[::3])
    assert question_counts(ctx.db, words)[1]["service"] < held["service"]
    searches.clear()
    same(12)
    assert service_alone not in searches
