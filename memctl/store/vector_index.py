"""A memory-mapped float32 copy of the store's vectors, for exact nearest-neighbour search.

The vectors live in SQLite (``memories_vec``): that is the truth. sqlite-vec's
PyPI build has no SIMD, so its exact KNN over 100,000 384-d vectors takes
~75 ms, while one numpy matrix-vector product over the same rows takes a few.
This module keeps the vectors as immutable segment files beside the database
(``memctl.db.vectors/``) and searches them with numpy; the answers are the same
exact cosine neighbours vec0 would give.

Keeping in step: every vector write bumps ``vectors_generation`` in ``meta`` in
its own transaction, and a write that is not an append (replace, delete, new
model) also sets ``vectors_rewritten``. A reader whose manifest is older than
the generation syncs under a file lock: when only appends happened it writes
one small segment of the rows past the manifest's highest rowid; otherwise it
rebuilds. Segments are never changed in place, so a concurrent reader never
sees half a write; a manifest is replaced atomically.

numpy is imported at module level: only the recall path imports this module.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import mmap
import os
import uuid
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memctl.store.database import VECTORS_GENERATION as GENERATION
from memctl.store.database import VECTORS_REWRITTEN as REWRITTEN
from memctl.store.database import Database
from memctl.store.memories import BY_ID_LIST, MemoryFilter

MAGIC = b"MCTLVEC1"
HEADER = 64
MAX_SEGMENTS = 8
# Candidates over-fetched before the SQL filter; beyond FILTER_ALL the filter is
# applied to every row instead (a filter that keeps few memories).
OVERFETCH = 4
FILTER_ALL = 4096
READ_BATCH = 4096


@dataclass(frozen=True)
class Segment:
    """One immutable file of rows: ascending rowids and their vectors."""

    name: str
    rowids: np.ndarray
    matrix: np.ndarray


@dataclass(frozen=True)
class Manifest:
    model: str
    dim: int
    generation: int
    max_rowid: int
    segments: tuple[str, ...]

    def to_json(self) -> str:
        return json.dumps({**self.__dict__, "segments": list(self.segments)})


def _write_segment(path: Path, rowids: np.ndarray, matrix: np.ndarray) -> None:
    count, dim = matrix.shape
    header = MAGIC + np.array([dim, count], dtype="<u8").tobytes()
    ids_end = HEADER + 8 * count
    pad = (-ids_end) % HEADER
    partial = path.with_suffix(".partial")
    with open(partial, "wb") as out:
        out.write(header.ljust(HEADER, b"\0"))
        out.write(rowids.astype("<i8").tobytes())
        out.write(b"\0" * pad)
        out.write(np.ascontiguousarray(matrix, dtype="<f4").tobytes())
    partial.replace(path)


def _map_segment(path: Path) -> Segment:
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    if size < HEADER or mapped[:8] != MAGIC:
        raise OSError(f"{path} is not a vector segment")
    dim, count = np.frombuffer(mapped, dtype="<u8", count=2, offset=8)
    ids_end = HEADER + 8 * int(count)
    start = ids_end + (-ids_end) % HEADER
    if size < start + 4 * int(count) * int(dim):
        raise OSError(f"{path} is truncated")
    rowids = np.frombuffer(mapped, dtype="<i8", count=int(count), offset=HEADER)
    matrix = np.frombuffer(mapped, dtype="<f4", count=int(count) * int(dim), offset=start)
    return Segment(path.name, rowids, matrix.reshape(int(count), int(dim)))


class VectorIndex:
    """The vectors of one database, searchable with numpy; see the module docstring."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.directory = db.path.with_name(db.path.name + ".vectors")
        self.manifest: Manifest | None = None
        self.segments: list[Segment] = []
        self.rowids = np.zeros(0, dtype=np.int64)

    # -- keeping in step -------------------------------------------------------------

    def _wanted(self) -> tuple[str, int, int, int] | None:
        """(model, dim, generation, rewritten) recorded in the store, or None without vectors."""
        values = {
            r["key"]: r["value"]
            for r in self.db.rows(
                "SELECT key, value FROM meta WHERE key IN (?, ?, ?, ?)",
                ("embed_model", "embed_dim", GENERATION, REWRITTEN),
            )
        }
        if "embed_model" not in values:
            return None
        return (
            values["embed_model"],
            int(values["embed_dim"]),
            int(values.get(GENERATION, 0)),
            int(values.get(REWRITTEN, 0)),
        )

    def refresh(self) -> bool:
        """Bring the in-memory view up to the store's generation; False when there are no
        vectors at all."""
        wanted = self._wanted()
        if wanted is None:
            self._use(None, [])
            return False
        model, dim, generation, _ = wanted
        current = self.manifest
        if current and (current.model, current.dim, current.generation) == (model, dim, generation):
            return True
        for _ in range(3):  # a concurrent sync may remove a segment between two reads
            manifest = self._read_manifest()
            if manifest and (manifest.model, manifest.dim, manifest.generation) == (
                model,
                dim,
                generation,
            ):
                with contextlib.suppress(OSError):
                    self._open(manifest)
                    return True
            try:
                self._open(self._sync())
                return True
            except FileNotFoundError:
                continue
            except OSError:
                break
        self._in_memory()
        return True

    def _use(self, manifest: Manifest | None, segments: list[Segment]) -> None:
        self.manifest = manifest
        self.segments = segments
        self.rowids = (
            np.concatenate([s.rowids for s in segments])
            if segments
            else np.zeros(0, dtype=np.int64)
        )

    def _open(self, manifest: Manifest) -> None:
        known = {s.name: s for s in self.segments}
        segments = [
            known.get(name) or _map_segment(self.directory / name) for name in manifest.segments
        ]
        self._use(manifest, segments)

    def _read_manifest(self) -> Manifest | None:
        try:
            raw = json.loads((self.directory / "manifest.json").read_text(encoding="utf-8"))
            return Manifest(**{**raw, "segments": tuple(raw["segments"])})
        except (OSError, ValueError, TypeError, KeyError):
            return None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.directory.mkdir(mode=0o700, exist_ok=True)
        with open(self.directory / "lock", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _sync(self) -> Manifest:
        """Append or rebuild segments to match the store; returns the new manifest."""
        with self._locked(), self.db.reading():
            wanted = self._wanted()
            assert wanted is not None
            model, dim, generation, rewritten = wanted
            manifest = self._read_manifest()
            if manifest and (manifest.model, manifest.dim, manifest.generation) == (
                model,
                dim,
                generation,
            ):
                return manifest
            appendable = (
                manifest is not None
                and (manifest.model, manifest.dim) == (model, dim)
                and rewritten <= manifest.generation
                and len(manifest.segments) < MAX_SEGMENTS
            )
            after = manifest.max_rowid if appendable and manifest else 0
            names = list(manifest.segments) if appendable and manifest else []
            rowids, matrix = self._read_vectors(after, dim)
            if len(rowids):
                name = f"{generation:012d}-{uuid.uuid4().hex[:8]}.seg"
                _write_segment(self.directory / name, rowids, matrix)
                names.append(name)
            max_rowid = int(rowids[-1]) if len(rowids) else after
            fresh = Manifest(model, dim, generation, max_rowid, tuple(names))
            partial = self.directory / "manifest.partial"
            partial.write_text(fresh.to_json(), encoding="utf-8")
            partial.replace(self.directory / "manifest.json")
            for stale in [*self.directory.glob("*.seg"), *self.directory.glob("*.partial")]:
                if stale.name not in names:
                    stale.unlink(missing_ok=True)
            return fresh

    def _read_vectors(self, after: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """Rowids and vectors of every vector past rowid ``after``, in rowid order."""
        rowids: list[int] = []
        blobs: list[bytes] = []
        for row in self.db.rows(
            "SELECT rowid, embedding FROM memories_vec WHERE rowid > ? ORDER BY rowid", (after,)
        ):
            rowids.append(row["rowid"])
            blobs.append(row["embedding"])
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dim)
        return np.array(rowids, dtype=np.int64), matrix

    def _in_memory(self) -> None:
        """No usable directory (read-only home, full disk): search a copy in memory."""
        wanted = self._wanted()
        assert wanted is not None
        with self.db.reading():
            rowids, matrix = self._read_vectors(0, wanted[1])
        manifest = Manifest(wanted[0], wanted[1], wanted[2], 0, ())
        self._use(manifest, [Segment("memory", rowids, matrix)])

    # -- searching ---------------------------------------------------------------------

    def similarities(self, query: np.ndarray) -> np.ndarray:
        """Cosine similarity of every indexed vector to ``query`` (both L2-normalised),
        in the order of ``self.rowids``."""
        query = np.asarray(query, dtype=np.float32)
        if not self.segments:
            return np.zeros(0, dtype=np.float32)
        return np.concatenate([segment.matrix @ query for segment in self.segments])

    def nearest(
        self, scores: np.ndarray, limit: int, where: MemoryFilter
    ) -> list[tuple[str, float]]:
        """(id, cosine distance) of the ``limit`` best-scoring memories passing ``where``."""
        total = len(scores)
        if total == 0 or limit <= 0:
            return []
        fetch = min(total, limit * OVERFETCH + 64)
        while True:
            top = _top(scores, fetch)
            rowids, best = self.rowids[top].tolist(), scores[top].tolist()
            passing = self._passing(rowids, where)
            hits = [
                (passing[r], 1.0 - s) for r, s in zip(rowids, best, strict=True) if r in passing
            ]
            if len(hits) >= limit or fetch >= total:
                return hits[:limit]
            fetch = min(total, fetch * OVERFETCH)
            if fetch >= FILTER_ALL:
                return self._nearest_filtered(scores, limit, where)

    def _nearest_filtered(
        self, scores: np.ndarray, limit: int, where: MemoryFilter
    ) -> list[tuple[str, float]]:
        """Apply the filter to every row first, for filters that keep few memories."""
        allowed = self._passing(None, where)
        keep = np.isin(self.rowids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
        positions = np.flatnonzero(keep)
        top = positions[_top(scores[positions], min(limit, len(positions)))]
        return [
            (allowed[int(r)], float(1.0 - scores[p]))
            for r, p in zip(self.rowids[top], top, strict=True)
        ]

    def _passing(self, rowids: list[int] | None, where: MemoryFilter) -> dict[int, str]:
        """rowid -> id of the memories (among ``rowids``, or all) that pass ``where``."""
        condition, params = where.where()
        if rowids is None:
            sql = f"SELECT m.rowid AS rowid, m.id AS id FROM memories m WHERE {condition}"
        else:
            sql = (
                f"SELECT m.rowid AS rowid, m.id AS id FROM {BY_ID_LIST} m "
                f"ON m.rowid = wanted.value WHERE {condition}"
            )
            params = [json.dumps(rowids), *params]
        return {r["rowid"]: r["id"] for r in self.db.rows(sql, params)}

    def rank_of(self, scores: np.ndarray, memory_id: str) -> tuple[int, float] | None:
        """(rank among all vectors, similarity) of one memory, or None when it has no vector."""
        rowid = self.db.value("SELECT rowid FROM memories WHERE id = ?", (memory_id,))
        position = int(np.searchsorted(self.rowids, rowid)) if rowid is not None else -1
        if position < 0 or position >= len(self.rowids) or self.rowids[position] != rowid:
            return None
        similarity = float(scores[position])
        return int(np.count_nonzero(scores > similarity)) + 1, similarity


def _top(scores: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` highest scores, best first."""
    if count >= len(scores):
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, count - 1)[:count]
    return part[np.argsort(-scores[part], kind="stable")]


_INDEXES: weakref.WeakKeyDictionary[Database, VectorIndex] = weakref.WeakKeyDictionary()


def vector_index(db: Database) -> VectorIndex:
    """The (per-connection, cached) index of ``db``, brought up to date."""
    index = _INDEXES.get(db)
    if index is None:
        index = _INDEXES[db] = VectorIndex(db)
    index.refresh()
    return index
