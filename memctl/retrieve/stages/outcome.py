"""Stage 5a, outcome: what came of a turn inherits part of the score of its matching rows.

A question about past work is answered by the message that says what came of it ("The URL
you had 404s — the real ID ends in `IAAAAM`", "Done. … replaced with `<Shielded />` from
`react-shielded`"), and that message says the outcome in its own words. The rows of its
session that repeat the question's words are its turn's request, the announcements of its
next steps ("The URL you gave 404s — let me find the correct link") and their calls: they
outrank the answer, whose words alone leave it a possible match (docs/benchmarks.md,
"fresh9 studied …", "The answering message labelled possible, read …").

So each of the best SEEDS clear session messages passes OUTCOME_SHARE of its score to what
came of its turn, when the turn made calls (work was done) and the search found that
message too (``turn_outcomes``): the step's
result, the first message after it, before the user speaks again, that says something
besides tool notes, filler and announced next steps (``says_more``) and announces none
itself; and the report the turn ends with, its last such message. The outcome is then
a clear match through the turn it answers, as the reply to a clear question is
(``neighbours``, for memories). A seed that only asks or announces (a user's message, or one
that announces a next step) then gives way to what came of it, x GIVE_WAY. Only how sessions
are shaped is read, never the question's words; a query with no clear match lends nothing.
"""

from __future__ import annotations

from memctl.memories.narration import without_filler, without_next_steps
from memctl.model import Message, Role
from memctl.retrieve.answering import says_something
from memctl.retrieve.run import RESCORED, TOOL_NOTE, Candidate, Reason, Run, by_score
from memctl.retrieve.stages.copies import folded_ids
from memctl.store.message_search import MESSAGE_SEPARATOR, message_role
from memctl.store.sessions import messages_after

STAGE = "outcome"
# The share of a clear message's score its turn's outcome inherits (measured 0.3, 0.5, 0.65
# and 0.8 on the real-questions sets: 0.3 leaves fresh7's y17 in 6th place, 0.65 and 0.8
# lift a turn's end over fresh9's n47 answer; docs/benchmarks.md, "What came of a turn").
OUTCOME_SHARE = 0.5
# What a seed that only asks or announces weighs once it passed its score on (measured 1.0,
# 0.8, 0.6 and 0.4: the same section).
GIVE_WAY = 0.6
# The clear messages that pass their score on, best first: twice the rows a recall shows
# (recall.limit 10); each costs a read of its turn.
SEEDS = 20
# How many messages after a seed are read for its turn (reasoned: a long turn of calls and
# their results; one running past it lends nothing, its end not known).
TURN_REACH = 40


def announces(text: str) -> bool:
    """Whether ``text`` announces a next step ("let me find …", "I’ll read …"): compared
    word by word, as ``without_next_steps`` joins what it keeps with single spaces."""
    return without_next_steps(text).split() != text.split()


def says_more(text: str) -> bool:
    """Whether an assistant's message says something besides its tool notes, the next steps
    it announces and the filler or narration it opens with ("Perfect! Now let me run the
    tests once more:" says nothing)."""
    return says_something(text) and bool(without_filler(text))


def made_calls(text: str) -> bool:
    """Whether a message records a tool call or its result (a line of its own ``[tool …]``):
    the turn did work, whose outcome a later message reports."""
    return any(line.lstrip().startswith(TOOL_NOTE) for line in text.splitlines())


def turn_outcomes(turn: list[Message], seed: str = "") -> list[Message]:
    """What came of a turn, from ``turn`` (the messages after a seed, whose text is
    ``seed``, up to the user's next): the step's result (the first assistant message that
    says something and announces nothing), and the turn's end (its last that says
    something). Only a turn that made calls (in ``seed`` or after it) has an outcome: in a
    chat's turn without any, the person's own message is often what is asked about ("I
    drove for five hours"), and the reply only answers it."""
    if not made_calls(seed) and not any(made_calls(m.content) for m in turn):
        return []
    said = [m for m in turn if m.role == Role.ASSISTANT and says_more(m.content)]
    step = next((m for m in said if not announces(m.content)), None)
    found = [step] if step is not None else []
    if said and said[-1] is not step:
        found.append(said[-1])
    return found


def turn_after(run: Run, seed: Candidate) -> list[Message]:
    """The messages after ``seed`` up to the user's next one; none when they run past
    TURN_REACH (its end is not known)."""
    session, _, seq = seed.id.rpartition(MESSAGE_SEPARATOR)
    following = messages_after(run.ctx.db, session, int(seq), TURN_REACH)
    turn: list[Message] = []
    for message in following:
        if message.role == Role.USER:
            return turn
        turn.append(message)
    return turn if len(following) < TURN_REACH else []


def outcome(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    seeds = [c for c in candidates if c.clear and c.is_message and not c.only_tool_notes]
    gains: dict[str, tuple[float, Candidate]] = {}
    for seed in seeds[:SEEDS]:
        for message in turn_outcomes(turn_after(run, seed), seed.memory.content):
            key = f"{message.session_id}{MESSAGE_SEPARATOR}{message.seq}"
            share = OUTCOME_SHARE * seed.score
            if share > gains.get(key, (0.0, seed))[0]:
                gains[key] = (share, seed)
    by_id = {c.id: c for c in candidates}
    aside = {c.id: c for c in run.possible}
    folded = folded_ids(run)
    passed: set[str] = set()
    for key, (gain, seed) in gains.items():
        target = by_id.get(key) or aside.get(key)
        # one the search did not find, or folded into a memory that stands for it, is not
        # added; one of tool notes, narration or a question only says no outcome
        if target is None or key in folded or target.says_nothing:
            continue
        if key not in by_id:
            run.possible.remove(target)
            candidates.append(target)
            by_id[key] = target
        # clear now: a later stage that cuts it leaves no possible copy of it to offer
        run.beside = [c for c in run.beside if c.id != key]
        inherited(run, target, gain, seed)
        passed.add(seed.id)
    for seed_id in passed:
        seed = by_id[seed_id]
        if message_role(seed.memory) == Role.USER or announces(seed.memory.content):
            seed.score *= GIVE_WAY
            seed.factors[STAGE] = GIVE_WAY
            run.record(
                STAGE, seed, RESCORED, GIVE_WAY, "asks or announces; what came of it inherits"
            )
    return by_score(candidates)


def inherited(run: Run, target: Candidate, gain: float, seed: Candidate) -> None:
    """``target`` gains ``gain`` from ``seed``'s turn, and is clear through it."""
    target.score += gain
    target.factors[STAGE] = gain
    if not target.clear:
        target.clear = True
        target.match_reason = Reason.REACHED
        target.match_why = f"clear: what came of the turn of {seed.id}, a clear match"
    run.record(STAGE, target, RESCORED, gain, f"what came of the turn of {seed.id}")
