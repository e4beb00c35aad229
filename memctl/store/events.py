"""SQL for the append-only event log (triggers refuse UPDATE and DELETE)."""

from __future__ import annotations

import json
from typing import Any

from memctl.model import Action, Event, now_iso
from memctl.store.database import Database


def log_event(
    db: Database,
    action: Action,
    memory_id: str | None,
    data: dict[str, Any] | None = None,
    run_id: str | None = None,
) -> None:
    db.execute(
        "INSERT INTO events(at, action, memory_id, run_id, data) VALUES (?, ?, ?, ?, ?)",
        (now_iso(), str(action), memory_id, run_id, json.dumps(data or {}, ensure_ascii=False)),
    )


def log_events(
    db: Database, action: Action, memory_ids: list[str], data: dict[str, Any] | None = None
) -> None:
    """The same event for many memories, in one statement."""
    at, payload = now_iso(), json.dumps(data or {}, ensure_ascii=False)
    db.executemany(
        "INSERT INTO events(at, action, memory_id, run_id, data) VALUES (?, ?, ?, NULL, ?)",
        [(at, str(action), memory_id, payload) for memory_id in memory_ids],
    )


def list_events(db: Database, memory_id: str | None, limit: int, offset: int = 0) -> list[Event]:
    """Events, newest first, optionally of one memory."""
    condition, params = ("memory_id = ?", [memory_id]) if memory_id else ("1", [])
    rows = db.rows(
        f"SELECT * FROM events WHERE {condition} ORDER BY id DESC LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    return [
        Event(
            id=r["id"],
            at=r["at"],
            action=Action(r["action"]),
            memory_id=r["memory_id"],
            run_id=r["run_id"],
            data=json.loads(r["data"]),
        )
        for r in rows
    ]


def count_events(db: Database, memory_id: str | None = None) -> int:
    if memory_id:
        return db.value("SELECT count(*) FROM events WHERE memory_id = ?", (memory_id,))
    return db.value("SELECT count(*) FROM events")
