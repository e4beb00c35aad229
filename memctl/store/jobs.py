"""SQL for the job queue: slow-path work queued by the fast path, claimed by workers.

A claim is one ``UPDATE ... RETURNING`` inside ``BEGIN IMMEDIATE``, so two
workers (or a worker and ``memctl maintain``) never take the same job. A job
whose claim is older than the stale limit is taken to be abandoned (its worker
died) and may be claimed again, up to the attempt limit; one whose worker is
known to be gone is released at once (``memctl.maintain.claims``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memctl.model import now_iso
from memctl.store.database import Database, Row

MAX_NOTES = 10  # notes a queued job keeps from the captures it covers (the run shows them)


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    session_id: str | None
    payload: dict[str, Any]
    state: str
    attempts: int
    claimed_by: str | None
    created_at: str
    run_id: str | None
    error: str | None


def _job(row: Row) -> Job:
    return Job(
        id=row["id"],
        kind=row["kind"],
        session_id=row["session_id"],
        payload=json.loads(row["payload"]),
        state=row["state"],
        attempts=row["attempts"],
        claimed_by=row["claimed_by"],
        created_at=row["created_at"],
        run_id=row["run_id"],
        error=row["error"],
    )


def enqueue(db: Database, kind: str, session_id: str | None, payload: dict[str, Any]) -> int:
    """Queue a job; a job of this kind already queued for the session is reused.

    The worker reads every message not yet distilled when it runs, so one
    queued job per session covers any number of ingests before it starts; the
    reused job takes the new payload, its ``notes`` added to the ones it had
    (the last ``MAX_NOTES``).
    """
    with db.atomic():
        rows = db.rows(
            "SELECT id, payload FROM jobs WHERE kind = ? AND session_id IS ? AND state = 'queued'",
            (kind, session_id),
        )
        if rows:
            before = json.loads(rows[0]["payload"]).get("notes") or []
            notes = [*before, *payload.get("notes", [])][-MAX_NOTES:]
            payload = {**payload, "notes": notes} if notes else payload
            db.execute(
                "UPDATE jobs SET payload = ? WHERE id = ?",
                (json.dumps(payload, ensure_ascii=False), rows[0]["id"]),
            )
            return int(rows[0]["id"])
        db.execute(
            "INSERT INTO jobs(kind, session_id, payload, state, created_at) "
            "VALUES (?, ?, ?, 'queued', ?)",
            (kind, session_id, json.dumps(payload, ensure_ascii=False), now_iso()),
        )
        return db.last_rowid()


def claim(db: Database, worker: str, stale_before: str, max_attempts: int) -> Job | None:
    """Take the oldest queued (or abandoned) job for ``worker``; None when there is none."""
    with db.atomic():
        db.execute(
            "UPDATE jobs SET state = 'failed', finished_at = ?, "
            "error = coalesce(error, 'abandoned too many times') "
            "WHERE state = 'running' AND claimed_at < ? AND attempts >= ?",
            (now_iso(), stale_before, max_attempts),
        )
        # A session whose job another worker is running waits: two runs over the same
        # messages at once would both create what the other is creating.
        rows = db.rows(
            "UPDATE jobs SET state = 'running', claimed_by = ?, claimed_at = ?, "
            "attempts = attempts + 1 WHERE id = ("
            "  SELECT id FROM jobs AS j WHERE (state = 'queued' "
            "  OR (state = 'running' AND claimed_at < ?)) AND NOT EXISTS ("
            "    SELECT 1 FROM jobs AS busy WHERE busy.session_id IS j.session_id "
            "    AND busy.id != j.id AND busy.state = 'running' AND busy.claimed_at >= ?"
            "  ) ORDER BY id LIMIT 1"
            ") RETURNING *",
            (worker, now_iso(), stale_before, stale_before),
        )
    return _job(rows[0]) if rows else None


def running_claims(db: Database) -> list[tuple[int, str | None]]:
    """(job id, who claimed it) of every running job."""
    return [
        (int(job_id), claimed_by)
        for job_id, claimed_by in db.tuples(
            "SELECT id, claimed_by FROM jobs WHERE state = 'running' ORDER BY id"
        )
    ]


def release(db: Database, job_id: int, claimed_by: str | None, max_attempts: int) -> bool:
    """Take a running job back from a holder that died: queued again, or failed when it
    has used its attempts. False when the job moved on meanwhile (finished, re-claimed)."""
    db.execute(
        "UPDATE jobs SET state = CASE WHEN attempts >= ? THEN 'failed' ELSE 'queued' END, "
        "finished_at = CASE WHEN attempts >= ? THEN ? END, "
        "error = 'its worker (' || claimed_by || ') died' "
        "WHERE id = ? AND state = 'running' AND claimed_by IS ?",
        (max_attempts, max_attempts, now_iso(), job_id, claimed_by),
    )
    return db.changes > 0


def finish(db: Database, job_id: int, run_id: str | None) -> None:
    db.execute(
        "UPDATE jobs SET state = 'done', finished_at = ?, run_id = ?, error = NULL WHERE id = ?",
        (now_iso(), run_id, job_id),
    )


def fail(db: Database, job_id: int, error: str, retry: bool) -> None:
    """Record a failure; a job with attempts left goes back to the queue."""
    db.execute(
        "UPDATE jobs SET state = ?, finished_at = ?, error = ? WHERE id = ?",
        ("queued" if retry else "failed", None if retry else now_iso(), error, job_id),
    )


def get_job(db: Database, job_id: int) -> Job | None:
    rows = db.rows("SELECT * FROM jobs WHERE id = ?", (job_id,))
    return _job(rows[0]) if rows else None


def job_counts(db: Database) -> dict[str, int]:
    rows = db.rows("SELECT state, count(*) AS n FROM jobs GROUP BY state")
    return {r["state"]: r["n"] for r in rows}
