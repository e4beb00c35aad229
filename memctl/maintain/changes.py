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
from memctl.store.events import log_event
from memctl.store.relations import add_relation, has_relation, relations_of


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


def carry_relations(m: Maintenance, old: Memory, survivor: Memory, skip: set[str]) -> None:
    """Give ``survivor`` every edge of ``old`` (except to ``skip``: the cluster itself)."""
    for edge in relations_of(m.db, old.id):
        if edge.src_id == old.id and edge.dst_id not in skip:
            link(m, survivor.id, edge.dst_id, edge.type, edge.weight)
        elif edge.dst_id == old.id and edge.src_id not in skip:
            link(m, edge.src_id, survivor.id, edge.type, edge.weight)


def fold(m: Maintenance, survivor: Memory, others: list[Memory], reason: str) -> None:
    """Supersede ``others`` by ``survivor`` and move their edges to it."""
    cluster = {survivor.id, *(o.id for o in others)}
    for old in others:
        carry_relations(m, old, survivor, cluster)
        fields = {"invalidated_at": m.stamp, "superseded_by": survivor.id}
        set_state(m, old, State.SUPERSEDED, reason, fields)
        link(m, survivor.id, old.id, RelationType.SUPERSEDES)


def most_complete(members: list[Memory]) -> Memory:
    """The member that says the most (longest text), then the most used, then the oldest."""
    return min(members, key=lambda x: (-len(x.content), -x.access_count, x.created_at, x.id))
