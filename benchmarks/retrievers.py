"""The retrievers a benchmark compares, behind one signature: the only calls into recall.

A retriever gets the store, a ``Question`` (the text and when it is asked:
nothing else, so answers and evidence cannot leak into retrieval) and how
many results to return, and answers memory ids, best first. ``memctl`` is
the real recall pipeline; ``bm25`` and ``vector`` are its two legs alone,
the baselines every figure is shown next to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from benchmarks.haystack import BENCH_SCOPE
from memctl.api.recall import PromptRequest, prompt_context
from memctl.context import Context
from memctl.model import State
from memctl.retrieve.pipeline import recall
from memctl.store.memories import MemoryFilter, fts_search, vector_search


@dataclass(frozen=True)
class Question:
    """All a retriever is shown of a benchmark question."""

    text: str
    now: datetime | None = None  # when the question is asked; recall is as of then


Retriever = Callable[[Context, Question, int], list[str]]

ACTIVE = MemoryFilter(states=(State.ACTIVE,))


# What every report says about how memctl was called (nothing to add: it gets the date).
CAVEATS: list[str] = []


def memctl_recall(ctx: Context, question: Question, limit: int) -> list[str]:
    """The full recall pipeline, as `memctl recall --as-of DATE --no-touch` runs it: the
    clear matches, then the possible ones (``recall.possible``)."""
    found = recall(ctx, question.text, limit, now=question.now, touch=False)
    return [r.memory.id for r in found.results]


def memctl_sessions(ctx: Context, question: Question, limit: int) -> list[str]:
    """`memctl recall` as a person runs it: memories and session messages in one ranking."""
    found = recall(ctx, question.text, limit, now=question.now, touch=False, sessions=True)
    return [r.memory.id for r in found.results]


def memctl_clear(ctx: Context, question: Question, limit: int) -> list[str]:
    """The clear matches alone (`memctl recall --clear-only`): what a context block may hold."""
    found = recall(ctx, question.text, limit, now=question.now, touch=False, possible=0)
    return [r.memory.id for r in found.results]


def memctl_prompt(ctx: Context, question: Question, limit: int) -> list[str]:
    """What the per-prompt hook (``UserPromptSubmit``) adds for this prompt, as of its time,
    in a session given nothing yet: at most its own limit, whatever ``limit`` asks."""
    request = PromptRequest(question.text, scope=BENCH_SCOPE, now=question.now)
    return prompt_context(ctx, request).ids


def bm25_only(ctx: Context, question: Question, limit: int) -> list[str]:
    return [memory_id for memory_id, _ in fts_search(ctx.db, question.text, limit, ACTIVE)]


def vector_only(ctx: Context, question: Question, limit: int) -> list[str]:
    (vector,) = ctx.vectors([question.text])
    return [memory_id for memory_id, _ in vector_search(ctx.db, vector, limit, ACTIVE)]


BASELINES: dict[str, Retriever] = {
    "memctl": memctl_recall,
    "bm25": bm25_only,
    "vector": vector_only,
}
