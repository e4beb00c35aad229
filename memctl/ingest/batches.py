"""An import is one run: each of its files keeps a run of its own (the unit a crashed
import is recovered by, ``imports.pipeline``), and the runs share a batch id. ``runs``
shows a batch as one run and ``undo`` takes it back as one, its undo runs sharing a
batch of their own (so undoing that undo redoes the whole import)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.ingest.undo import NOTHING_LEFT, UndoReport, changed, refused, undo, why_not
from memctl.model import new_id
from memctl.store.database import Database
from memctl.store.events import run_events
from memctl.store.runs import RunRecord, batch_runs, get_run, resolve_run_id

# A batch's status: the first of these any of its runs has ("done" and "undone" mixed: done).
STATUS_ORDER = ("running", "failed", "interrupted", "done", "undone")
NOTES_KEPT = 10  # a batch's notes at most (its files' notes after the count of files)


def one_run(runs: list[RunRecord]) -> RunRecord:
    """The runs of one batch (in the order they started) as one run: the first's id and
    start, the counts, messages, facts and tokens of all, the status of the least settled."""
    head = runs[0]
    if len(runs) == 1:
        return head
    counts: Counter[str] = Counter()
    for run in runs:
        counts.update(run.counts)
    counts = +counts  # a count no file of the batch made ("0 skipped") is not one
    statuses = {run.status for run in runs}
    status = next((s for s in STATUS_ORDER if s in statuses), head.status)
    finished = [run.finished_at for run in runs]
    # each note once: files that fell back to the rules each say why, in the same words
    said = dict.fromkeys(n for run in runs for n in run.notes)
    notes = [f"one {head.kind} of {len(runs)} files", *said]
    return replace(
        head,
        status=status,
        counts=dict(counts),
        decisions=[d for run in runs for d in run.decisions],
        messages=sum(run.messages for run in runs),
        facts=sum(run.facts for run in runs),
        tokens=sum(run.tokens for run in runs),
        finished_at=None if None in finished else max(f for f in finished if f),
        notes=notes[: NOTES_KEPT + 1],
        undone_by=head.undone_by if all(run.undone_by for run in runs) else None,
    )


def batch_refusal(db: Database, members: list[RunRecord]) -> str | None:
    """Why a person's undo refuses the runs of one batch (or one run) not undone yet: any
    one's reason; or, when not one of them changed anything (a session of small talk
    stored, no memory made), that nothing is left to put back. Its Undo on the viewer's
    Runs page made an undo run of "0 changes reverted" (the first-hour walk); a file of an
    import that stored nothing beside others that did is undone with them."""
    left = [m for m in members if not m.undone_by]
    reason = next((why for m in left if (why := why_not(db, m))), None)
    if reason is None and changed_nothing(db, members):
        return NOTHING_LEFT
    return reason


def changed_nothing(db: Database, members: list[RunRecord]) -> bool:
    """Whether the runs of one batch (or one run) not undone yet are some and not one of
    them changed a memory (a sync that only wrote files out, or only kept a conflict, its
    own version standing; a session captured that stored none): undo has nothing to put
    back (its undo run was one of 0 changes)."""
    left = [m for m in members if not m.undone_by]
    return bool(left) and not any(changed(e) for m in left for e in run_events(db, m.id))


def undo_batch(ctx: Context, run_prefix: str | None, force: bool = False) -> UndoReport:
    """Undo a run, or, when it is one of a batch, every run of the batch not undone yet
    (newest first), each undo run in one new batch; one report for all."""
    run = get_run(ctx.db, resolve_run_id(ctx.db, run_prefix)) if run_prefix else None
    if run_prefix is not None and run is None:
        raise NotFoundError(f"no run with id {run_prefix}")
    members = batch_runs(ctx.db, run.batch) if run and run.batch else [run] if run else []
    if run is not None and changed_nothing(ctx.db, members):
        raise refused(one_run(members), NOTHING_LEFT)
    if run is None or run.batch is None:
        return undo(ctx, run_prefix, force)
    left = [member for member in members if not member.undone_by]
    if not left:
        raise UsageError(
            f"run {members[0].id[:12]} was already undone by run "
            f"{members[0].undone_by and members[0].undone_by[:12]}"
        )
    batch = new_id()
    reports = [undo(ctx, member.id, force, batch) for member in reversed(left)]
    whole = one_run(members)
    return UndoReport(
        whole.id,
        reports[0].undo_run_id,
        whole.kind,
        whole.counts,
        whole.notes,
        reverted=sum(r.reverted for r in reports),
        skipped=sorted({m for r in reports for m in r.skipped}),
    )
