"""What a recall-quality benchmark reports, shared by LoCoMo and LongMemEval."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from benchmarks.embedcache import EmbeddingCache
from benchmarks.haystack import IngestStats
from benchmarks.metrics import percentile
from benchmarks.retrievers import Question, Retriever
from memctl.context import Context

Progress = Callable[[int, int], None]


@dataclass
class QualityReport:
    """Every figure of one run: mean scores per retriever, group and metric, and the costs."""

    benchmark: str
    data: str
    retrievers: list[str]
    groups: list[str]  # rows, in display order
    metrics: list[str]  # columns, in display order
    scores: dict[str, dict[str, dict[str, float | None]]]  # retriever -> group -> metric
    questions: dict[str, int]  # group -> questions scored
    latency_ms: dict[str, dict[str, float]]  # retriever -> p50 / p95 / mean
    ingest: dict[str, float]
    notes: list[str] = field(default_factory=list)
    # the unrelated queries (benchmarks/unrelated.py): queries, stores, results per retriever
    unrelated: dict[str, object] = field(default_factory=dict)
    # one record per question: where each retriever ranked each gold item (None: not found)
    per_question: list[dict[str, object]] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, object]:
        """Every figure; the per-question records are left to ``--details``."""
        figures = asdict(self)
        del figures["per_question"]
        return figures


def gold_ranks(ranked: list[str], gold: frozenset[str]) -> dict[str, int | None]:
    """The 1-based rank of each gold item in ``ranked`` (None when it is absent)."""
    positions = {item: rank for rank, item in reversed(list(enumerate(ranked, start=1)))}
    return {item: positions.get(item) for item in sorted(gold)}


class Timer:
    """Runs retrievers and keeps each one's latencies in milliseconds."""

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = defaultdict(list)

    @staticmethod
    def warm(ctx: Context, retrievers: dict[str, Retriever]) -> None:
        """One untimed query per retriever on a fresh store, so that the first timed one
        does not pay alone for reading the indexes from disk."""
        for retriever in retrievers.values():
            retriever(ctx, Question("warm up"), 1)

    def run(
        self, name: str, retriever: Retriever, ctx: Context, question: Question, depth: int
    ) -> list[str]:
        began = time.perf_counter()
        ids = retriever(ctx, question, depth)
        self.samples[name].append((time.perf_counter() - began) * 1000)
        return ids

    def summary(self) -> dict[str, dict[str, float]]:
        return {
            name: {
                "p50": percentile(values, 50),
                "p95": percentile(values, 95),
                "mean": sum(values) / len(values),
                "calls": len(values),
            }
            for name, values in self.samples.items()
        }


def ingest_figures(stats: IngestStats, cache: EmbeddingCache) -> dict[str, float]:
    """Insert rate (embedding included, cache hits free) and what the cache saved."""
    return {
        "memories": stats.memories,
        "seconds": round(stats.seconds, 2),
        "memories_per_s": round(stats.rate, 1),
        "texts_embedded": cache.misses,
        "embed_cache_hits": cache.hits,
        "embed_seconds": round(cache.embed_seconds, 2),
        "texts_embedded_per_s": round(cache.misses / cache.embed_seconds, 1)
        if cache.embed_seconds
        else 0.0,
    }
