"""Stage 4, min_score: drop candidates whose normalised score is below recall.min_score."""

from __future__ import annotations

from memctl.retrieve.run import Candidate, Run, drop_below

STAGE = "min_score"


def min_score(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    return drop_below(run, STAGE, candidates, run.params.min_score, "normalised score")
