""" "What did we do last time?": the latest session of the scopes searched, as a window of
time from the day it began, read from the store at the start of a run."""

from __future__ import annotations

import io
import json
import os
from datetime import UTC, datetime
from typing import Any

import anyio
import pytest

from memctl.config.settings import SESSION_ARGUMENT
from memctl.context import Context
from memctl.integrations import hooks, hooks_state, mcp_search
from memctl.integrations.mcp_front import search_call
from memctl.integrations.mcp_server import build
from memctl.maintain.forgetting import forget_session
from memctl.memories import operations as memories
from memctl.model import Message, Role, Session
from memctl.retrieve.pipeline import recall, start
from memctl.store import sessions
from tests.conftest import run_cli

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


def test_of_the_latest_day_s_sessions_last_time_puts_the_latest_first(ctx: Context) -> None:
    """A first day's sessions all lie in the window "last time" names: the latest comes
    first, not the one of that morning whose words ("what we did") the question's
    function words find, nor a remembered note of no session."""
    told(ctx)
    began = "2026-06-08T09:00:00.000Z"  # the morning of the day of the latest, "new"
    morning = "what we did first: we sorted out what to do about the invoices"
    with ctx.db.atomic():
        sessions.save_session(ctx.db, Session("morning", "generic", "shop", started_at=began))
        said = Message(Role.ASSISTANT, morning, began, session_id="morning", seq=1)
        sessions.insert_messages(ctx.db, [said])
    made = memories.remember(ctx, morning, scope="shop")
    ctx.db.execute(
        "UPDATE memories SET created_at = ?, session_id = 'morning' WHERE id = ?",
        (began, made.id),
    )
    note = memories.remember(ctx, "what we do about invoices: we did nothing yet", scope="shop")
    later = "2026-06-09T08:00:00.000Z"  # after the latest session began
    ctx.db.execute("UPDATE memories SET created_at = ? WHERE id = ?", (later, note.id))
    ctx.close()
    for question in ("what did we do last time?", "where did I leave off?"):
        asked = ("--scope", "shop", "--as-of", "2026-06-10T12:00:00Z", question)
        done = run_cli("recall", "-f", "ids", "--no-touch", *asked)
        assert done.returncode == 0, done.stderr
        first = done.stdout.split()[0]
        assert (
            first.startswith("new#")
            or ctx.db.value("SELECT session_id FROM memories WHERE id = ?", (first,)) == "new"
        ), (question, done.stdout)


def test_no_session_before_now_names_no_window(ctx: Context) -> None:
    told(ctx)
    before = datetime(2026, 5, 1, tzinfo=UTC)
    assert (
        start(ctx, "what did we do last time?", scopes=("shop",), now=before).query.window is None
    )


def asking(ctx: Context) -> None:
    """The session asking, begun at 11:30 on the day of ``NOW``, stored at its turn's end."""
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


def test_asked_from_a_session_already_stored_last_time_is_the_one_before_it(
    ctx: Context,
) -> None:
    """The clients capture a session at each turn's end: asked on its second turn, "last
    time" is the session before the one asking (its client names it), not itself."""
    told(ctx)
    asking(ctx)
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


def test_a_recall_run_in_an_assistant_s_session_is_told_its_session(ctx: Context) -> None:
    """`memctl recall` as an assistant's shell tool runs it: its session in the
    environment (Claude Code's variable; each variable: test_resident)."""
    told(ctx)
    asking(ctx)
    before = ctx.db.value("SELECT id FROM memories WHERE session_id = 'elsewhere'")
    question = ("--all-scopes", "--as-of", "2026-06-10T12:00:00Z", "what did we do last time?")
    off = {"MEMCTL_RECALL_RESIDENT": "off"}
    for variable in ("MEMCTL_SESSION_ID", "CLAUDE_CODE_SESSION_ID"):
        done = run_cli(
            "recall", "-f", "ids", "--no-touch", *question, env={variable: "asking", **off}
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split()[0] == before  # the session before the one asking


def test_memory_search_is_told_its_session_by_the_call(ctx: Context) -> None:
    """Codex names its thread in each tools/call's ``_meta``: the front and the SDK's
    server take the session from there (the environment of Codex's MCP server names none)."""
    told(ctx)
    asking(ctx)
    codex_meta = {"progressToken": 1, "threadId": "asking", "sessionId": "asking"}
    assert mcp_search.meta_session(codex_meta) == "asking"
    assert mcp_search.meta_session({"progressToken": 1}) is None
    question = {"query": "what did we do last time?"}
    params = {"name": "memory_search", "arguments": question, "_meta": codex_meta}
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    work = search_call(call, handshaken=True)
    assert work is not None and work[2]["session"] == "asking"
    before = ctx.db.value("SELECT id FROM memories WHERE session_id = 'elsewhere'")

    def first(**told: str) -> str:
        found = mcp_search.memory_search(ctx, "what did we do last time?", all_scopes=True, **told)
        return str(found["results"][0]["id"])

    assert first() != before  # the latest session of all: the one that began after it
    assert first(session="asking") == before  # as the front calls it
    token = mcp_search.CALL_SESSION.set("asking")  # as the SDK's server sets it for a call
    try:
        assert first() == before
    finally:
        mcp_search.CALL_SESSION.reset(token)


def test_memory_search_in_opencode_is_told_its_session_by_memctl_s_plugin(ctx: Context) -> None:
    """OpenCode sends no ``_meta``: memctl's plugin names the session in the call's
    arguments (``SESSION_ARGUMENT``), which the front and the SDK's server take out; an
    empty name leaves the call without one."""
    told(ctx)
    asking(ctx)
    question = {"query": "what did we do last time?", "all_scopes": True}
    named = {**question, SESSION_ARGUMENT: "asking"}
    params = {"name": "memory_search", "arguments": named}
    call = {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": params}
    work = search_call(call, handshaken=True)
    assert work is not None and work[2] == {**question, "session": "asking"}
    assert mcp_search.call_session({**question, SESSION_ARGUMENT: ""}, None) == (question, None)
    before = ctx.db.value("SELECT id FROM memories WHERE session_id = 'elsewhere'")

    async def first(arguments: dict[str, Any]) -> Any:
        answer = await build(ctx).call_tool("memory_search", arguments)
        return answer.structured_content["results"][0]["id"]

    assert anyio.run(first, named) == before  # the session before the one asking
    assert anyio.run(first, question) != before


def test_after_a_clear_memory_search_asks_from_the_session_its_client_started_since(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code keeps its MCP server through /clear, whose environment names the
    session it started with: the session-start hook records each session the client's
    process (CLAUDE_PID) starts, and the server, its child, answers for the latest."""
    told(ctx)
    asking(ctx)
    home = ctx.settings.home
    monkeypatch.setenv("CLAUDE_PID", str(os.getppid()))
    for session in ("new", "asking"):  # startup, then /clear: as Claude Code calls the hook
        payload = json.dumps({"session_id": session, "source": "clear", "cwd": "/"})
        options = {"home": str(home), "config": ["embedder=hash"]}
        assert hooks.main(options, ["claude-code", "SessionStart"], io.StringIO(payload)) == 0
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "new")  # the server's, from its start
    before = ctx.db.value("SELECT id FROM memories WHERE session_id = 'elsewhere'")
    found = mcp_search.memory_search(ctx, "what did we do last time?", all_scopes=True)
    assert found["results"][0]["id"] == before  # the session before "asking"
    # Codex started from Claude Code's shell inherits CLAUDE_PID: its sessions are not
    # Claude Code's
    payload = json.dumps({"session_id": "codex-thread", "cwd": "/"})
    assert hooks.main(options, ["codex", "SessionStart"], io.StringIO(payload)) == 0
    assert hooks_state.running_session(home, os.getppid(), "new") == "asking"
    # a record without the server's own session is another process's of the same pid
    assert hooks_state.running_session(home, os.getppid(), "other") == "other"
    assert hooks_state.running_session(home, os.getppid() + 1, "new") == "new"


def test_after_a_clear_a_resumed_forgotten_session_s_server_asks_from_the_new_one(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resumed after `sessions forget`, a session is recorded by its keyed id in
    ``hooks/started`` (no hook file names it again); the server, whose environment names
    it by its own id, found it there no more after a /clear and kept answering for it."""
    told(ctx)
    asking(ctx)
    forget_session(ctx, "new")
    home = ctx.settings.home
    monkeypatch.setenv("CLAUDE_PID", str(os.getppid()))
    options = {"home": str(home), "config": ["embedder=hash"]}
    for session in ("new", "asking"):  # resumed, then /clear
        payload = json.dumps({"session_id": session, "source": "resume", "cwd": "/"})
        assert hooks.main(options, ["claude-code", "SessionStart"], io.StringIO(payload)) == 0
    started = (home / "hooks" / "started" / str(os.getppid())).read_text()
    assert "new" not in started.split() and started.split()[-1] == "asking"
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "new")
    before = ctx.db.value("SELECT id FROM memories WHERE session_id = 'elsewhere'")
    found = mcp_search.memory_search(ctx, "what did we do last time?", all_scopes=True)
    assert found["results"][0]["id"] == before  # the session before "asking"
