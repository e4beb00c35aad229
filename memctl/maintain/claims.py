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

from memctl.ingest.run import holder_gone
from memctl.store import jobs
from memctl.store.database import Database
from memctl.store.maintenance import mark_runs
from memctl.store.runs import running_runs

# What a run whose process died while it ran is marked (importing its file again undoes
# and redoes it).
DEAD_RUN = "failed"


def worker_name(role: str) -> str:
    """Who claimed a job: ``worker@host:pid``, shown on the job while it runs."""
    return f"{role}@{socket.gethostname()}:{os.getpid()}"


def release_orphans(db: Database, max_attempts: int) -> list[int]:
    """Put back (or, out of attempts, fail) every running job whose holder died here, and
    mark failed every run whose process died here."""
    host = socket.gethostname()
    released = []
    for job_id, claimed_by in jobs.running_claims(db):
        if holder_gone(claimed_by, host) and jobs.release(db, job_id, claimed_by, max_attempts):
            released.append(job_id)
    fail_dead_runs(db)
    return released


def fail_dead_runs(db: Database) -> list[str]:
    """Mark failed every run still marked running whose process died here (kill -9);
    their ids."""
    host = socket.gethostname()
    dead = [run_id for run_id, holder in running_runs(db) if holder_gone(holder, host)]
    if dead:
        with db.atomic():
            mark_runs(db, dead, DEAD_RUN)
    return dead
