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

from memctl.maintain.plan import Maintenance, TaskReport
from memctl.memories.strength import decay_rate, strength_at
from memctl.model import Kind
from memctl.store.maintenance import decay_rows

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


def decay(m: Maintenance) -> TaskReport:
    report = m.report("decay")
    changes = faded(m)
    report.counts["decayed"] = len(changes)
    report.changes = [
        {"action": "decay", "id": i, "from": round(old, 4), "to": round(new, 4)}
        for i, old, new, _ in changes
    ]
    writer = m.writer
    for start in range(0, len(changes), BATCH):
        with m.db.atomic():
            writer.set_strengths(changes[start : start + BATCH], "decay")
    return report
