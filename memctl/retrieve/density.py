"""Closeness in meaning, less what a memory owes to the crowd it stands in (hubness).

MiniLM puts memories of one kind close together: a team's notes on its stack and
tools sit near each other, and near any question about the stack. A memory in such
a crowd is close to every question about its kind, so a question in other words
than its fact meets the fact's neighbours first: with 120 notes of one company among
1,000 memories, the note a reworded question asks for is often 10th to 30th by
cosine. CSLS (Conneau, Lample et al., "Word translation without parallel data",
ICLR 2018) corrects this by each candidate's local density ``r``: its mean cosine
to its ``k`` nearest neighbours. CSLS ranks by ``2 cos - r``; ``density_weight``
weighs ``r`` against the cosine (0.5 is CSLS). It ranks the possible matches only
(fuse.discount, pipeline.rank_possible): the relevance gate's labels, the clear
matches' order and the fused score keep the raw cosine (docs/benchmarks.md,
"Hubness correction": in the fused score it cost LoCoMo's multi-hop questions).

The density is measured against at most SAMPLE_ROWS rows spread evenly over the
index, so it costs the same at 100,000 memories as at 1,000. Only in a store of at
least LOCAL_ROWS memories: in fewer, the nearest neighbours are much of the store,
and the correction would rank the memory most typical of it last (on the Quick
start's 15 memories, the deploy procedure below an outage for "when do we release
to customers?").
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np

from memctl.retrieve.centre import sample_rows

if TYPE_CHECKING:
    from memctl.store.vector_index import VectorIndex

# Neighbours a memory's density is the mean cosine of (CSLS's k, from the paper's 10).
NEIGHBOURS = 10
# Rows the density is measured against, evenly spaced over the live rows: 500 x 384
# products per candidate (docs/benchmarks.md, "Hubness correction": 500 and 4,096 rows
# rank the paraphrases alike).
SAMPLE_ROWS = 500
# A store of fewer memories has no local crowd to discount: NEIGHBOURS is 5 % of this.
LOCAL_ROWS = 200
# A row this close to a candidate is the candidate itself (or its copy), not a neighbour.
SELF = 0.9999


def crowded(index: VectorIndex) -> bool:
    """Whether the store is large enough for a memory's neighbours to be a local crowd."""
    return int((~index.dead).sum()) >= LOCAL_ROWS


def densities(index: VectorIndex, vectors: dict[str, np.ndarray]) -> dict[str, float]:
    """Each vector's mean cosine to its NEIGHBOURS nearest rows of the index's sample (none
    in a store of fewer than LOCAL_ROWS live rows)."""
    if not vectors or not crowded(index):
        return {}
    sample = _sample(index)
    ids = list(vectors)
    rows = np.stack([vectors[i] for i in ids]).astype(np.float32)
    cosines = rows @ sample.T
    cosines[cosines >= SELF] = -1.0
    count = min(NEIGHBOURS, sample.shape[0] - 1)
    nearest = np.partition(cosines, -count, axis=1)[:, -count:]
    return dict(zip(ids, nearest.mean(axis=1).tolist(), strict=True))


# Each index's last sample, with the ``dead`` array it was drawn under: a refresh that
# changes the rows replaces that array, so the sample is drawn again only then (a resident
# process answers every query of an unchanged store from one sample).
_SAMPLES: weakref.WeakKeyDictionary[VectorIndex, tuple[np.ndarray, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)


def _sample(index: VectorIndex) -> np.ndarray:
    """SAMPLE_ROWS of the index's live rows (centre.sample_rows), drawn once per state."""
    drawn = _SAMPLES.get(index)
    if drawn is not None and drawn[0] is index.dead:
        return drawn[1]
    sample = sample_rows(index, SAMPLE_ROWS)
    _SAMPLES[index] = (index.dead, sample)
    return sample


def discounted(raw: dict[str, float], density: dict[str, float], weight: float) -> dict[str, float]:
    """Each raw cosine less ``weight`` x how much denser than the median candidate its
    memory's neighbourhood is: the order CSLS gives, on the raw cosines' scale (a
    candidate without a density, such as a session message, keeps its raw cosine)."""
    if not density:
        return dict(raw)
    typical = median(list(density.values()))
    return {i: cosine - weight * (density.get(i, typical) - typical) for i, cosine in raw.items()}


def median(values: list[float]) -> float:
    """``np.median`` of ``values`` (the middle one, or the mean of the middle two), without
    its import of ``numpy.ma`` (about 20 ms of CPU in every recall process and resident
    child)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
