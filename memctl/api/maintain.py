"""Maintenance, what cron runs: for now, storing spooled transcripts and finishing the
queued ingest jobs (those of workers that died included)."""

from __future__ import annotations

from dataclasses import dataclass

from memctl.api.ingest import drain_jobs, recover
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
    recover(ctx)
    return MaintainResult(jobs=drain_jobs(ctx, "maintain"))
