"""Stage, sessions: a session's best message gains a share of its session's next best.

A session is scored by its best few messages (DESIGN.md, recall 1): the best
message of each session gains ``SESSION_SHARE`` of the scores of the
``SESSION_BEST - 1`` next best messages of its session among the same matches
(clear ones with clear ones, possible ones with possible ones). A session that
speaks of the question in several messages comes before one that says its
words once; the session's other messages gain nothing, so it does not crowd
out the memories and other sessions below it (on the real questions, lifting
them all put a session's narration in place of its digest).

A question that counts or lists over time ("how many times did I ...", "how
often", "in total", "which ... have I") wants one answer from each session
more than several from one: past its session's best, each further message
of the session (by score, with its label) is multiplied by
``COVERAGE_FACTOR`` once more, so the next session's best comes before a
session's second. A lean, never a filter: every message stays.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict

from memctl.retrieve.run import RESCORED, Candidate, Run, by_score

STAGE = "sessions"
# The share of a session's next best messages its message gains, and how many messages
# score a session. Measured: docs/benchmarks.md, "Far messages and a session's best
# few" (LongMemEval R_all@5 by words alone, +1 question on each half; nothing lost with
# message vectors on).
SESSION_SHARE = 0.1
SESSION_BEST = 3
# Reasoned: half a score per message already shown from its session puts the next
# session's best (most often within a factor of two of the first) ahead of a session's
# second; the order of sessions by their best message is unchanged (LongMemEval's
# session ranks are the same with and without it).
COVERAGE_FACTOR = 0.5
COUNTING = (
    r"\bhow (?:many|often)\b",
    r"\bhow much (?:time|money)\b",
    r"\bin total\b",
    r"\b(?:which|what) (?:\w+ ){1,3}(?:have|did) (?:i|we) (?:\w+ )?(?:ever|all|so far)\b",
    r"\beach time\b",
    r"\bevery time\b",
)


@functools.lru_cache(maxsize=256)
def counts_over_time(query: str) -> bool:
    """Whether the question counts or lists what happened over time."""
    return any(re.search(pattern, query, re.IGNORECASE) for pattern in COUNTING)


def session_share(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    """Each session's best message (with its label) + SESSION_SHARE x the next
    SESSION_BEST - 1 scores of its session, re-sorted."""
    sessions: dict[tuple[bool, str], list[Candidate]] = defaultdict(list)
    for candidate in by_score(candidates):
        if candidate.is_message and candidate.memory.session_id:
            sessions[(candidate.clear, candidate.memory.session_id)].append(candidate)
    for best, *others in sessions.values():
        gain = SESSION_SHARE * sum(c.score for c in others[: SESSION_BEST - 1])
        if gain <= 0:
            continue
        before = best.score
        best.score = before + gain
        best.factors[STAGE] = best.score / before if before else 1.0
        why = f"+{gain:.3f}: {min(len(others), SESSION_BEST - 1)} more matches in its session"
        run.record(STAGE, best, RESCORED, gain, why)
    if counts_over_time(run.query.text):
        cover(run, candidates)
    return by_score(candidates)


def cover(run: Run, candidates: list[Candidate]) -> None:
    """Each session message past its session's best (with its label) x COVERAGE_FACTOR per
    message of its session above it."""
    above: dict[tuple[bool, str], int] = defaultdict(int)
    for candidate in by_score(candidates):
        if not candidate.is_message or not candidate.memory.session_id:
            continue
        key = (candidate.clear, candidate.memory.session_id)
        shown = above[key]
        above[key] += 1
        if shown:
            factor = COVERAGE_FACTOR**shown
            candidate.score *= factor
            candidate.factors[f"{STAGE} coverage"] = factor
            why = f"x {factor:g}: the question counts over time; {shown} of its session above"
            run.record(STAGE, candidate, RESCORED, factor, why)
