"""A fresh temporary memctl store per haystack, filled fast: one memory per dialog turn.

Every turn becomes an episodic memory whose content is the turn prefixed
with its session's date and its speaker (``[8 May 2023] Caroline: ...``),
created at that date (plus a second per turn, to keep their order) so that
time-aware recall can use it. The turn's
benchmark id (LoCoMo ``dia_id``, LongMemEval session id and index) stays in
the harness's own map from memory id to turn, and in ``source``; it is
never indexed for search. Vectors are embedded in batches through the
run's EmbeddingCache and written in one transaction per haystack.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import islice
from pathlib import Path

import numpy as np

from benchmarks.embedcache import EmbeddingCache
from memctl.config import Settings
from memctl.context import Context
from memctl.ingest.asked import give_questions
from memctl.ingest.graph import index_pending
from memctl.ingest.meaning import give_names
from memctl.memories.lines import said_line
from memctl.model import Category, Kind, Memory, Message, Role, Session, Tier, format_time
from memctl.store.memories import insert_memory

BENCH_SCOPE = "bench"
# The speakers a dataset names by their role in a chat (LongMemEval's); any other is a name.
SPEAKER_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}


@dataclass(frozen=True)
class Turn:
    """One dialog turn of a benchmark conversation."""

    key: str  # how the dataset's evidence names it: "D1:3", or "<session id>:<index>"
    session: str
    speaker: str
    text: str
    at: datetime  # the session's date and time
    position: int = 0  # the turn's index within its session

    @property
    def said_at(self) -> datetime:
        """When it is stored as said: a second per turn keeps a session's turns in order."""
        return self.at + timedelta(seconds=self.position)


def day_label(moment: datetime) -> str:
    """``8 May 2023``: the date as a person (and a question) would write it."""
    return f"{moment.day} {moment:%B %Y}"


def turn_content(turn: Turn) -> str:
    return f"[{day_label(turn.at)}] {turn.speaker}: {turn.text}"


def turn_message(turn: Turn) -> Message:
    """A turn as memctl keeps a message of an imported chat: said by the user or the
    assistant when the dataset names one of them (LongMemEval), its role; said by a named
    person (LoCoMo's "Caroline"), as `memctl import` keeps a transcript's turn or a WhatsApp
    or Slack message: the user's, its speaker named (``messages.speaker``) and its text
    ``Caroline: ...`` (imports/raw.py, ``memories.lines.said_line``)."""
    role = SPEAKER_ROLES.get(turn.speaker)
    speaker = "" if role else turn.speaker
    return Message(
        role or Role.USER,
        said_line(speaker, turn.text),
        created_at=format_time(turn.said_at),
        session_id=turn.session,
        seq=turn.position + 1,
        speaker=speaker,
    )


def turn_memory(turn: Turn, source: str) -> Memory:
    return Memory(
        content=turn_content(turn),
        kind=Kind.EPISODIC,
        category=Category.EVENTS,
        tier=Tier.WORKING,
        created_at=format_time(turn.said_at),
        scope=BENCH_SCOPE,
        source=f"{source}:{turn.key}",
        session_id=turn.session,
    )


def batched(items: Iterable[Memory], size: int) -> Iterator[list[Memory]]:
    """Consecutive lists of ``size`` items (itertools.batched arrives in Python 3.12)."""
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


@dataclass
class IngestStats:
    """Totals over every haystack of a run."""

    memories: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.memories / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class CachedEmbedder:
    """The run's embedder through its cache (an ``Embedder``)."""

    cache: EmbeddingCache

    @property
    def name(self) -> str:
        return self.cache.embedder.name

    @property
    def dim(self) -> int:
        return self.cache.embedder.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = [np.frombuffer(v, dtype=np.float32) for v in self.cache.embed(texts)]
        return np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)


class BenchStores:
    """Makes throwaway stores under one temporary directory, removed by ``close``."""

    def __init__(self, settings: Settings, cache: EmbeddingCache) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="memctl-bench-"))
        self.settings = settings
        self.cache = cache
        self.stats = IngestStats()
        self._count = 0

    def new(self) -> Context:
        """An empty store of its own, using the run's embedder."""
        self._count += 1
        home = self.root / f"store-{self._count}"
        return Context(dataclasses.replace(self.settings, home=home), embedder=self.cache.embedder)

    def fill(self, ctx: Context, memories: Iterable[Memory], chunk: int) -> int:
        """Embed (through the cache) and insert ``memories``, one transaction per ``chunk``;
        then read them into the knowledge graph, as ``maintain`` would."""
        ctx.vectors([])  # creates the vector table for the run's model
        count = 0
        began = time.perf_counter()
        for batch in batched(memories, chunk):
            vectors = self.cache.embed([m.content for m in batch])
            with ctx.db.atomic():
                for memory, vector in zip(batch, vectors, strict=True):
                    insert_memory(ctx.db, memory, vector)
            give_names(ctx.db, CachedEmbedder(self.cache), [(m.id, m.content) for m in batch])
            give_questions(
                ctx.db,
                CachedEmbedder(self.cache),
                [(m.id, m.content, str(m.category)) for m in batch],
                ctx.settings.remember_question_floor,
            )
            count += len(batch)
        index_pending(ctx.db)
        self.stats.memories += count
        self.stats.seconds += time.perf_counter() - began
        return count

    def haystack(self, turns: list[Turn], source: str) -> tuple[Context, dict[str, Turn]]:
        """A new store holding ``turns`` (one transaction); returns it and memory id -> turn."""
        ctx = self.new()
        memories = [turn_memory(turn, source) for turn in turns]
        self.fill(ctx, memories, chunk=max(1, len(memories)))
        return ctx, {m.id: turn for m, turn in zip(memories, turns, strict=True)}

    def session_haystack(
        self, turns: list[Turn], source: str, vectors: bool = True
    ) -> tuple[Context, dict[str, Turn]]:
        """A new store holding ``turns`` as what memctl keeps of a real session: verbatim
        messages of their sessions (no memory: distilling needs an LLM), with the vectors
        the slow path would store for them under the run's settings (their parts
        embedded through the run's cache; ``recall.message_vectors`` auto, the default:
        while the store holds at most its limit of messages; none without ``vectors``);
        returns it and message id (``session#seq``) -> turn."""
        from memctl.ingest.message_vectors import parts
        from memctl.store.message_vectors import add_message_vectors, message_rowids, quantised
        from memctl.store.sessions import insert_messages, keeps_message_vectors, save_session

        ctx = self.new()
        began = time.perf_counter()
        messages = [turn_message(turn) for turn in turns]
        pieces = [(m, n, piece) for m in messages for n, piece in enumerate(parts(m.content))]
        ctx.vectors([])  # creates the vector table for the run's model
        with ctx.db.atomic():
            for session in dict.fromkeys(turn.session for turn in turns):
                save_session(ctx.db, Session(id=session, client="generic", scope=BENCH_SCOPE))
            insert_messages(ctx.db, messages)
            rowids = message_rowids(ctx.db)
            vectors = vectors and keeps_message_vectors(ctx.db, ctx.settings)
            embedded = self.cache.embed([piece for _, _, piece in pieces]) if vectors else []
            add_message_vectors(
                ctx.db,
                [
                    (rowids[(m.session_id, m.seq)], n, quantised(np.frombuffer(vector, "<f4")))
                    for (m, n, _), vector in zip(pieces, embedded, strict=False)
                ],
            )
        self.stats.memories += len(messages)
        self.stats.seconds += time.perf_counter() - began
        keys = {f"{m.session_id}#{m.seq}": turn for m, turn in zip(messages, turns, strict=True)}
        return ctx, keys

    def discard(self, ctx: Context) -> None:
        """Close a store and delete its files."""
        ctx.close()
        shutil.rmtree(ctx.settings.home, ignore_errors=True)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> BenchStores:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
