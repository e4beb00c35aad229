"""A memory keeps every message it was distilled from: a fact merged into it from another
session, a fact of a session's tool calls, and a store written before merges named theirs
(real SQLite files, the rules path)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memctl.api import memory as memory_api
from memctl.api import sessions as api
from memctl.api.ingest import undo
from memctl.context import Context
from memctl.errors import NotFoundError
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.pipeline import run_session
from memctl.model import Memory
from memctl.store.writes import Writer
from tests.conftest import run_cli
from tests.ingesting import claude_work_session, distil, source

FIRST = "user: I prefer tabs for indentation.\nassistant: Noted.\n"
SECOND = (
    "user: Hello there.\nassistant: Hi.\n"
    "user: I prefer tabs for indentation in Go code.\nassistant: Noted.\n"
)


def _memories(ctx: Context) -> list[Memory]:
    return memory_api.list_memories(ctx, memory_api.ListRequest(memory_api.Filters()))


@pytest.fixture
def merged(make_ctx: Any) -> tuple[Context, Memory]:
    """Two sessions each say a preference; the second's adds detail and MERGEs."""
    ctx: Context = make_ctx()
    distil(ctx, FIRST, "sess-a")
    run = distil(ctx, SECOND, "sess-b")
    assert [d["verdict"] for d in run.record.decisions] == ["merge"]
    (memory,) = [m for m in _memories(ctx) if "tabs" in m.content]
    return ctx, memory


def test_a_merged_memory_names_and_opens_both_sessions(merged: tuple[Context, Memory]) -> None:
    ctx, memory = merged
    origins = memory_api.get(ctx, memory.id[:8]).origins
    assert [(o.session_id, o.first, o.last, o.stored) for o in origins] == [
        ("sess-a", 1, 1, True),
        ("sess-b", 3, 3, True),
    ]
    first, second = api.expand(ctx, memory.id, around=1)
    assert (first.session.id, [m.seq for m in first.messages]) == ("sess-a", [1, 2])
    assert (second.session.id, [m.seq for m in second.messages]) == ("sess-b", [2, 3, 4])
    marked = [line for line in second.text().splitlines() if line.startswith(">")]
    assert marked and marked[0].startswith(">[3] user")


def test_the_cli_names_both_and_expands_both(merged: tuple[Context, Memory]) -> None:
    _, memory = merged
    shown = run_cli("get", memory.id[:8])
    assert shown.returncode == 0, shown.stderr
    assert "session sess-a (" in shown.stdout and "session sess-b (" in shown.stdout
    opened = run_cli("sessions", "expand", memory.id[:8], "-C", "0", "--json")
    assert opened.returncode == 0, opened.stderr
    answer = json.loads(opened.stdout)
    assert answer["session"]["id"] == "sess-a"  # the first passage's fields, as before
    assert [(p["session"]["id"], p["first"]) for p in answer["passages"]] == [
        ("sess-a", 1),
        ("sess-b", 3),
    ]
    explained = run_cli("recall", "tabs indentation", "--all-scopes", "--explain")
    assert explained.returncode == 0, explained.stderr
    assert "from:     session sess-a (" in explained.stdout
    assert "from:     session sess-b (" in explained.stdout


def test_an_undone_merge_no_longer_counts(make_ctx: Any) -> None:
    ctx: Context = make_ctx()
    distil(ctx, FIRST, "sess-a")
    run = distil(ctx, SECOND, "sess-b")
    undo(ctx, run.id)
    (memory,) = _memories(ctx)
    assert [o.session_id for o in memory_api.get(ctx, memory.id).origins] == ["sess-a"]


def test_a_memory_written_before_merges_named_their_source(make_ctx: Any) -> None:
    """An old store: a merge's event held no source, so only the memory's own counts."""
    ctx: Context = make_ctx()
    distil(ctx, FIRST, "sess-a")
    (memory,) = _memories(ctx)
    with ctx.db.atomic():
        Writer(ctx.db).update(memory, {"content": memory.content + " Also in Go code."})
    assert [o.session_id for o in memory_api.get(ctx, memory.id).origins] == ["sess-a"]
    (passage,) = api.expand(ctx, memory.id, around=0)
    assert [m.seq for m in passage.messages] == [1]


def test_a_fact_of_a_sessions_tool_calls_opens_the_message_of_the_call(make_ctx: Any) -> None:
    ctx: Context = make_ctx()
    transcript = "\n".join(json.dumps(line) for line in claude_work_session()) + "\n"
    capture(ctx, source(transcript), IngestOptions())
    run_session(ctx, "cc-host")
    action = next(m for m in _memories(ctx) if m.source == "session:cc-host")
    (origin,) = memory_api.get(ctx, action.id).origins
    assert origin.by_time and origin.stored and "(the action's time)" in origin.text()
    (passage,) = api.expand(ctx, action.id, around=0)
    (message,) = passage.messages
    assert message.created_at == action.created_at  # the message of the call itself
    assert "[tool" in message.content
    ctx.db.execute("DELETE FROM sessions WHERE id = 'cc-host'")
    with pytest.raises(NotFoundError, match="session cc-host, its actions .*no longer stored"):
        api.expand(ctx, action.id)
