"""What a command works with: the settings, the database and the embedder, opened lazily."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING

from memctl.config import Settings
from memctl.store.database import Database
from memctl.store.scopes import adopt

if TYPE_CHECKING:
    import numpy as np

    from memctl.embed import Embedder


class Context:
    """Opens the database on first use and the embedder only when vectors are needed."""

    def __init__(
        self, settings: Settings, embedder: Embedder | None = None, door: str = "cli"
    ) -> None:
        self.settings = settings
        self._embedder = embedder
        self.door = door  # cli, mcp, hook or ui: the runs of its edits and undos name it
        self._busy_timeout_ms: int = settings.store_busy_timeout_ms
        # the texts of the last query embedded and their vectors: a recall over other scopes
        # right after this one's (the hint that they hold clear matches) embeds nothing again
        self._last_query: tuple[tuple[str, ...], np.ndarray] | None = None

    @cached_property
    def db(self) -> Database:
        """The database; on first sight of a project that got a git remote, its old path
        scope becomes an alias of the new one (``store.scopes``), unless the store is on a
        read-only disk: it is read as it is (adopting is a write, and would fail every read)."""
        db = Database.open(self.settings.db_path, self._busy_timeout_ms)
        try:
            if self.settings.project_scope != self.settings.path_scope and not db.frozen:
                adopt(db, self.settings.path_scope, self.settings.project_scope)
        except BaseException:
            db.close()
            raise
        return db

    @contextmanager
    def lock_wait(self, busy_timeout_ms: int) -> Iterator[None]:
        """Inside, opening the database and taking its write lock wait at most this long."""
        previous, self._busy_timeout_ms = self._busy_timeout_ms, busy_timeout_ms
        if "db" in self.__dict__:
            self.db.set_busy_timeout(busy_timeout_ms)
        try:
            yield
        finally:
            self._busy_timeout_ms = previous
            if "db" in self.__dict__:
                self.db.set_busy_timeout(previous)

    def elsewhere(self, settings: Settings) -> Context:
        """A context for other settings (another home) sharing this one's embedder."""
        return Context(settings, self._embedder, self.door)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from memctl.embed import get_embedder

            self._embedder = get_embedder(self.settings)
        return self._embedder

    def query_vectors(self, texts: list[str]) -> np.ndarray:
        """The embedder's vectors of a query's texts; the same texts as the last query's
        again take its vectors."""
        if self._last_query is None or self._last_query[0] != tuple(texts):
            self._last_query = (tuple(texts), self.embedder.embed(texts))
        return self._last_query[1]

    def forget_query(self) -> None:
        """Drop the last query's texts and vectors (``query_vectors``): a forget landed."""
        self._last_query = None

    def vectors(self, texts: list[str]) -> list[bytes]:
        """Embed texts as sqlite-vec blobs, refusing to mix models within one store. Text a
        memory of the store already holds (by content hash) takes that memory's vector, and
        text given twice is embedded once: only new text costs the model."""
        embedder = self.embedder
        self.db.ensure_vector_model(embedder.name, embedder.dim)
        if not texts:
            return []
        from memctl.model import content_hash
        from memctl.store.memories import vectors_for_hashes

        digests = [content_hash(text) for text in texts]
        known = vectors_for_hashes(self.db, set(digests))
        new = {d: t for d, t in zip(digests, texts, strict=True) if d not in known}
        if new:
            made = embedder.embed(list(new.values()))
            known.update((d, row.tobytes()) for d, row in zip(new, made, strict=True))
        return [known[d] for d in digests]

    def close(self) -> None:
        if "db" in self.__dict__:
            self.db.close()
            del self.__dict__["db"]

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
