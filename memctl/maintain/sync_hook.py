"""Task sync: pull and push the team's sync repository when ``sync.auto`` is on and a
repository is configured (``memctl sync init REMOTE``), through ``synced``: the sync, then
the forget here of what another machine forgot (``memctl sync`` runs it too).

A dry run asks sync for its own dry run (what would come in and go out). A
sync failure (git missing, remote unreachable) is noted on the task and does
not fail the other tasks' work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memctl.context import Context
from memctl.errors import MemctlError
from memctl.maintain.plan import Maintenance
from memctl.maintain.report import TaskReport

if TYPE_CHECKING:
    from memctl.sync import SyncRequest, SyncResult
    from memctl.sync.incoming import Progress


def sync(m: Maintenance) -> TaskReport:
    report = m.report("sync")
    if not m.settings.sync_auto:
        return report.skip("sync.auto is off")
    if not m.settings.sync_remote:
        return report.skip("no sync repository configured (memctl sync init REMOTE)")
    from memctl.sync import SyncRequest

    try:
        result = synced(m.ctx, SyncRequest(dry_run=m.dry_run))
    except MemctlError as error:
        return report.skip(f"sync failed: {error}")
    report.change("sync", result.run_id or "-", remote=result.remote)
    return report


def synced(ctx: Context, request: SyncRequest, progress: Progress | None = None) -> SyncResult:
    """One sync (``memctl.sync.sync_now``), then, unless a dry run, the forget here of each
    memory another machine removed for good (``forgetting.forget_pulled``) and the
    redaction here of the text another machine redacted (``redaction.redact_pulled``):
    outside the sync's lock, which they take; after a sync that failed past its import
    too. ``came_in["forgotten"]`` counts the memories taken out, ``came_in["redacted"]``
    the values and texts."""
    from memctl.maintain.forgetting import forget_pulled
    from memctl.maintain.redaction import redact_pulled
    from memctl.sync import sync_now
    from memctl.sync.incoming import quiet

    if request.dry_run:
        return sync_now(ctx, request, progress or quiet)
    try:
        result = sync_now(ctx, request, progress or quiet)
    finally:
        forgotten = forget_pulled(ctx)
        redacted = redact_pulled(ctx)
    if forgotten is not None:
        result.came_in["forgotten"] = len(forgotten.memories)
    if redacted:
        result.came_in["redacted"] = redacted
    return result
