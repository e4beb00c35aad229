""" "What did we do last time?": the latest session of the scopes searched, as a window of
time from the day it began, read from the store at the start of a run."""

from __future__ import annotations

from datetime import UTC, datetime

from memctl.context import Context
from memctl.memories import operations as memories
from memctl.model import Message, Role, Session
from memctl.retrieve.pipeline import recall, start
from memctl.store import sessions

NOW = datetime(2026, 6, 10, 12, tzinfo=UTC)
TOLD = {  # session id: (scope, when it began, what it says)
    "old": ("shop", "2026-06-01T09:00:00.000Z", "we tuned the parser cache for the importer"),
    "new": ("shop", "2026-06-08T15:00:00.000Z", "we renamed the billing flag to --invoice"),
    "elsewhere": ("blog", "2026-06-09T10:00:00.000Z", "we fixed the theme's dark mode"),
    "later": ("shop", "2026-06-11T10:00:00.000Z", "we deleted the importer"),  # after now
}


def told(ctx: Context) -> None:
    """Each session, its one message and a memory of it, dated by the session."""
    for sid, (scope, began, text) in TOLD.items():
        with ctx.db.atomic():
            sessions.save_session(ctx.db, Session(sid, "generic", scope, started_at=began))
            message = Message(Role.ASSISTANT, text, began, session_id=sid, seq=1)
            sessions.insert_messages(ctx.db, [message])
        memory = memories.remember(ctx, text.replace("we ", "the team "), scope=scope)
        ctx.db.execute(
            "UPDATE memories SET created_at = ?, session_id = ? WHERE id = ?",
            (began, sid, memory.id),
        )


def test_last_time_is_the_latest_session_of_the_scopes_before_now(ctx: Context) -> None:
    told(ctx)
    window = start(ctx, "what did we do last time?", scopes=("shop",), now=NOW).query.window
    assert window is not None and window.phrase == "last time"
    assert window.start == datetime(2026, 6, 8, tzinfo=UTC) and window.contains(NOW)
    anywhere = start(ctx, "where did I leave off?", now=NOW).query.window
    assert anywhere is not None and anywhere.start == datetime(2026, 6, 9, tzinfo=UTC)
    found = recall(ctx, "what did we do last time?", scopes=("shop",), now=NOW, touch=False)
    assert found.results and found.results[0].memory.session_id == "new"
    assert found.results[0].clear


def test_no_session_before_now_names_no_window(ctx: Context) -> None:
    told(ctx)
    before = datetime(2026, 5, 1, tzinfo=UTC)
    assert (
        start(ctx, "what did we do last time?", scopes=("shop",), now=before).query.window is None
    )


def test_asked_from_a_session_already_stored_last_time_is_the_one_before_it(
    ctx: Context,
) -> None:
    """The clients capture a session at each turn's end: asked on its second turn, "last
    time" is the session before the one asking (its client names it), not itself."""
    told(ctx)
    began = "2026-06-10T11:30:00.000Z"
    with ctx.db.atomic():
        sessions.save_session(ctx.db, Session("asking", "generic", "shop", started_at=began))
        said = ("we are adding the export button", "what did we do last time?")
        sessions.insert_messages(
            ctx.db,
            [
                Message(Role.USER, text, began, session_id="asking", seq=n + 1)
                for n, text in enumerate(said)
            ],
        )
    question = "what did we do last time?"
    own = start(ctx, question, scopes=("shop",), now=NOW).query.window
    assert own is not None and own.start == datetime(2026, 6, 10, tzinfo=UTC)  # itself
    window = start(ctx, question, scopes=("shop",), now=NOW, asking="asking").query.window
    assert window is not None and window.start == datetime(2026, 6, 8, tzinfo=UTC)
    assert window.end == datetime(2026, 6, 10, 11, 30, tzinfo=UTC)  # where it began
    found = recall(ctx, question, scopes=("shop",), now=NOW, touch=False, asking="asking")
    assert found.results[0].memory.session_id == "new" and found.results[0].clear
    assert not any(r.clear and r.memory.session_id == "asking" for r in found.results)
    # a session memctl does not hold: the latest session stored, as without one
    assert start(ctx, question, scopes=("shop",), now=NOW, asking="gone").query.window == own
