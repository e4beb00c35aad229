"""The part of what a row stands for that answers: a digest's or fact's folded message.

Provenance folds a session's messages into the memory distilled from them (stages/
provenance.py), and the row shows the memory's text. A question's answer is often in the
folded message and not in the digest ("Session of … — show tools" folds the message saying
"threshold: 0.9"), and its words are not the question's, so the excerpt (excerpt.py), which
picks sentences by the query's words, cannot find it (docs/benchmarks.md, "A message found
by meaning alone, folded into a memory that does not say its answer": in 11 of 66 lost asks
a top-5 row's member holds the answer). So a row that stands for messages names the member
closest to the query in meaning (by its stored vectors' closest part), when it clears a
floor, and shows that part's sentence holding the most of the query's words, with the
sentence after it: a turn names its topic, then says what was found or done about it.

Nothing is embedded here: the member's stored part vectors choose the member and its part,
the query's words the sentence. Embedding the part's sentences to choose by meaning cost
a recall about 50 ms of CPU at the median and 240 ms at the 90th percentile on the kept dev
store, and chose the sentence most like the question: its topic, not its answer
(docs/benchmarks.md, "The answering sentence without embedding (issue 33, s34-cost)").

A user's question among the members restates the query and holds no answer: its reply (the
assistant's message after it) is shown in its place.

Only the shown rows are looked at, and only without a token budget (a context block shows
a row's own text: its budget is unchanged).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from memctl.memories.narration import without_next_steps
from memctl.model import Role
from memctl.retrieve.echo import only_asks
from memctl.retrieve.excerpt import WORD, held, query_words
from memctl.retrieve.fit import ELLIPSIS, sentences
from memctl.retrieve.run import TOOL_NOTE
from memctl.store.message_search import get_message
from memctl.store.sessions import messages_after

if TYPE_CHECKING:
    from memctl.retrieve.run import Run
    from memctl.store.database import Database

# How the slow path cuts a message into the parts it embeds (ingest/message_vectors.py's
# ``parts``, which the caller passes: recall does not import ingest).
Parts = Callable[[str], list[str]]
# A member's cosine to the query (by its closest stored part) under which it is not shown:
# recall.support_floor's 0.2, the cosine under which the relevance gate counts no other
# signal as support (config/sources.py), so a member shown is one the gate could weigh.
ANSWER_FLOOR = 0.2
# At most this many characters of the member are shown: about two sentences, the
# excerpt's room (cli/recall_out.py's line) and not a second row.
ANSWER_CHARS = 240
# A sentence this short ("Done.", "Yes:") is shown with the one after it, cut if need be.
SHORT_SENTENCE = 60
# How far after a user's message its reply is looked for: an announcement ("I'll read the
# docs first"), its call and the call's output come first, and the answer after them
# (reasoned: one announced call, or two calls, before the answer); a user's message first
# means it had none.
REPLY_WITHIN = 6
# A sentence the row's own text holds as one run of words but for at most this many (a
# fact drops its "great, ", a piece cut at ANSWER_CHARS ends in half a word) is not shown
# again; one a digest quotes cut short with "…" is: its rest is what the row does not show.
SAID_SLACK = 2


@dataclass(frozen=True)
class Answering:
    """A member message's sentences that answer the query: what ``sessions expand`` opens."""

    message: str  # SESSION#N
    text: str
    cosine: float  # the member's (a question's, for its reply), by its closest stored part

    def to_dict(self) -> dict[str, object]:
        return {"message": self.message, "text": self.text, "cosine": round(self.cosine, 3)}


@dataclass(frozen=True)
class Member:
    """The message a row shows a part of, and which of its parts (None: every one)."""

    key: str
    part: int | None
    cosine: float


def member_sentences(content: str, part: int | None, parts: Parts) -> list[str]:
    """The sentences of the member's ``part`` (as ``parts`` cut it to embed it; None: of
    every part), each one flat."""
    cut = parts(content)
    chosen = cut if part is None else [cut[min(part, len(cut) - 1)]]
    pieces = [" ".join(s.split()) for piece in chosen for s in sentences(piece)]
    return [p for p in pieces if p]


def best_sentence(pieces: list[str], weights: dict[str, float]) -> int:
    """The sentence holding the most of the query's words (by weight), the first of equals;
    the opening when none holds any (a turn says what it is about first)."""
    gains = [sum(held(piece, weights).values()) for piece in pieces]
    return gains.index(max(gains)) if max(gains) > 0 else 0


def shown(pieces: list[str], best: int) -> str:
    """The ``best`` sentence and the next, when both fit in ANSWER_CHARS or the first is
    short; cut to ANSWER_CHARS."""
    text = pieces[best]
    if best + 1 < len(pieces):
        both = f"{text} {pieces[best + 1]}"
        if len(text) < SHORT_SENTENCE or len(both) <= ANSWER_CHARS:
            text = both
    return text if len(text) <= ANSWER_CHARS else text[: ANSWER_CHARS - 1].rstrip() + ELLIPSIS


def said_already(text: str, row: str) -> bool:
    """Whether the row's own text holds ``text``'s words as one run but for at most
    SAID_SLACK of them: compared word by word, so markdown and spacing do not hide it."""
    words = WORD.findall(text.lower())
    have = WORD.findall(row.lower())
    if not words or not have:
        return False
    run = SequenceMatcher(None, words, have, autojunk=False).find_longest_match()
    return len(words) - run.size <= SAID_SLACK


def says_something(text: str) -> bool:
    """Whether an assistant's message says something besides its tool notes and the next
    steps it announces ("I’ll read `RESEARCH-TASK.md` first, then every `*.md`")."""
    lines = [line for line in text.splitlines() if not line.strip().startswith(TOOL_NOTE)]
    return bool(without_next_steps("\n".join(lines)))


def reply_to(db: Database, key: str) -> str | None:
    """The assistant's message answering the user's message ``key``: the first within
    REPLY_WITHIN after it, before the user speaks again, that says something (an assistant
    announces and makes its calls before it answers: "what are the other two libs for?" is
    followed by a message reading their code, then the one saying what each does); else
    the first."""
    session, _, seq = key.rpartition("#")
    replies = []
    for message in messages_after(db, session, int(seq), REPLY_WITHIN):
        if message.role == Role.USER:
            break
        if message.role == Role.ASSISTANT and message.content.strip():
            replies.append(message)
    said = [m for m in replies if says_something(m.content)]
    return next((f"{session}#{m.seq}" for m in said or replies), None)


def answering_member(db: Database, member: Member, row: bool = False) -> Member:
    """The member itself, or, for a user's question only, the reply after it (every part:
    its closest one was not measured), with the question's cosine: it answers it. A row
    that is a user's message (``row``) is shown its reply whatever it says: it states the
    ask ("read every markdown document in docs/"), the reply what came of it ("I found 19
    markdown files")."""
    message = get_message(db, member.key)
    asked = message.role == Role.USER if row else only_asks(message.role, message.content)
    if not asked:
        return member
    reply = reply_to(db, member.key)
    return member if reply is None else Member(reply, None, member.cosine)


def closest_members(run: Run, wanted: dict[str, list[str]]) -> dict[str, Member]:
    """Each row's (``wanted``: its id -> its member messages; a user's message row: itself)
    member closest to the query by its closest stored part, when it clears ANSWER_FLOOR."""
    from memctl.store.message_vectors import closest_parts, message_vector_index
    from memctl.store.vector_query import Scores

    keys = sorted({k for members in wanted.values() for k in members})
    if not keys or run.scores is None:
        return {}
    index = message_vector_index(run.ctx.db)
    closest = closest_parts(index, Scores(index, run.scores.query), keys)
    best: dict[str, Member] = {}
    for memory_id, members in wanted.items():
        near = [(1.0 - closest[k][1], k) for k in members if k in closest]
        if near:
            cosine, key = max(near)
            if cosine >= ANSWER_FLOOR:
                member = Member(key, closest[key][0], cosine)
                best[memory_id] = answering_member(run.ctx.db, member, row=key == memory_id)
    return best


def answering(run: Run, wanted: dict[str, list[str]], parts: Parts) -> dict[str, Answering]:
    """Each memory row's answering part: the closest member's (``closest_members``) closest
    part (as ``parts`` cuts it), its sentence holding the most query words and the next."""
    if run.budget is not None:
        return {}
    weights = query_words(run.query.text)
    found: dict[str, Answering] = {}
    for memory_id, member in closest_members(run, wanted).items():
        content = get_message(run.ctx.db, member.key).content
        pieces = member_sentences(content, member.part, parts)
        if pieces:
            text = shown(pieces, best_sentence(pieces, weights))
            found[memory_id] = Answering(member.key, text, member.cosine)
    return found
