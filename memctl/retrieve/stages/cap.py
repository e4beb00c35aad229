"""Stage 5, cap: keep the best ``Run.depth`` x recall.cap candidates."""

from __future__ import annotations

from memctl.retrieve.run import DROPPED, KEPT, Candidate, Run

STAGE = "cap"


def cap(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    size = run.depth * run.params.cap
    for rank, candidate in enumerate(candidates, start=1):
        if rank <= size:
            run.record(STAGE, candidate, KEPT)
        else:
            run.record(STAGE, candidate, DROPPED, why=f"rank {rank} beyond the cap of {size}")
    return candidates[:size]
