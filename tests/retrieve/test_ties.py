"""Ties: where two results score exactly alike, their order never rests on a memory's
random id, so two identical runs (a store written again, a benchmark run twice) rank alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from memctl.api.recall import RecallRequest, recall
from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.model import Memory
from memctl.retrieve.run import Candidate, by_label, by_score
from memctl.retrieve.stages.candidates import with_instances, with_synonyms
from memctl.retrieve.stages.fuse import lead
from memctl.store.memories import insert_memory
from tests.fakes import HashEmbedder

LOW, HIGH = "0" * 32, "f" * 32  # ids that sort against the memories' age
OLDER, NEWER = "2026-01-05T10:00:00.000Z", "2026-03-05T10:00:00.000Z"


def tied(content: str, memory_id: str, created_at: str, score: float = 0.5) -> Candidate:
    return Candidate(Memory(content, id=memory_id, created_at=created_at), score=score)


def test_a_tie_puts_the_older_memory_first_whatever_its_id() -> None:
    newer = tied("we release on Fridays", LOW, NEWER)
    older = tied("we release on Fridays", HIGH, OLDER)
    assert [c.id for c in by_score([newer, older])] == [HIGH, LOW]
    assert [c.id for c in by_label([newer, older])] == [HIGH, LOW]


def test_a_tie_in_age_is_broken_by_the_text_not_the_id() -> None:
    first = [tied("alpha release", LOW, OLDER), tied("release alpha", HIGH, OLDER)]
    second = [tied("alpha release", HIGH, OLDER), tied("release alpha", LOW, OLDER)]
    assert [c.memory.content for c in by_score(first)] == [
        c.memory.content for c in by_score(second)
    ]


def test_the_lead_by_meaning_does_not_rest_on_the_id() -> None:
    newer, older = tied("x", HIGH, NEWER), tied("x", LOW, OLDER)
    for candidate in (newer, older):
        candidate.raw["vector"] = 0.25  # own_similarity reads the vector leg's cosine
    assert lead([newer, older])[0] == LOW


@pytest.mark.parametrize("merge", [with_synonyms, with_instances])
def test_a_legs_ties_keep_the_searchs_order(merge) -> None:  # type: ignore[no-untyped-def]
    own = [(HIGH, -2.0), (LOW, -2.0)]  # FTS5's order: the row stored first
    assert [i for i, _ in merge(own, [], 0.7)] == [HIGH, LOW]


def _store(home: Path, monkeypatch: pytest.MonkeyPatch, ids: tuple[str, str]) -> list[str]:
    """The results' texts for one question over a store of two memories that score alike
    (the same words in another order, written at the same time), under ``ids``."""
    monkeypatch.setenv("MEMCTL_HOME", str(home))
    ctx = Context(load_settings(), embedder=HashEmbedder())
    try:
        texts = ("deploy billing friday", "friday billing deploy")
        with ctx.db.atomic():
            for memory_id, text, vector in zip(ids, texts, ctx.vectors(list(texts)), strict=True):
                memory = Memory(text, id=memory_id, created_at=OLDER, scope="global")
                insert_memory(ctx.db, memory, vector)
        found = recall(ctx, RecallRequest("when do we deploy billing?", limit=5))
        return [r.memory.content for r in found.result.results]
    finally:
        ctx.close()


def test_the_same_store_under_other_ids_ranks_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _store(tmp_path / "one", monkeypatch, (LOW, HIGH))
    other = _store(tmp_path / "other", monkeypatch, (HIGH, LOW))
    assert len(one) == 2
    assert one == other
