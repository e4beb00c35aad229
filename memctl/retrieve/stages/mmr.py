"""Stage 14, mmr: near duplicates give way, then the clear matches are cut to the limit.

A result whose words overlap a higher-ranked result's by Jaccard above
mmr_threshold is multiplied by mmr_factor; the list is re-sorted (clear matches
first: a possible one never pushes a clear one out; a result the graph or a
neighbour added takes its seed's label first, ``label_added``) and the clear ones
past the limit are cut. The possible ones all go on: recall ranks them as possible matches
(pipeline.possible_results), and which of them it sees must not hang on the limit,
or a larger limit would rank its first possible rows otherwise.

Once ``Run.depth`` results are left untouched, nothing below them can climb into
a plain recall's rows (the factor only lowers a score), so the comparisons stop
there: the cost follows the depth, not the number of candidates, and the same
comparisons are made whatever the limit.
"""

from __future__ import annotations

import re

from memctl.retrieve.run import (
    DROPPED,
    KEPT,
    RESCORED,
    Candidate,
    LabelKey,
    Run,
    by_label,
    clear_ids,
    label_added,
    label_key,
)

STAGE = "mmr"
WORD = re.compile(r"\w+")


def words(text: str) -> frozenset[str]:
    return frozenset(WORD.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def may_exceed(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    """Whether the Jaccard of two word sets can exceed ``threshold`` (it is at most the
    ratio of their sizes): a cheap test before the exact one."""
    small, large = sorted((len(a), len(b)))
    return large == 0 or small / large > threshold


def mmr(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    p = run.params
    above: list[tuple[Candidate, frozenset[str]]] = []
    untouched: list[LabelKey] = []  # label_key of each untouched result
    clear = clear_ids(label_added(candidates))
    for candidate in by_label(candidates):
        if len(untouched) >= run.depth and label_key(candidate, clear) >= untouched[run.depth - 1]:
            candidate.factors[STAGE] = 1.0
            continue
        mine = words(candidate.memory.content)
        close = (w for w in above if may_exceed(mine, w[1], p.mmr_threshold))
        twin = next(((c, s) for c, w in close if (s := jaccard(mine, w)) > p.mmr_threshold), None)
        if twin is None:
            candidate.factors[STAGE] = 1.0
            untouched.append(label_key(candidate, clear))
        else:
            candidate.score *= p.mmr_factor
            candidate.factors[STAGE] = p.mmr_factor
            why = f"near duplicate of {twin[0].id[:8]} (word overlap {twin[1]:.2f})"
            run.record(STAGE, candidate, RESCORED, p.mmr_factor, why)
        above.append((candidate, mine))
    kept = []
    for rank, candidate in enumerate(by_label(candidates), start=1):
        if rank > run.limit and not label_key(candidate, clear)[0]:
            run.record(
                STAGE, candidate, DROPPED, why=f"rank {rank} beyond the limit of {run.limit}"
            )
            continue
        if STAGE not in candidate.factors or candidate.factors[STAGE] == 1.0:
            run.record(STAGE, candidate, KEPT, 1.0)
        kept.append(candidate)
    return kept
