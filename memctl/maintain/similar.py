"""Clusters of similar memories (same scope, cosine at least a threshold), for dedup and merge.

A cluster is a star: a seed and every not yet clustered memory at least
``threshold`` similar to it (no chaining, so a cluster never drifts from its
seed). Only *fresh* memories are seeds: those the task has not compared yet
(store table ``maintain_compared``; any change to a memory's vector, text,
kind, scope or state makes it fresh again). A fresh memory is compared with
every other one, so pairs of two compared memories are never compared again:
a run right after another compares nothing.

The vectors come from the store's vector index (store/vector_index.py), copied
once, normalised. When fresh x all is at most ``maintain.exact_comparisons``
every such pair is compared, in blocks; above that, random-hyperplane LSH
(``maintain.lsh_tables`` tables of ``maintain.lsh_bits`` bits, a fixed seed) puts
memories in buckets and only a bucket's members are compared: a similar pair is
then likely, not certain, to be found. Memory stays bounded: a block of seeds
against a chunk of members.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from memctl.config import Settings
from memctl.store.database import Database
from memctl.store.maintenance import ids_of_rowids, mark_compared, similarity_rows
from memctl.store.meaning import plain_vectors_by_rowid
from memctl.store.vector_index import vector_index

BLOCK = 256
CHUNK = 16384
SEED = 15

Row = tuple[int, str, str, str, int]  # rowid, scope, kind, age (store.maintenance), compared


@dataclass
class Vectors:
    rowids: np.ndarray
    matrix: np.ndarray  # normalised rows: the one copy
    groups: np.ndarray  # scope number per row
    fresh: np.ndarray  # not compared yet: the seeds
    alive: np.ndarray  # still active (a fold ends a row's part)
    keys: np.ndarray | None = None  # LSH bucket keys, (rows, tables), made once

    def seeds(self) -> int:
        """How many memories the next search compares with the others."""
        return int(np.count_nonzero(self.fresh & self.alive))


def _as_said(db: Database, rowids: np.ndarray, matrix: np.ndarray) -> None:
    """A memory whose searched vector also names what it mentions (store/meaning.py) is
    compared by its content-alone vector: two notes naming one tool are not one note."""
    plain = plain_vectors_by_rowid(db)
    if not plain:
        return
    for row, rowid in enumerate(rowids.tolist()):
        if rowid in plain:
            matrix[row] = np.frombuffer(plain[rowid], dtype=np.float32)


def load_vectors(db: Database, task: str, keep: Callable[[Row], bool]) -> Vectors | None:
    """The vectors of the active, unpinned memories ``keep`` accepts, or None when none of
    them is fresh (nothing to compare)."""
    if db.vector_model() is None:
        return None
    rows = [r for r in similarity_rows(db, task) if keep(r)]
    if len(rows) < 2 or all(r[4] for r in rows):
        return None
    scopes: dict[str, int] = {}
    group_of = {r[0]: scopes.setdefault(r[1], len(scopes)) for r in rows}
    compared = {r[0] for r in rows if r[4]}
    index = vector_index(db)
    rowids, matrix = index.live_vectors(np.fromiter(group_of, dtype=np.int64))
    index.release_pages()  # the copy is all the search reads
    _as_said(db, rowids, matrix)
    fresh = np.fromiter((int(r) not in compared for r in rowids), dtype=bool, count=len(rowids))
    if not fresh.any():  # the fresh ones have no vector (yet: upkeep embeds them)
        return None
    for start in range(0, len(matrix), CHUNK):
        part = matrix[start : start + CHUNK]
        norms = np.sqrt(np.einsum("ij,ij->i", part, part))
        part /= np.where(norms == 0, 1, norms)[:, None]
    groups = np.fromiter((group_of[int(r)] for r in rowids), dtype=np.int64, count=len(rowids))
    return Vectors(rowids, matrix, groups, fresh, np.ones(len(rowids), dtype=bool))


def _lsh_keys(vectors: Vectors, settings: Settings) -> np.ndarray:
    if vectors.keys is None:
        rng = np.random.default_rng(SEED)
        bits, tables = settings.maintain_lsh_bits, settings.maintain_lsh_tables
        planes = rng.standard_normal((vectors.matrix.shape[1], bits * tables)).astype(np.float32)
        weights = np.left_shift(1, np.arange(bits, dtype=np.int64))
        keys = np.empty((len(vectors.rowids), tables), dtype=np.int64)
        for start in range(0, len(keys), CHUNK):
            signs = (vectors.matrix[start : start + CHUNK] @ planes > 0).astype(np.int64)
            codes = signs.reshape(len(signs), tables, bits) @ weights
            keys[start : start + CHUNK] = (
                vectors.groups[start : start + CHUNK, None] * (1 << bits) + codes
            )
        vectors.keys = keys
    return vectors.keys


def _candidates(vectors: Vectors, settings: Settings) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(seeds, members) to compare: per scope everything, or per LSH table each bucket
    holding a fresh memory and another."""
    seeds = vectors.fresh & vectors.alive
    if int(seeds.sum()) * int(vectors.alive.sum()) <= settings.maintain_exact_comparisons:
        for group in np.unique(vectors.groups[seeds]):
            mine = vectors.groups == group
            yield np.flatnonzero(mine & seeds), np.flatnonzero(mine & vectors.alive)
        return
    alive = np.flatnonzero(vectors.alive)
    for keys in _lsh_keys(vectors, settings).T:
        order = alive[np.argsort(keys[alive], kind="stable")]
        starts = np.flatnonzero(np.diff(keys[order], prepend=-1))
        sizes = np.diff(starts, append=len(order))
        has_seed = np.add.reduceat(seeds[order].astype(np.int64), starts) > 0
        wanted = has_seed & (sizes > 1)
        for start, size in zip(starts[wanted], sizes[wanted], strict=True):
            bucket = np.sort(order[start : start + size])
            yield bucket[seeds[bucket]], bucket


def _hits(
    matrix: np.ndarray, rows: np.ndarray, cols: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """(row index, column index) of every pair at least ``threshold`` similar, but a row
    with itself; by row."""
    block = matrix[rows]
    found_rows, found_cols = [], []
    for start in range(0, len(cols), CHUNK):
        part = cols[start : start + CHUNK]
        r, c = np.nonzero(block @ matrix[part].T >= threshold)
        other = part[c] != rows[r]
        found_rows.append(r[other])
        found_cols.append(c[other] + start)
    hit_rows, hit_cols = np.concatenate(found_rows), np.concatenate(found_cols)
    order = np.argsort(hit_rows, kind="stable")
    return hit_rows[order], hit_cols[order]


def star_clusters(
    vectors: Vectors,
    threshold: float,
    settings: Settings,
    limit: int | None = None,
) -> tuple[list[list[int]], bool]:
    """Clusters as lists of positions (a fresh seed first), and whether ``limit`` cut the
    search."""
    used = ~vectors.alive
    found: list[list[int]] = []
    for seeds, members in _candidates(vectors, settings):
        for start in range(0, len(seeds), BLOCK):
            rows = seeds[start : start + BLOCK]
            rows, cols = rows[~used[rows]], members[~used[members]]
            if not len(rows) or len(cols) < 2:
                continue
            hit_rows, hit_cols = _hits(vectors.matrix, rows, cols, threshold)
            firsts = np.flatnonzero(np.diff(hit_rows, prepend=-1)).tolist()
            for first, end in zip(firsts, [*firsts[1:], len(hit_rows)], strict=False):
                seed = rows[hit_rows[first]]
                near = cols[hit_cols[first:end]]
                near = near[~used[near]]
                if used[seed] or not len(near):
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


def settle(
    db: Database, task: str, vectors: Vectors, clusters: list[list[int]], ended: set[int]
) -> bool:
    """After a search and its folds (``ended``: the positions no longer active): remember the
    fresh memories outside every cluster as compared; the clusters' remaining members stay
    fresh, to be compared again. Whether any remain (caller's transaction)."""
    in_cluster = np.zeros(len(vectors.rowids), dtype=bool)
    in_cluster[[p for c in clusters for p in c]] = True
    vectors.alive[list(ended)] = False
    if not ended:  # nothing folded: what the clusters hold stays as it is
        in_cluster[:] = False
    done = vectors.fresh & vectors.alive & ~in_cluster
    mark_compared(db, task, vectors.rowids[done].tolist())
    vectors.fresh = in_cluster & vectors.alive
    return bool(vectors.fresh.any())
