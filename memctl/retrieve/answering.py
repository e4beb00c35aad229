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
assistant's message after it) is shown in its place. So is the reply to a user's ask the row
says already (a digest quotes every ask: "commit and push"), and to an assistant's message
that only announces a step ("I will read `dns-security.conf` to see if it modifies the DNS
over TLS settings."), or a message row closing on the step its calls take: the ask or the
step matches the question because it names its topic,
and the turn's first message that says something tells what came of it ("No, DNS over TLS
is currently disabled."). A reply is shown from its opening, not by the query's words: it
says what came of the ask first, and the sentence holding the query's words is most often
the one restating it ("I'll build a space where ..." for "what did you choose to build?";
docs/benchmarks.md, "The reply, not the ask or the step announcing it").

Only the shown rows are looked at, and only without a token budget (a context block shows
a row's own text: its budget is unchanged).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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
# How far after a user's message or an announcement its reply is looked for: an
# announcement ("I'll read the docs first"), its calls and their outputs come first, and
# the answer after them; a user's message first means it had none. Claude Code writes each
# call and each output as a message of its own: three calls put the answer 7th (git status,
# git diff, git log, then "I'll only stage the two version files": fresh8's z02). Measured
# 6, 12 and 40 (docs/benchmarks.md, "The reply, not the ask or the step announcing it"):
# 12 finds what 40 does.
REPLY_WITHIN = 12
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
    # the member's sentences from the first shown on (``past_shown`` shows the next ones)
    rest: tuple[str, ...] = field(default=(), compare=False)
    reply: bool = False  # a reply's (``Member.reply``): its turn's next message may say more

    def to_dict(self) -> dict[str, object]:
        return {"message": self.message, "text": self.text, "cosine": round(self.cosine, 3)}


@dataclass(frozen=True)
class Member:
    """The message a row shows a part of, and which of its parts (None: every one)."""

    key: str
    part: int | None
    cosine: float
    reply: bool = False  # the reply to the message chosen (``answering_member``)


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


def opening(pieces: list[str]) -> int:
    """A reply's first sentence that does not announce a next step (the opening when each
    does): what came of the ask."""
    return next((n for n, piece in enumerate(pieces) if without_next_steps(piece)), 0)


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
    # line by line, as without_next_steps reads it, to the first line that says something:
    # a long reply's first line mostly does (every message row of a recall is asked)
    said = (line for line in text.splitlines() if not line.strip().startswith(TOOL_NOTE))
    return any(without_next_steps(line) for line in said)


def announces(role: str, text: str, row: bool = False) -> bool:
    """Whether a session message is an assistant's that only announces its next step (or
    only makes calls): it says nothing of what came of it. A row (``row``), whose own text
    is shown, also when it closes on the step it takes (``closes_on_a_step``); a member is
    shown by its sentences alone, and one that says something may say the answer before
    its next step ("I can't download Throttlestop due to anti-bot measures. I'll search
    for a Chocolatey package instead."): its reply would hide it."""
    if role != Role.ASSISTANT:
        return False
    return not says_something(text) or (row and closes_on_a_step(text))


def closes_on_a_step(text: str) -> bool:
    """Whether a message's last sentence, before the calls it makes, announces the step
    they take ("Okay, I've found a Chocolatey package for Throttlestop. I'll install it
    now with `choco install throttlestop -y`." and the call): what came of it is said in
    a message after it. A message making no call took no step yet."""
    lines = [line for line in text.splitlines() if line.strip()]
    said = [line for line in lines if not line.strip().startswith(TOOL_NOTE)]
    if not said or len(said) == len(lines):
        return False
    last = sentences(said[-1])
    return bool(last) and not without_next_steps(last[-1])


def reply_to(db: Database, key: str, said_only: bool = False) -> str | None:
    """The assistant's message answering message ``key`` (a user's, or an announcement):
    the first within REPLY_WITHIN after it, before the user speaks again, that says
    something (an assistant announces and makes its calls before it answers: "what are the
    other two libs for?" is followed by a message reading their code, then the one saying
    what each does); else the first, unless ``said_only``."""
    session, _, seq = key.rpartition("#")
    replies = []
    for message in messages_after(db, session, int(seq), REPLY_WITHIN):
        if message.role == Role.USER:
            break
        if message.role == Role.ASSISTANT and message.content.strip():
            replies.append(message)
    said = [m for m in replies if says_something(m.content)]
    return next((f"{session}#{m.seq}" for m in said or ([] if said_only else replies)), None)


def answering_member(db: Database, member: Member, row_text: str, row: bool = False) -> Member:
    """The member itself, or the reply after it (every part: its closest one was not
    measured), with the member's cosine: it answers it. The reply is shown for a user's
    question only; for a user's ask the row (its text ``row_text``) says already, as a row
    that is a user's message (``row``) does: it states the ask ("read every markdown
    document in docs/"), the reply what came of it ("I found 19 markdown files"); and for
    an assistant's announcement (``announces``), when a message after it says something."""
    message = get_message(db, member.key)
    if announces(message.role, message.content, row):
        reply = reply_to(db, member.key, said_only=True)
    elif message.role == Role.USER and (
        row or only_asks(message.role, message.content) or said_already(message.content, row_text)
    ):
        reply = reply_to(db, member.key)
    else:
        reply = None
    return member if reply is None else Member(reply, None, member.cosine, reply=True)


def closest_members(
    run: Run, wanted: dict[str, list[str]], texts: dict[str, str]
) -> dict[str, Member]:
    """Each row's (``wanted``: its id -> its member messages; a user's message row, or an
    announcement's: itself) member closest to the query by its closest stored part, when
    it clears ANSWER_FLOOR (``texts``: each row's own text)."""
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
                row_text = texts.get(memory_id, "")
                best[memory_id] = answering_member(
                    run.ctx.db, member, row_text, row=key == memory_id
                )
    return best


def answering(
    run: Run, wanted: dict[str, list[str]], parts: Parts, texts: dict[str, str]
) -> dict[str, Answering]:
    """Each memory row's answering part: the closest member's (``closest_members``) closest
    part (as ``parts`` cuts it), its sentence holding the most query words and the next; a
    reply's opening (``opening``). A message row standing for itself, with no reply, has
    none: its own text is shown already (``texts``: each row's own text)."""
    if run.budget is not None:
        return {}
    weights = query_words(run.query.text)
    found: dict[str, Answering] = {}
    for memory_id, member in closest_members(run, wanted, texts).items():
        if member.key == memory_id:
            continue
        content = get_message(run.ctx.db, member.key).content
        pieces = member_sentences(content, member.part, parts)
        if pieces:
            best = opening(pieces) if member.reply else best_sentence(pieces, weights)
            text, rest = shown(pieces, best), tuple(pieces[best:])
            found[memory_id] = Answering(member.key, text, member.cosine, rest, member.reply)
    return found


def said_in(text: str, others: list[str]) -> bool:
    """Whether one of ``others`` (the texts a result shows already) says ``text``."""
    return any(said_already(text, other) for other in others)


def past_shown(db: Database, found: Answering, others: list[str]) -> Answering | None:
    """``found``, or when a row above it shows its text already (``others``: their own
    texts and their ``from``), the next thing none of them shows: its sentences from the
    first none of ``others`` says, else (a reply's) its turn's next message saying
    something, from its opening; None when nothing new is left. An ask and its reply both
    in the top 5 showed the reply's opening twice (docs/benchmarks.md, "A row's from that
    a row above shows already gives way to what comes next")."""
    if not said_in(found.text, others):
        return found
    rest = [piece for piece in found.rest if not said_in(piece, others)]
    while rest:
        # a long sentence cut at ANSWER_CHARS may be what a digest above quotes cut too
        if not said_in(text := shown(rest, 0), others):
            return Answering(found.message, text, found.cosine, tuple(rest), found.reply)
        rest = rest[1:]
    key = reply_to(db, found.message, said_only=True) if found.reply else None
    if key is None:
        return None
    said = "\n".join(
        line
        for line in get_message(db, key).content.splitlines()
        if not line.strip().startswith(TOOL_NOTE)
    )
    pieces = [" ".join(s.split()) for s in sentences(said)]
    pieces = [p for p in pieces if p]
    if not pieces:
        return None
    start = opening(pieces)
    return past_shown(
        db, Answering(key, shown(pieces, start), found.cosine, tuple(pieces[start:]), True), others
    )
