"""Stage 2: weighted reciprocal rank fusion of the legs' rankings."""

from __future__ import annotations

from memctl.retrieve.candidates import Candidate


def rrf(candidates: list[Candidate], k: int, weights: dict[str, float]) -> list[Candidate]:
    """score = sum over legs of weight / (k + rank); best first."""
    for candidate in candidates:
        candidate.score = sum(
            weights.get(leg, 0.0) / (k + rank) for leg, rank in candidate.ranks.items()
        )
        candidate.factors["rrf"] = candidate.score
    return sorted(candidates, key=lambda c: (-c.score, c.memory_id))
