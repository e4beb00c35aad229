"""A memory-mapped float32 copy of the store's vectors, for fast nearest-neighbour search.

The vectors live in SQLite (``memories_vec``): that is the truth. sqlite-vec's
PyPI build has no SIMD, so its exact KNN over 100,000 384-d vectors takes
~75 ms, while numpy over the same rows takes a few. This module keeps the
vectors, and one sign bit per dimension of each, as immutable segment files
beside the database (``memctl.db.vectors/``); store/vector_query.py searches them.

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

MAGIC = b"MCTLVEC2"
HEADER = 64
MAX_SEGMENTS = 8


@dataclass(frozen=True)
class Segment:
    """One immutable file of rows: ascending rowids, their vectors' sign bits (word-major:
    ``bits[w]`` is word ``w`` of every row, for the prefilter of store/vector_query.py) and
    their vectors."""

    name: str
    rowids: np.ndarray
    bits: np.ndarray
    matrix: np.ndarray


def sign_bits(matrix: np.ndarray) -> np.ndarray:
    """One bit per dimension (set when positive), as uint64 words: (words, rows)."""
    words = -(-matrix.shape[1] // 64)
    packed = np.packbits(matrix > 0, axis=1)
    padded = np.zeros((matrix.shape[0], words * 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return np.ascontiguousarray(padded.view(np.uint64).T)


@dataclass(frozen=True)
class Manifest:
    model: str
    dim: int
    generation: int
    max_rowid: int
    segments: tuple[str, ...]

    def to_json(self) -> str:
        return json.dumps({**self.__dict__, "segments": list(self.segments)})


def _layout(count: int, dim: int) -> tuple[int, int, int]:
    """Offsets of the rowids, the sign bits and the vectors in a segment file."""
    bits = _aligned(HEADER + 8 * count)
    vectors = _aligned(bits + 8 * count * -(-dim // 64))
    return HEADER, bits, vectors


def _aligned(offset: int) -> int:
    return offset + (-offset) % HEADER


def _write_segment(path: Path, rowids: np.ndarray, matrix: np.ndarray) -> None:
    count, dim = matrix.shape
    _, bits_at, vectors_at = _layout(count, dim)
    partial = path.with_suffix(".partial")
    with open(partial, "wb") as out:
        out.write((MAGIC + np.array([dim, count], dtype="<u8").tobytes()).ljust(HEADER, b"\0"))
        out.write(rowids.astype("<i8").tobytes())
        out.seek(bits_at)
        out.write(sign_bits(matrix).astype("<u8").tobytes())
        out.seek(vectors_at)
        out.write(np.ascontiguousarray(matrix, dtype="<f4").tobytes())
    partial.replace(path)


def _map_segment(path: Path) -> Segment:
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    if size < HEADER or mapped[:8] != MAGIC:
        raise OSError(f"{path} is not a vector segment")
    dim, count = (int(v) for v in np.frombuffer(mapped, dtype="<u8", count=2, offset=8))
    ids_at, bits_at, vectors_at = _layout(count, dim)
    if size < vectors_at + 4 * count * dim:
        raise OSError(f"{path} is truncated")
    words = -(-dim // 64)
    return Segment(
        path.name,
        np.frombuffer(mapped, dtype="<i8", count=count, offset=ids_at),
        np.frombuffer(mapped, dtype="<u8", count=count * words, offset=bits_at).reshape(
            words, count
        ),
        np.frombuffer(mapped, dtype="<f4", count=count * dim, offset=vectors_at).reshape(
            count, dim
        ),
    )


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
        self.starts = np.cumsum([0] + [len(s.rowids) for s in segments])

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
        self._use(manifest, [Segment("memory", rowids, sign_bits(matrix), matrix)])


_INDEXES: weakref.WeakKeyDictionary[Database, VectorIndex] = weakref.WeakKeyDictionary()


def vector_index(db: Database) -> VectorIndex:
    """The (per-connection, cached) index of ``db``, brought up to date."""
    index = _INDEXES.get(db)
    if index is None:
        index = _INDEXES[db] = VectorIndex(db)
    index.refresh()
    return index
