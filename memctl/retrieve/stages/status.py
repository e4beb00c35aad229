"""Stage 12, status and conflicts.

- state: active x 1.0; superseded x superseded_factor, and left out unless
  ``--history``; contradicted x contradicted_factor. A memory invalidated after
  "now" (``--as-of``) counts as it was then: active.
- conflicts: of two memories joined by a ``contradicts`` relation, the weaker
  (strength x confidence x recency) x conflict_factor; strength as of "now" by the one
  decay model (memories/strength.py), which ``memctl maintain`` also writes back.
"""

from __future__ import annotations

from memctl.memories.strength import current_strength
from memctl.model import HIDDEN_STATES, Memory, RelationType, State, parse_time
from memctl.retrieve.run import DROPPED, KEPT, RESCORED, Candidate, Run, by_score
from memctl.retrieve.stages.decay import recency
from memctl.store.memories import get_memories
from memctl.store.relations import relations_touching

STAGE = "status"


def state_as_of(memory: Memory, run: Run) -> State:
    if memory.state in (State.SUPERSEDED, State.CONTRADICTED) and memory.invalidated_at:
        if parse_time(memory.invalidated_at) > run.now:
            return State.ACTIVE
    return memory.state


def weaker_sides(run: Run, candidates: list[Candidate]) -> dict[str, str]:
    """candidate id -> id of the stronger memory it contradicts (when it is the weaker)."""
    ids = [c.id for c in candidates if not c.is_message]
    edges = relations_touching(run.ctx.db, ids, (RelationType.CONTRADICTS,))
    if not edges:
        return {}
    known = {c.id: c.memory for c in candidates}
    others = {i for e in edges for i in (e.src_id, e.dst_id)} - known.keys()
    known.update(get_memories(run.ctx.db, list(others)))

    def strength(memory: Memory) -> float:
        settings = run.ctx.settings
        fading = current_strength(memory, run.now, settings)
        return fading * memory.confidence * recency(memory, run.now, run.params)

    weaker: dict[str, str] = {}
    for edge in edges:
        a, b = known.get(edge.src_id), known.get(edge.dst_id)
        if a is None or b is None or a.state in HIDDEN_STATES or b.state in HIDDEN_STATES:
            continue
        if strength(a) != strength(b):
            low, high = (a, b) if strength(a) < strength(b) else (b, a)
            weaker[low.id] = high.id
    return weaker


def status(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    p = run.params
    weaker = weaker_sides(run, candidates)
    kept = []
    for candidate in candidates:
        state = state_as_of(candidate.memory, run)
        factor, why = 1.0, str(state)
        if state == State.SUPERSEDED:
            if not run.history:
                by = candidate.memory.superseded_by
                reason = f"superseded{f' by {by[:8]}' if by else ''}; --history includes it"
                run.record(STAGE, candidate, DROPPED, why=reason)
                continue
            factor = p.superseded_factor
        elif state == State.CONTRADICTED:
            factor = p.contradicted_factor
        if candidate.id in weaker:
            factor *= p.conflict_factor
            why += f", weaker side of a contradiction with {weaker[candidate.id][:8]}"
        candidate.score *= factor
        candidate.factors[STAGE] = factor
        run.record(STAGE, candidate, RESCORED if factor != 1.0 else KEPT, factor, why)
        kept.append(candidate)
    return by_score(kept)
