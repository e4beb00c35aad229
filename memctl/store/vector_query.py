"""Nearest neighbours of one query over the vector index, with the store's filters.

Up to EXACT_UP_TO rows, one matrix-vector product scores every row. Above,
a prefilter compares sign bits (Hamming distance over 48 bytes a row instead
of 1,536) and only the best RESCORE_SHARE of rows, at least RESCORE_MIN, are
scored exactly: one tenth of the memory traffic. On 100,000 synthetic
memories the top 30 it returns were exactly the top 30 of the full product
for every query tried from 1,000 rescored rows up (benchmarks/recall_speed.py
checks it on every run); twice that is rescored.

Filters (scope, state, as-of, a time window) are SQL: the best rows are
over-fetched and checked, and a filter that keeps few memories is applied to
every row first (at once when a time window holds fewer memories than asked
for: over-fetching could not find enough).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cached_property

import numpy as np

from memctl.store.database import Database
from memctl.store.memories import BY_ID_LIST, MemoryFilter
from memctl.store.vector_index import VectorIndex, vector_index

EXACT_UP_TO = 20_000
RESCORE_MIN = 2_000
RESCORE_SHARE = 50
# Candidates over-fetched before the SQL filter; beyond FILTER_ALL the filter is
# applied to every row instead (a filter that keeps few memories).
OVERFETCH = 4
FILTER_ALL = 4096
FARTHEST = np.iinfo(np.uint16).max  # the Hamming distance given to dead rows
# int8 rows gathered and made float32 at a time, into one buffer (3 MB of 384-d rows, which
# stays in the cache): rescoring 20,000 of a million rows took 9-19 ms with 16,384 at a
# time (a fresh 25 MB array each), 6 ms so (benchmarks/message_speed.py's sessions leg)
CAST_ROWS = 2_048


class Scores:
    """Cosine similarities of one (L2-normalised) query to the index's rows."""

    def __init__(self, index: VectorIndex, query: np.ndarray) -> None:
        self.index = index
        self.query = np.asarray(query, dtype=np.float32)
        self.total = len(index.rowids) - int(index.dead.sum())  # live rows
        self.exact = self.total <= EXACT_UP_TO
        self._best: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # best(count) over all rows

    def prepare(self, limit: int) -> Scores:
        """Do the work over every row now, and the first search of ``nearest`` for
        ``limit`` (numpy only, no SQL: it can overlap a query)."""
        _ = self.full if self.exact else self.hamming
        self.best(first_fetch(self, limit))
        return self

    @cached_property
    def full(self) -> np.ndarray:
        """Every row's similarity (one product over all rows)."""
        if not self.index.segments:
            return np.zeros(0, dtype=np.float32)
        similarities = np.concatenate([self._dot(s.matrix, s.lengths) for s in self.index.segments])
        similarities[self.index.dead] = -np.inf  # replaced or removed since the segment
        return similarities

    @cached_property
    def hamming(self) -> np.ndarray:
        """Every row's count of sign bits that differ from the query's (uint16)."""
        from memctl.store.vector_index import sign_bits

        mine = sign_bits(self.query[None, :])[:, 0]
        parts = []
        for segment in self.index.segments:
            distance = np.zeros(len(segment.rowids), dtype=np.uint16)
            for word, bits in zip(mine, segment.bits, strict=True):
                distance += np.bitwise_count(bits ^ word)
            parts.append(distance)
        distances = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint16)
        distances[self.index.dead] = FARTHEST
        return distances

    def of(self, positions: np.ndarray) -> np.ndarray:
        """Exact similarities of some rows."""
        if self.exact or "full" in self.__dict__:
            return self.full[positions]
        out = np.empty(len(positions), dtype=np.float32)
        seg_of = np.searchsorted(self.index.starts, positions, side="right") - 1
        for number, segment in enumerate(self.index.segments):
            mine = np.flatnonzero(seg_of == number)
            if len(mine):
                offsets = positions[mine] - self.index.starts[number]
                out[mine] = self._dot(segment.matrix, segment.lengths, offsets)
        return out

    def _dot(
        self, matrix: np.ndarray, lengths: np.ndarray | None = None, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """The similarity to the query of each of ``rows`` (all, when None): int8 rows (each
        scaled to its own largest component) are gathered and cast CAST_ROWS at a time into
        one buffer, and divided by their length (the segment's stored ``lengths``, or
        measured here for a segment written without them)."""
        if matrix.dtype == np.float32:
            return (matrix if rows is None else matrix[rows]) @ self.query
        count = len(matrix) if rows is None else len(rows)
        out = np.empty(count, dtype=np.float32)
        buffer = np.empty((min(CAST_ROWS, count), matrix.shape[1]), dtype=np.float32)
        for start in range(0, count, CAST_ROWS):
            stop = min(start + CAST_ROWS, count)
            picked = slice(start, stop) if rows is None else rows[start:stop]
            block = buffer[: stop - start]
            block[...] = matrix[picked]
            known = None if lengths is None else lengths[picked]
            if known is None:
                known = np.sqrt(np.einsum("ij,ij->i", block, block))
            out[start:stop] = (block @ self.query) / np.maximum(known, 1.0)
        return out

    def best(self, count: int, among: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(positions, similarities) of the ``count`` most similar rows (of ``among``, or all),
        best first. Over all rows it is kept: ``prepare`` asks for the vector leg's first
        rows while the full-text search runs, and the time leg asks for the same."""
        if among is None:
            if count not in self._best:
                self._best[count] = self._search(count, None)
            return self._best[count]
        return self._search(count, among)

    def _search(self, count: int, among: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        keep = max(RESCORE_MIN, self.total // RESCORE_SHARE, count * 2)
        dead = self.index.dead
        if among is not None:
            pool = among[~dead[among]]
            if not self.exact and len(pool) > keep:
                pool = pool[_nearest_bits(self.hamming[pool], keep)]
        elif not self.exact and self.total > keep:
            # over every row: a dead row's distance is FARTHEST, beyond the keep-th live one
            pool = np.flatnonzero(_nearest_bits(self.hamming, keep))
        else:
            pool = np.arange(len(dead)) if self.total == len(dead) else np.flatnonzero(~dead)
        similarities = self.of(pool)
        order = _top(similarities, min(count, len(pool)))
        return pool[order], similarities[order]


def _nearest_bits(distances: np.ndarray, keep: int) -> np.ndarray:
    """Which of ``distances`` are at most as far as the ``keep``-th nearest (ties included)."""
    within = np.searchsorted(np.cumsum(np.bincount(distances)), keep)
    return distances <= within


def first_fetch(scores: Scores, limit: int) -> int:
    """How many of the most similar rows ``nearest`` looks at first."""
    return min(scores.total, limit * OVERFETCH + 64)


Owners = Callable[[Database, list[int] | None, MemoryFilter], dict[int, str]]


def nearest(
    index: VectorIndex,
    scores: Scores,
    limit: int,
    where: MemoryFilter,
    owners: Owners | None = None,
) -> list[tuple[str, float]]:
    """(id, cosine distance) of the ``limit`` most similar memories passing ``where``;
    with ``owners`` (rowid -> memory id of the index's rows passing ``where``: several rows
    may be one memory's, as its stored questions are), a memory by its best row."""
    passing = owners or _passing
    if scores.total == 0 or limit <= 0:
        return []
    if where.since is not None and _window_holds_fewer(index.db, where, limit):
        # fewer than ``limit`` can pass: the loop below would end there, after fetching
        # thousands of rows for nothing
        return _nearest_filtered(index, scores, limit, where, passing)
    fetch = first_fetch(scores, limit)
    while True:
        positions, similarities = scores.best(fetch)
        rowids = index.rowids[positions].tolist()
        hits = _best_of_each(rowids, similarities, passing(index.db, rowids, where))
        if len(hits) >= limit or fetch >= scores.total:
            return hits[:limit]
        fetch = min(scores.total, fetch * OVERFETCH)
        if fetch >= FILTER_ALL:
            return _nearest_filtered(index, scores, limit, where, passing)


def _best_of_each(
    rowids: list[int], similarities: np.ndarray, owners: dict[int, str]
) -> list[tuple[str, float]]:
    """(id, cosine distance) of each owner of these rows (best first), by its best row."""
    best: dict[str, float] = {}
    for rowid, similarity in zip(rowids, similarities.tolist(), strict=True):
        if rowid in owners:
            best.setdefault(owners[rowid], 1.0 - similarity)
    return list(best.items())


def nearest_in_store(
    db: Database, vector: np.ndarray, limit: int, where: MemoryFilter
) -> list[tuple[str, float]]:
    """``nearest`` over the store's own index, for a query vector of any length (ingest's
    look-ups of what is stored already); none when the store has no vectors."""
    index = vector_index(db)
    if not len(index.rowids):
        return []
    query = np.asarray(vector, dtype=np.float32)
    query = query / (np.linalg.norm(query) or 1.0)
    return nearest(index, Scores(index, query), limit, where)


def _nearest_filtered(
    index: VectorIndex, scores: Scores, limit: int, where: MemoryFilter, passing: Owners
) -> list[tuple[str, float]]:
    """Apply the filter to every row first, for filters that keep few memories."""
    allowed = passing(index.db, None, where)
    pool = index.positions_of(np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
    fetch = limit
    while True:
        positions, similarities = scores.best(fetch, pool)
        hits = _best_of_each(index.rowids[positions].tolist(), similarities, allowed)
        if len(hits) >= limit or fetch >= len(pool):
            return hits[:limit]
        fetch = min(len(pool), fetch * OVERFETCH)


def _window_holds_fewer(db: Database, where: MemoryFilter, count: int) -> bool:
    """Whether fewer than ``count`` memories were created in ``where``'s time window (an
    upper bound of those passing it), counted in the creation-time index alone."""
    condition, params = "created_at >= ?", [where.since]
    if where.before is not None:
        condition, params = f"{condition} AND created_at < ?", [*params, where.before]
    inside = db.value(
        f"SELECT count(*) FROM (SELECT 1 FROM memories WHERE {condition} LIMIT ?)",
        [*params, count],
    )
    return int(inside) < count


def _passing(db: Database, rowids: list[int] | None, where: MemoryFilter) -> dict[int, str]:
    """rowid -> id of the memories (among ``rowids``, or all) that pass ``where``."""
    condition, params = where.where()
    if rowids is None:
        sql = f"SELECT m.rowid, m.id FROM memories m WHERE {condition}"
    else:
        sql = (
            f"SELECT m.rowid, m.id FROM {BY_ID_LIST} m ON m.rowid = wanted.value WHERE {condition}"
        )
        params = [json.dumps(rowids), *params]
    return dict(db.tuples(sql, params))


def similarities_of(index: VectorIndex, scores: Scores, ids: list[str]) -> dict[str, float]:
    """Cosine similarity of each of these memories that has a vector (one pass over the rows)."""
    if not ids or scores.total == 0:
        return {}
    positions, found = _positions_of_ids(index, ids)
    return dict(zip(found, scores.of(positions).tolist(), strict=True))


def vectors_of(index: VectorIndex, ids: list[str]) -> dict[str, np.ndarray]:
    """The index's vector of each of these memories that has one (float32, as stored)."""
    if not ids or not index.segments:
        return {}
    positions, found = _positions_of_ids(index, ids)
    rows = np.empty((len(positions), index.segments[0].matrix.shape[1]), dtype=np.float32)
    seg_of = np.searchsorted(index.starts, positions, side="right") - 1
    for number, segment in enumerate(index.segments):
        mine = seg_of == number
        if mine.any():
            rows[mine] = segment.matrix[positions[mine] - index.starts[number]]
    return dict(zip(found, rows, strict=True))


def _positions_of_ids(index: VectorIndex, ids: list[str]) -> tuple[np.ndarray, list[str]]:
    """(positions in the index, the memory id at each) of these memories' live rows."""
    by_rowid = dict(
        index.db.tuples(
            f"SELECT m.rowid, m.id FROM {BY_ID_LIST} m ON m.id = wanted.value", [json.dumps(ids)]
        )
    )
    positions = index.positions_of(np.fromiter(by_rowid, dtype=np.int64, count=len(by_rowid)))
    return positions, [by_rowid[r] for r in index.rowids[positions].tolist()]


def rank_of(index: VectorIndex, scores: Scores, memory_id: str) -> tuple[int, float] | None:
    """(rank among all vectors, similarity) of one memory, or None when it has no vector."""
    rowid = index.db.value("SELECT rowid FROM memories WHERE id = ?", (memory_id,))
    if rowid is None:
        return None
    found = np.flatnonzero((index.rowids == rowid) & ~index.dead)
    if len(found) == 0:
        return None
    similarity = float(scores.full[found[0]])
    return int(np.count_nonzero(scores.full > similarity)) + 1, similarity


def _top(values: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` highest values, best first."""
    if count >= len(values):
        return np.argsort(-values, kind="stable")
    part = np.argpartition(-values, count - 1)[:count]
    return part[np.argsort(-values[part], kind="stable")]
