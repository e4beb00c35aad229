#!/usr/bin/env python3
"""Make memctl/integrations/mcp_answers.json: the MCP SDK's answers to the handshake and
the lists, for every protocol version it speaks, that `memctl mcp` gives before the SDK
has loaded at a first start (see memctl/integrations/mcp_front.py).

    python scripts/gen_mcp_answers.py          # write the file
    python scripts/gen_mcp_answers.py --check  # exit 1 when it is not what the SDK says

Each version is one real start of `memctl mcp` in a new data directory, spoken to as a
client does, then sent a ping (which only the SDK answers: the front loads the SDK, which
answers every request); the answers are those the front kept from the SDK. `make docs`
runs this too; tests/integrations/test_mcp_front.py fails while the file is stale.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from regenerated import write_or_check

from memctl.integrations.mcp_front import ANSWERS_FILE, SHIPPED_FILE, sdk_release

LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")
PING = {"jsonrpc": "2.0", "id": "ping", "method": "ping"}  # only the SDK answers it
CLIENT = {"name": "memctl-gen", "version": "1"}


def legacy(version: str) -> list[dict[str, Any]]:
    handshake = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT}
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": handshake},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": n, "method": m} for n, m in enumerate(LISTS, 1)),
        PING,
    ]


def modern(version: str) -> list[dict[str, Any]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": CLIENT,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    listen = {"_meta": meta, "notifications": {"toolsListChanged": True}}
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta}},
        {"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen", "params": listen},
        *(
            {"jsonrpc": "2.0", "id": n, "method": m, "params": {"_meta": meta}}
            for n, m in enumerate(LISTS, 1)
        ),
        {**PING, "params": {"_meta": meta}},
    ]


def answers_of(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What a real start of `memctl mcp` kept of the SDK's answers to ``messages``."""
    with tempfile.TemporaryDirectory(prefix="memctl-mcp-answers-") as home:
        command = [sys.executable, "-m", "memctl", "--home", home, "-c", "llm=none", "mcp"]
        text = "".join(json.dumps(m) + "\n" for m in messages)
        env = {**os.environ, "MEMCTL_LLM": "none"}
        done = subprocess.run(command, input=text, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise SystemExit(f"memctl mcp failed: {done.stderr.strip()}")
        kept = json.loads((Path(home) / ANSWERS_FILE).read_text(encoding="utf-8"))
    return dict(kept["answers"])


def made() -> str:
    answers: dict[str, Any] = {}
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        answers |= answers_of(legacy(version))
    for version in MODERN_PROTOCOL_VERSIONS:
        answers |= answers_of(modern(version))
    document = {"sdk": sdk_release(), "answers": dict(sorted(answers.items()))}
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


if __name__ == "__main__":
    sys.exit(write_or_check(SHIPPED_FILE, made, __doc__, "scripts/gen_mcp_answers.py"))
