"""SQL for typed, weighted edges between memories."""

from __future__ import annotations

import json

from memctl.model import Relation, RelationType
from memctl.store.database import Database, Row


def add_relation(db: Database, relation: Relation) -> None:
    """Insert an edge, or update its weight when it already exists."""
    db.execute(
        "INSERT INTO relations(src_id, dst_id, type, weight, created_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(src_id, dst_id, type) DO UPDATE SET weight = excluded.weight",
        (
            relation.src_id,
            relation.dst_id,
            str(relation.type),
            relation.weight,
            relation.created_at,
        ),
    )


def add_relations(db: Database, relations: list[Relation]) -> None:
    """``add_relation`` for many edges, in one statement."""
    db.executemany(
        "INSERT INTO relations(src_id, dst_id, type, weight, created_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(src_id, dst_id, type) DO UPDATE SET weight = excluded.weight",
        [(r.src_id, r.dst_id, str(r.type), r.weight, r.created_at) for r in relations],
    )


def _relation(row: Row) -> Relation:
    return Relation(
        src_id=row["src_id"],
        dst_id=row["dst_id"],
        type=RelationType(row["type"]),
        weight=row["weight"],
        created_at=row["created_at"],
    )


def relations_of(db: Database, memory_id: str) -> list[Relation]:
    """Every edge that starts or ends at a memory."""
    rows = db.rows(
        "SELECT * FROM relations WHERE src_id = ? OR dst_id = ? ORDER BY created_at",
        (memory_id, memory_id),
    )
    return [_relation(r) for r in rows]


def relations_touching(
    db: Database, memory_ids: list[str], types: tuple[RelationType, ...] | None = None
) -> list[Relation]:
    """Every edge (of the given types) with either end among ``memory_ids``, in one query."""
    if not memory_ids:
        return []
    condition, params = "1", []
    if types:
        condition = f"type IN ({', '.join('?' * len(types))})"
        params = [str(t) for t in types]
    ids = json.dumps(memory_ids)
    rows = db.rows(
        "SELECT * FROM relations WHERE (src_id IN (SELECT value FROM json_each(?)) OR "
        f"dst_id IN (SELECT value FROM json_each(?))) AND {condition} "
        "ORDER BY src_id, dst_id, type",
        [ids, ids, *params],
    )
    return [_relation(r) for r in rows]


def remove_relations(db: Database, a: str, b: str, type: RelationType | None) -> list[Relation]:
    """Remove the edges between ``a`` and ``b`` (either direction, of ``type`` or any type);
    returns what was removed."""
    removed = [
        r
        for r in relations_of(db, a)
        if {r.src_id, r.dst_id} == {a, b} and (type is None or r.type == type)
    ]
    for relation in removed:
        db.execute(
            "DELETE FROM relations WHERE src_id = ? AND dst_id = ? AND type = ?",
            (relation.src_id, relation.dst_id, str(relation.type)),
        )
    return removed


def has_relation(db: Database, src_id: str, dst_id: str, type: RelationType) -> bool:
    return relation_weight(db, src_id, dst_id, type) is not None


def relation_weight(db: Database, src_id: str, dst_id: str, type: RelationType) -> float | None:
    """The weight of an edge (None: no such edge)."""
    weight = db.value(
        "SELECT weight FROM relations WHERE src_id = ? AND dst_id = ? AND type = ?",
        (src_id, dst_id, str(type)),
    )
    return None if weight is None else float(weight)


def remove_relation(db: Database, src_id: str, dst_id: str, type: RelationType) -> None:
    db.execute(
        "DELETE FROM relations WHERE src_id = ? AND dst_id = ? AND type = ?",
        (src_id, dst_id, str(type)),
    )


def contradictions_in(db: Database, session_ids: list[str]) -> list[Relation]:
    """Every ``contradicts`` edge with either end a memory distilled from one of these
    sessions (its ``session_id``), in one query: the memories by the (session_id) index,
    their edges by the primary key (from) and ``relations_dst`` (to)."""
    if not session_ids:
        return []
    mine = (
        "SELECT r.* FROM json_each(?) AS wanted CROSS JOIN memories m"
        " ON m.session_id = wanted.value CROSS JOIN relations r ON r.{end} = m.id AND r.type = ?"
    )
    sql = f"{mine.format(end='src_id')} UNION {mine.format(end='dst_id')} ORDER BY 1, 2"
    kind = str(RelationType.CONTRADICTS)
    rows = db.rows(sql, (json.dumps(session_ids), kind, json.dumps(session_ids), kind))
    return [_relation(r) for r in rows]
