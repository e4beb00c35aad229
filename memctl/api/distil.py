"""Distillation by the host model (the assistant the user runs), for when no local LLM is.

The MCP server exposes these two as tools: ``pending`` gives the host the
next tasks of the sessions waiting for distillation (a session's consecutive
tasks together, answered in order), with the instructions
and the JSON schema once for all of them; ``distil`` applies the host's JSON
answer through noise -> admission -> reconcile and marks the task's messages
distilled (an answer with an unusable fact is refused, each problem named).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memctl.context import Context
from memctl.errors import UsageError
from memctl.ingest.extract import HOST_SCHEMA
from memctl.ingest.host import PendingBatch, apply_answer, instructions
from memctl.ingest.host import pending as pending_batches
from memctl.store.runs import RunRecord


@dataclass(frozen=True)
class PendingRequest:
    limit: int = 10  # tasks


@dataclass
class PendingResult:
    instructions: str  # how to answer every task
    schema: dict[str, Any]  # of an answer
    batches: list[PendingBatch] = field(default_factory=list)


@dataclass(frozen=True)
class DistilRequest:
    session_id: str
    through_seq: int  # the batch's last message, as ``pending`` gave it
    answer: Any  # the host's JSON answer: {"facts": [...]} matching the batch's schema


@dataclass
class DistilResult:
    run: RunRecord


def pending(ctx: Context, request: PendingRequest) -> PendingResult:
    """The next tasks of the sessions waiting for distillation, and how to answer them."""
    if request.limit < 1:
        raise UsageError(f"limit takes a number of tasks (1 or more), not {request.limit}")
    return PendingResult(instructions(ctx), HOST_SCHEMA, pending_batches(ctx, request.limit))


def distil(ctx: Context, request: DistilRequest) -> DistilResult:
    """Apply the host model's answer for one batch; the run it made is returned."""
    return DistilResult(apply_answer(ctx, request.session_id, request.through_seq, request.answer))
