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
session's second. A lean, never a filter: every message stays.

A question that counts over time is answered by several sessions, each about the
subject as a whole ("how many rare items do I have?": the records in one, the coins in
another), beside sessions that say the question's words once in passing. So first
its sessions are ranked as wholes (``whole_sessions``): by reciprocal rank fusion of
their best message's rank and their closeness to the question as a whole (the mean
similarity of all their messages, from their stored vectors), and the sessions' best
scores are handed out again in that order, each session's messages scaled with its
best. The scores stay the ones the stages gave, only which session holds which one
changes, so a memory keeps its place among them. Without stored vectors nothing
changes. Not for a question comparing two events: its answer is one message in each
of two sessions (measured: docs/benchmarks.md, "Whole sessions for counting questions").
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
# Who a count over time is about: the asker ("did I", "have we") or someone named or
# pointed to ("has Melanie", "was he"). Not "you", the assistant: "how many eggs did you
# say we need?" asks for one answer it gave. What a thing holds or did ("how many threads
# did it open?", "how many lines is the agents module?", "how many documents were
# there?") is one session's answer: the lean would halve its every further message
# (measured: docs/benchmarks.md, "Counting over time: about someone").
SOMEONE = r"(?:i|we|he|she|they|(?-i:[A-Z][a-z]+))"
# not a span of time ("how many days ago", "how many weeks between", "after how many
# weeks did ..."): one answer
HOW_MANY = (
    r"(?<!\bafter )(?<!\bbefore )(?<!\bwithin )(?<!\buntil )"
    r"\bhow (?:many|much (?:time|money))\b"
    r"(?![^?.!]*\b(?:ago|since|until|before|after|between|left)\b)"
)
COUNTING = (
    # what someone did or has: "how many coins do I have", "how many hikes has Joanna been on"
    rf"{HOW_MANY}(?: [\w'’-]+){{0,6}}? (?:do|does|did|have|has|had|am|is|are|was|were) {SOMEONE}\b",
    rf"{HOW_MANY}(?: [\w'’-]+){{0,6}}? (?:i|we)['’](?:ve|d)\b",  # "how many books I've read"
    rf"{HOW_MANY} of (?:my|our|his|her|their|(?-i:[A-Z][a-z]+)['’]s)\b",
    rf"{HOW_MANY} times\b",
    r"\bhow often\b",
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
    counting = counts_over_time(run.query.text)
    if not (counting or compares_events(run.query.text)):
        return candidates
    if counting:
        whole_sessions(run, candidates, clear)
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


# Reciprocal rank fusion's constant (Cormack, Clarke and Buettcher, SIGIR 2009; the
# agentmemory peer's too): 1, 10, 60 and 1,000 give the same LongMemEval figures on both
# halves (docs/benchmarks.md, "Whole sessions for counting questions").
RRF_K = 60
WHOLE = "whole sessions"


def whole_sessions(run: Run, candidates: list[Candidate], clear: bool) -> None:
    """The sessions of the session messages with the label ``clear`` ranked by reciprocal
    rank fusion of their best message's rank and their closeness to the question as a
    whole (``closeness``); their best scores handed out again in that order, each
    session's messages multiplied by its new best over its old one. How many sessions
    that reads is bounded by the candidates the stage is given: the cap stage's (limit x
    ``recall.cap``) and the possible matches' (``POSSIBLE_DEPTH`` x those wanted)."""
    best: dict[str, float] = {}
    for candidate in by_score(candidates):
        session = candidate.memory.session_id
        if candidate.is_message and session and candidate.clear == clear:
            best.setdefault(session, candidate.score)
    if len(best) < 2 or min(best.values()) <= 0:
        return
    close = closeness(run, list(best))
    if len(close) < len(best):  # one ranking never mixes sessions measured and not
        return
    by_meaning = {s: rank for rank, s in enumerate(sorted(best, key=lambda s: -close[s]), 1)}
    fused = {s: 1 / (RRF_K + rank) + 1 / (RRF_K + by_meaning[s]) for rank, s in enumerate(best, 1)}
    ranked = sorted(best, key=lambda s: -fused[s])  # a stable sort: ties keep their order
    factors = {s: score / best[s] for s, score in zip(ranked, best.values(), strict=True)}
    for candidate in candidates:
        session = candidate.memory.session_id or ""
        factor = factors.get(session, 1.0)
        if not candidate.is_message or candidate.clear != clear or factor == 1.0:
            continue
        candidate.score *= factor
        candidate.factors[WHOLE] = factor
        whole = close[session]
        why = f"x {factor:.3g}: its session's closeness to the question as a whole, {whole:.3f}"
        run.record(STAGE, candidate, RESCORED, factor, why)


def closeness(run: Run, sessions: list[str]) -> dict[str, float]:
    """Each session's closeness to the query as a whole, from its messages' stored vectors
    (store/message_vectors.py); none without a query vector or stored vectors."""
    if run.params.message_vectors == "off" or run.scores is None:
        return {}
    from memctl.store.message_vectors import message_vector_index, session_closeness
    from memctl.store.vector_query import Scores

    index = message_vector_index(run.ctx.db)
    return session_closeness(index, Scores(index, run.scores.query), sessions)
