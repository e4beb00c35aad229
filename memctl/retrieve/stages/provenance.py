"""Stage 3, provenance: a memory and the session messages it was distilled from count once.

With session messages in the ranking, a fact and the message it was said in
often both match: shown apart, they fill two of the results with one thing.
A memory and the message candidates it came from are one group: those whose
message lies in the memory's source (a few messages at most: ``FOLD_SPAN``; a
session's digest sums up a whole session, however short, and stands for none of its
messages: ``distilled_from``), and those
that say, word for word, a memory of their session no source range names
(``said_verbatim``). Each group becomes the one of its members that states
the answer best: the most of the query's words, by rarity (the memory on a
tie: distilled, it is the shorter). It takes the best score and label of the
group (clear over possible), x ``AGREE_BONUS`` when two or more had evidence
of their own (the distilled words and the words said agree), and names the
others it was said in (``Candidate.members``) so that ``--explain`` and
``sessions expand`` open them.

A message its stored vector found and its words did not (``recall.message_vectors``:
``by_meaning_alone``; not one clear among the closest in meaning: ``leads_by_meaning``)
joins its session's memory whatever the source says: the
session's best-scored memory among the candidates, else its digest (fetched).
Such a message never stands for a group nor lends it its clear label: it lends the
memory its score, and is named among the messages the memory was said in only when its
source holds it (``said_in``). The label says the row states what was asked, and the row
is the memory: the words that made the message clear are not its own (``lends_label``).
Close in meaning to a question about the work, a session's messages ("Now let me
run the tests once more") took the top places from the digest and facts that
state the answer, and the digest states it more often than the message
(docs/benchmarks.md, "Message vectors lift their session's memory"). A session
with no memory (its messages not distilled yet, or a store of messages only)
keeps its messages as they are.

It runs on the gate's two lists at once: the candidates fuse kept, and those it
set aside as possible (``run.possible``); a group with a member kept is kept.
"""

from __future__ import annotations

from memctl.memories.provenance import DIGEST_TAG
from memctl.model import State
from memctl.retrieve.run import ADDED, DROPPED, RESCORED, Candidate, Reason, Run, by_score
from memctl.retrieve.stages.fuse import coverage
from memctl.retrieve.stages.status import state_as_of
from memctl.store.memories import session_memories_tagged
from memctl.store.message_search import MESSAGE_SEPARATOR
from memctl.store.sessions import source_range

STAGE = "provenance"
# Messages a memory's source may span for its messages to fold into it: a fact distilled
# from a turn or an exchange (reasoned: a digest's range is a whole session).
FOLD_SPAN = 4
# The shortest memory text that counts as said again, word for word, in a message (reasoned:
# a sentence; a few words such as "run the tests" are said in many messages of a session).
VERBATIM_CHARS = 40
# A memory whose source message matched too (reasoned: a small bonus, as the design asks;
# it reorders near ties and never lifts a weak pair over a strong single).
AGREE_BONUS = 1.1
# The messages' vector leg's first rows from which a message clear by its words stands for
# itself (``leads_by_meaning``). Reasoned, from the design's "BM25 and vectors agreeing in
# their top 3" (DESIGN.md, recall 3); measured at 3 against any rank in docs/benchmarks.md.
MEANING_LEADS = 3
# Why a session's digest, fetched for its messages found by meaning alone, is offered
STAND_IN_WHY = "the session's digest, whose messages are close in meaning to the query"


def message_key(candidate: Candidate) -> tuple[str, int] | None:
    """(session id, message number) of a session message candidate; None for a memory."""
    if not candidate.is_message:
        return None
    session_id, _, number = candidate.id.rpartition(MESSAGE_SEPARATOR)
    return (session_id, int(number)) if number.isdigit() else None


def distilled_from(candidate: Candidate) -> tuple[str, int, int] | None:
    """(session id, first, last message) a memory was distilled from, as its source names
    them; None for a message, and for a session's digest: however short its session, it
    sums up the whole: folded with its messages, the one with more of the query's words
    stood for it, and the digest saying the answer in other words went ("how did the
    component docs get into the docs site?": a message announcing its next steps, not the
    digest saying ``generateId``; docs/benchmarks.md, "Answers said in other words")."""
    if candidate.is_message or DIGEST_TAG in candidate.memory.tags:
        return None
    return source_range(candidate.memory.source)


def sources_of(candidates: list[Candidate]) -> dict[tuple[str, int], Candidate]:
    """(session id, message number) -> the memory distilled from it, among ``candidates``
    (the narrowest source first: a fact's message is the fact's, not the digest's)."""
    found: dict[tuple[str, int], Candidate] = {}
    ranges = []
    for candidate in candidates:
        named = distilled_from(candidate)
        if named is not None and named[2] - named[1] + 1 <= FOLD_SPAN:
            ranges.append((named[2] - named[1], named, candidate))
    for _, (session_id, first, last), candidate in sorted(ranges, key=lambda r: r[0]):
        for seq in range(first, last + 1):
            found.setdefault((session_id, seq), candidate)
    return found


def by_meaning_alone(candidate: Candidate) -> bool:
    """A session message its stored vector found (candidates.py's ``session_vector`` leg)
    and its words (the messages' BM25, ``sessions``) did not, unless it ``leads_by_meaning``:
    then the BM25 leg missed it only for its depth."""
    return (
        candidate.is_message
        and "session_vector" in candidate.ranks
        and "sessions" not in candidate.ranks
        and not leads_by_meaning(candidate)
    )


def leads_by_meaning(candidate: Candidate) -> bool:
    """A message the gate labels clear (by its words, a name it holds or the time the query
    names: a message's cosine never labels it) and among the ``MEANING_LEADS`` closest
    messages: two signals of its own. The messages' BM25 leg is ``recall.depth`` x
    ``recall.candidates`` deep, so in a store of many sessions it misses a message holding
    the query's words among hundreds that hold a common one; such a message, closest in
    meaning, is the answer said in other words than the question's ("how many cache tests
    pass now?": "All 27 tests pass successfully"), which its session's digest, standing for
    it, does not hold (docs/benchmarks.md, "Answers said in other words")."""
    rank = candidate.ranks.get("session_vector")
    return candidate.clear and rank is not None and rank <= MEANING_LEADS


def session_stand_ins(
    run: Run, candidates: list[Candidate], found: dict[tuple[str, int], Candidate]
) -> list[Candidate]:
    """Add to ``found`` each message found by its meaning alone that no memory's source
    holds, mapped to its session's best-scored memory among ``candidates``, else to the
    session's digest from the store; return the digests fetched, as new candidates."""
    alone = [
        (key, m) for m in candidates if by_meaning_alone(m) and (key := message_key(m)) not in found
    ]
    if not alone:
        return []
    best: dict[str, Candidate] = {}
    for candidate in by_score(candidates):
        session = candidate.memory.session_id
        if not candidate.is_message and session:
            best.setdefault(session, candidate)
    wanted = sorted({key[0] for key, _ in alone if key is not None} - best.keys())
    digests = session_memories_tagged(run.ctx.db, wanted, DIGEST_TAG, run.where)
    fetched = [Candidate(memory) for memory in digests.values()]
    best |= {c.memory.session_id or "": c for c in fetched}
    for key, _ in alone:
        if key is not None and key[0] in best:
            found[key] = best[key[0]]
    return fetched


def flat(text: str) -> str:
    """``text`` lower-cased, its whitespace runs as one space."""
    return " ".join(text.lower().split())


def said_verbatim(candidates: list[Candidate], found: dict[tuple[str, int], Candidate]) -> None:
    """Add to ``found`` each message that holds, word for word, a memory of its own session
    (at least ``VERBATIM_CHARS`` of it) which no source range names: a fact the rules
    copied from a session whose source names only the session (``session:<id>``: what
    its tool calls showed)."""
    memories: dict[str, list[tuple[str, Candidate]]] = {}
    for candidate in candidates:
        text = flat(candidate.memory.content)
        if not candidate.is_message and candidate.memory.session_id and len(text) >= VERBATIM_CHARS:
            memories.setdefault(candidate.memory.session_id, []).append((text, candidate))
    for message in candidates:
        key = message_key(message)
        if key is None or key in found or key[0] not in memories:
            continue
        said = flat(message.memory.content)
        holder = next((m for text, m in memories[key[0]] if text in said), None)
        if holder is not None:
            found[key] = holder


def states(run: Run, candidate: Candidate) -> float:
    """How much of what the query asks a candidate writes: its share of the query's words
    (weighted by rarity, fuse.coverage), the gate's own measure."""
    return coverage(run, candidate)


def join(run: Run, group: list[Candidate]) -> Candidate:
    """A memory and the messages it was distilled from as one result: the one that states
    the answer best (the most of the query's words; the memory on a tie: distilled, it is
    the shorter), with the best score and label of them all, x ``AGREE_BONUS`` when two
    or more had evidence of their own (the distilled words and the words said agree). A
    message found by its meaning alone never stands for the group, nor lends its clear
    label (``lends_label``)."""
    best = max(
        (c for c in group if not by_meaning_alone(c)),
        key=lambda c: (states(run, c), not c.is_message),
    )
    others = [c for c in group if c is not best]
    agree = sum(1 for c in group if c.score > 0) >= 2
    factor = AGREE_BONUS if agree else 1.0
    best.score = max(c.score for c in group) * factor
    clear = next((c for c in group if c.clear and lends_label(c)), None)
    if clear is not None and not best.clear:
        best.clear, best.match_why, best.match_reason = True, lent_why(clear), clear.match_reason
    elif not best.match_why:  # a digest fetched for the group: no evidence of its own
        best.match_why, best.match_reason = f"possible: {STAND_IN_WHY}", Reason.STAND_IN
    best.members = (*best.members, *(c.id for c in others if said_in(best, c)))
    best.factors[STAGE] = factor
    same = [c.id if c.is_message else c.id[:8] for c in others if said_in(best, c)]
    lent = [c.id for c in others if not said_in(best, c)]
    parts = []
    if same:
        parts.append(f"the same as {', '.join(same)}" + (", which matched too" if agree else ""))
    if lent:
        parts.append(f"its session's {', '.join(lent)} close in meaning lent a score")
    why = "; ".join(parts)
    rivals = any(not by_meaning_alone(c) for c in others)
    stands = "states the query's words best" if rivals else "stands for them (found by meaning)"
    run.record(STAGE, best, RESCORED, factor, f"{why}; {stands}")
    for other in others:
        run.record(STAGE, other, DROPPED, why=f"folded into {best.id[:8]}: {provenance_of(other)}")
    return best


def lends_label(member: Candidate) -> bool:
    """Whether ``member``'s clear label passes to the memory standing for their group: from
    a member its words found (a memory and the message it was distilled from, or that says
    it word for word, say one thing), never from a message found by its meaning alone. The
    memory shown does not state that message's words: a sub-agent's 7-13 KB report, clear
    by chance by a passage's words, made its session's best fact clear (from another turn:
    q62, f28, docs/benchmarks.md "A memory's clear label is its own"), and, lent to a
    session's digest whose source holds it, a digest of another project clear for "how do
    we run load tests with k6?". Over the real sessions, 33 of the 40 rows so lent a label
    in the top 5 of six sets came from another session than the question's, and the 7
    others stood beside a clear row stating the answer (docs/benchmarks.md, "A clear
    row states what was asked"). Such a message still lends its score."""
    return not by_meaning_alone(member)


def lent_why(member: Candidate) -> str:
    """Why a result is clear by the label ``member``, folded into it, lent it: that
    member's evidence, named as its (``--explain``, JSON ``match_why``)."""
    name = member.id if member.is_message else f"memory {member.id[:8]}"
    return f"clear: by {name}, folded into it: {member.match_why.removeprefix('clear: ')}"


def said_in(memory: Candidate, message: Candidate) -> bool:
    """Whether ``memory`` names ``message`` among those it was said in: a message its words
    found, or one found by meaning alone that lies in the memory's source (a digest's
    session, a fact's turn); another message of the session only lent its score."""
    if not by_meaning_alone(message):
        return True
    named, key = source_range(memory.memory.source), message_key(message)
    if named is None or key is None:
        return False
    session_id, first, last = named
    return session_id == key[0] and first <= key[1] <= last


def provenance_of(candidate: Candidate) -> str:
    if by_meaning_alone(candidate):
        return "found by its meaning alone: its session's memory stands for it"
    return "distilled from it" if candidate.is_message else "said in it, stated better there"


def hidden_by_status(run: Run, candidate: Candidate) -> bool:
    """A superseded memory, which the status stage leaves out unless ``--history``: its
    messages are not folded into it, to go with it (stages/stale.py labels them older
    statements)."""
    superseded = state_as_of(candidate.memory, run) == State.SUPERSEDED
    return not candidate.is_message and superseded and not run.history


def provenance(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    if not run.sessions:
        return candidates
    everyone = [*candidates, *run.possible]
    shown = [c for c in everyone if not hidden_by_status(run, c)]
    sources = sources_of(shown)
    said_verbatim(shown, sources)
    fetched = session_stand_ins(run, shown, sources)
    for digest in fetched:
        run.record(STAGE, digest, ADDED, why=STAND_IN_WHY)
    if not sources:
        return candidates
    groups: dict[str, list[Candidate]] = {}  # memory id -> the memory, then its messages
    for message in everyone:
        key = message_key(message)
        memory = sources.get(key) if key is not None else None
        if memory is not None:
            groups.setdefault(memory.id, [memory]).append(message)
    kept_ids = {c.id for c in candidates}
    folded: set[str] = set()
    promoted: list[Candidate] = []
    for group in groups.values():
        best = join(run, group)
        folded |= {c.id for c in group if c is not best}
        run.folded |= {c.id: c for c in group if c is not best and c.is_message}
        if best.id not in kept_ids and any(c.id in kept_ids for c in group):
            promoted.append(best)
            kept_ids.add(best.id)
    kept = [c for c in candidates if c.id not in folded] + promoted
    aside = [*run.possible, *(c for c in fetched if c.id not in folded)]
    run.possible = by_score([c for c in aside if c.id not in folded | kept_ids])
    return by_score(kept)
