"""Maintenance, what cron runs: the task pipeline, restoring a backup, the schedule."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memctl.context import Context
from memctl.errors import UsageError
from memctl.maintain.report import MaintainReport
from memctl.maintain.report import TaskReport as TaskReport


@dataclass(frozen=True)
class MaintainRequest:
    only: str | None = None  # comma-separated task names
    skip: str | None = None
    dry_run: bool = False
    now: datetime | None = None  # the run's clock (tests, "what if"); default: now
    full: bool = False  # compare every memory again, not only what changed since the last run


MaintainResult = MaintainReport


def maintain(ctx: Context, request: MaintainRequest) -> MaintainResult:
    """Run every maintenance task; safe from cron and twice at once."""
    from memctl.maintain.pipeline import maintain as run

    return run(ctx, request.only, request.skip, request.dry_run, request.now, request.full)


@dataclass(frozen=True)
class RestoreRequest:
    backup: Path


@dataclass(frozen=True)
class RestoreResult:
    restored: Path
    previous_saved_as: Path


def restore(ctx: Context, request: RestoreRequest) -> RestoreResult:
    """Put a backup in the store's place, after backing up the current store."""
    from memctl.maintain.backup import restore as put_back
    from memctl.maintain.lock import maintain_lock

    with maintain_lock(ctx.settings) as holder:
        if holder is not None:
            raise UsageError(f"a maintain is running (pid {holder}); restore when it is done")
        saved = put_back(ctx.settings, ctx.db, request.backup.expanduser())
        ctx.close()
    return RestoreResult(request.backup, saved)
