"""The recall pipeline: a list of stages run in order over the candidate list.

    candidates -> fuse -> time -> cap -> neighbours -> rerank -> bm25_floor -> decay ->
    importance -> length -> scope -> spread -> status -> cutoff -> mmr -> pack

Only candidates with evidence of their own (fuse) or a path from one
(neighbours, spread) are returned; an unrelated query returns nothing.

``recall()`` is the one entry point (the CLI, hooks and benchmarks call it);
its result carries the trace that ``--explain`` and ``--why-not`` read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context
from memctl.errors import MemctlError
from memctl.model import Memory, State, format_time
from memctl.retrieve.params import Params, recall_params
from memctl.retrieve.query import Analysed, analyse
from memctl.retrieve.run import Candidate, Run, Stage, Step
from memctl.retrieve.stages.bm25_floor import bm25_floor
from memctl.retrieve.stages.candidates import candidates
from memctl.retrieve.stages.cap import cap
from memctl.retrieve.stages.cutoff import cutoff
from memctl.retrieve.stages.decay import decay
from memctl.retrieve.stages.fuse import fuse
from memctl.retrieve.stages.graph import graph, is_synthetic
from memctl.retrieve.stages.importance import importance
from memctl.retrieve.stages.length import length
from memctl.retrieve.stages.mmr import mmr
from memctl.retrieve.stages.neighbours import neighbours
from memctl.retrieve.stages.pack import pack
from memctl.retrieve.stages.rerank import rerank
from memctl.retrieve.stages.scope import scope
from memctl.retrieve.stages.spread import describe, spread
from memctl.retrieve.stages.status import status
from memctl.retrieve.stages.time_boost import time_boost
from memctl.store.memories import MemoryFilter
from memctl.store.sessions import source_times
from memctl.store.writes import Writer

# Recall never returns archived or deleted memories; superseded ones reach the status
# stage, which leaves them out unless --history (so --why-not can say so).
RECALLABLE_STATES = (State.ACTIVE, State.SUPERSEDED, State.CONTRADICTED)


def stages_for(params: Params) -> list[Stage]:
    """The pipeline for these constants: rerank and its BM25 floor only when reranking."""
    reranking: list[Stage] = [rerank, bm25_floor] if params.rerank else []
    return [
        candidates,
        fuse,
        time_boost,
        cap,
        neighbours,
        graph,
        *reranking,
        decay,
        importance,
        length,
        scope,
        spread,
        status,
        cutoff,
        mmr,
        pack,
    ]


@dataclass
class Recalled:
    """One recalled memory (or raw session message), its score and how it got there."""

    memory: Memory
    score: float
    ranks: dict[str, int]
    raw: dict[str, float]
    factors: dict[str, float]
    via: tuple[str, ...] = ()
    is_message: bool = False
    source_time: str | None = None  # when its source message was said, if known

    @property
    def dated_at(self) -> str:
        """The time its age is counted from: its source's, else its creation's."""
        return self.source_time or self.memory.created_at

    @classmethod
    def of(cls, candidate: Candidate) -> Recalled:
        return cls(
            candidate.memory,
            candidate.score,
            candidate.ranks,
            candidate.raw,
            candidate.factors,
            candidate.via,
            candidate.is_message,
        )

    @property
    def graph_path(self) -> str | None:
        return describe(self.via) if self.via else None

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.memory.to_dict(),
            "score": self.score,
            "ranks": self.ranks,
            "raw": self.raw,
            "factors": self.factors,
            "graph_path": self.graph_path,
            "from_session_messages": self.is_message,
            "source_time": self.source_time,
        }


@dataclass
class RecallResult:
    query: str
    results: list[Recalled]
    warnings: list[str] = field(default_factory=list)
    run: Run | None = None
    # No result: the memories closest in meaning, which nothing confirmed (``recall.unconfirmed``)
    unconfirmed: list[Recalled] = field(default_factory=list)

    def steps_of(self, memory_id: str) -> list[Step]:
        return self.run.steps_of(memory_id) if self.run else []


def home_scope_of(ctx: Context, scopes: tuple[str, ...] | None) -> str | None:
    """The scope that counts as "this project" for the scope stage."""
    project = ctx.settings.project_scope
    if scopes is None or project in scopes:
        return project
    return next((s for s in scopes if s != GLOBAL_SCOPE), None)


def start(
    ctx: Context,
    text: str,
    limit: int | None = None,
    scopes: tuple[str, ...] | None = None,
    now: datetime | None = None,
    mode: str | None = None,
) -> Run:
    """A run ready for the stages: the query analysed against ``now`` (default: the clock)."""
    params = recall_params(ctx.settings, mode)
    moment = now or datetime.now(UTC)
    # memories created up to and including "now"; timestamps have millisecond resolution
    as_of = format_time(moment + timedelta(milliseconds=1)) if now is not None else None
    return Run(
        ctx=ctx,
        query=analyse(text, moment),
        params=params,
        limit=limit or params.limit,
        now=moment,
        where=MemoryFilter(scopes=scopes, states=RECALLABLE_STATES, before=as_of),
        home_scope=home_scope_of(ctx, scopes),
    )


def run_stages(run: Run, stages: list[Stage]) -> list[Candidate]:
    found: list[Candidate] = []
    for stage in stages:
        found = stage(run, found)
    return found


def recall(
    ctx: Context,
    text: str,
    limit: int | None = None,
    scopes: tuple[str, ...] | None = None,
    *,
    now: datetime | None = None,
    mode: str | None = None,
    touch: bool = True,
    history: bool = False,
    sessions: bool = False,
    budget: int | None = None,
) -> RecallResult:
    """The best memories for ``text``.

    ``scopes``: None searches every scope. ``now`` (``--as-of``) moves the clock
    back: memories created after it do not exist yet. ``touch`` records the access
    on each recalled memory (count, time, strength, an event) in one transaction.
    """
    run = start(ctx, text, limit, scopes, now, mode)
    run.history, run.sessions, run.budget = history, sessions, budget
    if run.params.translate and not run.query.english:
        run.translation = translation_of(run)
    found = run_stages(run, stages_for(run.params))
    results = [Recalled.of(c) for c in found]
    times = source_times(ctx.db, [r.memory for r in results if not r.is_message])
    for item in results:
        item.source_time = times.get(item.memory.id)
    if touch:
        touch_results(run, results)
    unconfirmed = [] if results else [Recalled.of(c) for c in run.unconfirmed]
    return RecallResult(
        query=text, results=results, warnings=run.notes, run=run, unconfirmed=unconfirmed
    )


def translation_of(run: Run) -> Analysed | None:
    """The query's English translation for the dual pass, or None (with a note) without one."""
    from memctl.llm.recall_judge import recall_judge

    judge = recall_judge(run.ctx.settings, run.params.llm_model)
    try:
        return analyse(judge.translate(run.query.text), run.now)
    except MemctlError as exc:
        run.notes.append(f"no English pass: {exc}")
        return None


def touch_results(run: Run, results: list[Recalled]) -> None:
    """Count the access of every recalled memory, in one transaction; a busy store only warns."""
    ids = [r.memory.id for r in results if not r.is_message and not is_synthetic(r.memory)]
    if not ids:
        return
    db = run.ctx.db
    try:
        with db.without_fsync(), db.atomic():
            Writer(db).accessed(ids, run.params.strength_step, by="recall")
    except MemctlError as exc:
        run.notes.append(f"access not recorded: {exc}")
