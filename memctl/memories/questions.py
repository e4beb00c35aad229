"""Questions stored with a memory: the ways a person might ask for it, written by the host
model when it stores the memory (MCP ``memory_store``, the host distillation's answer).

They are checked like a memory's text (one line each, private text and secrets taken out),
and each must be about its memory: a question whose cosine to the memory's own vector is
below ``remember.question_floor`` is dropped, not stored (Doc2Query--: generated queries
that do not match their document cost more than they bring). Recall searches the kept
ones to find their memory (store/questions.py) and never shows them.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from memctl.errors import UsageError

MAX_QUESTIONS = 3  # "2-3 ways a person might ask for this memory"
MAX_QUESTION_CHARS = 300  # a question, not a document


@dataclass(frozen=True)
class Questions:
    """What became of the questions given with a memory."""

    kept: list[tuple[str, bytes]] = field(default_factory=list)  # (text, vector)
    dropped: list[str] = field(default_factory=list)  # not about their memory

    def to_dict(self) -> dict[str, object]:
        return {"kept": [text for text, _ in self.kept], "dropped": self.dropped}


def clean_questions(questions: Sequence[str]) -> list[str]:
    """The questions as stored: trimmed, private text and secrets taken out, those left with
    nothing dropped, duplicates once; a UsageError past ``MAX_QUESTIONS`` or for one that is
    not a single line of at most ``MAX_QUESTION_CHARS`` characters."""
    from memctl.memories.privacy import nothing_left, scrub

    if len(questions) > MAX_QUESTIONS:
        raise UsageError(f"questions: at most {MAX_QUESTIONS}, got {len(questions)}")
    kept: dict[str, None] = {}
    for question in questions:
        if not isinstance(question, str):
            raise UsageError("questions: each must be a string")
        text = " ".join(question.split())
        if len(text) > MAX_QUESTION_CHARS or "\x00" in text:
            raise UsageError(
                f"questions: each is one line of at most {MAX_QUESTION_CHARS} characters"
            )
        scrubbed = scrub(text)[0].strip()
        if scrubbed and not nothing_left(scrubbed):
            kept.setdefault(scrubbed, None)
    return list(kept)


def cosine(a: bytes, b: bytes) -> float:
    """The cosine similarity of two float32 vectors given as bytes."""
    x, y = array("f", a), array("f", b)
    dot = sum(p * q for p, q in zip(x, y, strict=True))
    norm = math.sqrt(sum(p * p for p in x)) * math.sqrt(sum(q * q for q in y))
    return dot / norm if norm else 0.0


def on_topic(
    texts: list[str], vectors: Sequence[bytes], memory_vector: bytes, floor: float
) -> Questions:
    """The questions whose cosine to their memory reaches ``floor``, and those dropped."""
    kept, dropped = [], []
    for text, vector in zip(texts, vectors, strict=True):
        if cosine(vector, memory_vector) >= floor:
            kept.append((text, vector))
        else:
            dropped.append(text)
    return Questions(kept, dropped)
