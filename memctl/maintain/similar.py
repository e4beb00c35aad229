"""Pairs of similar memories (same scope, cosine at least a threshold), for dedup and merge.

The vectors come from the store's vector index (store/vector_index.py). Up to
``maintain.exact_pairs_max`` vectors every pair is compared, in blocks; above
that, random-hyperplane LSH (``maintain.lsh_tables`` tables of
``maintain.lsh_bits`` bits, a fixed seed) proposes pairs that share a bucket and
only those are compared: pairs are then likely, not certain, to be found.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from memctl.config import Settings
from memctl.store.database import Database
from memctl.store.maintenance import ids_of_rowids, similarity_rows
from memctl.store.vector_index import vector_index

BLOCK = 1024
SEED = 15


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    similarity: float


def _block_pairs(
    matrix: np.ndarray, groups: np.ndarray, members: np.ndarray, threshold: float
) -> Iterator[tuple[int, int, float]]:
    """Every pair of ``members`` (positions into ``matrix``) in one group, at least
    ``threshold`` similar; each once (first < second)."""
    vectors = matrix[members]
    for start in range(0, len(members), BLOCK):
        block = vectors[start : start + BLOCK] @ vectors[start:].T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i, j = members[start + r], members[start + c]
            if c > r and groups[i] == groups[j]:
                yield int(i), int(j), float(block[r, c])


def _buckets(matrix: np.ndarray, groups: np.ndarray, settings: Settings) -> Iterator[np.ndarray]:
    """Positions sharing a group and an LSH code, per table (buckets of two or more)."""
    rng = np.random.default_rng(SEED)
    bits = settings.maintain_lsh_bits
    weights = (1 << np.arange(bits, dtype=np.int64)).astype(np.int64)
    for _ in range(settings.maintain_lsh_tables):
        planes = rng.standard_normal((matrix.shape[1], bits)).astype(np.float32)
        codes = ((matrix @ planes) > 0).astype(np.int64) @ weights
        keys = groups.astype(np.int64) * (1 << bits) + codes
        order = np.argsort(keys, kind="stable")
        edges = np.flatnonzero(np.diff(keys[order])) + 1
        for bucket in np.split(order, edges):
            if len(bucket) > 1:
                yield np.sort(bucket)


def pair_positions(
    matrix: np.ndarray, groups: np.ndarray, threshold: float, settings: Settings
) -> dict[tuple[int, int], float]:
    """(i, j) -> cosine for every pair found at least ``threshold`` similar in one group."""
    if len(matrix) <= settings.maintain_exact_pairs_max:
        everyone = np.arange(len(matrix))
        return {(i, j): s for i, j, s in _block_pairs(matrix, groups, everyone, threshold)}
    found: dict[tuple[int, int], float] = {}
    for bucket in _buckets(matrix, groups, settings):
        for i, j, s in _block_pairs(matrix, groups, bucket, threshold):
            found[(i, j)] = s
    return found


def similar_pairs(db: Database, settings: Settings, threshold: float) -> list[Pair]:
    """Pairs of active, unpinned memories of one scope at least ``threshold`` similar,
    most similar first."""
    rows = similarity_rows(db)
    if not rows or db.vector_model() is None:
        return []
    scopes: dict[str, int] = {}
    group_of = {rowid: scopes.setdefault(scope, len(scopes)) for rowid, scope, _, _ in rows}
    rowids, matrix = vector_index(db).live_vectors(np.array(list(group_of), dtype=np.int64))
    if len(rowids) < 2:
        return []
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.where(norms == 0, 1, norms)
    groups = np.array([group_of[int(r)] for r in rowids], dtype=np.int64)
    found = pair_positions(matrix, groups, threshold, settings)
    involved = sorted({int(rowids[p]) for pair in found for p in pair})
    ids = ids_of_rowids(db, involved)
    pairs = [
        Pair(ids[int(rowids[i])], ids[int(rowids[j])], s)
        for (i, j), s in found.items()
        if int(rowids[i]) in ids and int(rowids[j]) in ids
    ]
    return sorted(pairs, key=lambda p: (-p.similarity, p.a, p.b))


def clusters(pairs: list[Pair]) -> list[list[str]]:
    """Connected groups of ids joined by the pairs, biggest first (ties: by first id)."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for pair in pairs:
        parent[root(pair.a)] = root(pair.b)
    groups: dict[str, list[str]] = {}
    for member in parent:
        groups.setdefault(root(member), []).append(member)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))
