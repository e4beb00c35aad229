"""A running MCP server keeps no word of what left recall: the recall caches of its
process (``retrieve.caches``: ``fuse.stem`` keeps every word it stemmed, a memory's
too) and the last query's vectors are emptied at the next call after a forget, archive
or delete, by another process or by the server's own tool. The server's real tools,
in process (its caches are this process's), the forgets by real `memctl` processes."""

from __future__ import annotations

import gc
import json
from typing import Any

import anyio
import pytest

from memctl.config import load_settings
from memctl.integrations import mcp_search, mcp_server
from memctl.retrieve import caches
from tests.conftest import run_cli

DELETED = "heron9copperkettle"  # deleted for good by `memctl delete --permanent`
ARCHIVED = "ibis3pewtermeadow"  # archived by `memctl forget`
OWN = "lynx5amberorchard"  # archived by the server's own memory_forget


def _cached(word: str) -> list[str]:
    """The caches of ``caches.WORD_CACHES`` that hold ``word`` in a key."""
    return [
        f.__name__
        for f in caches.WORD_CACHES
        for held in gc.get_referents(f)
        if isinstance(held, dict) and any(word in str(key) for key in held)
    ]


def _remembered(text: str) -> str:
    done = run_cli("remember", text, "--json")
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


def test_a_forget_empties_the_server_s_word_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMCTL_EMBEDDER", "hash")  # as run_cli's processes embed
    ids = {
        word: _remembered(f"the {kind} locker code is {word} for the ferry room")
        for word, kind in ((DELETED, "heron"), (ARCHIVED, "ibis"), (OWN, "lynx"))
    }
    caches.clear()
    ctx = mcp_search.open_context(load_settings())
    server = mcp_server.build(ctx)

    def call(name: str, **arguments: Any) -> str:
        async def called() -> Any:
            return await server.call_tool(name, arguments)

        return json.dumps(anyio.run(called), default=str)

    try:
        for word in ids:  # each asked by its start: recall stems the memory's word
            assert word in call("memory_search", query=f"{word[:4]} locker code")
            assert _cached(word) == ["stem"]
        assert run_cli("delete", "--permanent", ids[DELETED]).returncode == 0
        assert run_cli("forget", ids[ARCHIVED]).returncode == 0
        assert DELETED not in call("memory_stats")  # any call: the caches emptied first
        assert _cached(DELETED) == _cached(ARCHIVED) == [] and ctx._last_query is None
        assert OWN in call("memory_search", query="lynx locker code")
        assert _cached(OWN) == ["stem"]
        call("memory_forget", id=ids[OWN])  # the server's own archive: emptied at once
        assert _cached(OWN) == [] and ctx._last_query is None
        asked = call("memory_search", query="locker code ferry room")
        assert [w for w in ids if w in asked] == []
    finally:
        ctx.close()
