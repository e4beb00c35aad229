"""`memctl mcp` loads the MCP SDK only when a request comes that its front does not answer
(issue 33, s45-lazysdk: its import was ~0.9 s of the 1.1-1.5 s of CPU every session's
start cost): a session of the handshake, the lists and a search never imports it, on
pipes or on a socketpair (Node and Bun clients); a memory_store then loads it and is
answered, and the requests sent behind it, without waiting, are answered in their order.
Real `python -X importtime -m memctl mcp` processes (its stderr names every module the
process imported), a real store."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.test_mcp_front_search import (
    FACT,
    HANDSHAKE,
    jsonrpc_line,
    remembered,
    stored,
)

__all__ = ["remembered", "stored"]  # the fixtures, for pytest
pytestmark = pytest.mark.fresh  # a fork server's process has the SDK loaded already
SDK = ("mcp", "mcp_types")  # the SDK's packages (mcp_types: its pydantic protocol types)
NOTE = "The nightly backup of the orca host runs at three."


class Session:
    """``python -X importtime -m memctl mcp`` on pipes or on a socketpair, one JSON line
    each way; its stderr kept in ``stderr``."""

    def __init__(self, stderr: Path, way: str) -> None:
        command = [sys.executable, "-X", "importtime", "-m", "memctl", "mcp"]
        env = {
            **os.environ,
            "MEMCTL_LLM": "none",
            "MEMCTL_EMBEDDER": "hash",
            "MEMCTL_RECALL_RESIDENT": "off",
        }
        self.stderr = stderr
        self.sock: socket.socket | None = None
        with stderr.open("wb") as errors:
            if way == "socket":
                self.sock, theirs = socket.socketpair()
                with theirs:
                    self.process = subprocess.Popen(
                        command, stdin=theirs, stdout=theirs, stderr=errors, env=env
                    )
                self.reader = self.sock.makefile("rb")
            else:
                self.process = subprocess.Popen(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=env
                )
                assert self.process.stdout is not None
                self.reader = self.process.stdout

    def send(self, ident: Any, method: str, params: dict[str, Any] | None = None) -> None:
        data = jsonrpc_line(ident, method, params)
        if self.sock is not None:
            self.sock.sendall(data)
        else:
            assert self.process.stdin is not None
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def answers(self, *idents: Any) -> list[dict[str, Any]]:
        """Every answer, in the order they came, until each of ``idents`` has one."""
        found: list[dict[str, Any]] = []
        while set(idents) - {message.get("id") for message in found}:
            line = self.reader.readline()
            assert line, "the server closed its output"
            found.append(json.loads(line))
        return found

    def close(self) -> set[str]:
        """Close the client's end; once the server ends (exit 0), the modules it imported."""
        self.reader.close()
        if self.sock is not None:
            self.sock.close()
        else:
            assert self.process.stdin is not None
            self.process.stdin.close()
        assert self.process.wait(timeout=120) == 0
        text = self.stderr.read_text()
        imported = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", text, re.M)
        assert imported, text[-2000:]  # -X importtime spoke
        return set(imported)


def loaded_sdk(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in SDK)


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def results(answer: dict[str, Any]) -> list[str]:
    return [hit["content"] for hit in answer["result"]["structuredContent"]["results"]]


@pytest.mark.parametrize("way", ["pipes", "socket"])
def test_a_session_of_handshake_lists_and_search_never_imports_the_sdk(
    stored: Path, tmp_path: Path, way: str
) -> None:
    session = Session(tmp_path / "stderr", way)
    session.send(0, "initialize", HANDSHAKE)
    (handshake,) = session.answers(0)
    session.send(None, "notifications/initialized")
    session.send(1, "tools/list")
    session.send(2, "tools/call", tool("memory_search", query="how do we deploy"))
    answers = {message["id"]: message for message in session.answers(1, 2)}
    modules = session.close()
    assert handshake["result"]["serverInfo"]["name"] == "memctl"
    assert "memory_store" in {t["name"] for t in answers[1]["result"]["tools"]}
    assert results(answers[2]) == [FACT]
    assert "memctl.integrations.mcp_front" in modules  # the front answered them all
    assert loaded_sdk(modules) == []


def test_a_store_loads_the_sdk_and_the_requests_behind_it_keep_their_order(
    stored: Path, tmp_path: Path
) -> None:
    """Everything sent at once, nothing loaded yet: the store (the SDK's to answer) comes
    before a search for what it stores, a list and a second search; each is answered
    once, and the search finds the stored note (before, the front answered that search
    while the SDK was still loading, without the note)."""
    session = Session(tmp_path / "stderr", "pipes")
    session.send(0, "initialize", HANDSHAKE)
    session.send(None, "notifications/initialized")
    session.send(1, "tools/call", tool("memory_search", query="how do we deploy"))
    session.send(2, "tools/call", tool("memory_store", text=NOTE))
    session.send(3, "tools/call", tool("memory_search", query="orca nightly backup"))
    session.send(4, "tools/list")
    session.send(5, "tools/call", tool("memory_search", query="how do we deploy"))
    answers = session.answers(0, 1, 2, 3, 4, 5)
    modules = session.close()
    assert sorted(message["id"] for message in answers) == [0, 1, 2, 3, 4, 5]  # each once
    by_id = {message["id"]: message for message in answers}
    stored_note = by_id[2]["result"]["structuredContent"]
    assert stored_note["content"] == NOTE and stored_note["existing"] is False
    assert NOTE in results(by_id[3])  # the search after the store finds it
    assert results(by_id[1])[0] == FACT and results(by_id[5])[0] == FACT
    assert "memory_store" in {t["name"] for t in by_id[4]["result"]["tools"]}
    assert "mcp.server.mcpserver" in modules  # the SDK loaded, and answered


def test_a_list_carrying_a_clients_meta_is_answered_without_the_sdk(
    stored: Path, tmp_path: Path
) -> None:
    """Codex sends its tools/list with a _meta of a progress token, its thread and its
    session, new each session: the saved answer still serves it (before, every Codex
    session loaded the SDK for its list)."""
    session = Session(tmp_path / "stderr", "pipes")
    session.send(0, "initialize", HANDSHAKE)
    session.send(None, "notifications/initialized")
    meta = {"progressToken": 1, "threadId": "t-81", "sessionId": "s-81"}
    session.send(1, "tools/list", {"_meta": meta})
    (listed,) = session.answers(1)[-1:]
    modules = session.close()
    assert "memory_search" in {t["name"] for t in listed["result"]["tools"]}
    assert loaded_sdk(modules) == []
