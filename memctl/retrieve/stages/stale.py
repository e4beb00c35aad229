"""Stage 3b, stale: a message whose fact was replaced is an older statement.

Reconcile supersedes a fact when a later one sets another value of its slot ("My editor
is vim." then "My editor is helix."): only the new memory stays active. The verbatim
message the old fact was distilled from stays in the store (the history is the user's)
and matches the query as well as the new one: shown as a clear match, it tells the
user the stale value. So a session message in the source of a superseded or
contradicted memory, or of the weaker side of a contradiction (status.py: both stay
active), keeps its place among the results, labelled possible and scored as its memory
would be (``recall.superseded_factor``, ``recall.contradicted_factor``,
``recall.conflict_factor``), its ``match_why`` naming what replaced it. A fact's source
is its turn, at most ``provenance.FOLD_SPAN`` messages: a digest's range is a whole
session. It is never dropped: with ``--history`` or not, the user can see what was said
and when. A message that also holds a fact still standing is an older statement only for
a query the replaced fact states better (more of its words, by rarity: ``fuse.coverage``).

The assistant's reply in that turn that repeats the old value ("Noted: you use vim.",
"I'll keep using yarn") is the older statement again (``repeats``, ``echoes``), for a
query about the replaced fact: labelled and scored as it is.

Provenance does not fold such a message into its superseded memory (status would drop
the memory, and the message with it, unless ``--history``): see ``hidden_by_status``.
"""

from __future__ import annotations

from dataclasses import dataclass

from memctl.memories.statements import negated, replaced
from memctl.model import Memory, Role, State
from memctl.retrieve.query import STOPWORDS
from memctl.retrieve.run import RESCORED, Candidate, Reason, Run, by_score
from memctl.retrieve.stages.fuse import WORD, memory_coverage, stem
from memctl.retrieve.stages.provenance import FOLD_SPAN, message_key
from memctl.retrieve.stages.status import replaced_why, state_as_of, weaker_of
from memctl.store.memories import get_memories, of_sessions_in
from memctl.store.message_search import message_role
from memctl.store.relations import contradictions_in
from memctl.store.sessions import source_range
from memctl.store.transcripts import turn_openings

STAGE = "stale"
# The states of a memory replaced by a later one (reconcile's supersede; a contradiction lost)
REPLACED = (State.SUPERSEDED, State.CONTRADICTED)
# The share of a denied fact's words a reply holds to repeat it, said the way the fact said
# it ("Noted, dark themes it is." of "I like dark themes in the terminal.", before "I don't
# like dark themes ..."; reasoned: an acknowledgement names what it acknowledges, rarely
# all of it)
REPEATS = 0.5

Key = tuple[str, int]  # (session id, message number)


@dataclass(frozen=True)
class Older:
    """A fact no longer standing, why, and what replaced it."""

    memory: Memory
    reason: Reason  # SUPERSEDED or CONTRADICTED
    by: Memory | None  # the fact that superseded it, or the stronger side contradicting it
    factor: float


def facts_of_messages(memories: list[Memory]) -> dict[Key, list[Memory]]:
    """(session id, message number) -> the facts distilled from that message (a source of
    at most ``FOLD_SPAN`` messages: a digest's range is a whole session)."""
    found: dict[Key, list[Memory]] = {}
    for memory in memories:
        named = source_range(memory.source)
        if named is not None and named[2] - named[1] + 1 <= FOLD_SPAN:
            for seq in range(named[1], named[2] + 1):
                found.setdefault((named[0], seq), []).append(memory)
    return found


def no_longer_true(run: Run, sessions: list[str]) -> list[Older]:
    """The facts of ``sessions`` no longer standing as of the run's "now": superseded or
    contradicted, or the weaker side of a contradiction (status.weaker_of)."""
    p = run.params
    found = [
        m
        for m in of_sessions_in(run.ctx.db, sessions, REPLACED)
        if state_as_of(m, run) != State.ACTIVE
    ]
    edges = contradictions_in(run.ctx.db, sessions)
    ends = {i for e in edges for i in (e.src_id, e.dst_id)}
    # as of the run's "now", in its scopes (``run.where``)
    newer = get_memories(
        run.ctx.db, sorted(ends | {m.superseded_by for m in found if m.superseded_by}), run.where
    )
    older = [
        Older(m, Reason.SUPERSEDED, newer.get(m.superseded_by or ""), p.superseded_factor)
        if m.state == State.SUPERSEDED
        else Older(m, Reason.CONTRADICTED, None, p.contradicted_factor)
        for m in found
    ]
    known = {i: m for i, m in newer.items() if state_as_of(m, run) == State.ACTIVE}
    asked = set(sessions)
    for weak, strong in weaker_of(run, edges, known).items():
        memory = known[weak]
        if memory.session_id in asked:
            older.append(Older(memory, Reason.CONTRADICTED, known[strong], p.conflict_factor))
    return older


def older_sources(run: Run, messages: list[Candidate]) -> dict[Key, Older]:
    """(session id, message number) -> the fact no longer standing (``no_longer_true``)
    distilled from that message, for the sessions of ``messages``; not for a message whose
    fact still standing states the query's words as well (the message says that one too:
    "My editor is vim. We deploy with make ship." asked how we deploy)."""
    sessions = sorted({key[0] for m in messages if (key := message_key(m)) is not None})
    replaced_facts = no_longer_true(run, sessions)
    if not replaced_facts:
        return {}
    touched = sorted({o.memory.session_id for o in replaced_facts if o.memory.session_id})
    gone = {o.memory.id for o in replaced_facts}
    standing = facts_of_messages(
        [
            m
            for m in of_sessions_in(run.ctx.db, touched, (State.ACTIVE, *REPLACED))
            if m.id not in gone and state_as_of(m, run) == State.ACTIVE
        ]
    )
    by_memory = {o.memory.id: o for o in replaced_facts}
    older = {}
    for key, facts in facts_of_messages([o.memory for o in replaced_facts]).items():
        old = max(facts, key=lambda m: memory_coverage(run, m))
        share = memory_coverage(run, old)
        if all(memory_coverage(run, m) < share for m in standing.get(key, [])):
            older[key] = by_memory[old.id]
    return older


def content_words(text: str) -> set[str]:
    """The stems of ``text``'s words that carry meaning (``query.STOPWORDS`` left out before
    stemming: "themes" stems to "them")."""
    return {stem(w) for w in WORD.findall(text.lower()) if w not in STOPWORDS}


def repeats(reply: str, fact: Older) -> bool:
    """Whether a reply repeats a replaced fact's old value, not the new one: it holds a word
    only the old fact says (or the value the new one says it replaces: "switched from yarn
    to pnpm") and none only the new one says. A fact denied later ("I like X" / "I don't
    like X") is repeated by ``REPEATS`` of its words said the way it said them."""
    said, old = content_words(reply), content_words(fact.memory.content)
    new_text = fact.by.content if fact.by is not None else ""
    named = content_words(replaced(new_text) or "")
    if fact.by is None or (negated(new_text) != negated(fact.memory.content) and not named):
        held = len(said & old) >= REPEATS * len(old) > 0
        return held and negated(reply) == negated(fact.memory.content)
    new = content_words(new_text)
    stale, fresh = (old - new) | (old & named), new - old - named
    return bool(said & stale) and not said & fresh


def query_words_in(run: Run, text: str) -> int:
    """How many of the query's words ``text`` holds, each counted once, whatever its rarity."""
    held = {stem(w) for w in WORD.findall(text.lower())}
    return sum(stem(word.lower()) in held for word in run.word_weights)


def echoes(run: Run, messages: list[Candidate], older: dict[Key, Older]) -> dict[str, Key]:
    """Candidate id -> the older statement it repeats: an assistant's reply in the turn that
    statement opens (``repeats``), for a query about the replaced fact, which holds as many
    of its words as the reply (what else the reply says, the query may be asking about:
    "Added lodash with yarn add lodash." asked how we added lodash). Counted, not weighed
    by rarity: "which editor do I use?" asks of "My editor is vim." and "Noted: you use
    vim." one word each, and in a small store "use" is the rarer."""
    sessions = {key[0] for key in older}
    replies = {
        c.id: key
        for c in messages
        if (key := message_key(c)) is not None
        and key[0] in sessions
        and key not in older
        and message_role(c.memory) == Role.ASSISTANT
    }
    openings = turn_openings(run.ctx.db, list(replies.values()), FOLD_SPAN)
    found = {}
    for message in messages:
        key = replies.get(message.id)
        opening = openings.get(key) if key is not None else None
        source = (key[0], opening) if key is not None and opening is not None else None
        fact = older.get(source) if source is not None else None
        if (
            source is not None
            and fact is not None
            and repeats(message.memory.content, fact)
            and query_words_in(run, fact.memory.content)
            >= max(1, query_words_in(run, message.memory.content))
        ):
            found[message.id] = source
    return found


def label(run: Run, message: Candidate, fact: Older, why: str) -> None:
    message.score *= fact.factor
    message.factors[STAGE] = fact.factor
    message.clear = False
    message.match_reason = fact.reason
    message.replaced_by = fact.by.id if fact.by is not None else None
    message.match_why = f"possible: {why}, {replaced_why(fact.reason, fact.by)}"
    run.record(STAGE, message, RESCORED, fact.factor, message.match_why)


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
    repeated = echoes(run, messages, older)
    for message in messages:
        key = message_key(message)
        if key in older:
            label(run, message, older[key], "an older statement")
        elif message.id in repeated:
            source = repeated[message.id]
            label(
                run, message, older[source], f"repeats an older statement ({source[0]}#{source[1]})"
            )
    run.possible = by_score(run.possible)
    return by_score(candidates)
