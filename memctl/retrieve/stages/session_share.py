"""Stage, sessions: a session message gains a share of its session's next best matches.

A session is scored by its best few messages (DESIGN.md, recall 1): a message
gains ``SESSION_SHARE`` of the scores of the ``SESSION_BEST - 1`` best other
messages of its session among the same matches (clear ones with clear ones,
possible ones with possible ones). A session that speaks of the question in
several messages comes before one that mentions its words once, and the
session's best message stays its first result.
"""

from __future__ import annotations

from collections import defaultdict

from memctl.retrieve.run import RESCORED, Candidate, Run, by_score

STAGE = "sessions"
# The share of a session's next best messages its message gains, and how many messages
# score a session. Measured: docs/benchmarks.md, "Far messages and a session's best
# few" (LongMemEval R_all@5 by words alone, +1 question on each half; nothing lost with
# message vectors on).
SESSION_SHARE = 0.1
SESSION_BEST = 3


def session_share(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    """Each session message's score + SESSION_SHARE x the best SESSION_BEST - 1 scores of
    the other messages of its session with its label, re-sorted."""
    scores: dict[tuple[bool, str], list[float]] = defaultdict(list)
    for candidate in candidates:
        if candidate.is_message and candidate.memory.session_id:
            scores[(candidate.clear, candidate.memory.session_id)].append(candidate.score)
    for values in scores.values():
        values.sort(reverse=True)
    for candidate in candidates:
        if not candidate.is_message or not candidate.memory.session_id:
            continue
        session = scores[(candidate.clear, candidate.memory.session_id)]
        others = list(session)
        others.remove(candidate.score)
        gain = SESSION_SHARE * sum(others[: SESSION_BEST - 1])
        if gain <= 0:
            continue
        before = candidate.score
        candidate.score = before + gain
        candidate.factors[STAGE] = candidate.score / before if before else 1.0
        why = f"+{gain:.3f}: {min(len(others), SESSION_BEST - 1)} more matches in its session"
        run.record(STAGE, candidate, RESCORED, gain, why)
    return by_score(candidates)
