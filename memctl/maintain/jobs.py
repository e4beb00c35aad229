"""Task jobs: finish the queued ingest and import work (each job is an ingest run of its own)."""

from __future__ import annotations

from memctl.maintain.plan import Maintenance, TaskReport
from memctl.maintain.queue import drain, worker_name
from memctl.store.jobs import job_counts


def jobs(m: Maintenance) -> TaskReport:
    report = m.report("jobs")
    if m.dry_run:
        report.counts["queued"] = job_counts(m.db).get("queued", 0)
        return report
    drained = drain(m.ctx, worker_name("maintain"), report.notes.append)
    for item in drained.done:
        report.change("job", str(item["job"]), run=item["run"])
    for item in drained.failed:
        report.change("job_failed", str(item["job"]), error=item["error"])
    return report
