"""Task sync: push and pull the team's sync repository, when ``sync.auto`` is on.

It calls the sync package's ``sync_now(ctx)``; until that package provides it
(and its ``sync.auto`` key), the task is skipped with the note "sync not
available".
"""

from __future__ import annotations

import memctl.sync
from memctl.maintain.plan import Maintenance, TaskReport


def sync(m: Maintenance) -> TaskReport:
    report = m.report("sync")
    sync_now = getattr(memctl.sync, "sync_now", None)
    if sync_now is None:
        return report.skip("sync not available")
    if not getattr(m.settings, "sync_auto", False):
        return report.skip("sync.auto is off")
    if m.dry_run:
        return report
    outcome = sync_now(m.ctx)
    report.notes.append(str(outcome))
    return report
