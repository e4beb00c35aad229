"""Stage 2, rrf: weighted reciprocal rank fusion of the legs' rankings.

score = sum over legs of weight / (k + rank); a pinned memory's score x pinned_boost.
When the vector or the BM25 leg failed (an unreachable embedding server), the
other takes both weights, so that its answers keep the scores they would have
had as the only leg that found them, instead of falling under min_score.
"""

from __future__ import annotations

from memctl.model import Kind
from memctl.retrieve.run import RESCORED, Candidate, Run, by_score

STAGE = "rrf"


def leg_weights(run: Run) -> dict[str, float]:
    p = run.params
    vector, bm25 = p.weight_vector, p.weight_bm25
    if "vector" in run.failed_legs:
        vector, bm25 = 0.0, vector + bm25
    elif "bm25" in run.failed_legs:
        vector, bm25 = vector + bm25, 0.0
    return {
        "vector": vector,
        "bm25": bm25,
        "vector_en": vector,
        "bm25_en": bm25,
        "time": p.weight_time,
        "sessions": p.weight_sessions,
    }


def rrf(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    weights, k = leg_weights(run), run.params.rrf_k
    for candidate in candidates:
        parts = {leg: weights.get(leg, 0.0) / (k + rank) for leg, rank in candidate.ranks.items()}
        candidate.score = sum(parts.values())
        why = " + ".join(f"{leg} {w:.4f}" for leg, w in parts.items())
        if candidate.memory.kind == Kind.PINNED:
            candidate.score *= run.params.pinned_boost
            why += f", pinned x {run.params.pinned_boost:g}"
        candidate.factors[STAGE] = candidate.score
        run.record(STAGE, candidate, RESCORED, candidate.score, why)
    return by_score(candidates)
