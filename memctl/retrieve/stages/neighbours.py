"""Stage 4, neighbours: a short memory inherits part of the score of the memories just
before and after it in its session.

A reply rarely repeats the question's words ("yup, Oscar, my guinea pig"
answers "how are your pets?"), so the answer that follows a matching turn is
found with it. Each relevant candidate passes ``context_share`` of its score to
its two session neighbours of at most ``context_max_chars`` characters, and a
candidate that asks a question passes ``reply_share`` to the memory after it
(the reply, most likely the answer: +1.4 R@10 on LoCoMo dev, see
docs/benchmarks.md); a
neighbour not yet a candidate joins the results through that path (it is
relevant through a relevant seed). Long memories stand alone: they inherit nothing
and pass nothing on. So does a session's digest, however short: it sums many turns, is
no turn itself, and its neighbour in its session is no reply to it. A short session's
digest ("Session of ... — How do we deploy the billing service? ... Outcome: Run `make
release` ...") quoted its opening question, and passed x 0.6 of its score to the rule
distilled next ("We never deploy on Fridays.": x 1.54, above the release steps;
docs/benchmarks.md, "The row that states the answer").

Only the reply to a clear question is a clear match by that path (``REPLIES_TO``); a turn
added for lying next to a clear one (``NEXT_TO``) is a possible match: its context, not
the answer (``run.label_added``).

The question itself then gives way to its reply (x ``question_factor``): a
question resembles the query, being one, but holds no answer. Only when the
reply inherits (it is short), so the question's relevance is passed on, not lost.
"""

from __future__ import annotations

from memctl.memories.provenance import DIGEST_TAG
from memctl.model import Memory
from memctl.retrieve.run import (
    ADDED,
    KEPT,
    NEXT_TO,
    REPLIES_TO,
    RESCORED,
    Candidate,
    Run,
    by_score,
)
from memctl.retrieve.stages.copies import folded_ids
from memctl.store.memories import get_memories, session_neighbours

STAGE = "neighbours"


def asks(text: str) -> bool:
    """Whether a memory asks a question (its reply is likely the answer)."""
    return "?" in text


def a_turn(memory: Memory, longest: int) -> bool:
    """Whether ``memory`` may be one turn of its session: at most ``longest`` characters,
    and no session's digest."""
    return len(memory.content) <= longest and DIGEST_TAG not in memory.tags


def neighbours(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    p = run.params
    if p.context_share <= 0 or not candidates:
        return candidates
    # a turn passes its score on; a long memory or a digest (it spans many turns, and a
    # "?" in it is not a question it asks) neither gives nor inherits
    sources = [c for c in candidates if not c.is_message and a_turn(c.memory, p.context_max_chars)]
    near = session_neighbours(run.ctx.db, [c.memory for c in sources], run.where)
    gains: dict[str, tuple[float, str]] = {}
    replies: dict[str, str] = {}  # a candidate that asks a question -> the memory after it
    for source in sources:
        previous, following = near.get(source.id, (None, None))
        asking = asks(source.memory.content)
        if asking and following is not None:
            replies[source.id] = following
        reply = p.reply_share if asking else p.context_share
        for other, part in ((previous, p.context_share), (following, reply)):
            if other is None:
                continue
            value, best = gains.get(other, (0.0, source.id))
            share = part * source.score
            gains[other] = (value + share, source.id if share > value else best)
    by_id = {c.id: c for c in candidates}
    # not a memory folded into another candidate (provenance, copies): that one stands for it
    folded = folded_ids(run)
    wanted = [i for i in gains if i not in by_id and i not in folded]
    fresh = get_memories(run.ctx.db, wanted, run.where)
    for memory_id, memory in fresh.items():
        origin = gains[memory_id][1]
        relation = REPLIES_TO if replies.get(origin) == memory_id else NEXT_TO
        added = Candidate(memory, via=(origin, relation, memory_id))
        by_id[memory_id] = added
        candidates.append(added)
    inherits = {i for i, c in by_id.items() if a_turn(c.memory, p.context_max_chars)}
    for candidate in candidates:
        gain, origin = gains.get(candidate.id, (0.0, ""))
        answer = replies.get(candidate.id)
        gives_way = answer is not None and answer in inherits and gains[answer][0] > 0
        if candidate.id not in inherits:
            gain = 0.0
        if gain <= 0 and not gives_way:
            candidate.factors[STAGE] = 1.0
            if candidate.id not in fresh:
                run.record(STAGE, candidate, KEPT, 1.0)
            continue
        before = candidate.score
        candidate.score = (before + gain) * (p.question_factor if gives_way else 1.0)
        candidate.factors[STAGE] = candidate.score / before if before else candidate.score
        reasons = [f"next to {origin[:8]} in its session"] if gain > 0 else []
        if answer is not None and gives_way:
            reasons.append(f"asks a question; its reply {answer[:8]} inherits")
        action = ADDED if candidate.id in fresh else RESCORED
        run.record(STAGE, candidate, action, gain, ", ".join(reasons))
    kept = [c for c in candidates if c.id not in fresh or c.score > 0]
    return by_score(kept)
