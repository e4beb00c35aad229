"""The recall pipeline: gather candidates, fuse them, keep the best ``limit``."""

from __future__ import annotations

from dataclasses import dataclass, field

from memctl.context import Context
from memctl.model import Memory, State
from memctl.retrieve.candidates import Candidate, Query, gather
from memctl.retrieve.fuse import rrf
from memctl.store.memories import MemoryFilter, get_memories

RECALLABLE_STATES = (State.ACTIVE,)


@dataclass
class Recalled:
    """One recalled memory with its score and how it was found."""

    memory: Memory
    score: float
    ranks: dict[str, int]
    factors: dict[str, float]

    def to_dict(self) -> dict[str, object]:
        return {
            **self.memory.to_dict(),
            "score": self.score,
            "ranks": self.ranks,
            "factors": self.factors,
        }


@dataclass
class RecallResult:
    query: str
    results: list[Recalled]
    warnings: list[str] = field(default_factory=list)


def recall(
    ctx: Context, text: str, limit: int | None = None, scopes: tuple[str, ...] | None = None
) -> RecallResult:
    """The best memories for ``text`` among active memories of the given scopes."""
    settings = ctx.settings
    query = Query(
        text=text,
        limit=limit or settings.recall_limit,
        where=MemoryFilter(scopes=scopes, states=RECALLABLE_STATES),
    )
    candidates: list[Candidate] = gather(ctx, query)
    weights = {"vector": settings.recall_weight_vector, "bm25": settings.recall_weight_bm25}
    ranked = rrf(candidates, settings.recall_rrf_k, weights)[: query.limit]
    memories = get_memories(ctx.db, [c.memory_id for c in ranked])
    results = [
        Recalled(memories[c.memory_id], c.score, c.ranks, c.factors)
        for c in ranked
        if c.memory_id in memories
    ]
    return RecallResult(query=text, results=results, warnings=query.warnings)
