"""Stage 10, length: long memories are damped, score / max(1, 1 + log2(length / length_norm)),
so that a long document does not win on the number of words it happens to share."""

from __future__ import annotations

import math

from memctl.retrieve.run import Candidate, Run, rescore

STAGE = "length"


def length(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    norm = run.params.length_norm

    def factor(candidate: Candidate) -> tuple[float, str]:
        size = max(1, len(candidate.memory.content))
        return 1.0 / max(1.0, 1.0 + math.log2(size / norm)), f"{size} characters"

    return rescore(run, STAGE, candidates, factor)
