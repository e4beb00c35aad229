"""Vectors for the calls recall shows beside a turn's said message (retrieve/turns.py),
made on the slow path with the messages' own (ingest/message_vectors.py): the worker after
each session's ingest job, and ``memctl maintain`` for a store made before (upkeep), a
bounded number per run. Embedded at query time, a call cost a recall ~17 ms of CPU, about
+20 ms at the median and +100 ms at the 90th percentile (docs/benchmarks.md, "Call vectors
kept at ingest"). They are stored by their message and never searched: searched, call notes
came closer to questions than their answers ("Tool notes that answer")."""

from __future__ import annotations

from memctl.embed import BATCH_TEXTS, Embedder
from memctl.ingest.calls_shown import calls_shown
from memctl.store.database import Database


def embed_calls(db: Database, embedder: Embedder, limit: int, session_id: str | None = None) -> int:
    """Embed the shown calls of up to ``limit`` messages of tool notes (of one session, or the
    newest of any) that have no row yet, a batch per transaction; how many messages were
    done. A batch a forget or a redact overtook while it was embedded is read again."""
    import numpy as np

    from memctl.store.call_vectors import add_call_vectors, uncalled
    from memctl.store.events import forgotten_since, last_event

    done = 0
    while done < limit:
        since = last_event(db)
        batch = uncalled(db, min(BATCH_TEXTS, limit - done), session_id)
        if not batch:
            break
        shown = [(rowid, [text for _, text in calls_shown(content)]) for rowid, content in batch]
        texts = [text for _, calls in shown for text in calls]
        vectors = iter(embedder.embed(texts) if texts else [])
        rows = [
            (rowid, b"".join(np.asarray(next(vectors), dtype=np.float32).tobytes() for _ in calls))
            for rowid, calls in shown
        ]
        with db.atomic():
            if forgotten_since(db, since):
                continue
            if texts:
                db.ensure_vector_model(embedder.name, embedder.dim)
            add_call_vectors(db, rows)
        done += len(batch)
    return done
