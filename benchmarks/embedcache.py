"""Embeddings of identical texts computed once per benchmark run, optionally kept on disk.

LongMemEval's haystacks share most of their sessions, so the same turn is
ingested for many questions; embedding it once is what makes the benchmark
run in minutes. The on-disk file is append-only: records of a 32-byte
SHA-256 of the text followed by the vector as float32 bytes (the form
sqlite-vec stores), one file per model, so a rerun embeds nothing it has
embedded before. A torn last record (an interrupted run) is ignored.
"""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memctl.config import Settings
    from memctl.embed import Embedder

DIGEST_BYTES = 32


def text_digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    """Vectors (as sqlite-vec blobs) of texts, keyed by content hash; counts hits and misses."""

    def __init__(self, embedder: Embedder, directory: Path | None = None) -> None:
        self.embedder = embedder
        self.vectors: dict[bytes, bytes] = {}
        self.hits = 0
        self.misses = 0
        self.embed_seconds = 0.0
        self.path: Path | None = None
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
            safe = re.sub(r"[^A-Za-z0-9._-]+", "_", embedder.name)
            self.path = directory / f"{safe}-{embedder.dim}.vectors"
            self._load()

    @property
    def record_bytes(self) -> int:
        return DIGEST_BYTES + 4 * self.embedder.dim

    def _load(self) -> None:
        assert self.path is not None
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        size = self.record_bytes
        whole = len(data) - len(data) % size
        if whole != len(data):
            with self.path.open("r+b") as torn:
                torn.truncate(whole)
        for start in range(0, whole, size):
            record = data[start : start + size]
            self.vectors[record[:DIGEST_BYTES]] = record[DIGEST_BYTES:]

    def holds(self, texts: list[str]) -> bool:
        """Whether every one of ``texts`` has its vector here already."""
        return all(text_digest(t) in self.vectors for t in texts)

    def embed(self, texts: list[str]) -> list[bytes]:
        """One vector per text, embedding only texts not seen before (each once)."""
        digests = [text_digest(t) for t in texts]
        missing: dict[bytes, str] = {}
        for digest, text in zip(digests, texts, strict=True):
            if digest not in self.vectors:
                missing.setdefault(digest, text)
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        if missing:
            began = time.perf_counter()
            matrix = self.embedder.embed(list(missing.values()))
            self.embed_seconds += time.perf_counter() - began
            fresh = {d: row.tobytes() for d, row in zip(missing, matrix, strict=True)}
            self.vectors.update(fresh)
            self._append(fresh)
        return [self.vectors[d] for d in digests]

    def _append(self, fresh: dict[bytes, bytes]) -> None:
        if self.path is None:
            return
        with self.path.open("ab") as out:
            out.write(b"".join(digest + vector for digest, vector in fresh.items()))


def open_cache(settings: Settings, directory: Path | None) -> EmbeddingCache:
    """A cache over the embedder ``settings`` configure (loaded lazily, on first miss)."""
    from memctl.embed import get_embedder

    return EmbeddingCache(get_embedder(settings), directory)
