"""Undo a run: revert every memory change it made, newest first, as a run of its own.

A created memory is set to state deleted (the row and its history stay); an
update gets its old values back (re-embedded when the text changes); a state
change is reversed with the fields it set; an edge the run added is removed.
A memory something else changed after the run is left alone and reported,
unless ``force``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.model import Action, Event, RelationType, State, content_hash, new_id, now_iso
from memctl.store import memories as store
from memctl.store.events import changed_since, log_event, run_events
from memctl.store.relations import remove_relation
from memctl.store.runs import RunRecord, get_run, resolve_run_id, save_run

Vectors = dict[str, bytes]  # text -> its vector as a sqlite-vec blob


@dataclass
class UndoReport:
    run_id: str
    undo_run_id: str
    reverted: int = 0
    skipped: list[str] = field(default_factory=list)  # memory ids changed since


def _revert_create(ctx: Context, event: Event, run_id: str, vectors: Vectors) -> None:
    memory = store.get_memory(ctx.db, event.memory_id or "")
    if memory is None or memory.state == State.DELETED:
        return
    store.update_memory(ctx.db, memory.id, {"state": State.DELETED, "updated_at": now_iso()})
    log_event(
        ctx.db,
        Action.STATE,
        memory.id,
        {
            "from": str(memory.state),
            "to": str(State.DELETED),
            "reason": "undo",
            "undo_of": event.run_id,
        },
        run_id,
    )


def _revert_update(ctx: Context, event: Event, run_id: str, vectors: Vectors) -> None:
    memory = store.get_memory(ctx.db, event.memory_id or "")
    before: dict[str, Any] = event.data.get("before") or {}
    if memory is None or not before:
        return
    now = {k: getattr(memory, k) for k in before}
    changes = dict(before)
    if "content" in changes:
        changes["content_hash"] = content_hash(changes["content"])
        store.put_vector(ctx.db, memory.id, vectors[changes["content"]])
    store.update_memory(ctx.db, memory.id, {**changes, "updated_at": now_iso()})
    log_event(
        ctx.db,
        Action.UPDATE,
        memory.id,
        {"before": now, "after": before, "reason": "undo", "undo_of": event.run_id},
        run_id,
    )


def _revert_state(ctx: Context, event: Event, run_id: str, vectors: Vectors) -> None:
    memory = store.get_memory(ctx.db, event.memory_id or "")
    if memory is None:
        return
    restored = {"state": State(event.data["from"]), **(event.data.get("before") or {})}
    store.update_memory(ctx.db, memory.id, {**restored, "updated_at": now_iso()})
    log_event(
        ctx.db,
        Action.STATE,
        memory.id,
        {
            "from": str(memory.state),
            "to": event.data["from"],
            "reason": "undo",
            "undo_of": event.run_id,
        },
        run_id,
    )


def _revert_link(ctx: Context, event: Event, run_id: str, vectors: Vectors) -> None:
    data = event.data
    if data.get("existed"):
        return
    remove_relation(ctx.db, data["src_id"], data["dst_id"], RelationType(data["type"]))
    log_event(ctx.db, Action.UNLINK, event.memory_id, {**data, "reason": "undo"}, run_id)


def _restored_vectors(ctx: Context, events: list[Event]) -> Vectors:
    """The vectors of the texts undo puts back, embedded before its write transaction."""
    texts = sorted(
        {
            str(e.data["before"]["content"])
            for e in events
            if e.action == Action.UPDATE and "content" in (e.data.get("before") or {})
        }
    )
    return dict(zip(texts, ctx.vectors(texts), strict=True)) if texts else {}


REVERT = {
    Action.CREATE: _revert_create,
    Action.IMPORT: _revert_create,
    Action.UPDATE: _revert_update,
    Action.STATE: _revert_state,
    Action.LINK: _revert_link,
}


def undo(ctx: Context, run_prefix: str, force: bool = False) -> UndoReport:
    """Revert one run in one transaction; the undo is itself a run (kind undo)."""
    run = get_run(ctx.db, resolve_run_id(ctx.db, run_prefix))
    if run is None:
        raise NotFoundError(f"no run with id {run_prefix}")
    if run.kind == "undo":
        raise UsageError(f"run {run.id[:12]} is an undo; undo the run it reverted instead")
    if run.undone_by:
        raise UsageError(f"run {run.id[:12]} was already undone by run {run.undone_by[:12]}")
    events = run_events(ctx.db, run.id)
    last_event = {e.memory_id: e.id for e in events if e.memory_id}
    changed = {
        memory_id
        for memory_id, event_id in last_event.items()
        if not force and changed_since(ctx.db, memory_id, event_id, run.id)
    }
    vectors = _restored_vectors(ctx, [e for e in events if e.memory_id not in changed])
    record = RunRecord(id=new_id(), kind="undo", undo_of=run.id, session_id=run.session_id)
    report = UndoReport(run.id, record.id, skipped=sorted(changed))
    with ctx.db.atomic():
        for event in reversed(events):
            if event.memory_id in changed or event.action not in REVERT:
                continue
            REVERT[event.action](ctx, event, record.id, vectors)
            report.reverted += 1
        record.status, record.finished_at = "done", now_iso()
        record.counts = {"reverted": report.reverted, "left_alone": len(changed)}
        record.notes = [f"left alone (changed since): {m}" for m in report.skipped]
        run.undone_by = record.id
        run.status = "undone"
        save_run(ctx.db, record)
        save_run(ctx.db, run)
    return report
