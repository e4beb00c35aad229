"""Task jobs: capture what hooks left pending, then finish the queued ingest and import work
(each job is an ingest run of its own)."""

from __future__ import annotations

from memctl.errors import DatabaseBusyError
from memctl.ingest.pending import Chunked, capture_grown
from memctl.ingest.spool import replay
from memctl.maintain.claims import release_orphans, worker_name
from memctl.maintain.plan import Maintenance, TaskReport
from memctl.maintain.queue import drain
from memctl.memories.privacy import safe_line


def jobs(m: Maintenance) -> TaskReport:
    report = m.report("jobs")
    for entry, done in capture_grown(m.ctx, report.notes.append):  # hooks left them pending
        if isinstance(done, Chunked):
            named = done.session_id or safe_line(entry.path)
            report.change("captured", named, messages=done.messages_new)
    try:  # a hook's spooled transcripts, and the jobs of workers that died
        replayed = replay(m.ctx)
        released = release_orphans(m.db, m.ctx.settings.ingest_job_max_attempts)
    except DatabaseBusyError:
        report.notes.append("database busy: spooled transcripts wait for the next run")
    else:
        for captured in replayed.stored:
            report.change("spooled", captured.session.id)
        if released:
            report.count("requeued", len(released))
    drained = drain(m.ctx, worker_name("maintain"), report.notes.append)
    for note in dict.fromkeys(item.get("llm_note") for item in drained.done):
        if note:
            report.notes.append(str(note))
    for item in drained.done:
        report.change("job", str(item["job"]), run=item["run"])
    for item in drained.failed:
        report.change("job_failed", str(item["job"]), error=item["error"])
    return report
