"""memctl's own answers told back (memories/told_back.py): an assistant asks memctl (its MCP
``memory_search``, ``memctl recall`` in a shell) and restates the memory; recall hands the
memory back once, not the reply beside it. Sessions in each client's own shape, taken in
by the real fast and slow paths into a real store."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from memctl.context import Context
from memctl.memories.operations import remember
from memctl.memories.told_back import memctl_read, tells_back
from memctl.retrieve.pipeline import recall
from tests.ingest.test_ingest_sessions import (
    claude_record,
    codex_line,
    codex_message,
    ingest,
    memories_of,
)

MEMORY = "The Redis cache listens on port 6380 in staging, not the default 6379."
REPLY = "From memory: the Redis cache listens on port 6380 in staging, not 6379."
CORRECTION = "No, we moved the staging Redis cache to port 6390 last week."
QUESTION = "which port does the staging cache listen on?"
ANSWER = json.dumps({"query": "cache port", "results": [{"id": "m1", "content": MEMORY}]})
AT = "2026-11-29T10:00:00Z"


def claude_mcp() -> list[dict[str, Any]]:
    search = {"type": "tool_use", "id": "t1", "name": "mcp__memctl__memory_search"}
    search["input"] = {"query": "cache port"}
    found = [{"type": "tool_result", "tool_use_id": "t1", "content": ANSWER}]
    return [
        claude_record("user", "Which port is the cache on again?", AT),
        claude_record("assistant", [search], AT),
        claude_record("user", found, AT),
        claude_record("assistant", REPLY, AT),
        claude_record("user", CORRECTION, AT),
    ]


def claude_shell() -> list[dict[str, Any]]:
    shell = {"type": "tool_use", "id": "b1", "name": "Bash"}
    shell["input"] = {"command": 'memctl recall "cache port"'}
    table = f"clear  3f2a91c0  0.82  {MEMORY}"
    return [
        {**r, "sessionId": "cc-shell"}
        for r in (
            claude_record("user", "what was the cache port", AT),
            claude_record("assistant", [shell], AT),
            claude_record(
                "user", [{"type": "tool_result", "tool_use_id": "b1", "content": table}], AT
            ),
            claude_record("assistant", REPLY.replace("From memory", "memctl says"), AT),
        )
    ]


def codex_mcp() -> list[dict[str, Any]]:
    search = {"type": "function_call", "name": "mcp__memctl__memory_search", "call_id": "c1"}
    return [
        codex_line("session_meta", {"id": "019a-codex-echo", "cwd": "/home/ann/shop"}, AT),
        codex_message("user", "Which port is the cache on again?", at=AT),
        codex_line("response_item", {**search, "arguments": '{"query": "cache port"}'}, AT),
        codex_line(
            "response_item", {"type": "function_call_output", "call_id": "c1", "output": ANSWER}, AT
        ),
        codex_message("assistant", REPLY, at=AT),
    ]


def opencode_mcp() -> str:
    """OpenCode's export: the call and the reply are parts of one assistant message."""
    state = {"status": "completed", "input": {"query": "cache port"}, "output": ANSWER}
    parts = [
        {"type": "tool", "tool": "memctl_memory_search", "state": state},
        {"type": "text", "text": REPLY},
    ]
    said = [
        {"info": {"role": "user"}, "parts": [{"type": "text", "text": "Which port is the cache?"}]},
        {"info": {"role": "assistant"}, "parts": parts},
    ]
    return json.dumps({"info": {"id": "ses_echo", "directory": "/home/ann/shop"}, "messages": said})


def test_memctls_answer_told_back_counts_with_the_memory(
    make_ctx: Callable[..., Context],
) -> None:
    """Before: the replies came back beside the memory (clear, as a session's message that
    holds every word of the question), and the shell's session made a digest of them."""
    ctx = make_ctx()
    memory = remember(ctx, MEMORY, scope="global")
    sessions = [
        ingest(ctx, claude_mcp()),
        ingest(ctx, claude_shell()),
        ingest(ctx, codex_mcp()),
        ingest(ctx, opencode_mcp(), client="opencode"),
    ]
    found = recall(ctx, QUESTION, touch=False, sessions=True)
    rows = [r.memory.content for r in found.results]
    assert memory.id in [r.memory.id for r in found.clear]
    assert not [row for row in rows if "cache listens on port 6380" in row and row != MEMORY]
    assert CORRECTION in rows  # the user's own words after it are evidence (a memory now)
    # each reply is still stored, as said; the shell's output is not, nor a digest of it
    said = [c for (c,) in ctx.db.tuples("SELECT content FROM messages", ())]
    assert sum(1 for text in said if "listens on port 6380" in text) == len(sessions)
    assert "[tool result Bash]" in said
    assert memories_of(ctx, sessions[1]) == []


@pytest.mark.parametrize(
    ("name", "detail", "reads"),
    [
        ("mcp__memctl__memory_search", "cache port", True),
        ("mcp__memctl__session_expand", "s1#2", True),  # s29-leak: a session's text read back
        ("Bash", 'memctl recall "cache port"', True),
        ("exec_command", "uv run memctl --home /tmp/h sessions show s1", True),
        ("Bash", "~/.local/bin/memctl -c recall.limit=3 recall deploy", True),
        ("Bash", "memctl runs 4f2a9c1e", True),  # a run's memories, read back
        ("Bash", "echo '{}' | memctl hook claude-code SessionStart", True),  # its block
        # s30-leak: its database read as it is (its memories, a forgotten one's text)
        ("Bash", 'sqlite3 ~/.local/share/memctl/memctl.db "SELECT content FROM memories"', True),
        ("Bash", "memctl remember 'we deploy with helm'", False),
        ("Bash", "sqlite3 app.db .tables", False),
        ("Bash", "grep -rn recall src/memctl", False),
        ("mcp__notes__search", "cache port", False),
    ],
)
def test_which_calls_read_memctl(name: str, detail: str, reads: bool) -> None:
    assert memctl_read(name, detail) is reads


def test_only_a_turn_that_only_read_memctl_tells_it_back() -> None:
    asked = [("user", "which port?"), ("assistant", "[tool mcp__memctl__memory_search: port]")]
    told = [*asked, ("tool", "[tool result mcp__memctl__memory_search]"), ("assistant", REPLY)]
    assert tells_back(told)
    worked = [*told[:-1], ("assistant", "[tool Read: config/redis.yml]"), ("assistant", REPLY)]
    assert not tells_back(worked)  # it looked at the code too: its own finding
    assert not tells_back([("user", "which port?"), ("assistant", REPLY)])  # no call
    assert not tells_back([*told, ("user", CORRECTION)])  # the user's words
    assert not tells_back(told[2:])  # its turn's opening is not in view
