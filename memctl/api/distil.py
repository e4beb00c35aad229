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
from memctl.memories.operations import resolve_scope
from memctl.store.profile import ProfileLine
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
    stamp: str | None = None  # the task's, as ``pending`` gave it: refused when it changed


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
    return DistilResult(
        apply_answer(ctx, request.session_id, request.through_seq, request.answer, request.stamp)
    )


@dataclass(frozen=True)
class ProfileTaskRequest:
    scope: str | None = None  # None or 'project': the current project's; 'global'


@dataclass
class ProfileTask:
    scope: str
    instructions: str
    schema: dict[str, Any]
    notes: list[dict[str, Any]]  # the rules' lines, each with the ids of its memories
    written_by: list[str]  # who wrote the profile the scope has now

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ProfileWriteRequest:
    answer: Any  # {"lines": [{"section", "text", "sources": [memory ids]}]}
    scope: str | None = None


def profile_task(ctx: Context, request: ProfileTaskRequest) -> ProfileTask:
    """What the host model writes a scope's profile from, and how to answer."""
    from memctl.maintain.profile import HOST_INSTRUCTIONS, HOST_SCHEMA, host_task
    from memctl.store.profile import profile_lines

    scope = resolve_scope(ctx, request.scope)
    writers = sorted({x.written_by for x in profile_lines(ctx.db, (scope,))})
    return ProfileTask(scope, HOST_INSTRUCTIONS, HOST_SCHEMA, host_task(ctx.db, scope), writers)


def write_profile(ctx: Context, request: ProfileWriteRequest) -> list[ProfileLine]:
    """Replace a scope's profile with the host model's lines (an InputError naming each
    problem, and nothing written, when a line cites no active memory of that scope)."""
    from memctl.maintain.profile import host_written
    from memctl.store.profile import replace_profile

    scope = resolve_scope(ctx, request.scope)
    lines = host_written(ctx.db, scope, request.answer)
    with ctx.db.atomic():
        replace_profile(ctx.db, scope, lines)
    return lines
