"""Clusters of similar memories (same scope, cosine at least a threshold), for dedup and merge.

A cluster is a star: a seed and every not yet clustered memory at least
``threshold`` similar to it (no chaining, so a cluster never drifts from its
seed). The vectors come from the store's vector index (store/vector_index.py),
normalised in place. Up to ``maintain.exact_pairs_max`` memories every pair is
compared, in blocks; above that, random-hyperplane LSH (``maintain.lsh_tables``
tables of ``maintain.lsh_bits`` bits, a fixed seed) puts memories in buckets and
only a bucket's members are compared: a similar pair is then likely, not
certain, to be found. Memory stays bounded: a block of rows against one bucket.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from memctl.config import Settings
from memctl.store.database import Database
from memctl.store.maintenance import ids_of_rowids, similarity_rows
from memctl.store.vector_index import vector_index

BLOCK = 256
SEED = 15

Row = tuple[int, str, str, str]  # rowid, scope, kind, created_at


@dataclass
class Vectors:
    rowids: np.ndarray
    matrix: np.ndarray  # normalised rows
    groups: np.ndarray  # scope number per row


def load_vectors(db: Database, keep: Callable[[Row], bool]) -> Vectors | None:
    """The vectors of the active, unpinned memories ``keep`` accepts."""
    if db.vector_model() is None:
        return None
    scopes: dict[str, int] = {}
    group_of = {r[0]: scopes.setdefault(r[1], len(scopes)) for r in similarity_rows(db) if keep(r)}
    if len(group_of) < 2:
        return None
    rowids, matrix = vector_index(db).live_vectors(np.fromiter(group_of, dtype=np.int64))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms == 0, 1, norms)
    groups = np.fromiter((group_of[int(r)] for r in rowids), dtype=np.int64, count=len(rowids))
    return Vectors(rowids, matrix, groups)


def _buckets(vectors: Vectors, settings: Settings) -> Iterator[np.ndarray]:
    """Positions compared together: everything, or per LSH table the buckets of two or more."""
    count = len(vectors.rowids)
    if count <= settings.maintain_exact_pairs_max:
        yield np.arange(count)
        return
    rng = np.random.default_rng(SEED)
    bits = settings.maintain_lsh_bits
    weights = np.left_shift(1, np.arange(bits, dtype=np.int64))
    for _ in range(settings.maintain_lsh_tables):
        planes = rng.standard_normal((vectors.matrix.shape[1], bits)).astype(np.float32)
        codes = ((vectors.matrix @ planes) > 0).astype(np.int64) @ weights
        keys = vectors.groups * (1 << bits) + codes
        order = np.argsort(keys, kind="stable")
        for bucket in np.split(order, np.flatnonzero(np.diff(keys[order])) + 1):
            if len(bucket) > 1:
                yield np.sort(bucket)


def star_clusters(
    vectors: Vectors,
    threshold: float,
    settings: Settings,
    limit: int | None = None,
) -> tuple[list[list[int]], bool]:
    """Clusters as lists of positions (seed first), and whether ``limit`` cut the search."""
    used = np.zeros(len(vectors.rowids), dtype=bool)
    found: list[list[int]] = []
    for whole in _buckets(vectors, settings):
        bucket = whole[~used[whole]]
        if len(bucket) < 2:
            continue
        members = vectors.matrix[bucket]
        groups = vectors.groups[bucket]
        for start in range(0, len(bucket), BLOCK):
            rows = np.arange(start, min(start + BLOCK, len(bucket)))
            hits = (members[rows] @ members.T >= threshold) & (groups == groups[rows, None])
            hits[np.arange(len(rows)), rows] = False
            for row in np.flatnonzero(hits.any(axis=1)):
                seed = bucket[rows[row]]
                if used[seed]:
                    continue
                near = bucket[np.flatnonzero(hits[row])]
                near = near[~used[near]]
                if not len(near):
                    continue
                if limit is not None and len(found) >= limit:
                    return found, True
                used[seed] = True
                used[near] = True
                found.append([int(seed), *near.tolist()])
    return found, False


def cluster_ids(db: Database, vectors: Vectors, clusters: list[list[int]]) -> list[list[str]]:
    """The memory ids of clusters of positions."""
    ids = ids_of_rowids(db, [int(vectors.rowids[p]) for c in clusters for p in c])
    return [[ids[int(vectors.rowids[p])] for p in c] for c in clusters]
