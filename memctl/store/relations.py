"""SQL for typed, weighted edges between memories."""

from __future__ import annotations

from memctl.model import Relation, RelationType
from memctl.store.database import Database


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


def relations_of(db: Database, memory_id: str) -> list[Relation]:
    """Every edge that starts or ends at a memory."""
    rows = db.rows(
        "SELECT * FROM relations WHERE src_id = ? OR dst_id = ? ORDER BY created_at",
        (memory_id, memory_id),
    )
    return [
        Relation(
            src_id=r["src_id"],
            dst_id=r["dst_id"],
            type=RelationType(r["type"]),
            weight=r["weight"],
            created_at=r["created_at"],
        )
        for r in rows
    ]


def has_relation(db: Database, src_id: str, dst_id: str, type: RelationType) -> bool:
    return bool(
        db.value(
            "SELECT 1 FROM relations WHERE src_id = ? AND dst_id = ? AND type = ?",
            (src_id, dst_id, str(type)),
        )
    )


def remove_relation(db: Database, src_id: str, dst_id: str, type: RelationType) -> None:
    db.execute(
        "DELETE FROM relations WHERE src_id = ? AND dst_id = ? AND type = ?",
        (src_id, dst_id, str(type)),
    )
