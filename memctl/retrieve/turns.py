"""A said message's turn: the command it ran or the file it wrote that answers.

A question's answer is often what the assistant did, not what it said: "how were the
teammates' branches combined?" is answered by `git merge --no-ff alice/… bob/… carol/…`,
"how are the summaries named in the prompt?" by the file the assistant wrote. The parsers
keep each call as a note (``[tool Bash: …]``), and a message of notes is second-hand
evidence: half its score, never alone clear, no vector (its paths' words flooded the top 5:
docs/benchmarks.md, "Tool notes"), so it seldom reaches the top 5. The message beside it
does, "Now I'll merge their branches into master." or "I've created lead_gemini.txt …",
and says what the turn did without the command (docs/benchmarks.md, "Tool notes that
answer").

So a message row shows, as the part of what it stands for that answers (``from``, as a
digest's folded message does: answering.py), its turn's call closest to the question in
meaning: of the calls that ran a command or wrote a file (``Shown``) in the messages of
notes right before and after it, up to the said message on each side, the nearest
CALLS_A_SIDE each side, when the closest clears ANSWER_FLOOR. Only the top READ_FIRST rows
get one, and of a row's calls only those holding one of the query's words are weighed, when
any does (``worded``). Their vectors are the slow path's (store/call_vectors.py: a lookup);
a call not embedded yet (a session the worker has not reached, a store made before m033
that no maintain has filled) is embedded here, ~17 ms of CPU each. Ranking and labels are
untouched; only rows read get it (no token budget: a context block shows a row's own text).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple

from memctl.model import Memory, Message
from memctl.retrieve.answering import ANSWER_FLOOR, Answering
from memctl.retrieve.excerpt import held, query_words
from memctl.retrieve.run import tool_notes_only
from memctl.store.message_search import MESSAGE_SEPARATOR, is_message_id
from memctl.store.sessions import messages_near

if TYPE_CHECKING:
    import numpy as np

    from memctl.retrieve.run import Run

# The calls of a message of tool notes that ran a command or wrote a file, each as (its
# whole note, as shown) (ingest/calls_shown.py, which the caller passes: recall does not
# import ingest). The slow path embedded each as shown, in this order.
Shown = Callable[[str], list[tuple[str, str]]]
# How many calls each side of a message are weighed: a turn announcing a step runs it
# within a few calls ("Let me verify and merge them": `git branch`, three task updates,
# then `git merge`); more would embed a long turn's every edit at query time.
CALLS_A_SIDE = 3
# How many messages each side are read to find them: a call and its result are two, and
# task-list updates come between (reasoned: CALLS_A_SIDE calls with their results and as
# many other notes).
REACH = 4 * CALLS_A_SIDE
# The rows a person reads first, the only ones shown a call: the top 5 of a recall's 10
# (recall.limit), those the real-questions benchmark judges (found@5). Every call embedded
# costs CPU, and the rows below are read less.
READ_FIRST = 5
# A stored call vector's component: float32 (store/call_vectors.py), 4 bytes.
FLOAT_BYTES = 4


class TurnCall(NamedTuple):
    """One call of a turn: its message (``SESSION#N``), its place among the message's shown
    calls (where the slow path stored its vector), its whole note and the note as shown."""

    message: str
    number: int
    note: str
    text: str


def turn_side(messages: Iterable[Message], shown: Shown) -> list[TurnCall]:
    """The first CALLS_A_SIDE calls in ``messages`` (walked away from the said message), up
    to the first message that is not tool notes."""
    found: list[TurnCall] = []
    for message in messages:
        if not tool_notes_only(message.content):
            break
        key = f"{message.session_id}{MESSAGE_SEPARATOR}{message.seq}"
        found += [TurnCall(key, n, *call) for n, call in enumerate(shown(message.content))]
        if len(found) >= CALLS_A_SIDE:
            break
    return found[:CALLS_A_SIDE]


def turn_calls(run: Run, message: Memory, shown: Shown) -> list[TurnCall]:
    """The calls of ``message``'s turn (a said session message's): before it, then after."""
    session, _, seq = message.id.rpartition(MESSAGE_SEPARATOR)
    near = messages_near(run.ctx.db, session, int(seq), REACH)
    at = next((n for n, m in enumerate(near) if m.seq == int(seq)), None)
    if at is None:
        return []
    return turn_side(reversed(near[:at]), shown) + turn_side(near[at + 1 :], shown)


def worded(calls: list[TurnCall], weights: dict[str, float]) -> list[TurnCall]:
    """The calls to weigh: those holding one of the query's words (its own or the
    vocabulary's), read over the whole call (a file's purpose is often past the cut); every
    call when none does (a file "to sound waves" answers "audio"). A call that answers
    mostly names what the question asks about (the branch merged, the file written); this
    was first a saving, when each call weighed cost a recall ~18 ms of CPU to embed
    (docs/benchmarks.md, "Tool notes that answer", s34-tools2), and what is shown is chosen
    by it since."""
    return [call for call in calls if held(call.note, weights)] or calls


def call_vectors(run: Run, calls: list[TurnCall]) -> dict[TurnCall, np.ndarray]:
    """Each call's vector: the slow path's (store/call_vectors.py), else embedded now (a
    message it has not reached, or a store of another model)."""
    import numpy as np

    from memctl.store.call_vectors import call_vectors as stored_vectors

    embedder = run.ctx.embedder
    stored = {}
    if run.ctx.db.vector_model() == (embedder.name, embedder.dim):
        stored = stored_vectors(run.ctx.db, sorted({call.message for call in calls}))
    found: dict[TurnCall, np.ndarray] = {}
    for call in calls:
        row = stored.get(call.message, b"")
        width = embedder.dim * FLOAT_BYTES
        start, end = call.number * width, (call.number + 1) * width
        if len(row) >= end:
            found[call] = np.frombuffer(row[start:end], dtype=np.float32)
    missing = sorted({call.text for call in calls if call not in found})
    if missing:
        vectors = np.asarray(embedder.embed(missing), dtype=np.float32)
        embedded = dict(zip(missing, vectors, strict=True))
        found |= {call: embedded[call.text] for call in calls if call not in found}
    return found


def turns(run: Run, rows: list[Memory], shown: Shown) -> dict[str, Answering]:
    """Each said message row's, of the READ_FIRST of ``rows`` (every row, in rank order),
    turn call closest to the query, when it clears ANSWER_FLOOR."""
    import numpy as np

    if run.budget is not None or run.scores is None:
        return {}
    weights = query_words(run.query.text)
    options = {
        row.id: worded(turn_calls(run, row, shown), weights)
        for row in rows[:READ_FIRST]
        if is_message_id(row.id) and not tool_notes_only(row.content)
    }
    vectors = call_vectors(run, [call for calls in options.values() for call in calls])
    if not vectors:
        return {}
    query = np.asarray(run.scores.query, dtype=np.float32)
    cosine = {
        call: float(vector @ query / (np.linalg.norm(vector) * np.linalg.norm(query) + 1e-9))
        for call, vector in vectors.items()
    }
    best = {}
    for row_id, calls in options.items():
        if calls:
            call = max(calls, key=lambda c: cosine[c])
            if cosine[call] >= ANSWER_FLOOR:
                best[row_id] = Answering(call.message, call.text, cosine[call])
    return best
