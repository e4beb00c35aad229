"""Rebuild every vector with the configured embedder (after a model change)."""

from __future__ import annotations

from collections.abc import Callable

from memctl.context import Context
from memctl.embed import BATCH_TEXTS
from memctl.store.meaning import drop_plain_vectors
from memctl.store.memories import all_contents
from memctl.store.noise import noise_contents, set_noise_vector
from memctl.store.writes import Writer


def reembed(ctx: Context, progress: Callable[[int, int], None] | None = None) -> int:
    """Drop the vector table, re-create it for the configured model and fill it again.

    Learned noise vectors are re-made too. Runs in one transaction:
    interrupted, the store keeps its old vectors. Memories go longest first, so
    each batch pads its texts to a length close to theirs (the embedder sorts only
    within a call) and a time left estimated from the rate so far errs long, not short.
    Returns the number of memories embedded.
    """
    embedder = ctx.embedder
    rows = sorted(all_contents(ctx.db), key=lambda row: len(row[1]), reverse=True)
    previous = ctx.db.vector_model()
    writer = Writer(ctx.db)
    with ctx.db.atomic():
        ctx.db.create_vector_table(embedder.name, embedder.dim)
        drop_plain_vectors(ctx.db)  # the next maintain names the memories again
        for start in range(0, len(rows), BATCH_TEXTS):
            batch = rows[start : start + BATCH_TEXTS]
            vectors = embedder.embed([content for _, content in batch])
            writer.put_vectors(
                [(memory_id, v.tobytes()) for (memory_id, _), v in zip(batch, vectors, strict=True)]
            )
            if progress:
                progress(min(start + BATCH_TEXTS, len(rows)), len(rows))
        noise = noise_contents(ctx.db)
        if noise:
            vectors = embedder.embed([content for _, content in noise])
            for (noise_id, _), vector in zip(noise, vectors, strict=True):
                set_noise_vector(ctx.db, noise_id, embedder.name, vector.tobytes())
        writer.reembedded(
            len(rows), **{"from": previous[0] if previous else None, "to": embedder.name}
        )
    return len(rows)
