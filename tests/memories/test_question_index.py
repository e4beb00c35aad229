"""The stored questions' vector index (store/vector_index.py QUESTION_VECTORS): recall
finds a memory by its question's meaning through it, as it did reading every question from
SQL, after each way questions are written; a deleted, forgotten or redacted memory's
questions leave its files. On a real SQLite file with the real model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memctl.api import memory as api
from memctl.api.ingest import undo
from memctl.api.maintain import MaintainRequest, maintain
from memctl.config import load_settings
from memctl.context import Context
from memctl.maintain.forgetting import forget_memories
from memctl.retrieve.pipeline import recall, start
from memctl.retrieve.stages.candidates import candidates
from memctl.store.vector_index import QUESTION_VECTORS

WEBHOOKS = "The billing service retries Stripe webhooks three times with exponential backoff."
ASKED = (
    "what happens when a payment notification fails?",
    "how often do we resend failed payment events?",
)
# the questions' meaning, none of their words or the memory's
MEANING = "is a lost charge message tried again?"
WORDS = "resend failed payment events"  # the question's words, none of the memory's
OTHERS = {
    "Staging is rebuilt from scratch every night at 01:00 UTC.": (
        "when is the test environment reset?",
    ),
    "Use pnpm, never npm or yarn, in the web frontend.": ("which package manager do we use?",),
    "The team uses PostgreSQL 16; migrations are written with Alembic.": (
        "what database do we run?",
        "how are schema changes written?",
    ),
    "On-call rotates weekly on Mondays.": ("who is on call this week?",),
}


@pytest.fixture
def real(home: Path, local_embedder) -> Iterator[Context]:  # type: ignore[no-untyped-def]
    context = Context(load_settings(), embedder=local_embedder)
    for text, questions in OTHERS.items():
        api.remember(context, api.RememberRequest(text, questions=questions))
    yield context
    context.close()


def _remember(ctx: Context) -> str:
    return api.remember(ctx, api.RememberRequest(WEBHOOKS, questions=ASKED)).memory.id


def _question_rank(
    ctx: Context, query: str, memory_id: str, leg: str = "question_vector"
) -> int | None:
    """The memory's rank on a question leg (by meaning, or ``questions``: by words) of a
    recall of ``query``."""
    run = start(ctx, query)
    found = {c.id: c for c in candidates(run, [])}
    return found[memory_id].ranks.get(leg) if memory_id in found else None


def _index_bytes(ctx: Context) -> bytes:
    """Every file of the questions' index, as it is on disk now."""
    directory = ctx.db.path.with_name(ctx.db.path.name + QUESTION_VECTORS.suffix)
    return b"".join(p.read_bytes() for p in sorted(directory.glob("*.seg")))


def _question_vectors(ctx: Context, memory_id: str) -> list[bytes]:
    """The vectors stored for the memory's questions, in the order they were asked."""
    return [
        bytes(vector)
        for (vector,) in ctx.db.tuples(
            "SELECT q.embedding FROM memory_questions q JOIN memories m "
            "ON m.rowid = q.memory_rowid WHERE m.id = ? ORDER BY q.rowid",
            (memory_id,),
        )
    ]


def test_a_memory_is_found_by_its_question_s_meaning_through_the_index(real: Context) -> None:
    memory_id = _remember(real)
    assert _question_rank(real, MEANING, memory_id) == 1
    assert _question_rank(real, WORDS, memory_id, "questions") == 1
    assert all(vector in _index_bytes(real) for vector in _question_vectors(real, memory_id))
    result = recall(real, MEANING)
    assert memory_id in [r.memory.id for r in result.results]


def test_the_leg_ranks_each_memory_by_its_best_question_as_a_full_pass_does(
    real: Context,
) -> None:
    memory_id = _remember(real)
    first = real.db.value("SELECT id FROM memories ORDER BY rowid LIMIT 1")
    api.forget(real, str(first))
    run = start(real, MEANING, limit=3)
    ranked = sorted(
        (c for c in candidates(run, []) if "question_vector" in c.ranks),
        key=lambda c: c.ranks["question_vector"],
    )
    assert run.scores is not None
    # every question of the recallable memories scored in full, each memory by its best
    best: dict[str, float] = {}
    for owner, vector in real.db.tuples(
        "SELECT m.id, q.embedding FROM memory_questions q JOIN memories m "
        "ON m.rowid = q.memory_rowid WHERE m.state = 'active'"
    ):
        cosine = float(np.frombuffer(vector, dtype=np.float32) @ run.scores.query)
        best[owner] = max(best.get(owner, -1.0), cosine)
    expected = sorted(best, key=lambda owner: (-best[owner], owner))
    assert len(expected) == 4  # the forgotten memory's questions are not searched
    assert [c.id for c in ranked] == expected[: len(ranked)] and ranked[0].id == memory_id
    for candidate in ranked:
        distance = candidate.raw["question_vector"]
        assert distance == pytest.approx(1.0 - best[candidate.id], abs=1e-6)


def test_questions_added_to_a_stored_memory_reach_the_index(real: Context) -> None:
    stored = api.remember(real, api.RememberRequest(WEBHOOKS))
    assert _question_rank(real, MEANING, stored.memory.id) is None
    again = api.remember(real, api.RememberRequest(WEBHOOKS, questions=ASKED))
    assert again.existing
    assert _question_rank(real, MEANING, stored.memory.id) == 1
    assert _question_rank(real, WORDS, stored.memory.id, "questions") == 1


def test_an_edited_memory_keeps_its_questions_in_the_index(real: Context) -> None:
    memory_id = _remember(real)
    api.update(
        real,
        api.UpdateRequest(memory_id, text=WEBHOOKS.replace("three", "five")),
    )
    assert _question_rank(real, MEANING, memory_id) == 1


@pytest.mark.parametrize("how", ["delete", "undo"])
def test_a_deleted_memory_s_questions_are_no_longer_searched(real: Context, how: str) -> None:
    memory_id = _remember(real)
    assert _question_rank(real, MEANING, memory_id) == 1
    vectors = _question_vectors(real, memory_id)
    rewritten = real.db.meta("question_vectors_rewritten")
    if how == "delete":
        api.delete(real, memory_id)
    else:
        undo(real)
    # their rowids are journaled, so the index marks them dead instead of being made again
    journal = json.loads(real.db.meta("question_vectors_changes") or "[]")
    assert len(journal) == 2 and real.db.meta("question_vectors_rewritten") == rewritten
    assert _question_rank(real, MEANING, memory_id) is None
    assert memory_id not in [r.memory.id for r in recall(real, MEANING).results]
    # maintain's upkeep compacts the index: the files keep nothing of them
    maintain(real, MaintainRequest(only="upkeep"))
    kept = _index_bytes(real)
    assert kept and not any(vector in kept for vector in vectors)


@pytest.mark.parametrize("how", ["delete for good", "forget everywhere"])
def test_a_forgotten_memory_s_questions_leave_the_index_files_at_once(
    real: Context, how: str
) -> None:
    memory_id = _remember(real)
    assert _question_rank(real, MEANING, memory_id) == 1
    vectors = _question_vectors(real, memory_id)
    if how == "delete for good":
        api.delete_for_good(real, memory_id)
    else:
        forget_memories(real, [api.get(real, memory_id).memory], "forget")
    kept = _index_bytes(real)
    assert kept  # the other memories' questions are still there
    assert not any(vector in kept for vector in vectors)
    assert _question_rank(real, MEANING, memory_id) is None


def test_a_redacted_question_leaves_the_index_files(real: Context) -> None:
    memory_id = _remember(real)
    vectors = _question_vectors(real, memory_id)
    assert _question_rank(real, MEANING, memory_id) == 1
    assert vectors[1] in _index_bytes(real)
    api.redact(real, "resend failed payment")
    kept = _index_bytes(real)
    assert vectors[1] not in kept and vectors[0] in kept
    assert _question_rank(real, MEANING, memory_id) == 1  # by the question left
