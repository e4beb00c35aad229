"""SQL for imported files: one row per content hash and scope, with what the import made."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from memctl.model import keyed_hash, now_iso
from memctl.store.database import Database, Row

STORED, DONE, FAILED = "stored", "done", "failed"


@dataclass
class ImportRecord:
    """One imported file. ``stored``: its raw text is kept, distillation has not finished;
    ``done``: its memories were written by run ``run_id``; ``failed``: see ``error``."""

    id: str
    sha256: str
    scope: str
    path: str
    format: str
    strategy: str = ""
    status: str = STORED
    bytes: int = 0
    session_id: str | None = None
    run_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    created_at: str = field(default_factory=now_iso)
    updated_at: str = ""

    def __post_init__(self) -> None:
        self.updated_at = self.updated_at or self.created_at

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _record(row: Row) -> ImportRecord:
    return ImportRecord(**{**row, "counts": json.loads(row["counts"])})


def find_import(db: Database, sha256: str, scope: str, key: bytes | None) -> ImportRecord | None:
    """The record of the file whose content has the digest ``sha256``: kept so, or keyed
    with ``key`` once its import was forgotten (``store.forget.forget_messages``)."""
    known = (sha256, sha256 if key is None else keyed_hash(key, sha256))
    rows = db.rows("SELECT * FROM imports WHERE sha256 IN (?, ?) AND scope = ?", (*known, scope))
    return _record(rows[0]) if rows else None


def already_imported(db: Database, record: ImportRecord | None) -> bool:
    """True when the record's import finished and its run has not been undone since."""
    if record is None or record.status != DONE:
        return False
    undone = db.value("SELECT undone_by FROM runs WHERE id = ?", (record.run_id,))
    return undone is None


def save_import(db: Database, record: ImportRecord) -> None:
    """Insert a record, or update every column of the one with its id."""
    db.upsert("imports", {**record.to_dict(), "counts": json.dumps(record.counts)})


def count_imports(db: Database) -> dict[str, int]:
    """Imported files by status."""
    return {
        r["status"]: r["n"]
        for r in db.rows("SELECT status, count(*) AS n FROM imports GROUP BY status")
    }
