"""Stage 3, provenance: a memory and the session messages it was distilled from count once.

With session messages in the ranking, a fact and the message it was said in
often both match: shown apart, they fill two of the results with one thing.
Each message candidate whose message lies in a candidate memory's source (a
few messages at most: ``FOLD_SPAN``; a session's digest sums up too many to
stand for any one of them) is folded into that memory. The memory keeps the
better of the two scores and labels (clear over possible), x ``AGREE_BONUS``
when both had evidence of their own (the distilled words and the words said
agree), and names the folded messages (``Candidate.members``) so that
``--explain`` and ``sessions expand`` open them.

It runs on the gate's two lists at once: the candidates fuse kept, and those it
set aside as possible (``run.possible``); a memory set aside whose message was
kept is kept in its place.
"""

from __future__ import annotations

from memctl.retrieve.run import DROPPED, RESCORED, Candidate, Run, by_score
from memctl.store.message_search import MESSAGE_SEPARATOR
from memctl.store.sessions import source_range

STAGE = "provenance"
# Messages a memory's source may span for its messages to fold into it: a fact distilled
# from a turn or an exchange (reasoned: a digest's range is a whole session).
FOLD_SPAN = 4
# A memory whose source message matched too (reasoned: a small bonus, as the design asks;
# it reorders near ties and never lifts a weak pair over a strong single).
AGREE_BONUS = 1.1


def message_key(candidate: Candidate) -> tuple[str, int] | None:
    """(session id, message number) of a session message candidate; None for a memory."""
    if not candidate.is_message:
        return None
    session_id, _, number = candidate.id.rpartition(MESSAGE_SEPARATOR)
    return (session_id, int(number)) if number.isdigit() else None


def sources_of(candidates: list[Candidate]) -> dict[tuple[str, int], Candidate]:
    """(session id, message number) -> the memory distilled from it, among ``candidates``."""
    found: dict[tuple[str, int], Candidate] = {}
    for candidate in candidates:
        named = None if candidate.is_message else source_range(candidate.memory.source)
        if named is None or named[2] - named[1] + 1 > FOLD_SPAN:
            continue
        session_id, first, last = named
        for seq in range(first, last + 1):
            found.setdefault((session_id, seq), candidate)
    return found


def fold(run: Run, memory: Candidate, message: Candidate) -> None:
    """``message`` into ``memory``: the better score and label, the bonus when both have
    evidence of their own."""
    both = memory.score > 0 and message.score > 0
    factor = AGREE_BONUS if both else 1.0
    memory.score = max(memory.score, message.score) * factor
    if message.clear and not memory.clear:
        memory.clear, memory.match_why = True, message.match_why
    memory.members = (*memory.members, message.id)
    memory.factors[STAGE] = factor
    why = f"said in {message.id}" + (", which matched too" if both else "")
    run.record(STAGE, memory, RESCORED, factor, why)
    run.record(STAGE, message, DROPPED, why=f"folded into {memory.id[:8]}, distilled from it")


def provenance(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    if not run.sessions:
        return candidates
    everyone = [*candidates, *run.possible]
    sources = sources_of(everyone)
    if not sources:
        return candidates
    kept_ids = {c.id for c in candidates}
    folded: set[str] = set()
    promoted: list[Candidate] = []
    for message in everyone:
        key = message_key(message)
        memory = sources.get(key) if key is not None else None
        if memory is None:
            continue
        fold(run, memory, message)
        folded.add(message.id)
        if message.id in kept_ids and memory.id not in kept_ids:
            promoted.append(memory)
            kept_ids.add(memory.id)
    kept = [c for c in candidates if c.id not in folded] + promoted
    run.possible = by_score([c for c in run.possible if c.id not in folded | kept_ids])
    return by_score(kept)
