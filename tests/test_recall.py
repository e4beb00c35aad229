"""The first hybrid recall with the real model: meaning without shared words, words without
meaning, and both together."""

from __future__ import annotations

from memctl import memories
from memctl.context import Context
from memctl.retrieve.pipeline import recall

FACTS = [
    "The production database is backed up every night at 2am",
    "Sam prefers squash merges for small pull requests",
    "The frontend uses pnpm as its package manager",
    "Office plants need watering on Fridays",
    "parse_user_id lives in auth/ids.py and accepts UUIDs",
]


def remember_all(ctx: Context) -> dict[str, str]:
    return {fact: memories.remember(ctx, fact).id for fact in FACTS}


def test_a_paraphrase_with_no_shared_words_is_recalled_by_vectors_alone(real_ctx: Context) -> None:
    ids = remember_all(real_ctx)
    result = recall(real_ctx, "when do snapshots of prod data happen?")
    top = result.results[0]
    assert top.memory.id == ids[FACTS[0]]
    assert top.ranks == {"vector": 1}


def test_an_exact_identifier_is_found_by_both_legs(real_ctx: Context) -> None:
    ids = remember_all(real_ctx)
    top = recall(real_ctx, "parse_user_id").results[0]
    assert top.memory.id == ids[FACTS[4]]
    assert top.ranks == {"vector": 1, "bm25": 1}


def test_limit_is_respected_and_scores_descend(real_ctx: Context) -> None:
    remember_all(real_ctx)
    results = recall(real_ctx, "which package manager does the web UI use?", limit=3).results
    assert len(results) == 3
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert results[0].memory.content == FACTS[2]
