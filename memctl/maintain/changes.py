"""The compound changes of maintain tasks, written through the run's writer
(store/writes.py), so each is events of the run that undo reverts.

``rewrite`` gives a memory new text; ``fold`` makes one memory the survivor of a
cluster (dedup, merge): the others are superseded by it, and their edges move to it.
"""

from __future__ import annotations

from memctl.ingest.facts import abstract
from memctl.maintain.plan import Maintenance
from memctl.model import Memory, Relation, RelationType
from memctl.store.relations import relations_touching

# The reasons a fold gives (dedup's, consolidate's): a memory superseded for one of them
# said what its survivor says, so its source is one of the survivor's (api.sessions.origins).
DUPLICATE = "duplicate"
MERGE = "merge"
FOLDS = (DUPLICATE, MERGE)


def rewrite(m: Maintenance, memory: Memory, content: str, reason: str) -> None:
    """New text for a memory (re-embedded); the old text stays in the event."""
    (vector,) = m.ctx.embedder.embed([content])
    changes = {
        "content": content,
        "l0_abstract": abstract(content),
        "l1_overview": content,
        "l2_content": content,
    }
    m.writer.update(memory, changes, vector.astype("float32").tobytes(), reason=reason)


def fold(m: Maintenance, survivor: Memory, others: list[Memory], reason: str) -> None:
    """Supersede ``others`` by ``survivor`` and move their edges to it."""
    fold_many(m, [(survivor, others)], reason)


def fold_many(m: Maintenance, folds: list[tuple[Memory, list[Memory]]], reason: str) -> None:
    """``fold`` for many clusters, in a few statements (the caller's transaction). An edge
    between members of two clusters joins their survivors."""
    pairs = [(old, survivor) for survivor, others in folds for old in others]
    survivor_of = {old.id: survivor.id for old, survivor in pairs}
    writer = m.writer
    for edge in relations_touching(m.db, list(survivor_of)):
        src, dst = (
            survivor_of.get(edge.src_id, edge.src_id),
            survivor_of.get(edge.dst_id, edge.dst_id),
        )
        if src != dst and (src, dst) != (edge.src_id, edge.dst_id):
            writer.link(Relation(src, dst, edge.type, edge.weight), reweight=False)
    writer.supersede_many([(old, survivor.id) for old, survivor in pairs], reason)
    writer.link_many([(survivor.id, old.id) for old, survivor in pairs], RelationType.SUPERSEDES)


def most_complete(members: list[Memory]) -> Memory:
    """The member that says the most (longest text), then the most used, then the oldest,
    then the first stored (a fact consolidated from an episode is dated by it: the
    episode, stored first, survives their tie)."""
    return min(
        members,
        key=lambda x: (-len(x.content), -x.access_count, x.created_at, x.stored_at, x.id),
    )
