"""Time: when the query names a time ("last week", "in May"), memories created inside that
window x time_boost. A boost, never a filter.

It runs right after fuse, before the cap: a memory from the very time the query names
must not be cut for a score that does not yet count the time.
"""

from __future__ import annotations

from memctl.model import parse_time
from memctl.retrieve.run import Candidate, Run, rescore

STAGE = "time"


def time_boost(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    window = run.query.window
    if window is None:
        return candidates

    def factor(candidate: Candidate) -> tuple[float, str]:
        if window.contains(parse_time(candidate.memory.created_at)):
            return run.params.time_boost, f"created within {window.phrase!r}"
        return 1.0, f"outside {window.phrase!r}"

    return rescore(run, STAGE, candidates, factor)
