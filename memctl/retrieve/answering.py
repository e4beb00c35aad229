"""The part of what a row stands for that answers: a digest's or fact's folded message.

Provenance folds a session's messages into the memory distilled from them (stages/
provenance.py), and the row shows the memory's text. A question's answer is often in the
folded message and not in the digest ("Session of … — show tools" folds the message saying
"threshold: 0.9"), and its words are not the question's, so the excerpt (excerpt.py), which
picks sentences by the query's words, cannot find it (docs/benchmarks.md, "A message found
by meaning alone, folded into a memory that does not say its answer": in 11 of 66 lost asks
a top-5 row's member holds the answer). So a row that stands for messages names the member
closest to the query in meaning (by its stored vectors' closest part), when it clears a
floor, and shows that part's sentence closest to the query: the part's sentences are
embedded at query time, at most 800 characters (a part) a row.

Only the shown rows are looked at, and only without a token budget (a context block shows
a row's own text: its budget is unchanged).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memctl.retrieve.fit import sentences
from memctl.store.message_search import get_message

if TYPE_CHECKING:
    from memctl.retrieve.run import Run

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
# A sentence this short ("Done.", "Yes:") is shown with the one after it.
SHORT_SENTENCE = 60


@dataclass(frozen=True)
class Answering:
    """A member message's sentences closest to the query: what ``sessions expand`` opens."""

    message: str  # SESSION#N
    text: str
    cosine: float  # the member's, by its closest stored part

    def to_dict(self) -> dict[str, object]:
        return {"message": self.message, "text": self.text, "cosine": round(self.cosine, 3)}


def member_sentences(content: str, part: int, parts: Parts) -> list[str]:
    """The sentences of the member's ``part`` (as ``parts`` cut it to embed it), each one
    flat: only the closest part's are embedded (at most 800 characters a row, where a
    sub-agent's report has up to 6,400)."""
    cut = parts(content)
    pieces = [" ".join(s.split()) for s in sentences(cut[min(part, len(cut) - 1)])]
    return [p for p in pieces if p]


def shown(pieces: list[str], best: int) -> str:
    """The ``best`` sentence, with the next when it is short, cut to ANSWER_CHARS."""
    text = pieces[best]
    if len(text) < SHORT_SENTENCE and best + 1 < len(pieces):
        text = f"{text} {pieces[best + 1]}"
    return text if len(text) <= ANSWER_CHARS else text[: ANSWER_CHARS - 1].rstrip() + "…"


def closest_members(run: Run, wanted: dict[str, list[str]]) -> dict[str, tuple[str, int, float]]:
    """Each memory row's (``wanted``: its id -> its member messages) member closest to the
    query (key, closest part, cosine), when it clears ANSWER_FLOOR."""
    from memctl.store.message_vectors import closest_parts, message_vector_index
    from memctl.store.vector_query import Scores

    keys = sorted({k for members in wanted.values() for k in members})
    if not keys or run.scores is None:
        return {}
    index = message_vector_index(run.ctx.db)
    closest = closest_parts(index, Scores(index, run.scores.query), keys)
    best: dict[str, tuple[str, int, float]] = {}
    for memory_id, members in wanted.items():
        near = [(1.0 - closest[k][1], k) for k in members if k in closest]
        if near:
            cosine, key = max(near)
            if cosine >= ANSWER_FLOOR:
                best[memory_id] = (key, closest[key][0], cosine)
    return best


def answering(run: Run, wanted: dict[str, list[str]], parts: Parts) -> dict[str, Answering]:
    """Each memory row's answering part, by meaning: the sentences of the closest member's
    closest part (as ``parts`` cuts it) embedded in one batch, the one closest to the query
    shown."""
    import numpy as np

    if run.budget is not None:
        return {}
    closest = closest_members(run, wanted)
    if not closest or run.scores is None:
        return {}
    texts = {
        key: member_sentences(get_message(run.ctx.db, key).content, part, parts)
        for key, part, _ in closest.values()
    }
    flat = [s for pieces in texts.values() for s in pieces]
    if not flat:
        return {}
    vectors = np.asarray(run.ctx.embedder.embed(flat), dtype=np.float32)
    query = np.asarray(run.scores.query, dtype=np.float32)
    similarity = vectors @ query / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(query) + 1e-9)
    start, best_of = 0, {}
    for key, pieces in texts.items():
        if pieces:
            best_of[key] = shown(pieces, int(np.argmax(similarity[start : start + len(pieces)])))
        start += len(pieces)
    return {
        memory_id: Answering(key, best_of[key], cosine)
        for memory_id, (key, _, cosine) in closest.items()
        if key in best_of
    }
