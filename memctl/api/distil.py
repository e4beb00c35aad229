"""Distillation by the host model: the tasks it is asked to do, and applying its answers.

For users with no local LLM, the assistant itself extracts the facts (through
MCP): ``distil_tasks`` lists the captured sessions still waiting for
distillation, each with the extraction prompt and the numbered conversation;
``distil_apply`` runs the normal slow path for one session with the host's
answers as the extraction (noise, admission and reconcile as always, reconcile
by rules), as a run that ``memctl runs`` shows and ``memctl undo`` reverts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memctl.context import Context
from memctl.errors import InputError, NotFoundError
from memctl.ingest.capture import JOB_KIND
from memctl.ingest.extract import SCHEMA
from memctl.ingest.pipeline import extraction_task, run_session
from memctl.llm.host import HostAnswers
from memctl.store import jobs
from memctl.store.runs import RunRecord

HOST_WORKER = "host-model"


@dataclass(frozen=True)
class DistilTask:
    session_id: str
    job_id: int
    system: str  # the extraction instructions
    chunks: list[str]  # the numbered conversation: answer each with {"facts": [...]}
    schema: dict[str, Any]


def distil_tasks(ctx: Context, limit: int = 3) -> list[DistilTask]:
    """The oldest sessions waiting for distillation, with what to extract from them."""
    tasks = []
    for job in jobs.queued_jobs(ctx.db, JOB_KIND, limit):
        if job.session_id is None:
            continue
        system, chunks = extraction_task(ctx, job.session_id)
        tasks.append(DistilTask(job.session_id, job.id, system, chunks, SCHEMA))
    return tasks


def distil_apply(ctx: Context, job_id: int, answers: list[dict[str, Any]]) -> RunRecord:
    """Distil the job's session with the host's answers (one ``{"facts": [...]}`` per chunk)."""
    job = jobs.get_job(ctx.db, job_id)
    if job is None or job.kind != JOB_KIND or job.session_id is None:
        raise NotFoundError(f"no distillation task {job_id}")
    if not answers:
        raise InputError('give one answer ({"facts": [...]}) for each chunk of the task')
    if not jobs.take(ctx.db, job_id, HOST_WORKER):
        raise InputError(f"task {job_id} is no longer waiting (state {job.state}); ask again")
    try:
        run = run_session(ctx, job.session_id, job_id, HostAnswers(answers, SCHEMA))
    except Exception as error:
        jobs.fail(ctx.db, job_id, f"{type(error).__name__}: {error}", retry=True)
        raise
    return run.record
