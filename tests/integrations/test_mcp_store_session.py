"""A memory an assistant stores through MCP (``memory_store``) records where it came from:
the session calling (named by the call, as Codex and memctl's OpenCode plugin name it, or
by the server's environment, as Claude Code's and Copilot CLI's) and the client. `memctl
get` and the viewer name that session and the message said then; forgetting the session
forgets the memory. The real clients call it in tests/e2e."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import Implementation
from starlette.testclient import TestClient

from memctl.api import memory as memory_api
from memctl.api import sessions as sessions_api
from memctl.config.settings import SESSION_ARGUMENT, SESSION_VARIABLES, load_settings
from memctl.context import Context
from memctl.errors import NotFoundError
from memctl.integrations.mcp_server import build
from memctl.model import Message, Role, Session
from memctl.store import sessions
from memctl.ui.app import build_app
from memctl.ui.security import Keys
from tests.fakes import HashEmbedder

FACT = "The shop's release tags are cut by make tag after the smoke tests pass."
SAID = "2026-06-08T15:00:00.000Z"


async def store(ctx: Context, arguments: dict[str, Any], client: str | None) -> str:
    """``memory_store`` called by ``client`` (its handshake's name) through the real SDK."""
    info = Implementation(name=client, version="1.0") if client else None
    async with Client(build(ctx), client_info=info) as connected:
        answer = await connected.call_tool("memory_store", arguments)
    return str(answer.structured_content["id"])


def stored(ctx: Context, arguments: dict[str, Any], client: str | None = None) -> str:
    return anyio.run(store, ctx, arguments, client)


def captured(ctx: Context, session_id: str) -> None:
    """The session as its capture hook stores it: the prompt, then the message in which
    the assistant called memory_store."""
    with ctx.db.atomic():
        sessions.save_session(ctx.db, Session(session_id, "codex", "shop", started_at=SAID))
        asked = Message(Role.USER, "Note how releases are tagged.", SAID, session_id, seq=1)
        called = Message(Role.ASSISTANT, "[tool memctl.memory_store]", SAID, session_id, seq=2)
        sessions.insert_messages(ctx.db, [asked, called])


def viewed(memory_id: str) -> str:
    """The viewer's page of the memory, signed in."""
    keys = Keys(frozenset({"testserver"}))
    app, viewer = build_app(load_settings(overrides={"embedder": "hash"}), keys, HashEmbedder())
    with TestClient(app, base_url="http://testserver") as client:
        client.get(f"/login?token={keys.token}")
        page = client.get(f"/memories/{memory_id}").text
    viewer.close()
    return page


@pytest.fixture(autouse=True)
def no_session_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SESSION_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_a_memory_stored_from_a_session_names_it_and_goes_with_it(ctx: Context) -> None:
    memory_id = stored(ctx, {"text": FACT, SESSION_ARGUMENT: "thread-7"}, "codex-mcp-client")
    memory = memory_api.get(ctx, memory_id).memory
    assert (memory.source, memory.session_id, memory.agent_id) == ("mcp", "thread-7", "codex")
    (origin,) = memory_api.get(ctx, memory_id).origins
    assert not origin.stored and "not stored yet" in origin.text()  # the session runs

    ctx.db.execute("UPDATE memories SET created_at = ? WHERE id = ?", (SAID, memory_id))
    captured(ctx, "thread-7")
    (origin,) = memory_api.get(ctx, memory_id).origins
    assert origin.stored and (origin.session_id, origin.first) == ("thread-7", 2)
    page = viewed(memory_id)
    assert "/sessions/thread-7?from=2&amp;to=2" in page and "codex" in page

    sessions_api.forget(ctx, "thread-7")
    with pytest.raises(NotFoundError):
        memory_api.get(ctx, memory_id)
    assert FACT not in str(ctx.db.tuples("SELECT content FROM memories"))


def test_a_memory_stored_in_no_session_named_records_the_client(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_id = stored(ctx, {"text": FACT}, "Some Editor")
    memory = memory_api.get(ctx, memory_id).memory
    assert (memory.session_id, memory.agent_id) == (None, "Some Editor")
    page = viewed(memory_id)
    assert "Stored by the assistant through MCP (Some Editor)" in page
    # Copilot CLI names the session in its MCP server's environment
    monkeypatch.setenv("COPILOT_AGENT_SESSION_ID", "copilot-1")
    other = stored(ctx, {"text": "Deploys go out on Tuesdays."}, "github-copilot-developer")
    memory = memory_api.get(ctx, other).memory
    assert (memory.session_id, memory.agent_id) == ("copilot-1", "copilot")
