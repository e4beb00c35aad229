"""Stage 7, bm25_floor: a strong full-text match keeps most of its pre-rerank score.

A candidate whose BM25, relative to the best BM25 among the candidates, is at
least recall.bm25_floor keeps at least recall.bm25_floor_keep x the score it
had before reranking: an exact identifier is not lost to a reranker's doubt.
"""

from __future__ import annotations

from memctl.retrieve.run import KEPT, RESCORED, Candidate, Run, by_score

STAGE = "bm25_floor"


def relative_bm25(candidates: list[Candidate]) -> dict[str, float]:
    """Each candidate's BM25 as a share of the best (FTS5's bm25 is negative: lower is better)."""
    best = min((c.raw["bm25"] for c in candidates if "bm25" in c.raw), default=0.0)
    if best >= 0:
        return {}
    return {c.id: c.raw["bm25"] / best for c in candidates if "bm25" in c.raw}


def bm25_floor(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    shares, p = relative_bm25(candidates), run.params
    for candidate in candidates:
        share = shares.get(candidate.id, 0.0)
        floor = p.bm25_floor_keep * (candidate.pre_rerank or 0.0)
        if share >= p.bm25_floor and candidate.score < floor:
            factor = floor / candidate.score if candidate.score else 1.0
            candidate.score = floor
            candidate.factors[STAGE] = factor
            run.record(STAGE, candidate, RESCORED, factor, f"BM25 {share:.2f} of the best")
        else:
            candidate.factors[STAGE] = 1.0
            run.record(STAGE, candidate, KEPT, 1.0)
    return by_score(candidates)
