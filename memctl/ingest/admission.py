"""Stage: admit the facts worth keeping, scoring each one.

    score = w_u * importance + w_c * confidence + w_n * novelty
          + w_r * recency + w_p * prior(category)

novelty is 1 minus the cosine similarity to the closest active memory of the
run's scopes (or an earlier fact of the batch); recency halves every
``admission.recency_half_life_days`` of the message's age, counted to the
session's last message (a backfilled old session is not penalised for its age). Below
``admission.reject`` a fact is rejected; from ``admission.admit`` it is
admitted in the working tier; in between, in the peripheral tier. A fact
repeating an earlier one of the same batch word for word is dropped.
"""

from __future__ import annotations

from datetime import UTC, datetime

from memctl.config.scope import GLOBAL_SCOPE
from memctl.ingest.facts import Fact
from memctl.ingest.run import Run
from memctl.model import State, Tier, parse_time
from memctl.store.memories import MemoryFilter
from memctl.store.vector_query import nearest_in_store


def recency(created_at: str | None, half_life_days: float, now: datetime | None = None) -> float:
    """1 for a fact said now, 0.5 after one half-life, and so on; 1 when the time is unknown."""
    if not created_at:
        return 1.0
    age = ((now or datetime.now(UTC)) - parse_time(created_at)).total_seconds() / 86400
    return float(0.5 ** (max(0.0, age) / half_life_days))


def _nearest_existing(run: Run, fact: Fact) -> float:
    """Cosine similarity of the closest active memory (0 when the store has none)."""
    embedder = run.ctx.embedder
    if run.db.vector_model() != (embedder.name, embedder.dim):
        return 0.0
    where = MemoryFilter(scopes=(run.scope, GLOBAL_SCOPE), states=(State.ACTIVE,))
    hits = nearest_in_store(run.db, fact.vector, 1, where)
    return 1.0 - hits[0][1] if hits else 0.0


def score(run: Run, fact: Fact, novelty: float) -> float:
    s = run.settings
    prior = getattr(s, f"admission_prior_{fact.category}")
    return (
        s.admission_weight_utility * fact.importance
        + s.admission_weight_confidence * fact.confidence
        + s.admission_weight_novelty * novelty
        + s.admission_weight_recency
        * recency(fact.created_at, s.admission_recency_half_life_days, run.now)
        + s.admission_weight_prior * prior
    )


def admit(run: Run, facts: list[Fact]) -> list[Fact]:
    """The admitted facts, each with its score and tier."""
    trace = run.stage("admission")
    settings = run.settings
    admitted: list[Fact] = []
    seen: set[str] = set()
    for fact in facts:
        key = " ".join(fact.content.lower().split())
        if key in seen:
            trace.drop(fact, "repeats an earlier fact of this batch")
            continue
        seen.add(key)
        similar = [float(fact.vector @ other.vector) for other in admitted]
        novelty = 1.0 - max([_nearest_existing(run, fact), *similar])
        fact.score = score(run, fact, max(0.0, novelty))
        if fact.score < settings.admission_reject:
            trace.drop(fact, f"score {fact.score:.2f} < {settings.admission_reject:g}")
            continue
        fact.tier = Tier.WORKING if fact.score >= settings.admission_admit else Tier.PERIPHERAL
        admitted.append(fact)
    trace.kept = len(admitted)
    return admitted
