"""SQL for the append-only event log (triggers refuse UPDATE and DELETE)."""

from __future__ import annotations

import json
from typing import Any

from memctl.model import Action, Event, now_iso
from memctl.store.database import Database
from memctl.store.migrations import LINK_EVENTS


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


def _event(row: dict[str, Any]) -> Event:
    return Event(
        id=row["id"],
        at=row["at"],
        action=Action(row["action"]),
        memory_id=row["memory_id"],
        run_id=row["run_id"],
        data=json.loads(row["data"]),
    )


def run_events(db: Database, run_id: str) -> list[Event]:
    """Every event of one run, oldest first."""
    return [
        _event(r) for r in db.rows("SELECT * FROM events WHERE run_id = ? ORDER BY id", (run_id,))
    ]


def changed_since(db: Database, memory_id: str, after_event: int, run_id: str) -> bool:
    """Whether anything but ``run_id`` (or a mere access) changed a memory after an event. A
    later run that was undone, and an undo, count as no change: undoing one edit after
    another, newest first, takes each back."""
    return bool(
        db.value(
            "SELECT 1 FROM events WHERE memory_id = ? AND id > ? AND run_id IS NOT ? "
            "AND action != 'access' AND (run_id IS NULL OR run_id NOT IN "
            "(SELECT id FROM runs WHERE undone_by IS NOT NULL OR kind = 'undo')) LIMIT 1",
            (memory_id, after_event, run_id),
        )
    )


def log_events(
    db: Database,
    action: Action,
    memory_ids: list[str],
    data: dict[str, Any] | None = None,
    at: str | None = None,
) -> None:
    """The same event for many memories (at ``at``, default now), in one statement."""
    at, payload = at or now_iso(), json.dumps(data or {}, ensure_ascii=False)
    db.executemany(
        "INSERT INTO events(at, action, memory_id, run_id, data) VALUES (?, ?, ?, NULL, ?)",
        [(at, str(action), memory_id, payload) for memory_id in memory_ids],
    )


def log_run_events(
    db: Database, action: Action, run_id: str | None, changes: list[tuple[str, dict[str, Any]]]
) -> None:
    """One event (of a run, or of none) per (memory id, data), in one statement."""
    at = now_iso()
    db.executemany(
        "INSERT INTO events(at, action, memory_id, run_id, data) VALUES (?, ?, ?, ?, ?)",
        [
            (at, str(action), memory_id, run_id, json.dumps(data, ensure_ascii=False))
            for memory_id, data in changes
        ],
    )


def list_events(db: Database, memory_id: str | None, limit: int, offset: int = 0) -> list[Event]:
    """Events, newest first, optionally of one memory: its own, and each link or unlink
    another memory made to it (``A --supports--> B`` is in B's history, as B's relations
    show it), but for a supersede (the target's own update says it) and a relation the
    same run stored both ways (a contradiction: the target's own event says it). Both
    halves search the index of link events by target (m031): "+o." keeps SQLite off the
    run's index (a maintain's run holds thousands of events), "+e.memory_id" drops the
    column's text affinity, which would make it scan that index instead."""
    if not memory_id:
        rows = db.rows("SELECT * FROM events ORDER BY id DESC LIMIT ? OFFSET ?", [limit, offset])
        return [_event(r) for r in rows]
    rows = db.rows(
        "SELECT * FROM events WHERE memory_id = :id UNION ALL "
        "SELECT * FROM events e WHERE json_extract(e.data, '$.dst_id') = :id "
        f"AND e.{LINK_EVENTS} AND e.memory_id IS NOT :id "
        "AND json_extract(e.data, '$.type') IS NOT 'supersedes' AND NOT EXISTS ("
        "SELECT 1 FROM events o WHERE json_extract(o.data, '$.dst_id') = +e.memory_id "
        f"AND o.{LINK_EVENTS} AND +o.memory_id = :id AND +o.run_id = e.run_id) "
        "ORDER BY id DESC LIMIT :limit OFFSET :offset",
        {"id": memory_id, "limit": limit, "offset": offset},
    )
    return [_event(r) for r in rows]


def count_events(db: Database, memory_id: str | None = None) -> int:
    if memory_id:
        return db.value("SELECT count(*) FROM events WHERE memory_id = ?", (memory_id,))
    return db.value("SELECT count(*) FROM events")


def last_event(db: Database) -> int:
    """The newest event's id (0: none yet)."""
    return int(db.value("SELECT COALESCE(MAX(id), 0) FROM events") or 0)


def forgotten_since(db: Database, after_event: int) -> bool:
    """Whether something was taken out for good after an event: a forget or a redact
    (``Writer.forgotten``), a memory deleted permanently (``Writer.delete``)."""
    return bool(
        db.value(
            "SELECT 1 FROM events WHERE id > ? AND action = ? "
            "AND json_extract(data, '$.permanent') IS NOT NULL LIMIT 1",
            (after_event, str(Action.DELETE)),
        )
    )


def hidden_since(db: Database, after_event: int) -> bool:
    """Whether a memory or a message left recall after an event: archived or otherwise
    moved out of ``active`` (a state event), deleted, forgotten or redacted (a delete
    event, ``forgotten_since``'s and a soft delete's)."""
    return bool(
        db.value(
            "SELECT 1 FROM events WHERE id > ? AND action IN (?, ?) LIMIT 1",
            (after_event, str(Action.DELETE), str(Action.STATE)),
        )
    )


def deleted_for_good(db: Database, memory_id: str) -> bool:
    """Whether this memory was deleted permanently here (``Writer.delete``: its row went,
    its delete event stays)."""
    return bool(
        db.value(
            "SELECT 1 FROM events WHERE memory_id = ? AND action = ? "
            "AND json_extract(data, '$.permanent') IS NOT NULL LIMIT 1",
            (memory_id, str(Action.DELETE)),
        )
    )
