"""Embedders turn texts into L2-normalised float32 vectors.

Only this package talks to embedding models. numpy and model code are
imported lazily so that commands without vectors stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

    from memctl.config import Settings


# Texts a long write (re-embed, upkeep, sync import) embeds per call: enough for the
# embedder's own length-sorted batching, few enough that its progress bar moves.
BATCH_TEXTS = 64


class Embedder(Protocol):
    """What the store and the pipelines need from an embedding model."""

    @property
    def name(self) -> str:
        """Stable identifier recorded in the store, e.g. ``local:all-MiniLM-L6-v2``."""
        ...

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return a float32 array of shape (len(texts), dim), each row L2-normalised."""
        ...


def get_embedder(settings: Settings) -> Embedder:
    """The embedder the settings ask for."""
    if settings.embedder == "hash":
        from memctl.embed.hashed import HashEmbedder

        return HashEmbedder()
    if settings.embedder == "ollama":
        from memctl.embed.ollama import OllamaEmbedder

        return OllamaEmbedder(
            host=settings.ollama_host,
            model=settings.ollama_embed_model,
            timeout=settings.ollama_timeout,
            batch_size=settings.embed_batch_size,
        )
    from memctl.embed.local import LocalEmbedder
    from memctl.embed.model_files import installed_model_dir, packed_cache_dir, wheel_model_dir

    model_dir = settings.embed_model_path
    if model_dir is None and wheel_model_dir() is None:
        model_dir = installed_model_dir(settings.home)
    return LocalEmbedder(
        model_dir=model_dir, batch_size=settings.embed_batch_size, cache_dir=packed_cache_dir()
    )
