"""The one write path (store/writes.py): every kind of write, from a run and from a
direct edit, is put back by the same module's revert, on a real SQLite file."""

from __future__ import annotations

from typing import Any

import pytest

from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.ingest.undo import undo
from memctl.memories import operations
from memctl.model import Memory, Relation, RelationType, State, Visibility, new_id
from memctl.store import memories as store
from memctl.store.events import run_events
from memctl.store.noise import noise_contents
from memctl.store.relations import relations_touching
from memctl.store.runs import EDIT_KIND, RunRecord, list_runs, save_run
from memctl.store.sync import withheld
from memctl.store.writes import REVERTED, Writer


def put(ctx: Context, content: str) -> Memory:
    memory = Memory(content=content)
    with ctx.db.atomic():
        Writer(ctx.db).create(memory, ctx.vectors([content])[0])
    return memory


def snapshot(ctx: Context, ids: list[str]) -> dict[str, Any]:
    """What undo must restore: every field but ``updated_at`` (undo stamps its own time),
    each vector, and every edge touching the memories."""
    rows = store.get_memories(ctx.db, ids)
    fields = {
        i: {k: v for k, v in m.to_dict().items() if k != "updated_at"} for i, m in rows.items()
    }
    edges = sorted(
        (r.src_id, r.dst_id, str(r.type), r.weight) for r in relations_touching(ctx.db, ids)
    )
    return {"fields": fields, "vectors": store.vectors_for(ctx.db, ids), "edges": edges}


def test_undo_puts_back_every_kind_of_write_of_a_run(ctx: Context) -> None:
    updated, archived, replaced, folded, faded, promoted, linked = (
        put(ctx, f"memory number {n} of the store") for n in range(7)
    )
    with ctx.db.atomic():  # an edge that was there before the run
        Writer(ctx.db).link(Relation(linked.id, faded.id, RelationType.RELATED, 0.4))
    ids = [m.id for m in (updated, archived, replaced, folded, faded, promoted, linked)]
    before = snapshot(ctx, ids)
    run = RunRecord(id=new_id(), kind="maintain")
    new = Memory(content="the memory the run made")
    writer = Writer(ctx.db, run.id)
    with ctx.db.atomic():
        save_run(ctx.db, run)
        writer.create(new, ctx.vectors([new.content])[0])
        text = "memory number 0, rewritten"
        writer.update(updated, {"content": text, "tags": ["x"]}, ctx.vectors([text])[0])
        writer.set_state(archived, State.ARCHIVED, "archive")
        writer.supersede(replaced, new.id, "supersede")
        writer.supersede_many([(folded, updated.id)], "duplicate")
        writer.link_many([(updated.id, folded.id)], RelationType.SUPERSEDES)
        writer.set_strengths([(faded.id, faded.strength, 0.25, faded.decayed_at)], "decay")
        writer.set_shared([promoted], True, "promote")
        writer.link(Relation(new.id, linked.id, RelationType.SUPPORTS))
        writer.link(Relation(linked.id, faded.id, RelationType.RELATED, 0.4), reweight=False)
    changed = snapshot(ctx, ids)
    assert all(changed["fields"][i] != before["fields"][i] for i in ids if i != linked.id)
    assert changed["vectors"][updated.id] != before["vectors"][updated.id]
    assert {a for a in (e.action for e in run_events(ctx.db, run.id))} <= REVERTED

    report = undo(ctx, run.id)

    # every event but the link of an edge already there at its weight, which changed nothing
    assert report.skipped == [] and report.reverted == len(run_events(ctx.db, run.id)) - 1
    assert snapshot(ctx, ids) == before
    made = store.get_memory(ctx.db, new.id)
    assert made is not None and made.state == State.DELETED
    assert relations_touching(ctx.db, [new.id]) == []


def test_each_direct_edit_is_a_run_that_undo_takes_back_newest_first(ctx: Context) -> None:
    """remember, update, link (new and re-weighted), unlink, forget --noise, delete, purge:
    each is a run of kind edit; undo without a run id takes back the newest not undone, one
    after another, to exactly the store as it was."""
    kept = operations.remember(ctx, "The deploy runs make release.")
    other = operations.remember(ctx, "Staging is on port 8080.")
    operations.link(ctx, kept.id, other.id, "related", 0.4)
    before = snapshot(ctx, [kept.id, other.id])
    operations.update(ctx, kept.id, content="The deploy runs make ship.", tags=["ops"])
    operations.link(ctx, kept.id, other.id, "supports", 0.5)
    operations.link(ctx, kept.id, other.id, "related", 0.9)
    operations.unlink(ctx, kept.id, other.id, "related")
    operations.forget(ctx, other.id, noise=True)
    operations.delete(ctx, kept.id)
    made = operations.remember(ctx, "A note made after the others.")
    operations.purge(ctx, operations.make_filter(ctx, states=["active"]))
    edits = [next(iter(r.counts)) for r in list_runs(ctx.db, 100, EDIT_KIND)]
    newest_first = "purge remember delete forget unlink link link update link remember remember"
    assert edits == newest_first.split()
    assert noise_contents(ctx.db) != []

    undone = [undo(ctx) for _ in range(8)]

    assert [r.counts for r in undone] == [{verb: 1} for verb in edits[:8]]
    assert all(r.skipped == [] and r.reverted > 0 for r in undone)
    assert snapshot(ctx, [kept.id, other.id]) == before
    assert noise_contents(ctx.db) == []
    gone = store.get_memory(ctx.db, made.id)
    assert gone is not None and gone.state == State.DELETED
    for _ in range(3):
        undo(ctx)
    with pytest.raises(NotFoundError, match="no edit to undo"):
        undo(ctx)


def test_undo_refuses_a_permanent_delete_by_name_and_runs_keep_no_words(ctx: Context) -> None:
    kept = operations.remember(ctx, "The deploy runs make release.")
    gone = operations.remember(ctx, "A secret plan nobody may read again.")
    operations.delete(ctx, gone.id, permanent=True)
    with pytest.raises(UsageError, match=f"edit .+ \\(delete --permanent {gone.id[:8]}\\) "):
        undo(ctx)
    (_, older, _) = list_runs(ctx.db, 3, EDIT_KIND)
    assert "secret" not in str([r.to_dict() for r in list_runs(ctx.db, 10)])
    undo(ctx, older.id)  # an earlier run by its id
    assert store.get_memory(ctx.db, gone.id) is None
    assert store.get_memory(ctx.db, kept.id) is not None


def test_unshare_and_withhold_leave_a_memory_private(ctx: Context) -> None:
    memory = put(ctx, "shared for a while")
    writer = Writer(ctx.db)
    with ctx.db.atomic():
        writer.set_shared([memory], True, "promote")
    shared = store.get_memory(ctx.db, memory.id)
    assert shared is not None and shared.visibility == Visibility.SHARED
    with ctx.db.atomic():
        writer.withhold([memory.id])
    private = store.get_memory(ctx.db, memory.id)
    assert private is not None and private.visibility == Visibility.PRIVATE
    assert withheld(ctx.db, [memory.id]) == {memory.id}
