"""`memctl mcp` as a real subprocess, driven by the MCP SDK's own client over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

TOOLS = {
    "memory_search",
    "memory_store",
    "memory_get",
    "memory_list",
    "memory_update",
    "memory_forget",
    "memory_link",
    "memory_ingest",
    "memory_profile",
    "memory_stats",
    "memory_distill_tasks",
    "memory_distill_apply",
    "session_search",
    "session_expand",
}


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def session(home: Path, project: Path) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "memctl",
            "-c",
            "ingest.spawn_worker=false",
            "-c",
            "llm=none",
            "-c",
            "ingest.host_distil=true",
            "mcp",
        ],
        env={"MEMCTL_HOME": str(home), "PATH": os.environ.get("PATH", "")},
        cwd=project,
    )
    seen: dict[str, Any] = {}
    async with Client(params) as client:
        listed = await client.list_tools()
        seen["tools"] = {tool.name: tool.description for tool in listed.tools}
        stored = await client.call_tool(
            "memory_store", {"text": "The shop deploys with make release.", "tags": ["ops"]}
        )
        seen["stored"] = stored.structured_content
        seen["search"] = await client.call_tool("memory_search", {"query": "how to deploy"})
        seen["context"] = await client.call_tool(
            "memory_search", {"query": "deploy", "format": "context"}
        )
        seen["missing"] = await client.call_tool("memory_get", {"id": "abcdef12"})
        seen["bad_mode"] = await client.call_tool("memory_search", {"query": "x", "mode": "odd"})
        seen["bad_budget"] = await client.call_tool("memory_search", {"query": "x", "budget": 0})
        seen["ingest"] = await client.call_tool(
            "memory_ingest", {"text": "user: I like rye bread.\nassistant: Noted."}
        )
        tasks = await client.call_tool("memory_distill_tasks", {})
        seen["tasks"] = tasks.structured_content["tasks"]
        task = seen["tasks"][0]
        fact = {
            "content": "The user likes rye bread.",
            "l0_abstract": "Likes rye bread",
            "category": "preferences",
            "source_message": 1,
        }
        seen["applied"] = await client.call_tool(
            "memory_distill_apply",
            {
                "session_id": task["session_id"],
                "through_seq": task["through_seq"],
                "answer": {"facts": [fact]},
            },
        )
        seen["grep"] = await client.call_tool("session_search", {"query": 'rye "bread'})
        seen["expand"] = await client.call_tool(
            "session_expand", {"ref": seen["grep"].structured_content["matches"][0]["ref"]}
        )
        seen["out_of_bounds"] = await client.call_tool(
            "session_expand", {"ref": task["session_id"] + "#1-99"}
        )
        seen["both"] = await client.call_tool("memory_ingest", {})
        seen["stats"] = await client.call_tool("memory_stats", {})
        seen["profile"] = await client.read_resource("memctl://profile")
    return seen


def test_an_mcp_client_lists_stores_searches_and_gets_clear_errors(
    home: Path, tmp_path: Path
) -> None:
    seen = anyio.run(session, home, tmp_path / "project")
    assert set(seen["tools"]) == TOOLS
    assert all(len(description or "") > 40 for description in seen["tools"].values())
    stored = seen["stored"]
    assert stored["content"] == "The shop deploys with make release." and stored["tags"] == ["ops"]
    assert stored["category"] == "entities"  # classified by the rules: a project fact
    found = seen["search"].structured_content["results"]
    assert found[0]["id"] == stored["id"]
    assert "The shop deploys with make release." in seen["context"].structured_content["context"]
    assert seen["missing"].is_error and "no memory" in text(seen["missing"])
    assert seen["bad_mode"].is_error and "mode" in text(seen["bad_mode"])
    assert seen["bad_budget"].is_error and "--budget takes a number of tokens" in text(
        seen["bad_budget"]
    )
    assert seen["ingest"].structured_content["messages_new"] == 2
    match = seen["grep"].structured_content["matches"][0]
    assert match["lines"] == ["I like rye bread."] and match["after"][0]["line"] == "Noted."
    passage = seen["expand"].structured_content
    assert (passage["first"], passage["last"], passage["total"]) == (1, 1, 2)
    assert ">[1] user" in passage["text"] and "Noted." in passage["text"]
    assert seen["out_of_bounds"].is_error and "out of bounds" in text(seen["out_of_bounds"])
    assert seen["both"].is_error and "either transcript_path or text" in text(seen["both"])
    assert seen["stats"].structured_content["sessions"] == 1
    assert "rye bread" in seen["tasks"][0]["prompt"] and seen["tasks"][0]["schema"]
    assert seen["applied"].structured_content["status"] == "done", text(seen["applied"])
    assert seen["stats"].structured_content["total"] == 2
    profile = "".join(getattr(c, "text", "") for c in seen["profile"].contents)
    assert "The shop deploys with make release." not in profile  # a project fact, not a taste
    assert "The user likes rye bread." in profile
