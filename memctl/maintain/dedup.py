"""Task dedup: exact and near duplicates of one scope become one memory.

Exact: the same text (content hash) twice in one scope. Near: cosine >=
``maintain.dedup_similarity`` and the same meaning per reconcile's rules (the
same polarity, no other value for the same slot, not the same brand with
another item). The most complete member survives; the others are superseded by
it, their relations carried over. Pinned memories are never touched.

Near duplicates are searched among the memories dedup has not compared yet
(maintain/similar.py), again with each cluster's survivors until a search folds
nothing, so a run right after finds nothing. Folds are written
``maintain.write_batch`` clusters to a transaction.
"""

from __future__ import annotations

from memctl.ingest.reconcile_rules import negated, slot, slot_guard
from memctl.maintain import changes
from memctl.maintain.plan import Maintenance, TaskReport
from memctl.maintain.similar import cluster_ids, load_vectors, settle, star_clusters
from memctl.model import Kind, State
from memctl.store.maintenance import exact_duplicates
from memctl.store.memories import MemoryFilter, get_memories

TASK = "dedup"
ACTIVE_UNPINNED = MemoryFilter(kinds=(Kind.EPISODIC, Kind.SEMANTIC), states=(State.ACTIVE,))


def same_meaning(a: str, b: str) -> bool:
    """Whether two similar texts say the same thing by reconcile's rules."""
    if negated(a) != negated(b) or slot_guard(a, b):
        return False
    slot_a, slot_b = slot(a), slot(b)
    return not (slot_a and slot_b and slot_a[0] == slot_b[0] and slot_a != slot_b)


def fold_clusters(m: Maintenance, report: TaskReport, clusters: list[list[str]]) -> set[str]:
    """Fold each cluster's duplicates of its seed into its most complete member, a batch of
    clusters to a transaction; the ids superseded."""
    ended: set[str] = set()
    size = m.settings.maintain_write_batch
    for start in range(0, len(clusters), size):
        batch = clusters[start : start + size]
        members = get_memories(m.db, [i for c in batch for i in c], ACTIVE_UNPINNED)
        folds = []
        for cluster in batch:
            seed = members.get(cluster[0])
            if seed is None:
                continue
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
            folds.append((survivor, others))
            ended.update(x.id for x in others)
        if folds:
            with m.db.atomic():
                changes.fold_many(m, folds, changes.DUPLICATE)
    return ended


def near_duplicates(m: Maintenance, report: TaskReport) -> None:
    """Search and fold until a search folds nothing."""
    vectors = load_vectors(m.db, TASK, lambda r: True)
    if vectors is not None:
        report.count("compared", vectors.seeds())
    while vectors is not None:
        found, _ = star_clusters(vectors, m.settings.maintain_dedup_similarity, m.settings)
        ids = cluster_ids(m.db, vectors, found)
        ended = fold_clusters(m, report, ids)
        positions = {
            i: p for c, c_ids in zip(found, ids, strict=True) for p, i in zip(c, c_ids, strict=True)
        }
        with m.db.atomic():
            again = settle(m.db, TASK, vectors, found, {positions[i] for i in ended})
        if not again:
            return


def dedup(m: Maintenance) -> TaskReport:
    report = m.report("dedup")
    fold_clusters(m, report, exact_duplicates(m.db))
    near_duplicates(m, report)
    return report
