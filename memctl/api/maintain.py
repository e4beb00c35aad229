"""Maintenance, what cron runs: for now, finishing the queued ingest jobs."""

from __future__ import annotations

from dataclasses import dataclass

from memctl.api.ingest import drain_jobs
from memctl.context import Context
from memctl.maintain.queue import DrainReport


@dataclass(frozen=True)
class MaintainRequest:
    pass


@dataclass(frozen=True)
class MaintainResult:
    jobs: DrainReport


def maintain(ctx: Context, request: MaintainRequest) -> MaintainResult:
    """Run every maintenance task; safe from cron and twice at once."""
    return MaintainResult(jobs=drain_jobs(ctx, "maintain"))
