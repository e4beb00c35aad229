"""Task decay: write each memory's faded strength back (memories/strength.py is the model).

Only a strength that fell by at least ``maintain.decay_min_change`` (a share of
the stored value) is written, with ``decayed_at``: the stored value is then
never more than that share above the true one, and a run right after another
writes nothing. Writes go in batches, each one transaction with its events (an
update with the old strength and ``decayed_at``), so a run killed midway leaves
every memory either decayed or not, and the next run decays the rest.
"""

from __future__ import annotations

import math
from typing import Any

from memctl.maintain.plan import Maintenance, TaskReport
from memctl.memories.strength import decay_rate, strength_at
from memctl.model import Action, Kind
from memctl.store.events import log_run_events
from memctl.store.maintenance import decay_rows, set_strengths

BATCH = 5000


def faded(m: Maintenance) -> list[tuple[str, float, float, str | None]]:
    """(id, old strength, new strength, old decayed_at) of every memory to write."""
    keep = 1.0 - m.settings.maintain_decay_min_change
    rates = {str(kind): decay_rate(kind, m.settings) for kind in Kind}
    if keep <= 0:  # a strength never falls by all of it
        return []
    # A strength falls by the share only after -ln(keep) / rate days: the store picks the
    # memories whose clock started that long ago (a day early, for any timestamp format).
    before = {kind: m.ago(-math.log(keep) / rate - 1) for kind, rate in rates.items() if rate > 0}
    found = []
    for memory_id, kind, strength, *times, decayed in decay_rows(m.db, before):
        rate = rates[kind]
        since = max(t for t in (*times, decayed) if t)
        new = strength_at(strength, rate, since, m.now)
        if new <= strength * keep:
            found.append((memory_id, strength, new, decayed))
    return found


def _event(old: float, new: float, old_at: str | None, at: str) -> dict[str, Any]:
    return {
        "reason": "decay",
        "before": {"strength": old, "decayed_at": old_at},
        "after": {"strength": new, "decayed_at": at},
    }


def decay(m: Maintenance) -> TaskReport:
    report = m.report("decay")
    changes = faded(m)
    report.counts["decayed"] = len(changes)
    report.changes = [
        {"action": "decay", "id": i, "from": round(old, 4), "to": round(new, 4)}
        for i, old, new, _ in changes
    ]
    at = m.stamp
    for start in range(0, len(changes), BATCH):
        batch = changes[start : start + BATCH]
        with m.db.atomic():
            set_strengths(m.db, [(i, new, at) for i, _, new, _ in batch])
            log_run_events(
                m.db,
                Action.UPDATE,
                m.run.id,
                [(i, _event(old, new, old_at, at)) for i, old, new, old_at in batch],
            )
    return report
