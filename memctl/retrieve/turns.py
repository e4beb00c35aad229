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
CALLS_A_SIDE each side, when the closest clears ANSWER_FLOOR. They are embedded at query
time, so only the top READ_FIRST rows get one, and of a row's calls only those holding one
of the query's words are embedded, when any does (``worded``). Ranking and labels are
untouched; only rows read get it (no token budget: a context block shows a row's own text).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from memctl.model import Memory, Message
from memctl.retrieve.answering import ANSWER_CHARS, ANSWER_FLOOR, Answering
from memctl.retrieve.excerpt import held, query_words
from memctl.retrieve.run import tool_notes_only
from memctl.store.message_search import MESSAGE_SEPARATOR, is_message_id
from memctl.store.sessions import messages_near

if TYPE_CHECKING:
    from memctl.retrieve.run import Run

# The calls of a message of tool notes that ran a command or wrote a file, each as shown
# (ingest/calls_shown.py, which the caller passes: recall does not import ingest).
Shown = Callable[[str], list[str]]
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


def cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= ANSWER_CHARS else flat[: ANSWER_CHARS - 1].rstrip() + "…"


def turn_side(messages: Iterable[Message], shown: Shown) -> list[tuple[str, str]]:
    """(message key, call) of the first CALLS_A_SIDE calls in ``messages`` (walked away from
    the said message), up to the first message that is not tool notes."""
    found: list[tuple[str, str]] = []
    for message in messages:
        if not tool_notes_only(message.content):
            break
        key = f"{message.session_id}{MESSAGE_SEPARATOR}{message.seq}"
        found += [(key, call) for call in shown(message.content)]
        if len(found) >= CALLS_A_SIDE:
            break
    return found[:CALLS_A_SIDE]


def turn_calls(run: Run, message: Memory, shown: Shown) -> list[tuple[str, str]]:
    """The calls of ``message``'s turn (a said session message's): before it, then after."""
    session, _, seq = message.id.rpartition(MESSAGE_SEPARATOR)
    near = messages_near(run.ctx.db, session, int(seq), REACH)
    at = next((n for n, m in enumerate(near) if m.seq == int(seq)), None)
    if at is None:
        return []
    return turn_side(reversed(near[:at]), shown) + turn_side(near[at + 1 :], shown)


def worded(calls: list[tuple[str, str]], weights: dict[str, float]) -> list[tuple[str, str]]:
    """The calls to embed, each cut as shown (what is shown is what is embedded): those
    holding one of the query's words (its own or the vocabulary's), read over the whole call
    (a file's purpose is often past the cut); every call when none does (a file "to sound
    waves" answers "audio"). A call that answers mostly names what the question asks about
    (the branch merged, the file written), and each call embedded costs a recall ~18 ms of
    CPU (docs/benchmarks.md, "Tool notes that answer", s34-tools2)."""
    holding = [(key, call) for key, call in calls if held(call, weights)]
    return [(key, cut(call)) for key, call in (holding or calls)]


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
    texts = sorted({call for calls in options.values() for _, call in calls})
    if not texts:
        return {}
    vectors = np.asarray(run.ctx.embedder.embed(texts), dtype=np.float32)
    query = np.asarray(run.scores.query, dtype=np.float32)
    similarity = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query) + 1e-9)
    cosine = dict(zip(texts, (float(s) for s in similarity), strict=True))
    best = {}
    for row_id, calls in options.items():
        if calls:
            key, call = max(calls, key=lambda pair: cosine[pair[1]])
            if cosine[call] >= ANSWER_FLOOR:
                best[row_id] = Answering(key, call, cosine[call])
    return best
