"""SQL for learned noise vectors: memories a person marked as noise with `forget --noise`."""

from __future__ import annotations

from memctl.model import now_iso
from memctl.store.database import Database


def add_noise_vector(
    db: Database, memory_id: str, content: str, model: str, vector: bytes, keep: int
) -> None:
    """Store one noise vector and drop the oldest beyond ``keep``."""
    with db.atomic():
        db.execute(
            "INSERT INTO noise_vectors(memory_id, content, model, vector, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (memory_id, content, model, vector, now_iso()),
        )
        db.execute(
            "DELETE FROM noise_vectors WHERE id NOT IN "
            "(SELECT id FROM noise_vectors ORDER BY id DESC LIMIT ?)",
            (keep,),
        )


def remove_noise_vector(db: Database, memory_id: str) -> None:
    """Take back the noise vector a memory became (its ``forget --noise`` was undone)."""
    db.execute("DELETE FROM noise_vectors WHERE memory_id = ?", (memory_id,))


def noise_vectors(db: Database, model: str) -> list[bytes]:
    """The learned noise vectors made by ``model`` (others wait for `memctl reembed`)."""
    return [
        r["vector"]
        for r in db.rows("SELECT vector FROM noise_vectors WHERE model = ? ORDER BY id", (model,))
    ]


def noise_contents(db: Database) -> list[tuple[int, str]]:
    return [(r["id"], r["content"]) for r in db.rows("SELECT id, content FROM noise_vectors")]


def set_noise_vector(db: Database, noise_id: int, model: str, vector: bytes) -> None:
    db.execute(
        "UPDATE noise_vectors SET model = ?, vector = ? WHERE id = ?", (model, vector, noise_id)
    )
