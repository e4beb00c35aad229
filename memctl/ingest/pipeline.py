"""The slow path: select -> privacy -> extract -> noise -> admission -> reconcile.

``run_session`` distils the messages of a session not distilled yet (what a
queued job asks for) and writes the decisions, the run record, the session's
progress and the job's completion in one transaction. ``preview`` runs the
same stages on a dry run's messages and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from memctl.context import Context
from memctl.errors import NotFoundError
from memctl.ingest.admission import admit
from memctl.ingest.apply import apply
from memctl.ingest.capture import Captured
from memctl.ingest.extract import SYSTEM, extract, numbered_chunks
from memctl.ingest.facts import Decision, Fact, Passage
from memctl.ingest.noise import drop_noise
from memctl.ingest.reconcile import decide
from memctl.ingest.run import Run, start_run
from memctl.llm import LLM, get_llm
from memctl.memories.privacy import scrub
from memctl.model import Message, Session, now_iso
from memctl.store import jobs
from memctl.store.runs import save_run
from memctl.store.sessions import get_session, latest_messages, set_extracted_through

FactStage = Callable[[Run, list[Fact]], list[Fact]]
FACT_STAGES: tuple[FactStage, ...] = (drop_noise, admit)


def select(run: Run, messages: list[Message]) -> list[Message]:
    """The newest ``select.messages`` messages that fit in ``select.max_bytes`` together."""
    trace = run.stage("select")
    budget = run.settings.select_max_bytes
    chosen: list[Message] = []
    for message in reversed(messages[-run.settings.select_messages :]):
        size = len(message.content.encode())
        if size > budget:
            break
        chosen.append(message)
        budget -= size
    trace.kept = len(chosen)
    if len(chosen) < len(messages):
        trace.notes.append(f"{len(messages) - len(chosen)} older messages left out")
    return chosen[::-1]


def privacy(run: Run, messages: list[Message]) -> list[Message]:
    """Privacy again: the stored messages were scrubbed, but nothing relies on that alone."""
    trace = run.stage("privacy")
    clean = []
    for message in messages:
        text, found = scrub(message.content)
        if found.secret_count or found.private_blocks:
            trace.notes.append(f"message {message.seq}: redacted again")
        clean.append(
            Message(message.role, text, message.created_at, message.session_id, message.seq)
        )
    trace.kept = len(clean)
    return clean


def passages(messages: list[Message]) -> list[Passage]:
    return [
        Passage(m.content, m.role, f"session:{m.session_id}#{m.seq}", m.created_at)
        for m in messages
    ]


def embed(run: Run, facts: list[Fact]) -> None:
    """Give every fact its vector, in one batch; every later stage uses them."""
    if facts:
        for fact, vector in zip(
            facts, run.ctx.embedder.embed([f.content for f in facts]), strict=True
        ):
            fact.vector = vector


def distil(run: Run, messages: list[Message]) -> list[Decision]:
    """Every stage but the writing: the decisions a run makes on these messages."""
    chosen = privacy(run, select(run, messages))
    facts = extract(run, passages(chosen))
    run.record.messages, run.record.facts = len(chosen), len(facts)
    embed(run, facts)
    for stage in FACT_STAGES:
        facts = stage(run, facts)
    return decide(run, facts) if facts else []


def record_decisions(run: Run, decisions: list[Decision]) -> None:
    """Finish the run's record: done, with every decision and every fact a stage dropped."""
    record = run.record
    record.status, record.finished_at = "done", now_iso()
    record.decisions = [d.to_dict() for d in decisions]
    for entry in run.trace:
        if entry.dropped:
            record.counts[f"{entry.stage}_dropped"] = len(entry.dropped)
            record.decisions += [
                {"verdict": "dropped", "stage": entry.stage, **d} for d in entry.dropped
            ]


def _pending(ctx: Context, session_id: str) -> tuple[Session, list[Message]]:
    session = get_session(ctx.db, session_id)
    if session is None:
        raise NotFoundError(f"no session {session_id}")
    messages = latest_messages(
        ctx.db, session_id, session.extracted_through, ctx.settings.select_messages
    )
    return session, messages


def extraction_task(ctx: Context, session_id: str) -> tuple[str, list[str]]:
    """What the extract stage would ask an LLM about a session's new messages: the system
    prompt and the numbered chunks (one answer per chunk), for a host model to answer."""
    session, messages = _pending(ctx, session_id)
    run = start_run(ctx, "ingest", None, session.scope, session_id, dry_run=True)
    chosen = passages(privacy(run, select(run, messages)))
    system = SYSTEM.format(max_facts=ctx.settings.extract_max_facts)
    return system, numbered_chunks(chosen, ctx.settings.extract_chunk_chars)


def run_session(
    ctx: Context, session_id: str, job_id: int | None = None, llm: LLM | None = None
) -> Run:
    """Distil a session's new messages and write the outcome; the run is returned.
    ``llm`` replaces the configured one (the host model's answers, for instance)."""
    session, messages = _pending(ctx, session_id)
    model = llm if llm is not None else get_llm(ctx.settings)
    run = start_run(ctx, "ingest", model, session.scope, session_id, job_id)
    run.agent_id, run.tags = session.agent_id, session.tags
    try:
        decisions = distil(run, messages)
        with ctx.db.atomic():
            apply(run, decisions)
            record_decisions(run, decisions)
            through = max([session.message_count, *(m.seq for m in messages)])
            set_extracted_through(ctx.db, session_id, through)
            save_run(ctx.db, run.record)
            if job_id is not None:
                jobs.finish(ctx.db, job_id, run.id)
    except Exception as error:
        run.record.status, run.record.finished_at = "failed", now_iso()
        run.note(f"failed: {type(error).__name__}: {error}")
        with ctx.db.atomic():
            save_run(ctx.db, run.record)
        raise
    return run


def preview(ctx: Context, captured: Captured) -> Run:
    """A dry run: the decisions the slow path would make on the captured messages."""
    session = captured.session
    run = start_run(ctx, "ingest", get_llm(ctx.settings), session.scope, session.id, dry_run=True)
    decisions = distil(run, captured.recent)
    record_decisions(run, decisions)
    return run
