"""Retrieval metrics as the benchmarks' papers define them, and the tallies that average them."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet


def recall_at(ranked: Sequence[str], gold: AbstractSet[str], k: int) -> float:
    """The fraction of ``gold`` found in the top ``k`` (LoCoMo's Recall@k for one question)."""
    return len(gold & set(ranked[:k])) / len(gold) if gold else 0.0


def recall_all_at(ranked: Sequence[str], gold: AbstractSet[str], k: int) -> float:
    """1.0 when every item of ``gold`` is in the top ``k``, else 0.0 (LongMemEval's recall_all)."""
    return float(bool(gold) and gold <= set(ranked[:k]))


def recall_any_at(ranked: Sequence[str], gold: AbstractSet[str], k: int) -> float:
    """1.0 when at least one item of ``gold`` is in the top ``k``, else 0.0."""
    return 1.0 if gold & set(ranked[:k]) else 0.0


def ndcg_at(ranked: Sequence[str], gold: AbstractSet[str], k: int) -> float:
    """Binary-relevance NDCG@k: DCG of the top ``k`` over the DCG of a perfect ranking."""
    dcg = sum(1.0 / math.log2(rank + 2) for rank, item in enumerate(ranked[:k]) if item in gold)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(gold), k)))
    return dcg / ideal if ideal else 0.0


def distinct(items: Iterable[str]) -> list[str]:
    """Items in first-seen order without repeats: sessions ranked by their best-ranked turn."""
    return list(dict.fromkeys(items))


def percentile(values: Sequence[float], pct: float) -> float:
    """The nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


class Tally:
    """Per-question scores grouped by (retriever, group, metric), averaged at the end."""

    def __init__(self) -> None:
        self.scores: dict[tuple[str, str, str], list[float]] = defaultdict(list)

    def add(self, retriever: str, groups: Iterable[str], metric: str, value: float) -> None:
        for group in groups:
            self.scores[(retriever, group, metric)].append(value)

    def mean(self, retriever: str, group: str, metric: str) -> float | None:
        values = self.scores.get((retriever, group, metric))
        return sum(values) / len(values) if values else None

    def count(self, retriever: str, group: str, metric: str) -> int:
        return len(self.scores.get((retriever, group, metric), []))

    def table(
        self, retrievers: Iterable[str], groups: Iterable[str], metrics: Iterable[str]
    ) -> dict[str, dict[str, dict[str, float | None]]]:
        """{retriever: {group: {metric: mean}}} for every group with scores."""
        metrics, groups = list(metrics), list(groups)
        return {
            r: {
                g: {m: self.mean(r, g, m) for m in metrics if self.count(r, g, m)}
                for g in groups
                if any(self.count(r, g, m) for m in metrics)
            }
            for r in retrievers
        }
