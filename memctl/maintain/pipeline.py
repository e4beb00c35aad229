"""``memctl maintain``: the list of tasks, run in order under one lock as one run.

``maintain.tasks`` lists the tasks (rescrub, jobs, decay, consolidate, dedup, archive,
graph, profile, upkeep, sync); rescrub runs first when the list does not name it, unless
it names it off (``-rescrub``); ``only`` / ``skip`` choose among them. A second maintain while
one runs finds the lock file taken and returns at once (``locked``). The store's
integrity is checked first when upkeep is among the tasks: a damaged store
stops the run before anything is written. Every change is an event of the
run (kind maintain), so ``memctl runs`` shows it and ``memctl undo`` reverts it;
a run killed midway is marked interrupted by the next, which finishes the work.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from threadpoolctl import threadpool_limits

from memctl.config import Settings
from memctl.context import Context
from memctl.errors import UsageError
from memctl.ingest.pending import pending_dir
from memctl.ingest.run import start_run
from memctl.ingest.spool import spool_dir
from memctl.llm import choose_llm
from memctl.maintain.archive import archive
from memctl.maintain.consolidate import consolidate
from memctl.maintain.decay import decay
from memctl.maintain.dedup import dedup
from memctl.maintain.graph import graph
from memctl.maintain.jobs import jobs
from memctl.maintain.lock import maintain_lock
from memctl.maintain.plan import Maintenance
from memctl.maintain.profile import profile
from memctl.maintain.report import MaintainReport, TaskReport
from memctl.maintain.rescrub import rescrub
from memctl.maintain.sync_hook import sync
from memctl.maintain.upkeep import check_integrity, upkeep
from memctl.model import now_iso
from memctl.store.maintenance import (
    forget_compared,
    mark_runs,
    stale_running_runs,
    vacuum_into,
)
from memctl.store.runs import save_run
from memctl.store.touches import apply_spooled, spool_path

Task = Callable[[Maintenance], TaskReport]
TASKS: dict[str, Task] = {
    "rescrub": rescrub,
    "jobs": jobs,
    "decay": decay,
    "consolidate": consolidate,
    "dedup": dedup,
    "archive": archive,
    "graph": graph,
    "profile": profile,
    "upkeep": upkeep,
    "sync": sync,
}
KIND = "maintain"
# Decay's changes are too many to list on the run; its events hold them.
UNLISTED = ("decay",)
# The tasks that change nothing but the store: a dry run runs them on a copy of it.
REHEARSED = ("jobs", "decay", "consolidate", "dedup", "archive", "graph", "profile")


# The tasks that run, first, whether or not ``maintain.tasks`` names them: a list a user
# wrote before one existed names the tasks it knew, and still wants a secret the privacy
# filter now finds taken out of the store. Named off only as ``-rescrub`` in that list
# (or ``--skip rescrub`` for a run); a run while the filter is unchanged reads nothing.
SAFETY = ("rescrub",)
NAMED_OFF = "-"


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        raise UsageError(
            f"unknown maintain task {unknown[0]!r}: expected some of {', '.join(TASKS)}"
        )
    return names


def configured_tasks(text: str) -> list[str]:
    """The tasks ``maintain.tasks`` runs, in its order: the ``SAFETY`` tasks it does not
    name first, unless it names them off (``-rescrub``)."""
    entries = [n.strip() for n in text.split(",") if n.strip()]
    off = set(_names(",".join(e[len(NAMED_OFF) :] for e in entries if e.startswith(NAMED_OFF))))
    names = _names(",".join(e for e in entries if not e.startswith(NAMED_OFF)))
    added = [n for n in SAFETY if n not in names]
    return [n for n in [*added, *names] if n not in off]


def chosen_tasks(settings: Settings, only: str | None, skip: str | None) -> list[str]:
    """The tasks to run, in ``maintain.tasks`` order."""
    names = configured_tasks(settings.maintain_tasks)
    if only:
        wanted = set(_names(only))
        names = [n for n in names if n in wanted]
    if skip:
        names = [n for n in names if n not in set(_names(skip))]
    return names


def _record(m: Maintenance) -> None:
    record = m.run.record
    record.counts.update({f"{r.task}.{k}": n for r in m.reports for k, n in r.counts.items()})
    record.decisions = [
        {"task": r.task, **c} for r in m.reports if r.task not in UNLISTED for c in r.changes
    ]
    # The run's own notes (an LLM that failed, ...) first, then each task's.
    record.notes = [*record.notes, *(f"{r.task}: {note}" for r in m.reports for note in r.notes)]
    with m.db.atomic():
        save_run(m.db, record)


def run_tasks(
    ctx: Context,
    names: list[str],
    dry_run: bool = False,
    now: datetime | None = None,
    full: bool = False,
) -> MaintainReport:
    """Run the named tasks as one run (the caller holds the lock).

    ``full`` forgets what earlier runs compared, so dedup and merge compare every memory
    with every other again (what a run with no memory of earlier runs does).

    A dry run runs the tasks that only change the store (``REHEARSED``) for real on a
    copy of it, so its plan is what the run would do, each task seeing the one before's
    changes (decay's strengths, consolidate's episodes); the others say what they would do.
    """
    now = now or datetime.now(UTC)
    if not dry_run:
        return _run(ctx, names, False, now, full)
    plan = _run(ctx, [n for n in names if n not in REHEARSED], True, now)
    rehearsed = [n for n in names if n in REHEARSED]
    if rehearsed and plan.run is not None:
        with rehearsal(ctx) as copy:
            done = _run(copy, rehearsed, False, now, full)
        for report in done.tasks:
            report.status = "planned" if report.status == "done" else report.status
        plan.run.tokens += done.run.tokens if done.run else 0
        order = {name: i for i, name in enumerate(names)}
        plan.tasks = sorted([*plan.tasks, *done.tasks], key=lambda r: order[r.task])
    return plan


@contextlib.contextmanager
def rehearsal(ctx: Context) -> Iterator[Context]:
    """A context on a throwaway copy of the store (and of its spools and pending marks),
    deleted afterwards."""
    with tempfile.TemporaryDirectory(prefix=".dry-run-", dir=ctx.settings.home) as folder:
        home = Path(folder)
        vacuum_into(ctx.db, home / ctx.settings.db_path.name)
        for kept in (spool_dir(ctx), pending_dir(ctx.settings.home)):
            if kept.is_dir():
                shutil.copytree(kept, home / kept.relative_to(ctx.settings.home))
        touches = spool_path(ctx.settings.db_path)
        if touches.exists():
            shutil.copyfile(touches, spool_path(home / ctx.settings.db_path.name))
        with ctx.elsewhere(dataclasses.replace(ctx.settings, home=home)) as copy:
            yield copy


def _run(
    ctx: Context, names: list[str], dry_run: bool, now: datetime, full: bool = False
) -> MaintainReport:
    settings = ctx.settings
    llm = choose_llm(settings)
    run = start_run(
        ctx,
        KIND,
        llm.llm,
        settings.project_scope,
        dry_run=dry_run,
        token_budget=settings.maintain_token_budget,
        llm_note=llm.note,
    )
    m = Maintenance(run, now)
    if "upkeep" in names:
        check_integrity(m)
    if not dry_run:
        apply_spooled(ctx.db)  # recall's touches, before decay and archive read them
        with ctx.db.atomic():
            mark_runs(ctx.db, stale_running_runs(ctx.db, KIND), "interrupted")
            save_run(ctx.db, run.record)
            if full:
                forget_compared(ctx.db)
    # A power cut loses at most the last steps (the store stays consistent); a rerun redoes them.
    with ctx.db.without_fsync(), threadpool_limits(settings.maintain_threads, "blas"):
        for name in names:
            TASKS[name](m)
    run.record.status, run.record.finished_at = ("planned" if dry_run else "done"), now_iso()
    if not dry_run:
        _record(m)
    return MaintainReport(m.reports, run.record, dry_run)


def maintain(
    ctx: Context,
    only: str | None = None,
    skip: str | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
    full: bool = False,
) -> MaintainReport:
    """Run maintenance under the lock; a report saying who holds it when another runs."""
    names = chosen_tasks(ctx.settings, only, skip)
    with maintain_lock(ctx.settings) as holder:
        if holder is not None:
            return MaintainReport(dry_run=dry_run, locked_by=holder)
        return run_tasks(ctx, names, dry_run, now, full)
