"""Stage 1: candidates from the two retrieval legs, BM25 over FTS5 and vector KNN."""

from __future__ import annotations

from dataclasses import dataclass, field

from memctl.context import Context
from memctl.errors import MemctlError
from memctl.store.memories import MemoryFilter, fts_search, vector_search


@dataclass
class Candidate:
    """A memory on its way through the pipeline, with what each stage did to it."""

    memory_id: str
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)
    factors: dict[str, float] = field(default_factory=dict)


@dataclass
class Query:
    """What a recall asks for."""

    text: str
    limit: int
    where: MemoryFilter
    warnings: list[str] = field(default_factory=list)


def bm25_leg(ctx: Context, query: Query, size: int) -> list[tuple[str, float]]:
    return fts_search(ctx.db, query.text, size, query.where)


def vector_leg(ctx: Context, query: Query, size: int) -> list[tuple[str, float]]:
    (vector,) = ctx.vectors([query.text])
    return vector_search(ctx.db, vector, size, query.where)


LEGS = {"vector": vector_leg, "bm25": bm25_leg}


def gather(ctx: Context, query: Query) -> list[Candidate]:
    """Run every leg for ``limit x recall.candidates`` hits; a failing leg is a warning."""
    size = query.limit * ctx.settings.recall_candidates
    by_id: dict[str, Candidate] = {}
    for leg, search in LEGS.items():
        try:
            hits = search(ctx, query, size)
        except MemctlError as exc:
            query.warnings.append(f"{leg} search unavailable, results from the other leg: {exc}")
            continue
        for rank, (memory_id, raw) in enumerate(hits, start=1):
            candidate = by_id.setdefault(memory_id, Candidate(memory_id))
            candidate.ranks[leg] = rank
            candidate.raw[leg] = raw
    return list(by_id.values())
