"""Distillation by the host model: the assistant the user already runs, when no local LLM is.

``pending`` hands out the next batch of each session waiting for distillation
with exactly what the LLM path would send: the extraction prompt, the
numbered passages and the JSON schema. ``apply_answer`` takes the host's JSON
answer for one batch through the same stages as the LLM path (noise ->
admission -> reconcile), writes the decisions, marks the batch distilled and
brings the session's digest up to date, in one transaction. A batch is named
by its session and its last message: an answer for a batch already distilled
is refused, so nothing is written twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memctl.context import Context
from memctl.errors import InputError, NotFoundError, UsageError
from memctl.ingest.apply import apply
from memctl.ingest.extract import SCHEMA, SYSTEM, numbered_chunks, parse_facts
from memctl.ingest.facts import Passage
from memctl.ingest.pipeline import (
    digest_decision,
    latest_time,
    passages,
    privacy,
    record_decisions,
    select,
    session_digest,
    settle,
)
from memctl.ingest.run import Run, start_run
from memctl.memories.operations import personal_scope
from memctl.model import Message, Session, parse_time
from memctl.store.runs import RunRecord, save_run
from memctl.store.sessions import (
    get_session,
    messages_after,
    sessions_with_undistilled,
    set_extracted_through,
)

HOST = "host"


@dataclass(frozen=True)
class PendingBatch:
    """One batch of a session's messages to distil, as the LLM path would ask for it."""

    session_id: str
    client: str
    scope: str
    title: str
    first_seq: int
    through_seq: int  # give this back with the answer
    system: str
    prompt: str
    schema: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _run(ctx: Context, session: Session, dry_run: bool = False) -> Run:
    run = start_run(ctx, "ingest", None, session.scope, session.id, dry_run=dry_run)
    run.personal_scope = personal_scope(ctx)
    run.agent_id, run.tags = session.agent_id, session.tags
    run.record.llm = HOST
    return run


def _batch(ctx: Context, run: Run, session: Session) -> tuple[list[Message], list[Passage]]:
    waiting = messages_after(ctx.db, session.id, session.extracted_through)
    batch = privacy(run, select(run, waiting)) if waiting else []
    return batch, passages(batch)


def pending(ctx: Context, limit: int) -> list[PendingBatch]:
    """The next batch of up to ``limit`` sessions waiting for distillation."""
    found = []
    for session in sessions_with_undistilled(ctx.db, limit):
        batch, texts = _batch(ctx, _run(ctx, session, dry_run=True), session)
        if not batch:
            continue
        found.append(
            PendingBatch(
                session_id=session.id,
                client=session.client,
                scope=session.scope,
                title=session.title,
                first_seq=batch[0].seq,
                through_seq=batch[-1].seq,
                system=SYSTEM.format(max_facts=ctx.settings.extract_max_facts),
                prompt="\n".join(numbered_chunks(texts, ctx.settings.extract_chunk_chars)),
                schema=SCHEMA,
            )
        )
    return found


def apply_answer(ctx: Context, session_id: str, through_seq: int, answer: Any) -> RunRecord:
    """Write the host's answer for the batch of ``session_id`` ending at ``through_seq``."""
    session = get_session(ctx.db, session_id)
    if session is None:
        raise NotFoundError(f"no session {session_id}")
    run = _run(ctx, session)
    batch, texts = _batch(ctx, run, session)
    if not batch or batch[-1].seq != through_seq:
        expected = f"its next batch ends at message {batch[-1].seq}" if batch else "none waits"
        raise UsageError(
            f"session {session_id} has no batch ending at message {through_seq} ({expected})"
        )
    try:
        facts, bad = parse_facts(answer, texts)
    except ValueError as error:
        raise InputError(f"the answer is not usable: {error}") from None
    if bad:
        run.note(f"{bad} unusable facts in the host's answer")
    every = messages_after(ctx.db, session_id, 0)
    latest = latest_time(every)
    run.now = parse_time(latest) if latest else None
    run.record.messages, run.record.facts = len(batch), len(facts)
    decisions = settle(run, facts)
    with ctx.db.atomic():
        apply(run, decisions)
        set_extracted_through(ctx.db, session_id, through_seq)
        digest = digest_decision(run, session, every, session_digest(run, every))
        apply(run, [digest] if digest else [])
        record_decisions(run, [*decisions, *([digest] if digest else [])])
        save_run(ctx.db, run.record)
    return run.record
