"""The embedding model: install it, say where it is and what made the store's vectors,
re-embed the store after a change of model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from memctl.context import Context


def install(wheel: Path | None = None) -> Path:
    """Fetch the default model's wheel (or unpack ``wheel``) into the per-user cache."""
    from memctl.embed.install import install_model
    from memctl.embed.model_files import default_model_dir

    return install_model(default_model_dir(), wheel)


def info(ctx: Context) -> dict[str, Any]:
    """Which embedder is configured, where its files are, and what made the store's vectors."""
    from memctl.embed.model_files import (
        default_model_dir,
        has_model_files,
        home_model_dir,
        packed_cache_dir,
        wheel_model_dir,
    )

    settings = ctx.settings
    user_copy, home_copy = default_model_dir(), home_model_dir(settings.home)
    recorded = ctx.db.vector_model()
    return {
        "embedder": settings.embedder,
        "ollama_model": settings.ollama_embed_model if settings.embedder == "ollama" else None,
        "local_model_wheel": str(wheel_model_dir()) if wheel_model_dir() else None,
        "local_model_cache": str(user_copy) if has_model_files(user_copy) else None,
        "local_model_home": str(home_copy) if has_model_files(home_copy) else None,
        "packed_weights": str(packed_cache_dir()),
        "store_vectors": f"{recorded[0]} ({recorded[1]}-d)" if recorded else None,
    }


def reembed(ctx: Context, progress: Callable[[int, int], None] | None = None) -> int:
    """Rebuild every vector with the configured embedder; the number of memories."""
    from memctl.maintain.reembed import reembed as run

    return run(ctx, progress)
