"""`memctl mcp` ends with its client, however the client leaves: a real process on a
socketpair, as OpenCode (Bun) starts its servers, whose client end closes with an answer
unread (the server's read then fails with ECONNRESET, not EOF) or before the SDK writes
its answer (the write fails with EPIPE). Before, the first left the server idle for good,
the store open (seen after OpenCode's end-to-end test), and the second ended it with an
internal error."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import memctl_command
from tests.integrations.test_integrations_mcp import NO_RESIDENT

HANDSHAKE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"},
}
DEADLINE = 120  # seconds: only so that a server that never ends fails the test
# a fresh `python -m memctl`: a fork server's process is not ended by killing its stand-in
pytestmark = pytest.mark.fresh


def on_a_socket(
    home: Path, theirs: socket.socket | None = None
) -> tuple[subprocess.Popen[bytes], socket.socket | None]:
    """``memctl mcp`` with one end of a socketpair as its stdin and stdout (``theirs``,
    or a new pair's); the other end (None with ``theirs``)."""
    env = {**os.environ, "MEMCTL_LLM": "none", **NO_RESIDENT}
    ours = None
    if theirs is None:
        ours, theirs = socket.socketpair()
    with theirs:
        process = subprocess.Popen(
            memctl_command(["--home", str(home), "-c", "llm=none", "mcp"], env, mcp=True),
            stdin=theirs.fileno(),
            stdout=theirs.fileno(),
            stderr=subprocess.PIPE,
            env=env,
        )
    return process, ours


def line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def ended(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    """The server's exit code and stderr, once it ends by itself (else it is killed)."""
    try:
        _, stderr = process.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError("memctl mcp outlived its client") from None
    return process.returncode, stderr.decode()


def test_the_server_ends_when_its_client_leaves_an_answer_unread(home: Path) -> None:
    process, client = on_a_socket(home)
    assert client is not None
    with client, client.makefile("rb") as answers:
        client.sendall(
            line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HANDSHAKE})
        )
        assert json.loads(answers.readline())["id"] == 0
        client.sendall(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        search = {"name": "memory_search", "arguments": {"query": "how do we deploy"}}
        client.sendall(line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": search}))
        # the search's answer has come, and is left unread: closing now resets the socket
        assert select.select([client], [], [], DEADLINE)[0] == [client]
    assert ended(process) == (0, "")


def test_the_server_ends_cleanly_when_its_client_left_before_the_answer(home: Path) -> None:
    """A request only the SDK answers (the front does not know ``ping``) from a client
    gone before the server started: its answer's write fails (EPIPE), and the server
    ends without an error."""
    ours, theirs = socket.socketpair()
    ours.sendall(line({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
    ours.close()  # nothing unread on our side: the server reads the ping, then its end
    process, _ = on_a_socket(home, theirs)
    assert ended(process) == (0, "")
