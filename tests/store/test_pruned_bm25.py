"""The memories' BM25 searched in parts, without scoring every row that holds one common word
alone, gives FTS5's own answer (store/pruned_bm25.py)."""

from __future__ import annotations

import random

import pytest

from memctl.context import Context
from memctl.model import Memory
from memctl.store import pruned_bm25
from memctl.store.fts import fts_phrases
from memctl.store.memories import MemoryFilter, fts_rank, insert_memory, word_document_counts
from memctl.store.pruned_bm25 import SEARCH, best_matches

FILLER = ["the", "queue", "worker", "retries", "nightly", "config", "owner", "alerts"]


def _store(ctx: Context, count: int, common_share: float) -> None:
    """``count`` memories of several lengths (some texts twice: tied scores): "service" in
    ``common_share`` of them, "deploy" in every 10th, "billing" in every 13th."""
    rng = random.Random(7)
    with ctx.db.atomic():
        for n in range(count):
            words = rng.sample(FILLER, rng.randint(1, 6))
            if rng.random() < common_share:
                words += ["service"] * rng.randint(1, 2)
            if n % 10 == 0:
                words.append("deploy")
            if n % 13 == 0:
                words.append("billing")
            text = " ".join(words) if n % 11 else "deploy the billing service"
            insert_memory(ctx.db, Memory(content=text, scope="global"), None)


def _full(ctx: Context, phrases: list[tuple[str, ...]], fetch: int) -> list[tuple[int, float]]:
    return ctx.db.tuples(SEARCH, (fts_phrases(phrases), fetch))


def _counted(ctx: Context, words: list[str]) -> tuple[int, dict[str, int]]:
    rows, held = word_document_counts(ctx.db, words)
    return rows, {w: held.get(w, 0) for w in words}


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """What each search in parts answered (None: the full search ran instead)."""
    taken: list[object] = []
    pruned = pruned_bm25._pruned
    monkeypatch.setattr(pruned_bm25, "_pruned", lambda *a: taken.append(pruned(*a)) or taken[-1])
    return taken


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
    taken = _spy(monkeypatch)
    for fetch in (5, 20, 60):
        assert best_matches(ctx.db, phrases, fetch, held, rows) == _full(ctx, phrases, fetch)
    # the parts answered (the bound held) at least at the shallowest depth
    assert taken and taken[0] is not None


def test_when_the_bound_does_not_hold_the_full_search_answers(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(ctx, 400, 0.3)
    rows, held = _counted(ctx, ["billing", "service"])
    phrases = [("billing",), ("service",)]
    taken = _spy(monkeypatch)
    # deeper than the memories holding both words, rows holding "service" alone must fill in
    fetch = held["billing"] + 20
    found = best_matches(ctx.db, phrases, fetch, held, rows)
    assert found == _full(ctx, phrases, fetch)
    assert len(found) == fetch
    assert taken == [None]


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
