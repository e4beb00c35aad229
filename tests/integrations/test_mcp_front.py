"""`memctl mcp`'s front: the handshake answered from the SDK's earlier answers, the SDK
serving everything else; real processes, the real SDK client."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from memctl.integrations.mcp_front import ANSWERS_FILE, Front
from tests.conftest import memctl_command, server_env
from tests.integrations.test_integrations_mcp import NO_RESIDENT, TOOLS, text

# A protocol version the SDK does not know: it answers with its latest, and the answers
# memctl ships (for the versions it knows) do not cover it, so only kept answers do.
HANDSHAKE = {
    "protocolVersion": "2099-01-01",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"},
}
LISTS = ("tools/list", "resources/list", "prompts/list")
PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}  # only the SDK answers it: it loads


class Wire:
    """``memctl mcp`` as a process, spoken to line by line, as a client does."""

    def __init__(self, home: Path) -> None:
        # no resident recall process (the module's fixture runs before the autouse one)
        env = {**os.environ, "MEMCTL_LLM": "none", "MEMCTL_RECALL_RESIDENT": "off"}
        self.process = subprocess.Popen(
            memctl_command(["--home", str(home), "-c", "llm=none", "mcp"], env, mcp=True),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def answer(self) -> bytes:
        assert self.process.stdout is not None
        return self.process.stdout.readline()

    def close(self) -> str:
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0
        return self.process.stderr.read().decode()


def start(
    home: Path, extra: dict[str, Any] | None = None, handshake: dict[str, Any] = HANDSHAKE
) -> tuple[dict[Any, bytes], str]:
    """One client's start: initialize, then the lists (and ``extra``); each answer's line
    by request id, and the server's stderr."""
    wire = Wire(home)
    wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": handshake})
    lines = {0: wire.answer()}
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    requests = [{"jsonrpc": "2.0", "id": n, "method": m} for n, m in enumerate(LISTS, start=1)]
    for request in [*requests, *([extra] if extra else [])]:
        wire.send(request)
    for _ in range(len(requests) + bool(extra)):
        line = wire.answer()
        lines[json.loads(line)["id"]] = line
    return lines, wire.close()


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[Any, bytes], str]:
    """A first start's answers (the SDK's own, to a version memctl ships no answers
    for) and the answers file it left."""
    home = tmp_path_factory.mktemp("first-start")
    answers, _ = start(home)
    return answers, (home / ANSWERS_FILE).read_text()


def test_a_second_start_answers_the_handshake_exactly_as_the_sdk_did(
    home: Path, first: tuple[dict[Any, bytes], str]
) -> None:
    sdk, kept = first
    assert set(json.loads(sdk[0])["result"]) >= {"capabilities", "serverInfo"}
    assert len(json.loads(kept)["answers"]) == 1 + len(LISTS)
    home.mkdir()
    (home / ANSWERS_FILE).write_text(kept)
    search = {
        "jsonrpc": "2.0",
        "id": "search",
        "method": "tools/call",
        "params": {"name": "memory_list", "arguments": {}},
    }
    second, stderr = start(home, search)
    assert {k: v for k, v in second.items() if k != "search"} == sdk  # byte for byte
    assert json.loads(second["search"])["result"]["structuredContent"] == {"memories": []}
    assert stderr == ""


def test_a_first_start_is_answered_from_the_shipped_answers_as_the_sdk_answers(
    tmp_path: Path, first: tuple[dict[Any, bytes], str]
) -> None:
    """memctl/integrations/mcp_answers.json answers a start with no kept answers before the
    SDK loads (a Front with no SDK behind it answers), byte for byte as the SDK does (it
    answers the unknown version of ``first`` with its latest); stale, this test fails:
    run scripts/gen_mcp_answers.py."""
    latest = {**HANDSHAKE, "protocolVersion": LATEST_HANDSHAKE_VERSION}
    refused = {k: v for k, v in latest.items() if k != "clientInfo"}  # the SDK's to refuse
    read, write = os.pipe()
    lines = b"".join(
        json.dumps({"jsonrpc": "2.0", "id": n, "method": "initialize", "params": p}).encode()
        + b"\n"
        for n, p in ((1, refused), (0, latest))
    )
    Front(tmp_path / ANSWERS_FILE, io.BytesIO(lines), write).start()
    with os.fdopen(read, "rb") as wire:
        assert wire.readline() == first[0][0]  # id 0's: 1 was not answered early
    os.close(write)
    answers, stderr = start(tmp_path / "home", handshake=latest)
    stale = "memctl/integrations/mcp_answers.json is stale: run scripts/gen_mcp_answers.py"
    assert answers == first[0] and stderr == "", stale


def test_a_kept_answer_the_sdk_no_longer_gives_is_corrected(
    home: Path, first: tuple[dict[Any, bytes], str]
) -> None:
    """In a session that loads the SDK (a ping: the front does not answer it)."""
    sdk, kept = first
    path = home / ANSWERS_FILE
    stale = json.loads(kept)
    key = next(k for k in stale["answers"] if '"tools/list"' in k)
    stale["answers"][key] = {"tools": []}  # what an older memctl would have listed
    home.mkdir()
    path.write_text(json.dumps(stale))
    upgraded = {**HANDSHAKE, "clientInfo": {"name": "test", "version": "2"}}
    answers, stderr = start(home, PING, handshake=upgraded)
    assert json.loads(answers[1])["result"] == {"tools": []}  # the front answered
    assert "stale" in stderr
    assert json.loads(path.read_text()) == json.loads(kept)


def test_answers_kept_by_other_code_are_not_used(
    home: Path, first: tuple[dict[Any, bytes], str]
) -> None:
    sdk, kept = first
    path = home / ANSWERS_FILE
    other = json.loads(kept)
    other["stamp"] = "0.0.1 another memctl"
    other["answers"] = {k: {"tools": []} for k in other["answers"]}
    home.mkdir()
    path.write_text(json.dumps(other))
    answers, stderr = start(home)
    assert answers == sdk and stderr == ""
    assert json.loads(path.read_text()) == json.loads(kept)


def test_bad_lines_go_to_the_sdk_as_before(home: Path, first: tuple[dict[Any, bytes], str]) -> None:
    """While the front answers: a line that is not JSON is the SDK's to judge (it passes
    over it); an unknown method gets its error."""
    home.mkdir()
    (home / ANSWERS_FILE).write_text(first[1])
    wire = Wire(home)
    wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HANDSHAKE})
    assert json.loads(wire.answer())["id"] == 0
    assert wire.process.stdin is not None
    wire.process.stdin.write(b"{not json\n")
    wire.send({"jsonrpc": "2.0", "id": 7, "method": "no/such/method"})
    answer = json.loads(wire.answer())
    wire.close()
    assert answer["id"] == 7 and answer["error"]["message"] == "Method not found"


async def through_the_sdk_client(home: Path, calls: bool) -> tuple[set[str], str]:
    env = server_env(home, **NO_RESIDENT)
    command, *args = memctl_command(
        ["-c", "llm=none", "-c", "ingest.spawn_worker=false", "mcp"], env, mcp=True
    )
    params = StdioServerParameters(command=command, args=args, env=env)
    async with Client(params, mode="legacy") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        if not calls:
            return tools, ""
        await client.call_tool("memory_store", {"text": "The shop deploys with make release."})
        found = await client.call_tool("memory_search", {"query": "how do we deploy"})
    return tools, text(found)


def test_the_sdk_client_lists_and_calls_tools_on_first_and_later_starts(home: Path) -> None:
    tools, _ = anyio.run(through_the_sdk_client, home, False)  # the shipped answers
    assert tools == TOOLS
    tools, found = anyio.run(through_the_sdk_client, home, True)  # and kept ones, if any
    assert tools == TOOLS
    assert "make release" in found


def modern_start(home: Path, version: str, ping: bool = False) -> tuple[dict[Any, bytes], str]:
    """A start in the 2026-07-28 protocol, as Claude Code 2.1.330 makes it: no initialize,
    server/discover, a subscription to changes and the lists, the protocol version and the
    client in each _meta (Claude Code waits for the subscription's acknowledgement);
    ``ping``: then a ping, which loads the SDK."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": version},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    wire = Wire(home)
    lines = {}
    listen = {"_meta": meta, "notifications": {"toolsListChanged": True}}
    asked = [
        (0, "server/discover", {"_meta": meta}),
        ("listen:0", "subscriptions/listen", listen),
        (1, "tools/list", {"_meta": meta}),
    ]
    for ident, method, params in asked + ([("ping", "ping", {"_meta": meta})] if ping else []):
        wire.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        lines[ident] = wire.answer()  # the listen's: the subscription acknowledged
    return lines, wire.close()


def test_the_2026_protocol_gets_the_early_answers_too(home: Path) -> None:
    sdk, stderr = modern_start(home, "1", ping=True)  # answered as the SDK answers: it loads
    assert "capabilities" in json.loads(sdk[0])["result"] and stderr == ""
    path = home / ANSWERS_FILE
    kept = json.loads(path.read_text())
    key = next(k for k in kept["answers"] if '"tools/list"' in k)
    kept["answers"][key] = {"tools": []}
    path.write_text(json.dumps(kept))
    answers, stderr = modern_start(home, "2", ping=True)  # a new client version: answered early
    assert answers[0] == sdk[0] and answers["listen:0"] == sdk["listen:0"]
    assert json.loads(sdk["listen:0"])["method"] == "notifications/subscriptions/acknowledged"
    assert json.loads(answers[1])["result"] == {"tools": []}  # the front answered
    assert "stale" in stderr
    assert json.loads(path.read_text())["answers"][key] == json.loads(sdk[1])["result"]
