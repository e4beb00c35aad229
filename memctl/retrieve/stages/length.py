"""Stage 10, length (off by default: ``recall.length_norm`` 0): the part of a long memory's
score that its words earned is damped by 1 / max(1, 1 + log2(length / length_norm)).

BM25 favours a long text for the number of words it happens to share with the
query; its meaning (the cosine) has no such bias, so the part of the score the
vector leg earned stands. Off, because a long text's share of the query's words is its
best passage's (fuse.passage_coverage) and FTS5's BM25 weighs a text's length itself:
damped besides, a long answer (a closing summary, a sub-agent's report) ranked under its
own session's short turns (docs/benchmarks.md, "A long answer found by its best passage").
"""

from __future__ import annotations

import math

from memctl.retrieve.run import Candidate, Run, rescore

STAGE = "length"


def length(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    norm = run.params.length_norm
    if not norm:
        return candidates

    def factor(candidate: Candidate) -> tuple[float, str]:
        size = max(1, len(candidate.memory.content))
        damp = 1.0 / max(1.0, 1.0 + math.log2(size / norm))
        value = 1.0 - candidate.lexical * (1.0 - damp)
        return value, f"{size} characters, {candidate.lexical:.0%} of the score from its words"

    return rescore(run, STAGE, candidates, factor)
