"""Closeness in meaning after centring: the store's mean vector taken from the query and
from every memory before the cosine.

MiniLM gives every sentence of one kind (a developer's notes, a chat) a large shared
component, so raw cosines crowd together and a question in other words than its fact
meets many near misses. Taking the store's mean out leaves what sets each memory apart
(the "all-but-the-top" post-processing of Mu and Viswanath, ICLR 2018, first step). It
ranks the vector leg's share of the fused score and the possible matches, in the centred
order on the raw cosines' scale (``on_raw_scale``); the relevance gate keeps the raw
cosine its floors were measured on (docs/benchmarks.md, "Centred cosine"). Off by
default (``recall.centred``).

The mean is taken over at most MEAN_SAMPLE_ROWS live rows spread evenly over the index
(``sample_rows``, which density.py measures against too), so it costs the same at 100,000
memories as at 4,096.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from memctl.store.vector_index import VectorIndex

# Rows the store's mean is estimated from (evenly spaced over the live rows): the mean
# of 4,096 unit vectors is within ~1/64 of a row's length of the whole store's.
MEAN_SAMPLE_ROWS = 4096
# A store of one memory has nothing to centre on (the memory minus itself is zero).
MIN_ROWS = 2
TINY = 1e-6


def store_mean(index: VectorIndex) -> np.ndarray | None:
    """The mean of the index's live unit vectors (from a sample of MEAN_SAMPLE_ROWS at most),
    or None when it holds fewer than MIN_ROWS."""
    if int((~index.dead).sum()) < MIN_ROWS:
        return None
    return sample_rows(index, MEAN_SAMPLE_ROWS).astype(np.float64).mean(axis=0).astype(np.float32)


def sample_rows(index: VectorIndex, count: int) -> np.ndarray:
    """At most ``count`` of the index's live rows (it must hold some), evenly spaced, as
    unit vectors (float32; int8 rows are scaled to their largest component)."""
    live = np.flatnonzero(~index.dead)
    from memctl.store.vector_index import distinct

    picked = live[distinct(np.linspace(0, len(live) - 1, count).astype(np.int64))]
    segment_of = np.searchsorted(index.starts, picked, side="right") - 1
    parts = []
    for number, segment in enumerate(index.segments):
        offsets = picked[segment_of == number] - index.starts[number]
        if len(offsets):
            parts.append(np.asarray(segment.matrix[offsets], dtype=np.float32))
    rows = np.concatenate(parts)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), TINY)


def centred_cosines(
    query: np.ndarray, vectors: dict[str, np.ndarray], mean: np.ndarray
) -> dict[str, float]:
    """Each vector's cosine to ``query`` once ``mean`` is taken from both."""
    if not vectors:
        return {}
    ids = list(vectors)
    rows = np.stack([vectors[i] for i in ids]).astype(np.float32) - mean
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), TINY)
    centred = np.asarray(query, dtype=np.float32) - mean
    centred /= max(float(np.linalg.norm(centred)), TINY)
    return dict(zip(ids, (rows @ centred).tolist(), strict=True))


def on_raw_scale(centred: dict[str, float], raw: dict[str, float]) -> dict[str, float]:
    """The centred cosines in their own order, moved onto the raw cosines' scale (the same
    mean and spread over these candidates): centred cosines run lower (about 0 for an
    unrelated memory), and a ranking that also weighs evidence without a cosine (a session
    message's words) must not see every memory fall against it."""
    ids = list(centred)
    if len(ids) < MIN_ROWS:
        return dict(raw)
    ours = np.array([centred[i] for i in ids])
    theirs = np.array([raw[i] for i in ids])
    spread = float(ours.std())
    if spread < TINY:
        return {i: raw[i] for i in ids}
    moved = theirs.mean() + (ours - ours.mean()) * (float(theirs.std()) / spread)
    return dict(zip(ids, moved.tolist(), strict=True))
