"""Stage 12, status and conflicts.

- state: active x 1.0; superseded x superseded_factor, and left out unless
  ``--history``; contradicted x contradicted_factor. A memory invalidated after
  "now" (``--as-of``) counts as it was then: active.
- conflicts: of two memories joined by a ``contradicts`` relation, the weaker
  (strength x confidence x recency) x conflict_factor; strength as of "now" by the one
  decay model (memories/strength.py), which ``memctl maintain`` also writes back.

What is no longer true is never a clear match: a superseded memory (with ``--history``), a
contradicted one and the weaker side of a contradiction are possible matches, their
``match_why`` naming what replaced or contradicts them (``replaced_why``), beside it. The
stronger side stays as it was, its ``match_why`` naming the memory it outweighs: both sides
are shown, and only the stronger is ever injected on its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from memctl.memories.strength import current_strength
from memctl.model import HIDDEN_STATES, Memory, Relation, RelationType, State, parse_time
from memctl.retrieve.run import DROPPED, KEPT, RESCORED, Candidate, Reason, Run, by_score
from memctl.retrieve.stages.decay import recency
from memctl.store.memories import get_memories
from memctl.store.relations import relations_touching

STAGE = "status"
# How much of what replaced it a replaced memory's why quotes (reasoned: a short fact
# reads whole; a longer one is named by its opening and id).
QUOTED_CHARS = 60


def state_as_of(memory: Memory, run: Run) -> State:
    if memory.state in (State.SUPERSEDED, State.CONTRADICTED) and memory.invalidated_at:
        if parse_time(memory.invalidated_at) > run.now:
            return State.ACTIVE
    return memory.state


def replaced_why(reason: Reason, by: Memory | None) -> str:
    """What replaced or contradicts a memory, in words: 'superseded by 3f897797 ("My
    editor is helix.")'."""
    if by is None:
        return str(reason)
    text = " ".join(by.content.split())
    quoted = text if len(text) <= QUOTED_CHARS else text[:QUOTED_CHARS].rstrip() + "..."
    return f'{reason} by {by.id[:8]} ("{quoted}")'


def weaker_of(run: Run, edges: Iterable[Relation], known: dict[str, Memory]) -> dict[str, str]:
    """memory id -> id of the stronger memory it contradicts (when it is the weaker), of
    ``edges`` whose two ends ``known`` holds."""

    strengths: dict[str, float] = {}

    def strength(memory: Memory) -> float:
        if memory.id not in strengths:
            fading = current_strength(memory, run.now, run.ctx.settings)
            strengths[memory.id] = fading * memory.confidence * recency(memory, run.now, run.params)
        return strengths[memory.id]

    weaker: dict[str, str] = {}
    for edge in edges:
        a, b = known.get(edge.src_id), known.get(edge.dst_id)
        if a is None or b is None or a.state in HIDDEN_STATES or b.state in HIDDEN_STATES:
            continue
        if strength(a) != strength(b):
            low, high = (a, b) if strength(a) < strength(b) else (b, a)
            weaker[low.id] = high.id
    return weaker


def conflicts(run: Run, candidates: list[Candidate]) -> tuple[dict[str, str], dict[str, Memory]]:
    """(``weaker_of`` the ``contradicts`` edges touching the candidates, every memory of
    those edges by id: the candidates' own and the other ends, read once)."""
    ids = [c.id for c in candidates if not c.is_message]
    edges = relations_touching(run.ctx.db, ids, (RelationType.CONTRADICTS,))
    if not edges:
        return {}, {}
    known = {c.id: c.memory for c in candidates}
    others = {i for e in edges for i in (e.src_id, e.dst_id)} - known.keys()
    known.update(get_memories(run.ctx.db, list(others)))
    return weaker_of(run, edges, known), known


def status(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    p = run.params
    weaker, known = conflicts(run, candidates)
    outweighs = {strong: weak for weak, strong in weaker.items()}
    kept = []
    for candidate in candidates:
        state = state_as_of(candidate.memory, run)
        factor, why, reason, by = 1.0, str(state), None, None
        if state == State.SUPERSEDED:
            by_id = candidate.memory.superseded_by
            if not run.history:
                reason_text = f"superseded{f' by {by_id[:8]}' if by_id else ''}"
                run.record(STAGE, candidate, DROPPED, why=f"{reason_text}; --history includes it")
                continue
            factor, reason, by = p.superseded_factor, Reason.SUPERSEDED, by_id
        elif state == State.CONTRADICTED:
            factor, reason = p.contradicted_factor, Reason.CONTRADICTED
        if candidate.id in weaker:
            factor *= p.conflict_factor
            why += f", weaker side of a contradiction with {weaker[candidate.id][:8]}"
            reason, by = Reason.CONTRADICTED, weaker[candidate.id]
        elif candidate.id in outweighs and candidate.match_why:
            candidate.match_why += f"; contradicts {outweighs[candidate.id][:8]}, and outweighs it"
        if reason is not None:
            mark_replaced(run, candidate, reason, by, known)
        candidate.score *= factor
        candidate.factors[STAGE] = factor
        run.record(STAGE, candidate, RESCORED if factor != 1.0 else KEPT, factor, why)
        kept.append(candidate)
    return by_score(kept)


def mark_replaced(
    run: Run, candidate: Candidate, reason: Reason, by: str | None, known: dict[str, Memory]
) -> None:
    """Label a memory no longer true a possible match naming what replaced it."""
    newer = known.get(by) if by else None
    if by and newer is None:
        newer = get_memories(run.ctx.db, [by]).get(by)
    candidate.clear = False
    candidate.match_reason, candidate.replaced_by = reason, by
    candidate.match_why = f"possible: {replaced_why(reason, newer)}"
