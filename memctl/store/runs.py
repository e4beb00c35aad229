"""SQL for runs: one row per ingest, import, maintain, sync, undo run or direct edit, with
its counts, tokens and decisions."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from memctl.model import now_iso
from memctl.store.database import Database, Row
from memctl.store.memories import resolve_prefix

JSON_COLUMNS = ("counts", "decisions", "notes")
EDIT_KIND = "edit"  # a direct edit (remember, update, forget, delete, link, unlink, purge)


@dataclass
class RunRecord:
    """What a run did; ``counts`` maps a decision or stage outcome to how many."""

    id: str
    kind: str
    status: str = "running"
    session_id: str | None = None
    job_id: int | None = None
    llm: str = ""
    started_at: str = field(default_factory=now_iso)
    finished_at: str | None = None
    messages: int = 0
    facts: int = 0
    tokens: int = 0
    token_budget: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    undo_of: str | None = None
    undone_by: str | None = None
    holder: str | None = None  # kind@host:pid of the process running it
    door: str | None = None  # an edit's or undo's: cli, mcp, hook or ui
    batch: str | None = None  # the runs of one import's files (or of their undo) share it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _record(row: Row) -> RunRecord:
    values = dict(row)
    for column in JSON_COLUMNS:
        values[column] = json.loads(values[column])
    return RunRecord(**values)


def save_run(db: Database, run: RunRecord) -> None:
    """Insert a run or replace every column of the one with its id."""
    values = run.to_dict()
    for column in JSON_COLUMNS:
        values[column] = json.dumps(values[column], ensure_ascii=False)
    db.upsert("runs", values)


def running_runs(db: Database) -> list[tuple[str, str | None]]:
    """(id, holder) of the runs marked running."""
    return [(r[0], r[1]) for r in db.tuples("SELECT id, holder FROM runs WHERE status = 'running'")]


def get_run(db: Database, run_id: str) -> RunRecord | None:
    rows = db.rows("SELECT * FROM runs WHERE id = ?", (run_id,))
    return _record(rows[0]) if rows else None


def resolve_run_id(db: Database, prefix: str) -> str:
    """The run a (unique) id prefix names."""
    return resolve_prefix(db, "runs", prefix, "run")


def list_runs(
    db: Database,
    limit: int,
    kind: str | None = None,
    batch_heads: bool = False,
    before: tuple[str, str] | None = None,
) -> list[RunRecord]:
    """Runs, newest first; ``batch_heads``: of each batch only its first run; ``before``:
    those listed after the run (its start, its id) a page ended with."""
    condition, params = ("kind = ?", [kind]) if kind else ("1", [])
    if before is not None:
        condition += " AND (started_at, rowid) < (?, (SELECT rowid FROM runs AS r WHERE r.id = ?))"
        params += list(before)
    if batch_heads:
        condition += (
            " AND (batch IS NULL OR rowid = (SELECT min(rowid) FROM runs AS b "
            "WHERE b.batch = runs.batch))"
        )
    rows = db.rows(
        f"SELECT * FROM runs WHERE {condition} ORDER BY started_at DESC, rowid DESC LIMIT ?",
        [*params, limit],
    )
    return [_record(r) for r in rows]


def batch_runs(db: Database, batch: str) -> list[RunRecord]:
    """The runs of one batch, in the order they started."""
    return [
        _record(r) for r in db.rows("SELECT * FROM runs WHERE batch = ? ORDER BY rowid", (batch,))
    ]


def tokens_since(db: Database, since: str) -> int:
    """LLM tokens of the runs started at or after ``since`` (a stored time)."""
    return int(
        db.value("SELECT coalesce(sum(tokens), 0) FROM runs WHERE started_at >= ?", (since,))
    )


def last_edit(db: Database) -> RunRecord | None:
    """The newest direct edit not undone yet."""
    rows = db.rows(
        "SELECT * FROM runs WHERE kind = ? AND undone_by IS NULL "
        "ORDER BY started_at DESC, rowid DESC LIMIT 1",
        (EDIT_KIND,),
    )
    return _record(rows[0]) if rows else None
