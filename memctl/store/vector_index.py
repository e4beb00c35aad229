"""A memory-mapped copy of the store's vectors, for fast nearest-neighbour search.

The vectors live in SQLite (``memories_vec``; session messages' in
``message_vectors``, as int8; stored questions' in ``memory_questions``): that is the
truth. sqlite-vec's PyPI build has no SIMD, so its exact KNN over 100,000 384-d vectors takes
~75 ms, while numpy over the same rows takes a few. This module keeps the
vectors, and one sign bit per dimension of each, as immutable segment files
beside the database (``memctl.db.vectors/``, ``memctl.db.message-vectors/``, the
stored questions' ``memctl.db.question-vectors/``);
store/vector_query.py searches them. A ``VectorSource`` names the table, the
directory, the ``meta`` keys and the stored type of one such set of vectors.

Keeping in step: every vector write bumps ``vectors_generation`` in ``meta``
in its own transaction (Database.note_vector_write); a replaced or removed
vector also journals its rowid there (the latest 256), and a new model marks
everything rewritten. A reader whose manifest is older than the generation
syncs under a file lock: it writes one small segment of the rows appended past
the manifest's highest rowid and of the journaled ones, and marks their old
copies dead in the manifest. Too many segments or dead rows compact into one;
a change the journal no longer holds, or a new model, rebuilds from SQLite.
Segments are never changed in place, so a concurrent reader never sees half a
write; a manifest is replaced atomically.

numpy is imported at module level: only the recall path imports this module.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import mmap
import os
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from memctl.config.files import create_private, open_private, write_private
from memctl.store.database import VECTORS_CHANGES, VECTORS_GENERATION, VECTORS_REWRITTEN, Database
from memctl.store.migrations import (
    MESSAGE_VECTORS_GENERATION,
    MESSAGE_VECTORS_REWRITTEN,
    QUESTION_VECTORS_CHANGES,
    QUESTION_VECTORS_GENERATION,
    QUESTION_VECTORS_REWRITTEN,
)

MAGIC = b"MCTLVEC2"
HEADER = 64
MAX_SEGMENTS = 8
# Dead rows (replaced or removed) beyond this share of all rows: compact into one segment.
DEAD_SHARE = 0.2
GATHER_CHUNK = 8192


@dataclass(frozen=True)
class VectorSource:
    """One set of vectors: its table (rowid, embedding), the directory of its segments
    beside the database, its ``meta`` keys and how a vector is stored (``dtype``: float32,
    or int8 scaled to its largest component, store/message_vectors.py ``quantised``)."""

    table: str
    suffix: str
    generation: str
    rewritten: str
    changes: str | None
    dtype: str


MEMORY_VECTORS = VectorSource(
    "memories_vec", ".vectors", VECTORS_GENERATION, VECTORS_REWRITTEN, VECTORS_CHANGES, "<f4"
)
# Message vectors keep no journal: a removed one (a forgotten message) rewrites the index.
MESSAGE_VECTORS = VectorSource(
    "message_vectors",
    ".message-vectors",
    MESSAGE_VECTORS_GENERATION,
    MESSAGE_VECTORS_REWRITTEN,
    None,
    "i1",
)
# The questions stored with memories (store/questions.py), as the store's model made them
# (the view of m024); a removed one is journaled, as a memory's vector is.
QUESTION_VECTORS = VectorSource(
    "memory_question_vectors",
    ".question-vectors",
    QUESTION_VECTORS_GENERATION,
    QUESTION_VECTORS_REWRITTEN,
    QUESTION_VECTORS_CHANGES,
    "<f4",
)


@dataclass(frozen=True)
class Segment:
    """One immutable file of rows: ascending rowids, their vectors' sign bits (word-major:
    ``bits[w]`` is word ``w`` of every row, for the prefilter of store/vector_query.py) and
    their vectors."""

    name: str
    rowids: np.ndarray
    bits: np.ndarray
    matrix: np.ndarray
    mapped: mmap.mmap | None = None  # the file's mapping (None: rows held in memory)
    # each int8 row's length (None for float32 rows, unit length already, and for an int8
    # segment written before lengths were kept: then they are measured when scored)
    lengths: np.ndarray | None = None


def sign_bits(matrix: np.ndarray) -> np.ndarray:
    """One bit per dimension (set when positive), as uint64 words: (words, rows)."""
    words = -(-matrix.shape[1] // 64)
    packed = np.packbits(matrix > 0, axis=1)
    padded = np.zeros((matrix.shape[0], words * 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return np.ascontiguousarray(padded.view(np.uint64).T)


@dataclass(frozen=True)
class Manifest:
    """Which segments make the index, as of which generation; ``dead`` lists, per segment,
    the offsets of rows replaced by a later segment or removed."""

    model: str
    dim: int
    generation: int
    max_rowid: int
    segments: tuple[str, ...]
    dead: dict[str, list[int]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({**self.__dict__, "segments": list(self.segments)})

    def matches(self, model: str, dim: int, generation: int) -> bool:
        return (self.model, self.dim, self.generation) == (model, dim, generation)


def _layout(count: int, dim: int, itemsize: int = 4) -> tuple[int, int, int, int]:
    """Offsets of the rowids, the sign bits, the vectors and (int8 only) the rows' lengths
    as float32 in a segment file (its header: the magic, then dim, count, the vectors' item
    size, 0 for float32, and whether the lengths follow the vectors, as u8 each)."""
    bits = _aligned(HEADER + 8 * count)
    vectors = _aligned(bits + 8 * count * -(-dim // 64))
    return HEADER, bits, vectors, _aligned(vectors + itemsize * count * dim)


def row_lengths(matrix: np.ndarray) -> np.ndarray:
    """Each row's length, as float32 (int8 rows are scaled to their largest component)."""
    block = matrix.astype(np.float32)
    return np.sqrt(np.einsum("ij,ij->i", block, block)).astype("<f4")


def _aligned(offset: int) -> int:
    return offset + (-offset) % HEADER


def _write_segment(
    path: Path, rowids: np.ndarray, dim: int, chunks: Iterable[np.ndarray], dtype: str = "<f4"
) -> None:
    """Write a segment of ``rowids`` whose vectors come in ``chunks`` (in order), so that the
    whole matrix need never be in memory at once."""
    count = len(rowids)
    itemsize = np.dtype(dtype).itemsize
    _, bits_at, vectors_at, lengths_at = _layout(count, dim, itemsize)
    bits = np.zeros((-(-dim // 64), count), dtype="<u8")
    lengths = np.ones(count, dtype="<f4")
    partial = path.with_suffix(".partial")
    scaled = dtype != "<f4"
    with create_private(partial) as out:
        head = np.array([dim, count, itemsize if scaled else 0, int(scaled)], dtype="<u8")
        out.write((MAGIC + head.tobytes()).ljust(HEADER, b"\0"))
        out.write(rowids.astype("<i8").tobytes())
        out.seek(vectors_at)
        done = 0
        for chunk in chunks:
            bits[:, done : done + len(chunk)] = sign_bits(chunk)
            if scaled:
                lengths[done : done + len(chunk)] = row_lengths(chunk)
            out.write(np.ascontiguousarray(chunk, dtype=dtype).tobytes())
            done += len(chunk)
        out.seek(bits_at)
        out.write(bits.tobytes())
        if scaled:
            out.seek(lengths_at)
            out.write(lengths.tobytes())
    partial.replace(path)


def _gather(
    matrices: list[np.ndarray], source: np.ndarray, offsets: np.ndarray
) -> Iterator[np.ndarray]:
    """Row ``offsets[i]`` of ``matrices[source[i]]`` for every i, a chunk of rows at a time."""
    for start in range(0, len(source), GATHER_CHUNK):
        part = slice(start, start + GATHER_CHUNK)
        chunk = np.empty((len(source[part]), matrices[0].shape[1]), dtype=matrices[0].dtype)
        for number, matrix in enumerate(matrices):
            mine = np.flatnonzero(source[part] == number)
            chunk[mine] = matrix[offsets[part][mine]]
        yield chunk


def _map_segment(path: Path) -> Segment:
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    if size < HEADER or mapped[:8] != MAGIC:
        raise OSError(f"{path} is not a vector segment")
    head = np.frombuffer(mapped, dtype="<u8", count=4, offset=8)
    dim, count, itemsize, has_lengths = (int(v) for v in head)
    dtype = {0: "<f4", 1: "i1"}.get(itemsize)
    if dtype is None:
        raise OSError(f"{path} is not a vector segment")
    ids_at, bits_at, vectors_at, lengths_at = _layout(count, dim, np.dtype(dtype).itemsize)
    end = lengths_at + 4 * count if has_lengths else vectors_at + itemsize * count * dim
    if size < end:
        raise OSError(f"{path} is truncated")
    words = -(-dim // 64)
    return Segment(
        path.name,
        np.frombuffer(mapped, dtype="<i8", count=count, offset=ids_at),
        np.frombuffer(mapped, dtype="<u8", count=count * words, offset=bits_at).reshape(
            words, count
        ),
        np.frombuffer(mapped, dtype=dtype, count=count * dim, offset=vectors_at).reshape(
            count, dim
        ),
        mapped if isinstance(mapped, mmap.mmap) else None,
        np.frombuffer(mapped, dtype="<f4", count=count, offset=lengths_at) if has_lengths else None,
    )


@dataclass(frozen=True)
class Wanted:
    """The store's vector bookkeeping (meta): model, generation, and what changed."""

    model: str
    dim: int
    generation: int
    rewritten: int
    changes: list[tuple[int, int]]


class VectorIndex:
    """The vectors of one database, searchable with numpy; see the module docstring."""

    def __init__(self, db: Database, source: VectorSource = MEMORY_VECTORS) -> None:
        self.db = db
        self.source = source
        self.directory = db.path.with_name(db.path.name + source.suffix)
        self.manifest: Manifest | None = None
        self.segments: list[Segment] = []
        self.rowids = np.zeros(0, dtype=np.int64)
        self.starts = np.zeros(1, dtype=np.int64)
        self.dead = np.zeros(0, dtype=bool)

    # -- keeping in step -------------------------------------------------------------

    def _wanted(self) -> Wanted | None:
        """What the store holds now, or None when it has no vectors."""
        source = self.source
        keys = ("embed_model", "embed_dim", source.generation, source.rewritten, source.changes)
        values = {
            r["key"]: r["value"]
            for r in self.db.rows("SELECT key, value FROM meta WHERE key IN (?, ?, ?, ?, ?)", keys)
        }
        if "embed_model" not in values:
            return None
        changes = json.loads(values.get(source.changes or "", "[]"))
        return Wanted(
            values["embed_model"],
            int(values["embed_dim"]),
            int(values.get(source.generation, 0)),
            int(values.get(source.rewritten, 0)),
            [(int(g), int(r)) for g, r in changes],
        )

    def refresh(self) -> bool:
        """Bring the in-memory view up to the store's generation; False when there are no
        vectors at all."""
        wanted = self._wanted()
        if wanted is None:
            self._use(None, [])
            return False
        target = (wanted.model, wanted.dim, wanted.generation)
        if self.manifest and self.manifest.matches(*target):
            return True
        for _ in range(3):  # a concurrent sync may remove a segment between two reads
            manifest = self._read_manifest()
            if manifest and manifest.matches(*target):
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
        self.dead = np.zeros(len(self.rowids), dtype=bool)
        for start, segment in zip(self.starts, segments, strict=False):
            offsets = (manifest.dead if manifest else {}).get(segment.name, [])
            self.dead[start + np.asarray(offsets, dtype=np.int64)] = True

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

    def _write_manifest(self, manifest: Manifest) -> None:
        """Replace the manifest atomically, then remove the files it no longer names."""
        write_private(self.directory / "manifest.json", manifest.to_json())
        for stale in [*self.directory.glob("*.seg"), *self.directory.glob("*.partial")]:
            if stale.name not in manifest.segments:
                stale.unlink(missing_ok=True)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        lock = open_private(self.directory / "lock", os.O_RDWR | os.O_CREAT)
        with os.fdopen(lock, "r+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _sync(self) -> Manifest:
        """Catch the segments up with the store (see the module docstring); returns the new
        manifest."""
        with self._locked(), self.db.reading():
            wanted = self._wanted()
            assert wanted is not None
            old = self._read_manifest()
            if old and old.matches(wanted.model, wanted.dim, wanted.generation):
                return old
            incremental = (
                old is not None
                and (old.model, old.dim) == (wanted.model, wanted.dim)
                and wanted.rewritten <= old.generation
            )
            fresh = self._patch(old, wanted) if incremental and old else self._rebuild(wanted)
            self._write_manifest(fresh)
            return fresh

    def _chunks(self, positions: np.ndarray) -> Iterator[np.ndarray]:
        """The vectors at ``positions`` (of ``self.rowids``), a chunk at a time."""
        segment_of = np.searchsorted(self.starts, positions, side="right") - 1
        offsets = positions - self.starts[segment_of]
        return _gather([s.matrix for s in self.segments], segment_of, offsets)

    def positions_of(self, rowids: np.ndarray) -> np.ndarray:
        """Positions of the live rows holding any of ``rowids``, ascending: a binary search
        in each segment (their rowids ascend) instead of a pass over every row."""
        wanted = distinct(rowids)
        found = [np.zeros(0, dtype=np.int64)]
        for start, segment in zip(self.starts, self.segments, strict=False):
            at = np.searchsorted(segment.rowids, wanted)
            inside = at < len(segment.rowids)
            at = at[inside][segment.rowids[at[inside]] == wanted[inside]]
            found.append(start + at)
        positions = np.sort(np.concatenate(found))
        return positions[~self.dead[positions]]

    def release_pages(self) -> None:
        """Let the system take back the pages of the segments this process has read (they
        stay in the page cache; the next read maps them again): for a caller that copied
        what it needs, so the copy and the mapping do not both count against its memory."""
        for segment in self.segments:
            if segment.mapped is not None and hasattr(mmap, "MADV_DONTNEED"):
                segment.mapped.madvise(mmap.MADV_DONTNEED)

    def _live_positions(self, rowids: np.ndarray | None = None) -> np.ndarray:
        """Positions of the live rows (of ``rowids``, when given), in rowid order."""
        alive = np.flatnonzero(~self.dead)
        if rowids is not None:
            alive = alive[np.isin(self.rowids[alive], rowids)]
        return alive[np.argsort(self.rowids[alive], kind="stable")]

    def live_vectors(self, rowids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rowids, vectors) of those of ``rowids`` the index holds, in rowid order; copied a
        chunk at a time, so no second full-size temporary is made."""
        if not len(self.rowids):
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        positions = self._live_positions(rowids)
        matrix = np.empty(
            (len(positions), self.segments[0].matrix.shape[1]), dtype=self.segments[0].matrix.dtype
        )
        done = 0
        for chunk in self._chunks(positions):
            matrix[done : done + len(chunk)] = chunk
            done += len(chunk)
        return self.rowids[positions], matrix

    def compact(self) -> bool:
        """Rewrite the live rows as one segment when there are several or dead rows;
        whether it did. The rows are copied from the segments, a chunk at a time."""
        if not self.refresh() or self.manifest is None:
            return False
        if len(self.manifest.segments) <= 1 and not self.manifest.dead:
            return False
        with self._locked(), self.db.reading():
            wanted = self._wanted()
            assert wanted is not None
            current = self._read_manifest()
            if (
                self.segments
                and current == self.manifest
                and current.matches(wanted.model, wanted.dim, wanted.generation)
            ):
                positions = self._live_positions()
                rowids = self.rowids[positions]
                name = self._new_segment(wanted, rowids, self._chunks(positions))
                max_rowid = int(rowids.max()) if len(rowids) else 0
                fresh = Manifest(wanted.model, wanted.dim, wanted.generation, max_rowid, (name,))
            else:
                fresh = self._rebuild(wanted)
            self._write_manifest(fresh)
        self._open(fresh)
        return True

    def _rebuild(self, wanted: Wanted) -> Manifest:
        rowids, chunks = self._read_chunks(wanted.dim, after=0)
        names = [self._new_segment(wanted, rowids, chunks)] if len(rowids) else []
        max_rowid = int(rowids.max()) if len(rowids) else 0
        return Manifest(wanted.model, wanted.dim, wanted.generation, max_rowid, tuple(names))

    def _patch(self, old: Manifest, wanted: Wanted) -> Manifest:
        """A segment of the appended and changed rows; the old copies of changed rows die.
        Too many segments or dead rows: everything live is compacted into one segment."""
        changed = sorted({rowid for g, rowid in wanted.changes if g > old.generation})
        rowids, matrix = self._read_vectors(wanted.dim, old.max_rowid, changed)
        known = {s.name: s for s in self.segments}  # mapped once: a second map counts twice
        segments = [known.get(name) or _map_segment(self.directory / name) for name in old.segments]
        gone = {
            s.name: sorted(
                set(old.dead.get(s.name, ()))
                | set(np.flatnonzero(np.isin(s.rowids, changed)).tolist())
            )
            for s in segments
        }
        live = [np.delete(s.rowids, gone[s.name]) for s in segments]
        # The highest rowid still holding a vector: SQLite gives a removed highest rowid to
        # the next memory, whose vector must then count as an append.
        max_rowid = int(max((ids.max() for ids in [*live, rowids] if len(ids)), default=0))
        dead_rows = sum(map(len, gone.values()))
        if len(segments) < MAX_SEGMENTS and dead_rows <= DEAD_SHARE * sum(map(len, live)):
            names = [s.name for s in segments]
            if len(rowids):
                names.append(self._new_segment(wanted, rowids, [matrix]))
            dead = {name: offsets for name, offsets in gone.items() if offsets}
            return Manifest(
                wanted.model, wanted.dim, wanted.generation, max_rowid, tuple(names), dead
            )
        kept = [np.delete(np.arange(len(s.rowids)), gone[s.name]) for s in segments]
        sources = [*(s.matrix for s in segments), matrix]
        all_ids = np.concatenate([*live, rowids])
        source = np.concatenate([np.full(len(ids), n) for n, ids in enumerate([*live, rowids])])
        offsets = np.concatenate([*kept, np.arange(len(rowids))])
        order = np.argsort(all_ids, kind="stable")
        chunks = _gather(sources, source[order], offsets[order])
        name = self._new_segment(wanted, all_ids[order], chunks)
        return Manifest(wanted.model, wanted.dim, wanted.generation, max_rowid, (name,))

    def _new_segment(self, wanted: Wanted, rowids: np.ndarray, chunks: Iterable[np.ndarray]) -> str:
        import uuid  # here: it imports platform (~5 ms), which a recall reading the index needs not

        name = f"{wanted.generation:012d}-{uuid.uuid4().hex[:8]}.seg"
        _write_segment(self.directory / name, rowids, wanted.dim, chunks, self.source.dtype)
        return name

    def _read_vectors(
        self, dim: int, after: int, also: list[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rowids and vectors past rowid ``after``, then those of the rowids in ``also`` that
        still have a vector; in rowid order."""
        rowids, chunks = self._read_chunks(dim, after, also)
        empty = np.zeros((0, dim), dtype=self.source.dtype)
        return rowids, np.concatenate(chunks) if chunks else empty

    def _read_chunks(
        self, dim: int, after: int, also: list[int] | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``_read_vectors`` as chunks of rows, so that the store's rows and a second copy
        of them are never both in memory."""
        ids, chunks = [], []
        table, dtype = self.source.table, self.source.dtype
        # ORDER BY would make vec0 sort: rowids come in order, else they are sorted here
        for batch in self.db.batches(
            f"SELECT rowid, embedding FROM {table} WHERE rowid > ?", (after,)
        ):
            ids.append(np.fromiter((r[0] for r in batch), dtype=np.int64, count=len(batch)))
            chunks.append(
                np.frombuffer(b"".join(r[1] for r in batch), dtype=dtype).reshape(-1, dim)
            )
        for rowid in also or []:
            if rowid <= after:
                for r in self.db.tuples(
                    f"SELECT rowid, embedding FROM {table} WHERE rowid = ?", (rowid,)
                ):
                    ids.append(np.array([r[0]], dtype=np.int64))
                    chunks.append(np.frombuffer(r[1], dtype=dtype).reshape(1, dim))
        rowids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
        if np.any(rowids[1:] < rowids[:-1]):
            order = np.argsort(rowids, kind="stable")
            return rowids[order], [np.concatenate(chunks)[order]]
        return rowids, chunks

    def _in_memory(self) -> None:
        """No usable directory (read-only home, full disk): search a copy in memory."""
        wanted = self._wanted()
        assert wanted is not None
        with self.db.reading():
            rowids, matrix = self._read_vectors(wanted.dim, after=0)
        manifest = Manifest(wanted.model, wanted.dim, wanted.generation, 0, ())
        lengths = row_lengths(matrix) if matrix.dtype != np.float32 else None
        self._use(manifest, [Segment("memory", rowids, sign_bits(matrix), matrix, None, lengths)])


_INDEXES: weakref.WeakKeyDictionary[Database, dict[VectorSource, VectorIndex]] = (
    weakref.WeakKeyDictionary()
)


def vector_index(db: Database, source: VectorSource = MEMORY_VECTORS) -> VectorIndex:
    """The (per-connection, cached) index of ``db``'s ``source`` vectors, brought up to date."""
    indexes = _INDEXES.setdefault(db, {})
    index = indexes.get(source)
    if index is None:
        index = indexes[source] = VectorIndex(db, source)
    index.refresh()
    return index


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending: ``np.unique`` without its import of ``numpy.ma``
    (about 20 ms of CPU the first time, in every recall process and resident child)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
