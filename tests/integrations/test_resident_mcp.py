"""The MCP server's searches take their vectors from the resident recall process (issue
37: the first memory_search loaded the model, 4.7-5.3 s): the one that runs, or the one
the server starts when none does (``recall.resident`` on). Real processes, the real SDK client.
``benchmarks/mcp_first_search.py`` times the first search with the real model."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import anyio
import numpy as np
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from memctl.embed.hashed import HashEmbedder
from memctl.integrations import resident
from tests.conftest import memctl_command, server_env
from tests.integrations.test_integrations_mcp import text
from tests.integrations.test_resident import (
    ON,
    daemon,
    gone,
    said,
    served,
    started,
    stop_every_daemon,
)
from tests.integrations.test_resident_requests import memctl

__all__ = ["daemon"]  # the fixture, used by name below

QUERIES = ("how do we deploy", "who reviews billing changes?")


async def searches(home: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """memory_search's answers to QUERIES, and a session_search, in one MCP session."""
    full = server_env(home, **env)
    command, *args = memctl_command(["-c", "llm=none", "mcp"], full, mcp=True)  # forked
    params = StdioServerParameters(command=command, args=args, env=full)
    async with Client(params, mode="legacy") as client:
        found = [
            json.loads(text(await client.call_tool("memory_search", {"query": query})))
            for query in QUERIES
        ]
        found.append(
            json.loads(text(await client.call_tool("session_search", {"query": "deploy"})))
        )
    return found


def contents(answer: dict[str, Any]) -> list[str]:
    return [hit["content"] for hit in answer.get("results", [])]


def test_memory_search_embeds_through_the_resident_process(home: Path, daemon: int) -> None:
    hashed = {"MEMCTL_EMBEDDER": "hash"}
    alone = anyio.run(searches, home, {**hashed, "MEMCTL_RECALL_RESIDENT": "off"})
    before = served(home)
    through = anyio.run(searches, home, {**hashed, **ON})
    assert [contents(a) for a in through] == [contents(a) for a in alone]
    assert "We deploy with make release from the main branch." in contents(through[0])
    assert through[2] == alone[2]  # session_search: words only, no vectors
    # one vector request a search, and the server's warm-up's at its start
    assert served(home) == before + 1 + len(QUERIES)


def test_memory_search_with_no_resident_process_starts_one_and_asks_it(home: Path) -> None:
    hashed = {"MEMCTL_EMBEDDER": "hash"}
    for fact in ("We deploy with make release from the main branch.",):
        assert memctl("remember", fact).wait(timeout=120) == 0
    alone = anyio.run(searches, home, {**hashed, "MEMCTL_RECALL_RESIDENT": "off"})
    assert resident.tell(home, "status") is None  # off: the server started none
    try:
        through = anyio.run(searches, home, {**hashed, **ON})
        assert [contents(a) for a in through] == [contents(a) for a in alone]
        assert contents(through[0]) == ["We deploy with make release from the main branch."]
        assert served(home) == 1 + len(QUERIES)  # the server started it, then asked it
    finally:
        stop_every_daemon(home)


def test_a_bad_embed_request_is_one_error_and_the_server_serves_on(home: Path, daemon: int) -> None:
    for texts in ([], [1], ["x"] * (resident.MAX_TEXTS + 1), "not a list"):
        request = json.dumps({"stamp": resident.stamp(), "op": "embed", "texts": texts})
        answer = said(home, request.encode() + b"\n")
        assert answer == {"error": f"texts: expected a list of 1 to {resident.MAX_TEXTS} strings"}
    good = resident.tell(home, "embed", texts=["how do we deploy", "who reviews?"]) or {}
    embedder = HashEmbedder()
    assert (good.get("name"), good.get("dim")) == (embedder.name, embedder.dim)
    rows = np.frombuffer(base64.b64decode(str(good["vectors"])), dtype=np.float32)
    assert np.allclose(rows.reshape(2, -1), embedder.embed(["how do we deploy", "who reviews?"]))


async def searches_around_a_stop(home: Path, stopped: int, env: dict[str, str]) -> list[Any]:
    """In one MCP session: a search through the running resident process, that process
    stopped (as a forget that takes text out ends it), a search, the pid of the resident
    process serving the home after it, and the requests it served before and after one
    more search. Each search asks other words (the same query again reuses its vector)."""
    full = server_env(home, **env)
    command, *args = memctl_command(["-c", "llm=none", "mcp"], full, mcp=True)
    params = StdioServerParameters(command=command, args=args, env=full)

    async def search(query: str) -> list[str]:
        return contents(json.loads(text(await client.call_tool("memory_search", {"query": query}))))

    async with Client(params, mode="legacy") as client:
        first = await search("how do we deploy")
        assert memctl("daemon", "stop").wait(timeout=120) == 0
        assert gone(stopped)  # as a forget waits for it
        second = await search("deploy with make release")
        pid = started(home)  # bounded: 30 s
        before = served(home)
        third = await search("how is a release deployed")
        after = served(home)
    return [first, second, third, pid, before, after]


def test_a_resident_process_ended_under_the_server_is_started_again(
    home: Path, daemon: int
) -> None:
    *found, pid, before, after = anyio.run(
        searches_around_a_stop, home, daemon, {"MEMCTL_EMBEDDER": "hash", **ON}
    )
    assert all("We deploy with make release from the main branch." in hits for hits in found)
    assert pid != daemon  # the server started another one, and asked it the next time
    assert after == before + 1
