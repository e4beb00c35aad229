"""Stage 3, normalise: fused scores to [0, 1].

Min-max over the candidates; a single candidate gets min(score x single_scale, 1)
(so one weak match stays weak); when all scores are equal, every one is 1.
"""

from __future__ import annotations

from memctl.retrieve.run import RESCORED, Candidate, Run, by_score

STAGE = "normalise"


def normalise(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    if not candidates:
        return candidates
    scores = [c.score for c in candidates]
    low, high = min(scores), max(scores)
    for candidate in candidates:
        if len(candidates) == 1:
            value, why = min(candidate.score * run.params.single_scale, 1.0), "single candidate"
        elif high == low:
            value, why = 1.0, "all scores equal"
        else:
            value, why = (candidate.score - low) / (high - low), "min-max"
        candidate.score = value
        candidate.factors[STAGE] = value
        run.record(STAGE, candidate, RESCORED, value, why)
    return by_score(candidates)
