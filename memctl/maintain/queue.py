"""Drain the job queue: claim jobs one at a time and run them until none is left.

Safe to run from several processes at once (a detached worker, a second
worker, ``memctl maintain`` from cron): each claim is atomic. A job that
fails goes back to the queue until it has used ``ingest.job_max_attempts``
attempts; its error is recorded on the job, scrubbed of anything secret.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from memctl.context import Context
from memctl.ingest.call_vectors import embed_calls
from memctl.ingest.message_vectors import drop_unkept, embed_messages
from memctl.ingest.pipeline import ForgottenMeanwhile, run_session
from memctl.maintain.claims import release_orphans
from memctl.memories.privacy import safe_line
from memctl.model import format_time
from memctl.store import jobs
from memctl.store.sessions import keeps_message_vectors

Log = Callable[[str], None]
# Messages of a session embedded after its job (ingest/message_vectors.py); a longer
# session's rest waits for `memctl maintain` (upkeep), so one job stays a few minutes at most.
MESSAGES_PER_JOB = 2_000


@dataclass
class DrainReport:
    done: list[dict[str, object]] = field(default_factory=list)
    failed: list[dict[str, object]] = field(default_factory=list)


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "no changes"


def drain(ctx: Context, worker: str, log: Log, limit: int | None = None) -> DrainReport:
    """Run queued jobs (at most ``limit``) and report each one's outcome."""
    settings = ctx.settings
    report = DrainReport()
    while limit is None or len(report.done) + len(report.failed) < limit:
        release_orphans(ctx.db, settings.ingest_job_max_attempts)
        stale = datetime.now(UTC) - timedelta(seconds=settings.ingest_job_stale_seconds)
        job = jobs.claim(ctx.db, worker, format_time(stale), settings.ingest_job_max_attempts)
        if job is None:
            break
        try:
            if job.kind != "ingest" or job.session_id is None:
                raise ValueError(f"unknown job kind {job.kind!r}")
            try:
                run = run_session(ctx, job.session_id, job.id)
            except ForgottenMeanwhile:  # again, from what the forget or redact left
                run = run_session(ctx, job.session_id, job.id)
        except Exception as error:  # a job must never take the worker down with it
            message = safe_line(f"{type(error).__name__}: {error}")
            retry = job.attempts < settings.ingest_job_max_attempts
            jobs.fail(ctx.db, job.id, message, retry)
            report.failed.append({"job": job.id, "error": message, "retried": retry})
            log(f"job {job.id} failed ({'will retry' if retry else 'gave up'}): {message}")
            continue
        _embed_session(ctx, job.session_id, log)
        record = run.record
        report.done.append(
            {"job": job.id, "run": record.id, "counts": record.counts, "llm_note": run.llm_note}
        )
        log(
            f"job {job.id} session {safe_line(job.session_id, 40)}: run {record.id[:12]} "
            f"[{record.llm}, {record.tokens} tokens] {_summary(record.counts)}"
        )
        for note in record.notes:
            log(f"job {job.id}: {note}")
    return report


def _embed_session(ctx: Context, session_id: str, log: Log) -> None:
    """Vectors for the session's calls (ingest/call_vectors.py: every store, they are read,
    never searched) and messages, when the store keeps them (``recall.message_vectors``:
    else embedding them costs most of a job's CPU for nothing; auto, a store grown past its
    limit loses those it had); a failure leaves them to `memctl maintain`."""
    try:
        dropped = drop_unkept(ctx.db, ctx.settings)
        if dropped:
            log(
                f"{dropped} message vectors dropped: the store holds more messages than "
                "recall.message_vectors_up_to"
            )
        embed_calls(ctx.db, ctx.embedder, MESSAGES_PER_JOB, session_id)
        if not keeps_message_vectors(ctx.db, ctx.settings):
            return
        embedded = embed_messages(ctx.db, ctx.embedder, MESSAGES_PER_JOB, session_id)
    except Exception as error:  # the job is done: its messages wait for maintain's upkeep
        log(f"session {safe_line(session_id, 40)}: messages not embedded: {safe_line(str(error))}")
        return
    if embedded:
        log(f"session {safe_line(session_id, 40)}: {embedded} messages embedded")
