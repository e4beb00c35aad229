"""Questions stored with a memory: kept when about it, dropped when not, searched by recall,
never shown, and gone with their memory. On a real SQLite file with the real model (the
floor is a cosine of MiniLM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memctl.api import memory as api
from memctl.api.distil import DistilRequest, PendingRequest, distil, pending
from memctl.api.ingest import undo
from memctl.config import load_settings
from memctl.context import Context
from memctl.errors import InputError, UsageError
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.pipeline import run_session
from memctl.model import State
from memctl.retrieve.pipeline import recall, start
from memctl.retrieve.run import Candidate
from memctl.retrieve.stages.candidates import candidates
from memctl.store.memories import MemoryFilter
from memctl.store.questions import question_fts, questions_of
from tests.ingesting import claude_work_session, source

WEBHOOKS = "The billing service retries Stripe webhooks three times with exponential backoff."
ASKED = (
    "what happens when a payment notification fails?",
    "how often do we resend failed payment events?",
)
OFF_TOPIC = "what is the capital of France?"
OTHERS = (
    "Staging is rebuilt from scratch every night at 01:00 UTC.",
    "Use pnpm, never npm or yarn, in the web frontend.",
    "The team uses PostgreSQL 16; migrations are written with Alembic.",
    "On-call rotates weekly on Mondays.",
    "Feature flags are managed in Unleash.",
)
RECALLABLE = MemoryFilter(states=(State.ACTIVE,))
ANY_STATE = MemoryFilter(states=tuple(State))


def _store(ctx: Context, questions: tuple[str, ...] = (*ASKED, OFF_TOPIC)) -> api.Remembered:
    return api.remember(ctx, api.RememberRequest(WEBHOOKS, questions=questions))


def test_questions_about_their_memory_are_kept_and_an_off_topic_one_is_dropped(
    real_ctx: Context,
) -> None:
    stored = _store(real_ctx)
    assert stored.questions.to_dict() == {"kept": list(ASKED), "dropped": [OFF_TOPIC]}
    assert questions_of(real_ctx.db, stored.memory.id) == list(ASKED)
    # the same text again adds its new questions to the memory that holds it, once
    retried = "why do payment callbacks get retried?"
    again = _store(real_ctx, (ASKED[0], retried))
    assert again.existing and again.memory.id == stored.memory.id
    assert questions_of(real_ctx.db, stored.memory.id) == [*ASKED, retried]


def test_a_question_finds_its_memory_and_is_never_shown(real_ctx: Context) -> None:
    stored = _store(real_ctx)
    for text in OTHERS:
        api.remember(real_ctx, api.RememberRequest(text))
    # the question's words, none of the memory's: BM25 finds it through its question
    query = "resend failed payment events"
    result = recall(real_ctx, query)
    assert result.run is not None
    found = [s.why for s in result.run.steps_of(stored.memory.id) if s.stage == "candidates"]
    assert found and "questions #1" in found[0]
    shown = json.dumps([r.to_dict() for r in result.results], ensure_ascii=False)
    assert stored.memory.id in shown
    assert not any(question in shown for question in ASKED)  # content is the memory's own
    # both question legs name it first: its questions' words and their meaning
    run = start(real_ctx, "payment notification fails", limit=1)
    by_id = {c.id: c for c in candidates(run, [])}
    ranks = by_id[stored.memory.id].ranks
    assert ranks["questions"] == 1 and ranks["question_vector"] == 1


def test_a_candidate_found_only_by_questions_says_so(real_ctx: Context) -> None:
    memory = _store(real_ctx).memory
    assert Candidate(memory, {"questions": 1, "question_vector": 2}).only_by_questions
    assert not Candidate(memory, {"questions": 1, "bm25": 4}).only_by_questions
    assert not Candidate(memory).only_by_questions


def test_a_deleted_memory_loses_its_questions_and_a_forgotten_one_is_not_reached(
    real_ctx: Context,
) -> None:
    deleted, archived = (
        api.remember(real_ctx, api.RememberRequest(f"{WEBHOOKS} ({n})", questions=ASKED)).memory
        for n in range(2)
    )
    api.delete(real_ctx, deleted.id)
    api.forget(real_ctx, archived.id)
    assert questions_of(real_ctx.db, deleted.id) == []
    # an archived memory keeps its questions (forget is undone by undo), unreachable meanwhile
    assert questions_of(real_ctx.db, archived.id) == list(ASKED)
    hits = question_fts(real_ctx.db, [("payment",)], 10, RECALLABLE)
    assert hits == []
    assert [i for i, _ in question_fts(real_ctx.db, [("payment",)], 10, ANY_STATE)] == [archived.id]


def test_undoing_a_remember_removes_its_questions(real_ctx: Context) -> None:
    memory = _store(real_ctx).memory
    undo(real_ctx)
    assert real_ctx.db.value("SELECT state FROM memories WHERE id = ?", (memory.id,)) == "deleted"
    assert questions_of(real_ctx.db, memory.id) == []
    assert question_fts(real_ctx.db, [("payment",)], 10, ANY_STATE) == []


def test_a_permanent_delete_removes_the_rows_and_their_index(real_ctx: Context) -> None:
    memory = _store(real_ctx).memory
    api.delete(real_ctx, memory.id, permanent=True)
    assert real_ctx.db.value("SELECT count(*) FROM memory_questions") == 0
    assert question_fts(real_ctx.db, [("payment",)], 10, ANY_STATE) == []


def test_bad_questions_get_one_line_and_nothing_is_stored(real_ctx: Context) -> None:
    too_many = (*ASKED, OFF_TOPIC, "one more?")
    with pytest.raises(UsageError, match="^questions: at most 3, got 4$"):
        _store(real_ctx, too_many)
    with pytest.raises(UsageError, match="one line of at most 300 characters"):
        _store(real_ctx, ("why " * 100,))
    assert real_ctx.db.value("SELECT count(*) FROM memories") == 0


def test_private_text_in_a_question_is_taken_out(real_ctx: Context) -> None:
    stored = _store(real_ctx, ("what happens when a <private>Acme Corp</private> payment fails?",))
    (kept,) = questions_of(real_ctx.db, stored.memory.id)
    assert "Acme" not in kept and "payment fails" in kept


def test_the_host_distillation_stores_a_fact_s_questions(home: Path, local_embedder) -> None:  # type: ignore[no-untyped-def]
    overrides = {"llm": "none", "ingest.host_distil": True}
    ctx = Context(load_settings(overrides=overrides), embedder=local_embedder)
    try:
        text = "\n".join(json.dumps(line) for line in claude_work_session())
        report = capture(ctx, source(text), IngestOptions()).report
        run_session(ctx, report.session_id, report.job_id)
        result = pending(ctx, PendingRequest())
        assert "questions" in result.instructions
        item = result.schema["properties"]["facts"]["items"]["properties"]["questions"]
        assert item["type"] == "array"
        (task,) = result.batches
        fact = {
            "content": "The shop deploys with make ship, never by hand.",
            "l0_abstract": "deploy: make ship",
            "category": "patterns",
            "source_message": 1,
            "questions": ["how do we release the shop?", OFF_TOPIC],
        }
        bad = {**fact, "questions": [*ASKED, OFF_TOPIC, "more?"]}
        with pytest.raises(InputError, match="questions: at most 3"):
            distil(ctx, DistilRequest(task.session_id, task.through_seq, {"facts": [bad]}))
        distil(ctx, DistilRequest(task.session_id, task.through_seq, {"facts": [fact]}))
        memory_id = ctx.db.value("SELECT id FROM memories WHERE content = ?", (fact["content"],))
        assert questions_of(ctx.db, str(memory_id)) == ["how do we release the shop?"]
        # recall reaches it through the question's vector index (store/vector_index.py)
        run = start(ctx, "how is the store shipped to customers?")
        by_id = {c.id: c for c in candidates(run, [])}
        assert by_id[str(memory_id)].ranks.get("question_vector") == 1
    finally:
        ctx.close()
