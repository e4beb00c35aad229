"""Stage 10, length (off by default: ``recall.length_norm`` 0): the part of a long memory's
score that its words earned is damped by 1 / max(1, 1 + log2(length / length_norm)).

BM25 favours a long text for the number of words it happens to share with the
query; its meaning (the cosine) has no such bias, so the part of the score the
vector leg earned stands. Off, because FTS5's BM25 weighs a text's length itself: damped
besides (at 500), a long answer (a closing summary, a sub-agent's report) ranked under its
own session's short turns; off, such answers rose on every set of real questions, and
scoring a long text's words by its best passage instead added nothing (docs/benchmarks.md,
"A long answer and the length stage").
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
