"""Stage 3b, stale: a message whose fact was replaced is an older statement.

Reconcile supersedes a fact when a later one sets another value of its slot ("My editor
is vim." then "My editor is helix."): only the new memory stays active. The verbatim
message the old fact was distilled from stays in the store (the history is the user's)
and matches the query as well as the new one: shown as a clear match, it tells the
user the stale value. So a session message in the source of a superseded or
contradicted memory (a fact's turn, at most ``provenance.FOLD_SPAN`` messages: a
digest's range is a whole session) keeps its place among the results, labelled
possible and scored as its memory would be (``recall.superseded_factor``,
``recall.contradicted_factor``), its ``match_why`` naming what replaced it. It is
never dropped: with ``--history`` or not, the user can see what was said and when.

Provenance does not fold such a message into its superseded memory (status would drop
the memory, and the message with it, unless ``--history``): see ``hidden_by_status``.
"""

from __future__ import annotations

from memctl.model import State
from memctl.retrieve.run import RESCORED, Candidate, Run, by_score
from memctl.retrieve.stages.provenance import message_key, sources_of
from memctl.retrieve.stages.status import state_as_of
from memctl.store.memories import get_memories, replaced_of_sessions

STAGE = "stale"
# How much of what replaced it an older statement's why quotes (reasoned: a short fact
# reads whole; a longer one is named by its opening and id).
QUOTED_CHARS = 60


def older_sources(run: Run, messages: list[Candidate]) -> dict[tuple[str, int], Candidate]:
    """(session id, message number) -> the superseded or contradicted memory (as of the
    run's "now") distilled from that message, for the sessions of ``messages``."""
    sessions = sorted({key[0] for m in messages if (key := message_key(m)) is not None})
    replaced = [
        m for m in replaced_of_sessions(run.ctx.db, sessions) if state_as_of(m, run) != State.ACTIVE
    ]
    return sources_of([Candidate(m) for m in replaced])


def replaced_why(older: Candidate, newer: dict[str, str]) -> str:
    """Why a message is an older statement: what its fact became, and by what."""
    memory = older.memory
    by = memory.superseded_by
    if memory.state == State.SUPERSEDED and by:
        text = newer.get(by, "")
        quoted = text if len(text) <= QUOTED_CHARS else text[:QUOTED_CHARS].rstrip() + "..."
        said = f' ("{quoted}")' if quoted else ""
        return f"possible: an older statement, superseded by {by[:8]}{said}"
    return f"possible: an older statement, its fact {memory.id[:8]} {memory.state}"


def stale(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    if not run.sessions:
        return candidates
    messages = [c for c in (*candidates, *run.possible) if c.is_message]
    if not messages:
        return candidates
    older = older_sources(run, messages)
    if not older:
        return candidates
    by_ids = sorted({m.memory.superseded_by for m in older.values() if m.memory.superseded_by})
    newer = {i: m.content for i, m in get_memories(run.ctx.db, by_ids).items()}
    p = run.params
    for message in messages:
        key = message_key(message)
        source = older.get(key) if key is not None else None
        if source is None:
            continue
        state = source.memory.state
        factor = p.superseded_factor if state == State.SUPERSEDED else p.contradicted_factor
        message.score *= factor
        message.factors[STAGE] = factor
        message.clear = False
        message.match_why = replaced_why(source, newer)
        run.record(STAGE, message, RESCORED, factor, message.match_why)
    run.possible = by_score(run.possible)
    return by_score(candidates)
