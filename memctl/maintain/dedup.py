"""Task dedup: exact and near duplicates of one scope become one memory.

Exact: the same text (content hash) twice in one scope. Near: cosine >=
``maintain.dedup_similarity`` and the same meaning per reconcile's rules (the
same polarity, no other value for the same slot, not the same brand with
another item). The most complete member survives; the others are superseded by
it, their relations carried over. Pinned memories are never touched.
"""

from __future__ import annotations

from memctl.ingest.reconcile_rules import negated, slot, slot_guard
from memctl.maintain import changes
from memctl.maintain.plan import Maintenance, TaskReport
from memctl.maintain.similar import Pair, clusters
from memctl.model import Kind, State
from memctl.store.maintenance import exact_duplicates
from memctl.store.memories import MemoryFilter, get_memories

ACTIVE_UNPINNED = MemoryFilter(kinds=(Kind.EPISODIC, Kind.SEMANTIC), states=(State.ACTIVE,))


def same_meaning(a: str, b: str) -> bool:
    """Whether two similar texts say the same thing by reconcile's rules."""
    if negated(a) != negated(b) or slot_guard(a, b):
        return False
    slot_a, slot_b = slot(a), slot(b)
    return not (slot_a and slot_b and slot_a[0] == slot_b[0] and slot_a != slot_b)


def dedup(m: Maintenance) -> TaskReport:
    report = m.report("dedup")
    pairs = [Pair(group[0], other, 1.0) for group in exact_duplicates(m.db) for other in group[1:]]
    near = [p for p in m.pairs() if p.similarity >= m.settings.maintain_dedup_similarity]
    members = get_memories(m.db, sorted({i for p in [*pairs, *near] for i in (p.a, p.b)}))
    members = {
        k: v for k, v in members.items() if v.state == State.ACTIVE and v.kind != Kind.PINNED
    }
    pairs += [
        p
        for p in near
        if p.a in members
        and p.b in members
        and same_meaning(members[p.a].content, members[p.b].content)
    ]
    for cluster in clusters([p for p in pairs if p.a in members and p.b in members]):
        group = [members[i] for i in cluster]
        survivor = changes.most_complete(group)
        others = [x for x in group if x.id != survivor.id]
        report.change("dedup", survivor.id, superseded=[x.id for x in others])
        if not m.dry_run:
            with m.db.atomic():
                changes.fold(m, survivor, others, "duplicate")
    m.pairs_done()
    return report
