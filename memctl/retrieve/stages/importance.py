"""Stage 9, importance: score x (importance_base + (1 - importance_base) x importance)."""

from __future__ import annotations

from memctl.retrieve.run import Candidate, Run, rescore

STAGE = "importance"


def importance(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    base = run.params.importance_base

    def factor(candidate: Candidate) -> tuple[float, str]:
        value = candidate.memory.importance
        return base + (1 - base) * value, f"importance {value:g}"

    return rescore(run, STAGE, candidates, factor)
