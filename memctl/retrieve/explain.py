"""--explain and --why-not: how a result got its score, and why a memory is missing.

Both read the run's trace (what every stage did to every candidate); a memory
that never became a candidate is explained from the filters and from where
each leg ranked it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memctl.context import Context
from memctl.errors import NotFoundError
from memctl.model import HIDDEN_STATES, Memory
from memctl.retrieve.pipeline import Recalled, RecallResult
from memctl.retrieve.run import ADDED, DROPPED, Run, Step
from memctl.retrieve.stages.candidates import STAGE as CANDIDATES
from memctl.store.memories import fts_rank_of, get_memory, resolve_id
from memctl.store.message_search import get_message, is_message_id
from memctl.store.sessions import source_range

LEG_RAW = {"vector": "distance", "time": "distance", "vector_en": "distance"}
LIMIT = "limit"  # a candidate no stage dropped, below the rows the limit shows


def explain(result: Recalled, steps: list[Step]) -> dict[str, Any]:
    """Which legs found a result and where, each stage's factor, the graph path, the source."""
    legs = {
        leg: {"rank": rank, LEG_RAW.get(leg, "bm25"): result.raw.get(leg)}
        for leg, rank in result.ranks.items()
    }
    return {
        "legs": legs,
        "factors": result.factors,
        "graph_path": result.graph_path,
        "source": result.memory.source,
        "session_id": result.memory.session_id,
        "distilled_from": _messages_of(result.memory),
        "steps": [s.to_dict() for s in steps if s.why],
    }


def _messages_of(memory: Memory) -> dict[str, Any] | None:
    """The session messages a memory was distilled from, as its source names them."""
    named = source_range(memory.source)
    if named is None:
        return None
    return {"session_id": named[0], "first": named[1], "last": named[2]}


@dataclass
class WhyNot:
    """Why one memory is (or is not) among the results."""

    memory_id: str
    recalled: bool
    stage: str | None
    reason: str
    rank: int | None = None
    steps: list[Step] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.memory_id,
            "recalled": self.recalled,
            "rank": self.rank,
            "stage": self.stage,
            "reason": self.reason,
            "steps": [{"memory_id": s.memory_id, **s.to_dict()} for s in self.steps],
        }


def why_not(ctx: Context, result: RecallResult, id_or_prefix: str) -> WhyNot:
    """The stage that dropped the memory (or session message) and why, or why no leg found it."""
    if is_message_id(id_or_prefix):
        memory: Memory | None = get_message(ctx.db, id_or_prefix).as_memory()
    else:
        memory = get_memory(ctx.db, resolve_id(ctx.db, id_or_prefix))
    if memory is None:
        raise NotFoundError(f"no memory with id {id_or_prefix}")
    memory_id = memory.id
    steps = result.steps_of(memory_id)
    for rank, item in enumerate(result.results, start=1):
        if item.memory.id == memory_id and item.clear:
            return WhyNot(memory_id, True, None, f"recalled at rank {rank}", rank, steps)
        if item.memory.id == memory_id:  # offered, labelled for what its evidence shows
            reason = f"recalled at rank {rank} as a {item.match_why}"
            return WhyNot(memory_id, True, "fuse", reason, rank, steps)
    dropped = next((s for s in reversed(steps) if s.action == DROPPED), None)
    if dropped is not None and dropped is steps[-1]:
        return WhyNot(memory_id, False, dropped.stage, dropped.why, steps=steps)
    found = next((s for s in steps if s.stage == CANDIDATES and s.action == ADDED), None)
    if found is not None:  # went on past every stage (the gate's possible ones too)
        reason = below_the_rows(result, [found, *([dropped] if dropped else [])], steps[-1])
        return WhyNot(memory_id, False, LIMIT, reason, steps=steps)
    assert result.run is not None
    stage, reason = never_found(ctx, result.run, memory)
    return WhyNot(memory_id, False, stage, reason, steps=steps)


def below_the_rows(result: RecallResult, said: list[Step], last: Step) -> str:
    """Why a candidate that went on past every stage is not shown: how it was found and,
    when the gate set it aside (``said``), why; then the rows ranked above it. One the gate
    set aside and a later stage ranked (a possible match, ``recall.possible``) was ranked
    too low, not dropped."""
    shown = result.results
    rows = f"the {len(shown)} rows shown" if shown else "no row shown"
    least = f"; the last row's {shown[-1].score:.3f}" if shown else ""
    told = "; ".join(step.why for step in said if step.why)
    return f"{told}; then ranked below {rows} (its score {last.score:.3f}{least})"


def never_found(ctx: Context, run: Run, memory: Memory) -> tuple[str, str]:
    """(stage, reason) for a memory that never became a candidate."""
    where = run.where
    if is_message_id(memory.id) and not run.sessions:
        return "filter", "it is a session message: --no-sessions leaves them out"
    if memory.state in HIDDEN_STATES:
        return "filter", f"it is {memory.state}: recall never returns {memory.state} memories"
    if where.scopes is not None and memory.scope not in where.scopes:
        searched = ", ".join(where.scopes)
        return "filter", (
            f"its scope {memory.scope} was not searched (searched: {searched}); "
            "use --all-scopes or --scope"
        )
    if where.before is not None and memory.created_at >= where.before:
        return "filter", f"it was created at {memory.created_at}, after the --as-of time"
    size = run.depth * run.params.candidates
    return "candidates", f"no leg ranked it in its top {size}: " + "; ".join(
        [_vector_rank(run, memory), _bm25_rank(ctx, run, memory)]
    )


def _vector_rank(run: Run, memory: Memory) -> str:
    if run.index is None or run.scores is None:
        return "vector search did not run"
    from memctl.store.vector_query import rank_of

    found = rank_of(run.index, run.scores, memory.id)
    if found is None:
        return "it has no vector"
    rank, similarity = found
    return f"vector rank {rank} (cosine similarity {similarity:.3f})"


def _bm25_rank(ctx: Context, run: Run, memory: Memory) -> str:
    if not run.query.alternatives:
        return "the query has no words to search for"
    if is_message_id(memory.id):
        return "no word of the query occurs in it, or it ranked below the session search's top"
    found = fts_rank_of(ctx.db, run.query.alternatives, memory.id)
    if found is None:
        return "no word of the query occurs in it"
    return f"BM25 rank {found[0]} (bm25 {found[1]:.3f})"
