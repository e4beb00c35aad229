"""`memctl mcp`'s front answers a search that comes while the SDK loads (issue 37: the
first memory_search of a session waited for the SDK's import), exactly as the SDK
answers it; a call it cannot answer as the SDK would goes to the SDK. Real processes,
a real store; one server's SDK never finishes loading."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Shared, run_cli, shared

FACT = "We deploy with make release from the main branch."
HANDSHAKE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"},
}
MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
HANGING_SDK = "import time\ntime.sleep(3600)\n"  # an `mcp` package whose import never ends


def jsonrpc_line(ident: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    """A JSON-RPC request (a notification when ``ident`` is None) as one line."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if ident is not None:
        message["id"] = ident
    if params is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


class Server:
    """``memctl mcp`` over its pipes, one JSON line each way."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memctl", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={
                **os.environ,
                "MEMCTL_LLM": "none",
                "MEMCTL_EMBEDDER": "hash",
                "MEMCTL_RECALL_RESIDENT": "off",  # the server would start one
                **(env or {}),
            },
        )

    def send(self, ident: Any, method: str, params: dict[str, Any] | None = None) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(jsonrpc_line(ident, method, params))
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the server closed its output"
        return dict(json.loads(line))

    def answers(self, *idents: Any) -> dict[Any, dict[str, Any]]:
        """The answers to these requests, by id (other messages skipped)."""
        found: dict[Any, dict[str, Any]] = {}
        while set(idents) - set(found):
            message = self.answer()
            if message.get("id") in idents:
                found[message["id"]] = message
        return found

    def stop(self, hanging: bool = False) -> None:
        """Close its input; ``hanging``: kill it (its SDK never reads that input)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        if hanging:
            self.process.kill()
        assert self.process.wait(timeout=60) == (-9 if hanging else 0)


def search(query: str, **more: Any) -> dict[str, Any]:
    return {"name": "memory_search", "arguments": {"query": query, **more}}


@pytest.fixture(scope="module")
def remembered(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Shared:
    """FACT, remembered once for the module."""
    with shared(tmp_path_factory, user_cache, "fact") as place:
        assert run_cli("-c", "embedder=hash", "remember", FACT).returncode == 0
    return place


@pytest.fixture
def stored(remembered: Shared, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's home: a copy of ``remembered``; its servers run from the store's project."""
    monkeypatch.chdir(remembered.copy(home).project)
    return home


def test_a_search_is_answered_while_the_sdk_never_loads(stored: Path, tmp_path: Path) -> None:
    fake = tmp_path / "fake-sdk" / "mcp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(HANGING_SDK)
    server = Server({"PYTHONPATH": str(fake.parent)})
    try:
        server.send(0, "initialize", HANDSHAKE)  # no answer kept for this SDK: none comes
        server.send(None, "notifications/initialized")
        server.send(1, "tools/call", search("how do we deploy"))
        server.send(2, "tools/call", {"name": "session_search", "arguments": {"query": "deploy"}})
        found = server.answers(1, 2)
    finally:
        server.stop(hanging=True)
    result = found[1]["result"]
    assert [hit["content"] for hit in result["structuredContent"]["results"]] == [FACT]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result["isError"] is False
    assert found[2]["result"]["structuredContent"] == {"query": "deploy", "matches": []}


def sdk_loaded(server: Server, ident: Any, meta: dict[str, Any] | None = None) -> None:
    """Wait for the SDK's answer to a ping (an error in the 2026-07-28 protocol, which
    has none): every later request goes to the SDK."""
    server.send(ident, "ping", {"_meta": meta} if meta else None)
    assert {"result", "error"} & set(server.answers(ident)[ident])


def test_the_fronts_answer_is_the_sdks_in_both_protocols(stored: Path) -> None:
    server = Server()
    try:
        server.send(0, "initialize", HANDSHAKE)
        server.send(None, "notifications/initialized")
        server.send(1, "tools/call", search("how do we deploy", limit=3))
        early = server.answers(1)[1]
        sdk_loaded(server, "ping")
        server.send(2, "tools/call", search("how do we deploy", limit=3))
        late = server.answers(2)[2]
    finally:
        server.stop()
    assert early["result"] == late["result"]
    assert early["result"]["structuredContent"]["results"][0]["content"] == FACT

    server = Server()
    try:
        asked = search("how do we deploy", format="context")
        server.send(1, "tools/call", {**asked, "_meta": MODERN})
        early = server.answers(1)[1]
        sdk_loaded(server, "ping", MODERN)
        server.send(2, "tools/call", {**asked, "_meta": MODERN})
        late = server.answers(2)[2]
    finally:
        server.stop()
    assert early["result"] == late["result"]
    assert early["result"]["resultType"] == "complete"
    assert FACT in early["result"]["structuredContent"]["context"]


# Calls the front cannot answer as the SDK would, and the SDK's one line for each
REFUSED = [
    (search("deploy", bogus=1), "memory_search: unknown argument 'bogus'"),
    ({"name": "memory_search", "arguments": {}}, "missing argument 'query'"),
    (search("deploy" * 1000), "query is 6,000 characters: at most 4,000"),
    (
        {"name": "session_search", "arguments": {"query": "deploy", "since": "soonish"}},
        "cannot read the time 'soonish'",
    ),
]


def test_a_call_the_front_cannot_answer_gets_the_sdks_one_line(stored: Path) -> None:
    """Each call, sent while the SDK loads (one server for all: each is the SDK's to
    answer), gets its own one-line error."""
    server = Server()
    try:
        server.send(0, "initialize", HANDSHAKE)
        server.send(None, "notifications/initialized")
        for ident, (params, _) in enumerate(REFUSED, start=1):
            server.send(ident, "tools/call", params)
        found = server.answers(*range(1, len(REFUSED) + 1))
    finally:
        server.stop()
    for ident, (_, said) in enumerate(REFUSED, start=1):
        result = found[ident]["result"]
        assert result["isError"] is True, said
        (line,) = [c["text"] for c in result["content"]]
        assert said in line and "\n" not in line
