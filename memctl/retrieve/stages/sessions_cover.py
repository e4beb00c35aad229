"""Stage, sessions: a question that counts over time, or sets two events against each
other, gets one message from each session first.

A question that counts or lists what happened over time ("how many times did
I ...", "how often", "in total", "which ... have I ever"), or that compares two
events ("which did I do first, X or Y?", "how many days between the day I ...
and ...", "how long ... before I started ..."), wants one answer from each
session more than several from one: past its session's best, each
further message of the session (by score, with its label: the clear ones in
the pipeline, the possible ones once ranked as possible matches) is multiplied by
``COVERAGE_FACTOR`` once more, so the next session's best comes before a
session's second. A lean, never a filter: every message stays, and the order
of the sessions by their best message is unchanged.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict

from memctl.retrieve.run import RESCORED, Candidate, Run, by_score

STAGE = "sessions"
# Reasoned: half a score per message already above it from its session puts the next
# session's best (most often within a factor of two of the first) ahead of a session's
# second. Measured: LongMemEval's session ranks and the real questions are unchanged
# (docs/benchmarks.md, "Far messages and counting questions").
COVERAGE_FACTOR = 0.5
COUNTING = (
    # not a span of time ("how many days ago", "how many weeks between"): one answer
    r"\bhow many\b(?![^?.!]*\b(?:ago|since|until|before|after|between|left)\b)",
    r"\bhow often\b",
    r"\bhow much (?:time|money)\b",
    r"\bin total\b",
    r"\b(?:which|what) (?:\w+ ){1,3}(?:have|did) (?:i|we) (?:\w+ )?(?:ever|all|so far)\b",
    r"\beach time\b",
    r"\bevery time\b",
)


# Measured: on LongMemEval with sessions, every evidence session of a temporal question
# shows in the first 5 rows more often, no session's rank moves; no real question matches
# (docs/benchmarks.md, "Questions that compare two events").
COMPARING = (
    # two events set against each other in time: each was most often told in its own session
    r"\b(?:which|who|what)\b[^?.!]*\bfirst\b[^?.!]*\bor\b",  # "which did I do first, X or Y?"
    # "how many days between the day I ... and", "how long ... before I started ..."
    r"\bhow (?:long|many \w+)\b[^?.!]*\b(?:between|before|after|since|until)\b[^?.!]*\b(?:i|we)\b",
)


@functools.lru_cache(maxsize=256)
def counts_over_time(query: str) -> bool:
    """Whether the question counts or lists what happened over time."""
    return any(re.search(pattern, query, re.IGNORECASE) for pattern in COUNTING)


@functools.lru_cache(maxsize=256)
def compares_events(query: str) -> bool:
    """Whether the question sets two events against each other in time."""
    return any(re.search(pattern, query, re.IGNORECASE) for pattern in COMPARING)


def sessions_cover(run: Run, candidates: list[Candidate], clear: bool = True) -> list[Candidate]:
    """For a question that counts over time or compares two events, each session message
    with the label ``clear`` past its session's best x COVERAGE_FACTOR per message of its
    session above it, re-sorted. In the pipeline the clear matches; the possible ones once ranked as
    possible matches (pipeline.possible_results), by that rank, not the pipeline's."""
    if not (counts_over_time(run.query.text) or compares_events(run.query.text)):
        return candidates
    above: dict[str, int] = defaultdict(int)
    for candidate in by_score(candidates):
        session = candidate.memory.session_id
        if not candidate.is_message or not session or candidate.clear != clear:
            continue
        shown = above[session]
        above[session] += 1
        if shown:
            factor = COVERAGE_FACTOR**shown
            candidate.score *= factor
            candidate.factors[STAGE] = factor
            why = f"x {factor:g}: the question counts over time; {shown} of its session above"
            run.record(STAGE, candidate, RESCORED, factor, why)
    return by_score(candidates)
