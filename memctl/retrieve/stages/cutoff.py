"""Stage 13, cutoff: drop results whose final score is below recall.cutoff."""

from __future__ import annotations

from memctl.retrieve.run import Candidate, Run, drop_below

STAGE = "cutoff"


def cutoff(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    return drop_below(run, STAGE, candidates, run.params.cutoff, "score")
