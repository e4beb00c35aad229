"""Undo a run: revert every memory change it made, newest first, as a run of its own.

Each event is reverted by the module that wrote it (store/writes.py): a created
memory is set to state deleted (the row and its history stay); an update gets its
old values back (re-embedded when the text changes); a state change is reversed with
the fields it set; an edge the run added is removed. A memory something else changed
after the run is left alone and reported, unless ``force``. Without a run id, undo takes
back the newest direct edit (remember, update, forget, delete, link, unlink, purge) not
undone yet, so a person can undo their last edit, and the one before, without looking
anything up. Undoing an undo puts back what its run did (a redo), and that run can be
undone again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.model import Action, Event, new_id, now_iso
from memctl.store.database import Database
from memctl.store.events import changed_since, run_events
from memctl.store.memories import get_memory
from memctl.store.runs import (
    EDIT_KIND,
    RunRecord,
    get_run,
    last_edit,
    resolve_run_id,
    save_run,
)
from memctl.store.sessions import get_session
from memctl.store.writes import REVERTED, Writer, restored_texts


@dataclass
class UndoReport:
    run_id: str
    undo_run_id: str
    kind: str  # of the run undone
    counts: dict[str, int]  # what the run undone did
    notes: list[str]  # of the run undone (an edit's: what it did to which memories)
    reverted: int = 0
    skipped: list[str] = field(default_factory=list)  # memory ids changed since

    def left_alone(self) -> str:
        """What it left alone and how to revert that too, in one line ('' when nothing):
        the run is undone now, so its undo is undone first (which puts back what it
        reverted), then the run again with force."""
        if not self.skipped:
            return ""
        n = len(self.skipped)
        return (
            f"left {n} {'memory' if n == 1 else 'memories'} alone, changed since the run "
            f"({', '.join(m[:8] for m in self.skipped)}); to revert them too: "
            f"`memctl undo {self.undo_run_id[:12]}`, then `memctl undo {self.run_id[:12]} --force`"
        )


def undo(
    ctx: Context, run_prefix: str | None = None, force: bool = False, batch: str | None = None
) -> UndoReport:
    """Revert one run (None: the newest edit not undone) in one transaction; the undo is
    itself a run (kind undo), in ``batch`` when it is one of several (``ingest.batches``)."""
    if run_prefix is None:
        run = last_edit(ctx.db)
        if run is None:
            raise NotFoundError("no edit to undo; `memctl runs` lists the runs undo can revert")
    else:
        run = get_run(ctx.db, resolve_run_id(ctx.db, run_prefix))
    if run is None:
        raise NotFoundError(f"no run with id {run_prefix}")
    if run.undone_by:
        raise UsageError(f"run {run.id[:12]} was already undone by run {run.undone_by[:12]}")
    events = run_events(ctx.db, run.id)
    reason = refusal(run, events)
    if reason is not None:
        raise refused(run, reason)
    last_event = {e.memory_id: e.id for e in events if e.memory_id}
    changed = {
        memory_id
        for memory_id, event_id in last_event.items()
        if not force and changed_since(ctx.db, memory_id, event_id, run.id)
    }
    texts = restored_texts([e for e in events if e.memory_id not in changed])
    vectors = dict(zip(texts, ctx.vectors(texts), strict=True)) if texts else {}
    record = RunRecord(
        id=new_id(),
        kind="undo",
        undo_of=run.id,
        session_id=run.session_id,
        door=ctx.door,
        batch=batch,
    )
    report = UndoReport(run.id, record.id, run.kind, run.counts, run.notes, skipped=sorted(changed))
    writer = Writer(ctx.db, record.id)
    wanted = [e for e in reversed(events) if e.memory_id not in changed and e.action in REVERTED]
    with ctx.db.atomic():
        for event in wanted:
            report.reverted += writer.revert(event, vectors)
        stands = [m for m in changed if get_memory(ctx.db, m) is not None]  # not gone for good
        if stands and not report.reverted:  # what it did stands: it is not undone
            if batch is not None:  # one run of several: the others are undone, this one stands
                return report
            raise UsageError(nothing_reverted(run, report, _handed_over(ctx.db, run, stands)))
        record.status, record.finished_at = "done", now_iso()
        record.counts = {"reverted": report.reverted, "left_alone": len(changed)}
        record.notes = [f"left alone (changed since): {m}" for m in report.skipped]
        run.undone_by = record.id
        run.status = "undone"
        save_run(ctx.db, record)
        save_run(ctx.db, run)
        redone = get_run(ctx.db, run.undo_of) if run.kind == "undo" and run.undo_of else None
        if redone is not None:  # undoing an undo redoes its run: that can be undone again
            redone.undone_by, redone.status = None, "done"
            save_run(ctx.db, redone)
    return report


def _handed_over(db: Database, run: RunRecord, memory_ids: list[str]) -> dict[str, str]:
    """Of these memories, those another session now states, the run's session forgotten
    (``sessions forget`` kept them as that session's): memory id -> that session."""
    session = get_session(db, run.session_id) if run.session_id else None
    if session is None or session.forgotten_at is None:
        return {}
    now = {m: get_memory(db, m) for m in memory_ids}
    return {
        m: memory.session_id
        for m, memory in now.items()
        if memory and memory.session_id and memory.session_id != run.session_id
    }


def nothing_reverted(run: RunRecord, report: UndoReport, handed: dict[str, str]) -> str:
    """Why an undo that would put nothing back, every memory its run changed having been
    changed since (or, its session forgotten, kept as another session's: ``handed``),
    leaves ``run`` as it is (not undone)."""
    n, ids = len(report.skipped), ", ".join(m[:8] for m in report.skipped)
    if handed and len(handed) == n:
        owners = ", ".join(f"{m[:8]} ({s})" for m, s in sorted(handed.items()))
        return (
            f"{run.kind} {run.id[:8]} is left as it is: its session was "  # kept keyed
            f"forgotten, and what it stored that another session states too is that "
            f"session's now: {owners}; `memctl delete ID` deletes one"
        )
    what = "the memory it changed was" if n == 1 else f"all {n} memories it changed were"
    return (
        f"{run.kind} {run.id[:8]} is left as it is: {what} changed since ({ids}); "
        f"`memctl undo {run.id[:12]} --force` reverts anyway"
    )


NOTHING_LEFT = "nothing is left to put back"


def refused(run: RunRecord, reason: str) -> UsageError:
    notes = f" ({'; '.join(run.notes)})" if run.notes else ""
    return UsageError(
        f"{run.kind} {run.id[:8]}{notes} cannot be undone: {reason}; "
        "`memctl undo RUN_ID` takes back an earlier run (`memctl runs`)"
    )


def refusal(run: RunRecord, events: list[Event]) -> str | None:
    """Why undo refuses ``run`` (its ``events``), in a few words; None: it can be undone
    (unless it was undone already)."""
    if any(forgot(e) for e in events):
        # a forget's other changes (a memory put back as it was before a forgotten text was
        # merged into it) hold `[forgotten]` where that text stood: undone, they would write it
        return "it forgot text for good"
    if run.kind == EDIT_KIND and not any(e.action in REVERTED for e in events):
        return NOTHING_LEFT
    return None


def forgot(event: Event) -> bool:
    """Whether ``event`` took text away for good (a forget, a purge)."""
    return event.action == Action.DELETE and bool(event.data.get("permanent"))


def changed(event: Event) -> bool:
    """Whether ``event`` changed a memory: one undo puts back, or a forget it refuses. An
    access, a re-embed and a conflict a sync kept (the other version standing) change none."""
    return event.action in REVERTED or forgot(event)


def why_not(db: Database, run: RunRecord) -> str | None:
    """``refusal`` of a run read from the store (the viewer's Runs page)."""
    return refusal(run, run_events(db, run.id))
