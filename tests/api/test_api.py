"""The core API without Typer: every operation a front door uses, on a real store."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from memctl.api import ingest as ingest_api
from memctl.api import memory, recall
from memctl.api.maintain import MaintainRequest, maintain
from memctl.context import Context
from memctl.errors import InputError, NotFoundError, UsageError
from memctl.model import State
from tests.ingesting import TRANSCRIPTS


def remember(make_ctx: Any, ctx: Context, text: str, **fields: Any) -> str:
    return memory.remember(ctx, memory.RememberRequest(text, **fields)).memory.id


def test_memory_operations_round_trip(make_ctx: Any) -> None:
    ctx = make_ctx()
    first = remember(make_ctx, ctx, "We deploy with Fly.io from the main branch", tags=("ops",))
    second = remember(make_ctx, ctx, "Staging lives at staging.example.org")

    got = memory.get(ctx, first[:8])
    assert got.memory.content == "We deploy with Fly.io from the main branch"
    assert got.memory.tags == ["ops"]

    listed = memory.list_memories(ctx, memory.ListRequest(memory.Filters(tag="ops")))
    assert [m.id for m in listed] == [first]

    updated = memory.update(ctx, memory.UpdateRequest(first, tags=("ops", "deploy")))
    assert updated.tags == ["ops", "deploy"]

    relation = memory.link(ctx, memory.LinkRequest(first, second, "depends_on", 0.5))
    assert (relation.src_id, relation.dst_id, str(relation.type)) == (first, second, "depends_on")
    assert [r.dst_id for r in memory.get(ctx, first).relations] == [second]
    assert len(memory.unlink(ctx, first, second)) == 1

    assert str(memory.forget(ctx, second).state) == "archived"
    status = memory.status(ctx)
    assert status.total == 2 and status.by_state == {"active": 1, "archived": 1}
    actions = [str(e.action) for e in memory.events(ctx, memory.EventsRequest(first))]
    assert actions[-1] == "create" and "update" in actions

    assert memory.purge(ctx, memory.PurgeRequest(memory.Filters(tag="ops"), dry_run=True))
    assert memory.get(ctx, first).memory.state == "active"  # a dry run deletes nothing
    deleted = memory.purge(ctx, memory.PurgeRequest(memory.Filters(tag="ops"), permanent=True))
    assert [m.id for m in deleted] == [first]
    with pytest.raises(NotFoundError):
        memory.get(ctx, first)


def test_purge_without_a_filter_is_refused(make_ctx: Any) -> None:
    with pytest.raises(UsageError, match="at least one filter"):
        memory.purge(make_ctx(), memory.PurgeRequest(memory.Filters()))


def test_recall_applies_the_defaults_and_renders_the_context_block(make_ctx: Any) -> None:
    ctx = make_ctx()
    wanted = remember(make_ctx, ctx, "The database migrations run with alembic upgrade head")
    remember(make_ctx, ctx, "I like green tea in the afternoon")

    response = recall.recall(ctx, recall.RecallRequest("alembic migrations", context=True))
    assert response.result.results[0].memory.id == wanted
    assert response.context is not None and "alembic upgrade head" in response.context

    plain = recall.recall(ctx, recall.RecallRequest("alembic migrations"))
    assert plain.context is None

    report = recall.recall(ctx, recall.RecallRequest("alembic migrations", why_not=wanted[:8]))
    assert report.why_not is not None and report.why_not.recalled

    with pytest.raises(UsageError, match="^mode takes one of"):
        recall.recall(ctx, recall.RecallRequest("x", mode="psychic"))
    with pytest.raises(UsageError, match="^budget takes a number of tokens") as raised:
        recall.recall(ctx, recall.RecallRequest("x", budget=0))
    assert raised.value.names == ("budget",)  # each door spells it its own way
    assert raised.value.worded(lambda name: f"--{name}").startswith("--budget takes")


def test_profile_lists_profile_and_preference_memories(make_ctx: Any) -> None:
    ctx = make_ctx()
    remember(make_ctx, ctx, "I prefer tabs over spaces", category="preferences")
    remember(make_ctx, ctx, "The build uses make", category="patterns")
    found = recall.profile(ctx, recall.ProfileRequest())
    contents = [m.content for section in found.sections.values() for m in section]
    assert contents == ["I prefer tabs over spaces"]


def test_ingest_waits_then_runs_and_undo_work_on_the_same_session(make_ctx: Any) -> None:
    ctx = make_ctx()
    transcript = "user: I always use pnpm, never npm, in this repository.\nassistant: Noted.\n"
    request = ingest_api.IngestRequest(stdin=io.BytesIO(transcript.encode()), wait=True)
    result = ingest_api.ingest(ctx, request)
    assert result.report.messages_new == 2
    assert result.ran_own_job()

    runs = ingest_api.runs(ctx)
    assert runs and runs[0].kind == "ingest"
    assert ingest_api.run(ctx, runs[0].id[:10]).id == runs[0].id
    report = ingest_api.undo(ctx, runs[0].id)
    assert report.run_id == runs[0].id
    with pytest.raises(NotFoundError):
        ingest_api.run(ctx, "f" * 12)


def test_ingest_without_wait_queues_a_job_that_maintain_finishes(make_ctx: Any) -> None:
    ctx = make_ctx(ingest__spawn_worker=False)
    path = TRANSCRIPTS / "claude-code.jsonl"
    result = ingest_api.ingest(ctx, ingest_api.IngestRequest(transcript=str(path)))
    assert result.report.job_id is not None and result.drained is None
    jobs = maintain(ctx, MaintainRequest(only="jobs")).task("jobs")
    assert jobs is not None
    assert [change["id"] for change in jobs.changes] == [str(result.report.job_id)]


def test_import_plan_and_export(make_ctx: Any, tmp_path: Path) -> None:
    ctx = make_ctx()
    notes = tmp_path / "notes.md"
    notes.write_text("# Deploys\n\nWe deploy on Fridays only after the smoke tests pass.\n")
    plan = ingest_api.plan_import(ingest_api.ImportRequest((str(notes),)))
    assert plan.total_bytes == notes.stat().st_size
    report = ingest_api.import_files(ctx, plan)
    assert report.total("imported") >= 1
    lines = list(ingest_api.export(ctx))
    assert any("smoke tests" in line for line in lines)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError):
        ingest_api.plan_import(ingest_api.ImportRequest((str(tmp_path / "empty"),)))


def test_session_start_block_holds_profile_project_facts_and_the_latest_digest(
    make_ctx: Any,
) -> None:
    ctx = make_ctx()
    assert recall.session_start(ctx, recall.SessionStartRequest()) == ""
    remember(make_ctx, ctx, "I prefer short answers", category="preferences")
    remember(make_ctx, ctx, "Releases are cut with make release", category="patterns")
    remember(make_ctx, ctx, "A fact of another project", scope="elsewhere")
    block = recall.session_start(ctx, recall.SessionStartRequest())
    assert block.startswith("<memctl-context>") and block.endswith("</memctl-context>")
    assert "I prefer short answers" in block and "make release" in block
    assert "another project" not in block
    small = recall.session_start(ctx, recall.SessionStartRequest(budget=12))
    assert small.count("\n- ") == 1  # the budget holds one memory, the first section's
    touched = memory.list_memories(ctx, memory.ListRequest())
    assert all(m.access_count == 0 for m in touched)


@pytest.mark.parametrize(
    ("text", "category", "is_global"),
    [
        ("My name is Dana and I live in Lisbon", "profile", True),
        ("I prefer short commit messages", "preferences", True),
        ("The billing service runs on PostgreSQL 16", "entities", False),
        ("We fixed the flaky login test by mocking the clock", "cases", False),
        ("Run the tests with make test", "patterns", False),
    ],
)
def test_remember_without_a_category_classifies_by_the_rules(
    make_ctx: Any, text: str, category: str, is_global: bool
) -> None:
    ctx = make_ctx()
    stored = memory.remember(ctx, memory.RememberRequest(text, source="mcp")).memory
    assert str(stored.category) == category and (stored.scope == "global") == is_global


def test_remembering_another_value_supersedes_the_old_and_another_fact_stays(
    make_ctx: Any,
) -> None:
    """s28-reconcile: "My editor is helix" after "My editor is vim" left both active, the
    stale one ranked first; what the user states again replaces it, and undo brings it back."""
    ctx = make_ctx()

    def said(text: str) -> memory.Remembered:
        return memory.remember(ctx, memory.RememberRequest(text))

    vim, fridays = said("My editor is vim.").memory, said("We deploy on Fridays.").memory
    helix = said("My editor is helix.")
    assert [m.id for m in helix.replaced] == [vim.id]
    assert said("We deploy with fly.").replaced == ()
    states = {k: m.state for k, m in memory.by_ids(ctx, [vim.id, fridays.id]).items()}
    assert states == {vim.id: State.SUPERSEDED, fridays.id: State.ACTIVE}
    ingest_api.undo(ctx)  # the last edit: "We deploy with fly." replaced nothing
    ingest_api.undo(ctx)
    assert memory.by_ids(ctx, [vim.id])[vim.id].state == State.ACTIVE


def test_an_explicit_category_or_scope_wins_over_the_rules(make_ctx: Any) -> None:
    ctx = make_ctx()
    text = "My name is Dana and I live in Lisbon"
    given = memory.RememberRequest(text, category="entities", scope="project")
    stored = memory.remember(ctx, given).memory
    assert str(stored.category) == "entities" and stored.scope != "global"
