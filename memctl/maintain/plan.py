"""What every maintain task works with: the run, its clock, and one report per task.

A task is a function ``task(m: Maintenance) -> TaskReport``. On a dry run it
fills its report with what it would change (ids and why) and writes nothing;
otherwise every change it writes goes through ``m.writer`` (store/writes.py) as an
event of the run, so ``memctl undo RUN_ID`` reverts it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memctl.config import Settings
from memctl.context import Context
from memctl.ingest.run import Run
from memctl.maintain.report import TaskReport
from memctl.model import format_time
from memctl.store.database import Database
from memctl.store.events import forgotten_since
from memctl.store.writes import Writer


@dataclass
class Maintenance:
    run: Run
    now: datetime
    reports: list[TaskReport] = field(default_factory=list)

    @property
    def ctx(self) -> Context:
        return self.run.ctx

    @property
    def db(self) -> Database:
        return self.run.db

    @property
    def settings(self) -> Settings:
        return self.run.settings

    @property
    def dry_run(self) -> bool:
        return self.run.dry_run

    @property
    def stamp(self) -> str:
        """The run's clock as a stored timestamp."""
        return format_time(self.now)

    @property
    def writer(self) -> Writer:
        """Where the run's changes go: each one an event of the run, stamped by its clock."""
        return Writer(self.db, self.run.id, self.stamp)

    def ago(self, days: float) -> str:
        """The timestamp ``days`` before the run's clock."""
        return format_time(self.now - timedelta(days=days))

    def overtaken(self, since: int, report: TaskReport) -> bool:
        """In a write transaction: whether a forget or a redact came after event ``since``
        (what a task read before, and asked a model about, may hold the text it took out);
        noted on ``report``, and the task writes nothing of it (the next run reads again)."""
        if not forgotten_since(self.db, since):
            return False
        report.notes.append("a forget or redact meanwhile: the rest waits for the next run")
        return True

    def report(self, task: str) -> TaskReport:
        """A new report for ``task``, kept in order."""
        report = TaskReport(task, status="planned" if self.dry_run else "done")
        self.reports.append(report)
        return report
