"""The everyday operations, called directly, on a real SQLite file."""

from __future__ import annotations

import numpy as np
import pytest

from memctl.context import Context
from memctl.errors import UsageError
from memctl.maintain.forgetting import forget_session
from memctl.memories import operations as memories
from memctl.model import Action, Kind, Message, Relation, RelationType, Role, Session, State
from memctl.retrieve.pipeline import recall
from memctl.store import memories as store
from memctl.store.events import list_events
from memctl.store.memories import MemoryFilter
from memctl.store.relations import add_relation
from memctl.store.sessions import insert_messages, save_session
from memctl.sync.records import export_lines, import_lines


def vector_of(ctx: Context, memory_id: str) -> np.ndarray:
    blob = ctx.db.value(
        "SELECT v.embedding FROM memories m JOIN memories_vec v ON v.rowid = m.rowid "
        "WHERE m.id = ?",
        (memory_id,),
    )
    return np.frombuffer(blob, dtype=np.float32)


def test_remember_stores_a_pinned_memory_in_the_project_scope(ctx: Context) -> None:
    memory = memories.remember(ctx, "  Use pnpm, not npm, in this repo  ", tags=["js,tooling"])
    stored, relations = memories.get(ctx, memory.id[:6])
    assert stored.content == "Use pnpm, not npm, in this repo"
    assert stored.kind == Kind.PINNED and stored.state == State.ACTIVE
    assert stored.scope == ctx.settings.project_scope and stored.scope.startswith("path:")
    assert stored.tags == ["js", "tooling"]
    assert relations == []
    assert [e.action for e in list_events(ctx.db, memory.id, 10)] == [Action.CREATE]


@pytest.mark.parametrize("text", ["", "   \n", "a\x00b", "x" * 100_001])
def test_remember_rejects_unusable_text(ctx: Context, text: str) -> None:
    with pytest.raises(UsageError):
        memories.remember(ctx, text)
    assert store.list_memories(ctx.db, MemoryFilter(), None) == []


def test_remember_rejects_unknown_category_listing_the_allowed(ctx: Context) -> None:
    with pytest.raises(UsageError, match="profile, preferences"):
        memories.remember(ctx, "text", category="hobbies")


def test_update_reembeds_new_content_and_logs_before_and_after(ctx: Context) -> None:
    memory = memories.remember(ctx, "deploys go through Jenkins")
    before = vector_of(ctx, memory.id)
    updated = memories.update(
        ctx, memory.id, content="deploys go through GitHub Actions", importance=0.3
    )
    assert updated.content == "deploys go through GitHub Actions" and updated.importance == 0.3
    assert not np.allclose(before, vector_of(ctx, memory.id))
    hits = store.fts_search(ctx.db, "GitHub", 5, MemoryFilter())
    assert [h[0] for h in hits] == [memory.id]
    assert store.fts_search(ctx.db, "Jenkins", 5, MemoryFilter()) == []
    event = list_events(ctx.db, memory.id, 1)[0]
    assert event.action == Action.UPDATE
    assert event.data["before"]["content"] == "deploys go through Jenkins"


def test_update_with_nothing_to_change_is_an_error(ctx: Context) -> None:
    memory = memories.remember(ctx, "same text")
    with pytest.raises(UsageError, match="nothing to update"):
        memories.update(ctx, memory.id, content="same text")


def test_forget_archives_and_recall_no_longer_returns_it(ctx: Context) -> None:
    memory = memories.remember(ctx, "the staging password rotates monthly")
    assert [r.memory.id for r in recall(ctx, "staging password").results] == [memory.id]
    memories.forget(ctx, memory.id)
    assert recall(ctx, "staging password").results == []
    assert memories.get(ctx, memory.id)[0].state == State.ARCHIVED


def test_soft_delete_keeps_the_row(ctx: Context) -> None:
    memory = memories.remember(ctx, "soft deleted fact")
    memories.delete(ctx, memory.id)
    assert memories.get(ctx, memory.id)[0].state == State.DELETED
    assert recall(ctx, "soft deleted fact").results == []


def test_permanent_delete_removes_row_vector_index_and_relations_but_not_events(
    ctx: Context,
) -> None:
    keep = memories.remember(ctx, "a neighbour memory")
    gone = memories.remember(ctx, "to be removed for good")
    add_relation(ctx.db, Relation(gone.id, keep.id, RelationType.RELATED))
    memories.delete(ctx, gone.id, permanent=True)
    assert store.get_memory(ctx.db, gone.id) is None
    assert ctx.db.value("SELECT count(*) FROM memories_vec") == 1
    assert store.fts_search(ctx.db, "removed", 5, MemoryFilter()) == []
    assert memories.get(ctx, keep.id)[1] == []
    actions = [e.action for e in list_events(ctx.db, gone.id, 10)]
    assert actions == [Action.DELETE, Action.CREATE]


def test_purge_dry_run_changes_nothing_and_real_run_is_all_or_nothing(ctx: Context) -> None:
    for text in ("alpha note", "beta note"):
        memories.remember(ctx, text, tags=["old"])
    other = memories.remember(ctx, "kept note", tags=["new"])
    where = memories.make_filter(ctx, tag="old")
    assert len(memories.purge(ctx, where, dry_run=True)) == 2
    assert len(store.list_memories(ctx.db, memories.make_filter(ctx), None)) == 3
    memories.purge(ctx, where, permanent=True)
    assert [m.id for m in store.list_memories(ctx.db, MemoryFilter(states=None), None)] == [
        other.id
    ]


def test_list_filters_by_category_state_tag_and_since(ctx: Context) -> None:
    first = memories.remember(ctx, "profile fact", category="profile", tags=["me"])
    second = memories.remember(ctx, "pattern fact", category="patterns")
    memories.forget(ctx, second.id)

    def ids(**kwargs: object) -> list[str]:
        return [m.id for m in memories.list_memories(ctx, memories.make_filter(ctx, **kwargs))]

    assert ids() == [first.id]
    assert ids(states=["archived"]) == [second.id]
    assert ids(categories=["profile"]) == [first.id]
    assert ids(tag="me") == [first.id]
    assert ids(since="1h") == [first.id]
    assert ids(since="2999-01-01") == []
    with pytest.raises(UsageError, match="cannot read the time"):
        memories.make_filter(ctx, since="last tuesdayish")


def test_status_counts(ctx: Context) -> None:
    memories.remember(ctx, "one")
    memories.forget(ctx, memories.remember(ctx, "two").id)
    report = memories.status(ctx)
    assert report.total == 2
    assert report.by_state == {"active": 1, "archived": 1}
    assert report.embed_model == "test:hash" and report.events == 3


def test_status_counts_no_forgotten_session(ctx: Context) -> None:
    """A forgotten session keeps a row (its id, so a capture does not store it again):
    status counts the sessions a person can list, as `sessions list` and `projects` do."""
    for name in ("kept", "gone"):
        with ctx.db.atomic():
            save_session(ctx.db, Session(id=name, client="generic", scope="global"))
            insert_messages(ctx.db, [Message(Role.USER, f"{name} note", session_id=name, seq=1)])
    forget_session(ctx, "gone")
    report = memories.status(ctx)
    assert (report.sessions, report.messages) == (1, 1)


def test_recall_searches_the_project_and_global_scopes_only(home) -> None:  # type: ignore[no-untyped-def]
    from memctl.config.settings import load_settings
    from tests.fakes import HashEmbedder

    # This test is about which scopes are searched, not about weak results: the fused score
    # of the weakest candidate is 0, which the cutoff would drop.
    keep_all = {"recall.cutoff": "0"}
    ctx = Context(load_settings(overrides=keep_all), embedder=HashEmbedder())
    here = memories.remember(ctx, "rollout checklist for this project")
    everywhere = memories.remember(ctx, "rollout checklist for everything", scope="global")
    memories.remember(ctx, "rollout checklist for another repo", scope="github.com/x/other")
    found = {
        r.memory.id
        for r in recall(ctx, "rollout checklist", scopes=memories.recall_scopes(ctx, None)).results
    }
    assert found == {here.id, everywhere.id}
    assert len(recall(ctx, "rollout checklist", scopes=None).results) == 3


def test_recall_ranks_the_memory_found_by_both_legs_first(ctx: Context) -> None:
    target = memories.remember(ctx, "postgres connection pool size is 20")
    memories.remember(ctx, "the pool at the gym opens at six")
    memories.remember(ctx, "unrelated note about lunch")
    result = recall(ctx, "postgres pool size")
    assert result.results[0].memory.id == target.id
    assert set(result.results[0].ranks) == {"vector", "bm25"}


def test_export_then_import_into_an_empty_home_gives_the_same_memories(
    ctx: Context, tmp_path
) -> None:  # type: ignore[no-untyped-def]
    from memctl.config.settings import load_settings
    from tests.fakes import HashEmbedder

    a = memories.remember(ctx, "first exported", tags=["x"], category="profile")
    b = memories.remember(ctx, "second exported")
    add_relation(ctx.db, Relation(a.id, b.id, RelationType.SUPPORTS, 0.5))
    memories.forget(ctx, b.id)
    lines = list(export_lines(ctx, MemoryFilter(states=None)))
    target = Context(load_settings(home=tmp_path / "other"), embedder=HashEmbedder())
    report = import_lines(target, enumerate(lines, start=1))
    assert (report.imported, report.skipped, report.relations) == (2, 0, 1)
    again = import_lines(target, enumerate(lines, start=1))
    assert (again.imported, again.skipped) == (0, 2)
    # Every field but when it entered the store (the copy entered the other one later) and
    # its source: the file it came from, whatever the line claims (issue 34).
    original = {
        m.id: {**m.to_dict(), "stored_at": None, "source": None}
        for m in store.list_memories(ctx.db, MemoryFilter(states=None), None)
    }
    imported = store.list_memories(target.db, MemoryFilter(states=None), None)
    copied = {m.id: {**m.to_dict(), "stored_at": None, "source": None} for m in imported}
    assert copied == original
    assert {m.source for m in imported} == {"file:stdin"}
    assert memories.get(target, a.id)[1][0].weight == 0.5
    target.close()


def test_import_skips_malformed_lines_and_reports_them(ctx: Context) -> None:
    lines = [
        '{"content": "good one"}',
        "{not json",
        '["a list"]',
        '{"content": 5}',
        '{"content": "bad category", "category": "nope"}',
        '{"content": "good two"}',
    ]
    report = import_lines(ctx, enumerate(lines, start=1))
    assert report.imported == 2
    assert [e.split(":")[0] for e in report.errors] == ["line 2", "line 3", "line 4", "line 5"]


def test_records_without_ids_are_skipped_when_imported_again(ctx: Context) -> None:
    lines = ['{"content": "hand-written fact one"}', '{"content": "hand-written fact two"}']
    first = import_lines(ctx, enumerate(lines, start=1))
    again = import_lines(ctx, enumerate(lines, start=1))
    assert (first.imported, again.imported, again.skipped) == (2, 0, 2)
    elsewhere = import_lines(
        ctx, enumerate(['{"content": "hand-written fact one", "scope": "global"}'], start=1)
    )
    assert elsewhere.imported == 1  # the same text in another scope is another memory
