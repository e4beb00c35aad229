"""The slow path: select -> privacy -> extract -> noise -> admission -> reconcile.

``run_session`` distils every message of a session not distilled yet (what a
queued job asks for), oldest first, in batches of at most ``select.messages``
messages and ``select.max_bytes`` bytes: each batch's decisions, the run
record and the session's progress are written in one transaction, so a
message counts as distilled only once its batch is. Then the session's
digest (one episodic memory, see ``digest``) is written or brought up to
date, and the job completed. On the rules path the session's tool calls also
give facts (see ``extract_actions``): commands that worked, errors and their
fixes, findings a passing run confirms. Injected text is left out of what the stages
read (see ``injected``); tool lines go to the digest, not to extraction.
``preview`` runs the same stages on a dry run's messages and writes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from memctl.context import Context
from memctl.embed import Embedder
from memctl.errors import NotFoundError
from memctl.ingest.admission import admit
from memctl.ingest.apply import DIGEST, apply, prepare_writes
from memctl.ingest.capture_report import Captured
from memctl.ingest.claims import evidence
from memctl.ingest.corrections import link_corrections
from memctl.ingest.digest import SessionDigest, build_digest, render
from memctl.ingest.extract import extract
from memctl.ingest.extract_actions import action_facts
from memctl.ingest.facts import Decision, Fact, Passage, Verdict
from memctl.ingest.meaning import document_text
from memctl.ingest.noise import drop_noise
from memctl.ingest.parse.common import SUBAGENT
from memctl.ingest.pasted import pasted_by_user
from memctl.ingest.reconcile import decide
from memctl.ingest.refuted import drop_refuted
from memctl.ingest.run import Run, start_run
from memctl.ingest.title import condensed, heading_title, resumed
from memctl.llm import choose_llm
from memctl.memories.injected import strip_injected
from memctl.memories.operations import personal_scope
from memctl.memories.privacy import Redactions
from memctl.memories.provenance import DIGEST_TAG
from memctl.memories.scrubber import scrub_messages
from memctl.model import Category, Message, Role, Session, now_iso, parse_time
from memctl.store import jobs
from memctl.store.events import forgotten_since, last_event
from memctl.store.memories import session_memory
from memctl.store.runs import save_run
from memctl.store.sessions import get_session, messages_after, set_extracted_through

FactStage = Callable[[Run, list[Fact]], list[Fact]]
FACT_STAGES: tuple[FactStage, ...] = (drop_noise, drop_refuted, admit)
DIGEST_IMPORTANCE = 0.6
# A sub-agent's digest tells a part of the work its parent session's digest tells whole
# (the parent's report holds its findings): it weighs as a raw message does
# (retrieve/stages/candidates.py), below the parent's.
SUBAGENT_DIGEST_IMPORTANCE = 0.5
DIGEST_CONFIDENCE = 0.9


def select(run: Run, messages: list[Message]) -> list[Message]:
    """The oldest ``select.messages`` messages that fit in ``select.max_bytes`` together
    (the first one always: a message larger than the budget is a batch of its own)."""
    trace = run.stage("select")
    budget = run.settings.select_max_bytes
    chosen: list[Message] = []
    for message in messages[: run.settings.select_messages]:
        size = len(message.content.encode())
        if chosen and size > budget:
            break
        chosen.append(message)
        budget -= size
    trace.kept = len(chosen)
    return chosen


def privacy(run: Run, messages: list[Message]) -> list[Message]:
    """Privacy again: the stored messages were scrubbed, but nothing relies on that alone."""
    trace = run.stage("privacy")
    clean, found = [], Redactions()
    for text, message in scrub_messages(((m.content, m) for m in messages), found):
        if text != message.content:
            trace.notes.append(f"message {message.seq}: redacted again")
        clean.append(
            Message(
                message.role,
                text,
                message.created_at,
                message.session_id,
                message.seq,
                speaker=message.speaker,
            )
        )
    trace.kept = len(clean)
    return clean


def _spoken(text: str) -> str:
    """A message without its tool-note lines: what was said, not what was run."""
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("[tool"))


def passages(messages: list[Message], run: Run | None = None) -> list[Passage]:
    """What extraction reads: each message without injected text and tool notes; a
    sub-agent's lines (its prompt included) count as the assistant's, never the user's; a
    user turn shaped as a pasted document is marked (``ingest/pasted.py``)."""
    found: list[Passage] = []
    removed: Counter[str] = Counter()
    for m in messages:
        # the mark first: a marked turn of injected text alone strips to "[subagent]"
        stripped = strip_injected(m.content.removeprefix(SUBAGENT))
        removed.update(stripped.removed)
        role = Role.ASSISTANT if m.content.startswith(SUBAGENT) else m.role
        text = _spoken(stripped.text).strip()
        if text and role != Role.TOOL:
            source = f"session:{m.session_id}#{m.seq}:{role}"  # who said it: provenance
            found.append(Passage(text, role, source, m.created_at, pasted_by_user(role, text)))
    if run is not None:
        trace = run.stage("injected")
        trace.kept = len(found)
        trace.notes += [f"{n} {kind} left out" for kind, n in sorted(removed.items())]
        if pasted_turns := sum(p.pasted for p in found):
            trace.notes.append(
                f"{pasted_turns} pasted user turns read for rules above the paste only"
            )
    return found


def name_facts(embedder: Embedder, facts: list[Fact]) -> None:
    """The vector each fact is searched by once written, when the vocabulary has names for
    what it mentions (ingest/meaning.py); its own vector stays for every comparison."""
    texts = {id(f): text for f in facts if (text := document_text(f.content)) != f.content}
    named = [f for f in facts if id(f) in texts]
    if named:
        for fact, vector in zip(named, embedder.embed([texts[id(f)] for f in named]), strict=True):
            fact.named = vector


def embed(run: Run, facts: list[Fact]) -> None:
    """Give every fact its vector, in one batch; every later stage uses them. A store whose
    vectors another model made is refused here, in words, before a later stage compares
    vectors of two sizes."""
    if facts:
        embedder = run.ctx.embedder
        if run.db.vector_model() is not None:  # an empty store gets its table when written
            run.db.ensure_vector_model(embedder.name, embedder.dim)
        for fact, vector in zip(facts, embedder.embed([f.content for f in facts]), strict=True):
            fact.vector = vector
        name_facts(embedder, facts)


def distil(run: Run, messages: list[Message]) -> list[Decision]:
    """Every stage but the writing: the decisions a run makes on the first batch of these
    messages (``select`` picks it)."""
    return distil_batch(run, select(run, messages))


def distil_batch(run: Run, batch: list[Message]) -> list[Decision]:
    chosen = privacy(run, batch)
    facts = extract(run, passages(chosen, run))
    run.record.messages += len(chosen)
    run.record.facts += len(facts)
    return settle(run, facts)


def settle(run: Run, facts: list[Fact]) -> list[Decision]:
    """noise -> admission -> reconcile on extracted facts (from rules, an LLM or the host)."""
    embed(run, facts)
    for stage in FACT_STAGES:
        facts = stage(run, facts)
    return decide(run, facts) if facts else []


def record_decisions(run: Run, decisions: list[Decision], done: bool = True) -> None:
    """Add decisions, and every fact a stage dropped since the last call, to the run's
    record; with ``done``, mark the run finished."""
    record = run.record
    record.decisions += [d.to_dict() for d in decisions]
    for entry in run.trace[run.recorded :]:
        if entry.dropped:
            key = f"{entry.stage}_dropped"
            record.counts[key] = record.counts.get(key, 0) + len(entry.dropped)
            record.decisions += [
                {"verdict": "dropped", "stage": entry.stage, **d} for d in entry.dropped
            ]
    run.recorded = len(run.trace)
    if done:
        record.status, record.finished_at = "done", now_iso()


def session_digest(run: Run, messages: list[Message]) -> SessionDigest:
    """The digest of the session's messages; the run keeps what its tool calls show, so that
    no fact claims what they deny (``refuted.drop_refuted``)."""
    settings = run.settings
    digest = build_digest(messages, settings.digest_items, settings.digest_report_chars)
    run.evidence = evidence(digest.calls, digest.left_open)
    return digest


def action_decisions(run: Run, session: Session, digest: SessionDigest) -> list[Decision]:
    """On the rules path (no LLM), the facts the session's tool calls show, settled like
    any other facts: commands that worked, errors and their fixes, confirmed findings."""
    if run.llm is not None:
        return []
    facts = action_facts(digest, f"session:{session.id}")
    run.record.facts += len(facts)
    return settle(run, facts) if facts else []


def digest_decision(
    run: Run, session: Session, messages: list[Message], digest: SessionDigest
) -> Decision | None:
    """The session's digest as a decision: create it, or merge it into the session's
    digest already stored (a grown session); None when the session says nothing useful."""
    if not digest.useful():
        return None
    first, last = messages[0], messages[-1]
    day = (session.started_at or first.created_at or "")[:10]
    named = heading_title(session.title) if digest.subagent else session.title
    if resumed(named):  # "pick up where we left off" says nothing: the work's first request
        named = condensed(digest.requests[0]) if digest.requests else ""
    title = f" — {named}" if named else ""
    whose = f"{session.client} sub-agent" if digest.subagent else session.client
    heading = f"Session of {day} ({whose}){title}"
    fact = Fact(
        content=render(digest, heading, run.settings.digest_max_chars),
        category=Category.EVENTS,
        tags=[DIGEST_TAG, "session"],
        importance=SUBAGENT_DIGEST_IMPORTANCE if digest.subagent else DIGEST_IMPORTANCE,
        confidence=DIGEST_CONFIDENCE,
        source=f"session:{session.id}#{first.seq}-{last.seq}",
        created_at=session.started_at or first.created_at,
    )
    embed(run, [fact])
    stored = session_memory(run.db, session.id, DIGEST_TAG)
    if stored is None:
        return Decision(Verdict.CREATE, fact, reason="session digest", by=DIGEST)
    if stored.content == fact.content:
        return Decision(Verdict.SKIP, fact, stored.id, reason="digest unchanged", by=DIGEST)
    return Decision(
        Verdict.MERGE, fact, stored.id, merged=fact.content, reason="digest grown", by=DIGEST
    )


def latest_time(messages: list[Message]) -> str | None:
    times = [m.created_at for m in messages if m.created_at]
    return max(times) if times else None


class ForgottenMeanwhile(Exception):
    """A forget or a redact landed while a session was distilled: what was made of the
    messages read before it must not be written (the caller distils again)."""


def _unchanged(ctx: Context, since: int) -> None:
    """In a write transaction: ForgottenMeanwhile when a forget or redact came after
    ``since`` (the messages being distilled may hold what it took out)."""
    if forgotten_since(ctx.db, since):
        raise ForgottenMeanwhile("a forget or redact meanwhile: distilled again")


def run_session(ctx: Context, session_id: str, job_id: int | None = None) -> Run:
    """Distil all of a session's new messages, batch by batch, then write its digest.
    ForgottenMeanwhile, with nothing written after it, when a forget or a redact lands
    meanwhile."""
    since = last_event(ctx.db)  # before the messages are read: any forget after is seen
    session = get_session(ctx.db, session_id)
    if session is None:
        raise NotFoundError(f"no session {session_id}")
    llm = choose_llm(ctx.settings)
    run = start_run(ctx, "ingest", llm.llm, session.scope, session_id, job_id, llm_note=llm.note)
    run.agent_id, run.tags = session.agent_id, session.tags
    run.personal_scope = personal_scope(ctx)
    job = jobs.get_job(ctx.db, job_id) if job_id is not None else None
    for note in job.payload.get("notes", []) if job else []:
        run.note(str(note))  # what capture left out of the input, and why
    every = messages_after(ctx.db, session_id, 0)
    latest = latest_time(every)
    run.now = parse_time(latest) if latest else None  # admission ages facts by the session
    summary = session_digest(run, every) if every else None
    try:
        pending = [m for m in every if m.seq > session.extracted_through]
        if pending and run.llm is None and ctx.settings.ingest_host_distil:
            run.note(f"{len(pending)} messages left for the host model (ingest.host_distil)")
            pending = []
        while pending:
            batch = select(run, pending)
            decisions = distil_batch(run, batch)
            prepare_writes(run, decisions)
            with ctx.db.atomic():
                _unchanged(ctx, since)
                apply(run, decisions)
                record_decisions(run, decisions, done=False)
                set_extracted_through(ctx.db, session_id, batch[-1].seq)
                save_run(ctx.db, run.record)
            pending = pending[len(batch) :]
        last = action_decisions(run, session, summary) if summary else []
        digest = digest_decision(run, session, every, summary) if summary else None
        last += [digest] if digest else []
        prepare_writes(run, last)
        with ctx.db.atomic():
            _unchanged(ctx, since)
            apply(run, last)
            link_corrections(run, session_id)
            record_decisions(run, last)
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
    llm = choose_llm(ctx.settings)
    run = start_run(
        ctx, "ingest", llm.llm, session.scope, session.id, dry_run=True, llm_note=llm.note
    )
    run.personal_scope = personal_scope(ctx)
    decisions = distil(run, captured.recent)
    record_decisions(run, decisions)
    return run
