"""Stage: the facts of one batch deduplicated among themselves, before reconciling.

Reconcile decides each fact against the memories already stored, so two
copies of one fact in a batch (a sentence repeated in a long document, the
same custom instructions at the top of every conversation of a chat export)
would both be created: on an empty store nothing is stored to catch either.
A fact with the same words as an earlier one of the batch, or at least
``reconcile.duplicate_similarity`` similar to one, is dropped and traced.
"""

from __future__ import annotations

import numpy as np

from memctl.ingest.facts import Fact
from memctl.ingest.reconcile_rules import normalised
from memctl.ingest.run import Run


def dedupe(run: Run, facts: list[Fact]) -> list[Fact]:
    trace = run.stage("dedupe")
    threshold = run.settings.reconcile_duplicate_similarity
    kept: list[Fact] = []
    texts: set[str] = set()
    matrix = np.empty((len(facts), run.ctx.embedder.dim), dtype=np.float32)
    for fact in facts:
        text = normalised(fact.content)
        if text in texts:
            trace.drop(fact, "repeats an earlier fact of this batch")
            continue
        best = float((matrix[: len(kept)] @ fact.vector).max()) if kept else 0.0
        if best >= threshold:
            trace.drop(fact, f"{best:.2f} similar to an earlier fact of this batch")
            continue
        matrix[len(kept)] = fact.vector
        texts.add(text)
        kept.append(fact)
    trace.kept = len(kept)
    return kept
