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
from memctl.maintain.similar import cluster_ids, load_vectors, star_clusters
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


def near_duplicates(m: Maintenance) -> list[list[str]]:
    """Clusters of memories at least ``maintain.dedup_similarity`` similar to their seed."""
    if m.nothing_new():
        return []
    vectors = load_vectors(m.db, lambda r: True)
    if vectors is None:
        return []
    found, _ = star_clusters(vectors, m.settings.maintain_dedup_similarity, m.settings)
    return cluster_ids(m.db, vectors, found)


def dedup(m: Maintenance) -> TaskReport:
    report = m.report("dedup")
    for cluster in [*exact_duplicates(m.db), *near_duplicates(m)]:
        members = get_memories(m.db, cluster, ACTIVE_UNPINNED)
        if cluster[0] not in members:
            continue
        seed = members[cluster[0]]
        group = [seed] + [
            members[i]
            for i in cluster[1:]
            if i in members and same_meaning(seed.content, members[i].content)
        ]
        if len(group) < 2:
            continue
        survivor = changes.most_complete(group)
        others = [x for x in group if x.id != survivor.id]
        report.change("dedup", survivor.id, superseded=[x.id for x in others])
        if not m.dry_run:
            with m.db.atomic():
                changes.fold(m, survivor, others, "duplicate")
    m.pairs_done()
    return report
