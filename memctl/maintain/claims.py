"""Who holds a job (``role@host:pid``), and taking back the jobs whose holder died.

A worker killed mid-job (``kill -9``, a closed laptop lid, an out-of-memory
kill) leaves its job ``running``. When its process is gone from this host,
the next ingest or maintain puts the job back in the queue at once instead of
waiting ``ingest.job_stale_seconds``. A holder on another host (a shared
home) cannot be checked from here: its job waits for the stale limit.

Light on imports: the hook's fast path calls ``release_orphans``.
"""

from __future__ import annotations

import os
import socket

from memctl.store import jobs
from memctl.store.database import Database


def worker_name(role: str) -> str:
    """Who claimed a job: ``worker@host:pid``, shown on the job while it runs."""
    return f"{role}@{socket.gethostname()}:{os.getpid()}"


def holder_gone(claimed_by: str | None, host: str) -> bool:
    """True when ``claimed_by`` names a process on ``host`` that no longer runs."""
    _, at, where = (claimed_by or "").rpartition("@")
    name, colon, pid = where.rpartition(":")
    if not at or not colon or name != host or not pid.isdigit():
        return False
    return not _alive(int(pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process holds that pid now
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return not stat.read().rpartition(") ")[2].startswith("Z")  # a zombie is dead
    except OSError:
        return True


def release_orphans(db: Database, max_attempts: int) -> list[int]:
    """Put back (or, out of attempts, fail) every running job whose holder died here."""
    host = socket.gethostname()
    released = []
    for job_id, claimed_by in jobs.running_claims(db):
        if holder_gone(claimed_by, host) and jobs.release(db, job_id, claimed_by, max_attempts):
            released.append(job_id)
    return released
