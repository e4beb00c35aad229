"""Task sync: pull and push the team's sync repository when ``sync.auto`` is on and a
repository is configured (``memctl sync init REMOTE``), through ``memctl.sync.sync_now``.

A dry run asks sync for its own dry run (what would come in and go out). A
sync failure (git missing, remote unreachable) is noted on the task and does
not fail the other tasks' work.
"""

from __future__ import annotations

from memctl.errors import MemctlError
from memctl.maintain.plan import Maintenance
from memctl.maintain.report import TaskReport


def sync(m: Maintenance) -> TaskReport:
    report = m.report("sync")
    if not m.settings.sync_auto:
        return report.skip("sync.auto is off")
    if not m.settings.sync_remote:
        return report.skip("no sync repository configured (memctl sync init REMOTE)")
    from memctl.sync import SyncRequest, sync_now

    try:
        result = sync_now(m.ctx, SyncRequest(dry_run=m.dry_run))
    except MemctlError as error:
        return report.skip(f"sync failed: {error}")
    report.change("sync", result.run_id or "-", remote=result.remote)
    return report
