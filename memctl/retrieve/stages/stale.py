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
A message that also holds a fact still standing is an older statement only for a query
the replaced fact states better (more of its words, by rarity: ``fuse.coverage``).

Provenance does not fold such a message into its superseded memory (status would drop
the memory, and the message with it, unless ``--history``): see ``hidden_by_status``.
"""

from __future__ import annotations

from memctl.model import Memory, State
from memctl.retrieve.run import RESCORED, Candidate, Run, by_score
from memctl.retrieve.stages.fuse import memory_coverage
from memctl.retrieve.stages.provenance import FOLD_SPAN, message_key
from memctl.retrieve.stages.status import state_as_of
from memctl.store.memories import get_memories, of_sessions_in
from memctl.store.sessions import source_range

STAGE = "stale"
# How much of what replaced it an older statement's why quotes (reasoned: a short fact
# reads whole; a longer one is named by its opening and id).
QUOTED_CHARS = 60
# The states of a memory replaced by a later one (reconcile's supersede; a contradiction lost)
REPLACED = (State.SUPERSEDED, State.CONTRADICTED)


def facts_of_messages(memories: list[Memory]) -> dict[tuple[str, int], list[Memory]]:
    """(session id, message number) -> the facts distilled from that message (a source of
    at most ``FOLD_SPAN`` messages: a digest's range is a whole session)."""
    found: dict[tuple[str, int], list[Memory]] = {}
    for memory in memories:
        named = source_range(memory.source)
        if named is not None and named[2] - named[1] + 1 <= FOLD_SPAN:
            for seq in range(named[1], named[2] + 1):
                found.setdefault((named[0], seq), []).append(memory)
    return found


def older_sources(run: Run, messages: list[Candidate]) -> dict[tuple[str, int], Memory]:
    """(session id, message number) -> the superseded or contradicted memory (as of the
    run's "now") distilled from that message, for the sessions of ``messages``; not for
    a message whose fact still standing states the query's words as well (the message
    says that one too: "My editor is vim. We deploy with make ship." asked how we deploy)."""
    sessions = sorted({key[0] for m in messages if (key := message_key(m)) is not None})
    found = of_sessions_in(run.ctx.db, sessions, REPLACED)
    replaced = [m for m in found if state_as_of(m, run) != State.ACTIVE]
    if not replaced:
        return {}
    touched = sorted({m.session_id for m in replaced if m.session_id})
    others = [*of_sessions_in(run.ctx.db, touched, (State.ACTIVE,)), *found]
    standing = facts_of_messages([m for m in others if state_as_of(m, run) == State.ACTIVE])
    older = {}
    for key, facts in facts_of_messages(replaced).items():
        old = max(facts, key=lambda m: memory_coverage(run, m))
        share = memory_coverage(run, old)
        if all(memory_coverage(run, m) < share for m in standing.get(key, [])):
            older[key] = old
    return older


def replaced_why(memory: Memory, newer: dict[str, str]) -> str:
    """Why a message is an older statement: what its fact became, and by what."""
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
    # the gate's possible ones too, and the copies of those it kept beside the clear ones
    # (a later cut hands them back to the possible pool)
    messages = [c for c in (*candidates, *run.possible, *run.beside) if c.is_message]
    if not messages:
        return candidates
    older = older_sources(run, messages)
    if not older:
        return candidates
    by_ids = sorted({m.superseded_by for m in older.values() if m.superseded_by})
    newer = {i: m.content for i, m in get_memories(run.ctx.db, by_ids).items()}
    p = run.params
    for message in messages:
        key = message_key(message)
        source = older.get(key) if key is not None else None
        if source is None:
            continue
        state = source.state
        factor = p.superseded_factor if state == State.SUPERSEDED else p.contradicted_factor
        message.score *= factor
        message.factors[STAGE] = factor
        message.clear = False
        message.match_why = replaced_why(source, newer)
        run.record(STAGE, message, RESCORED, factor, message.match_why)
    run.possible = by_score(run.possible)
    return by_score(candidates)
