"""Writes of maintain tasks, each one event of the run, holding what undo needs.

An update records its before and after values; a state change its old state
and the fields it set; a link whether the edge existed before. ``fold`` makes
one memory the survivor of a cluster (dedup, merge): the others are superseded
by it, and their edges move to it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memctl.ingest.facts import abstract
from memctl.maintain.plan import Maintenance
from memctl.model import Action, Memory, Relation, RelationType, State, content_hash
from memctl.store import memories as store
from memctl.store.events import log_event, log_run_events
from memctl.store.maintenance import supersede_many
from memctl.store.relations import add_relation, add_relations, has_relation, relations_touching


def update(m: Maintenance, memory: Memory, changes: dict[str, Any], reason: str) -> None:
    before = {k: getattr(memory, k) for k in changes}
    store.update_memory(m.db, memory.id, {**changes, "updated_at": m.stamp})
    log_event(
        m.db,
        Action.UPDATE,
        memory.id,
        {"before": before, "after": changes, "reason": reason},
        m.run.id,
    )


def set_state(
    m: Maintenance, memory: Memory, state: State, reason: str, fields: dict[str, Any]
) -> None:
    store.update_memory(m.db, memory.id, {"state": state, **fields, "updated_at": m.stamp})
    log_event(
        m.db,
        Action.STATE,
        memory.id,
        {
            "from": str(memory.state),
            "to": str(state),
            "reason": reason,
            "before": {k: getattr(memory, k) for k in fields},
        },
        m.run.id,
    )


def link(m: Maintenance, src: str, dst: str, kind: RelationType, weight: float = 1.0) -> None:
    existed = has_relation(m.db, src, dst, kind)
    if not existed:
        add_relation(m.db, Relation(src, dst, kind, weight))
    log_event(
        m.db,
        Action.LINK,
        src,
        {"src_id": src, "dst_id": dst, "type": str(kind), "existed": existed},
        m.run.id,
    )


def rewrite(m: Maintenance, memory: Memory, content: str, reason: str) -> None:
    """New text for a memory (re-embedded); the old text stays in the event."""
    (vector,) = m.ctx.embedder.embed([content])
    changes = {
        "content": content,
        "content_hash": content_hash(content),
        "l0_abstract": abstract(content),
        "l1_overview": content,
        "l2_content": content,
    }
    update(m, memory, changes, reason)
    store.put_vector(m.db, memory.id, vector.astype(np.float32).tobytes())


def fold(m: Maintenance, survivor: Memory, others: list[Memory], reason: str) -> None:
    """Supersede ``others`` by ``survivor`` and move their edges to it."""
    fold_many(m, [(survivor, others)], reason)


def fold_many(m: Maintenance, folds: list[tuple[Memory, list[Memory]]], reason: str) -> None:
    """``fold`` for many clusters, in a few statements (the caller's transaction). An edge
    between members of two clusters joins their survivors."""
    pairs = [(old, survivor) for survivor, others in folds for old in others]
    survivor_of = {old.id: survivor.id for old, survivor in pairs}
    for edge in relations_touching(m.db, list(survivor_of)):
        src, dst = (
            survivor_of.get(edge.src_id, edge.src_id),
            survivor_of.get(edge.dst_id, edge.dst_id),
        )
        if src != dst and (src, dst) != (edge.src_id, edge.dst_id):
            link(m, src, dst, edge.type, edge.weight)
    supersede_many(m.db, [(old.id, survivor.id, m.stamp) for old, survivor in pairs])
    log_run_events(
        m.db, Action.STATE, m.run.id, [(old.id, _superseded(old, reason)) for old, _ in pairs]
    )
    existed = {
        (r.src_id, r.dst_id)
        for r in relations_touching(m.db, list(survivor_of), (RelationType.SUPERSEDES,))
    }
    edges = [(survivor.id, old.id) for old, survivor in pairs]
    add_relations(
        m.db, [Relation(s, o, RelationType.SUPERSEDES) for s, o in edges if (s, o) not in existed]
    )
    kind = str(RelationType.SUPERSEDES)
    log_run_events(
        m.db,
        Action.LINK,
        m.run.id,
        [
            (s, {"src_id": s, "dst_id": o, "type": kind, "existed": (s, o) in existed})
            for s, o in edges
        ],
    )


def _superseded(old: Memory, reason: str) -> dict[str, Any]:
    """The state event of a superseded memory (as ``set_state`` writes it)."""
    return {
        "from": str(old.state),
        "to": str(State.SUPERSEDED),
        "reason": reason,
        "before": {"invalidated_at": old.invalidated_at, "superseded_by": old.superseded_by},
    }


def most_complete(members: list[Memory]) -> Memory:
    """The member that says the most (longest text), then the most used, then the oldest."""
    return min(members, key=lambda x: (-len(x.content), -x.access_count, x.created_at, x.id))
