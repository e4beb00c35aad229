"""Task archive: weak memories nobody recalled for a long time leave recall, never the store.

Active memories whose strength (memories/strength.py, as of the run) is below
``maintain.archive_strength`` and that were neither stored nor recalled in
``maintain.archive_unused_days`` are archived, weakest first, at most
``maintain.archive_max`` a run. Stored means the day a memory entered the store, not the
date of the message it came from: backfilled history is new to the store. Pinned and
core-tier memories are exempt, and an episode waits until consolidate has distilled
it: what it taught stays in recall as facts before the episode leaves (archive takes 50
a run, consolidate 20, so without this an imported history left recall before anything
was learnt from it).
``memctl undo`` (or ``memctl update --state active``) brings one back.
"""

from __future__ import annotations

from memctl.maintain.plan import Maintenance, TaskReport
from memctl.memories.strength import current_strength
from memctl.model import State
from memctl.store.maintenance import archive_candidates
from memctl.store.memories import get_memories


def archive(m: Maintenance) -> TaskReport:
    report = m.report("archive")
    s = m.settings
    ids = archive_candidates(
        m.db,
        s.maintain_archive_strength,
        m.ago(s.maintain_archive_unused_days),
        s.maintain_archive_max,
    )
    found = get_memories(m.db, ids)
    for memory_id in ids:
        memory = found[memory_id]
        strength = current_strength(memory, m.now, s)
        if strength >= s.maintain_archive_strength:
            continue
        report.change("archive", memory.id, strength=round(strength, 4))
        with m.db.atomic():
            m.writer.set_state(memory, State.ARCHIVED, "archive")
    return report
