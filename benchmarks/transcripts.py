"""Synthetic transcripts in Claude Code's JSONL shape, of any length, for tests and benchmarks.

User turns state preferences and project facts (so the slow path has something
to distil), assistant turns answer and call a tool; ``filler`` adds a tool
result of that many characters after each tool call, as real transcripts have.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

TOPICS = ("pytest -q", "ruff format", "make release", "uv sync", "docker compose up")


def claude_code_lines(count: int, session: str = "big-session", filler: int = 0) -> Iterator[str]:
    """``count`` messages (user and assistant in turn), one JSON line each, plus tool results."""
    for n in range(count):
        stamp = f"2025-09-14T{9 + n // 3600 % 12:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        if n % 2 == 0:
            topic = TOPICS[n // 2 % len(TOPICS)]
            content: object = (
                f"Message {n}: I prefer running `{topic}` before each commit to repo {n}."
            )
            kind = "user"
        else:
            content = [
                {
                    "type": "text",
                    "text": f"Noted, item {n}. I will keep that in mind for this repo.",
                },
                {
                    "type": "tool_use",
                    "id": f"toolu_{n}",
                    "name": "Bash",
                    "input": {"command": "ls"},
                },
            ]
            kind = "assistant"
        yield json.dumps(
            {
                "parentUuid": None,
                "isSidechain": False,
                "sessionId": session,
                "type": kind,
                "message": {"role": kind, "content": content},
                "uuid": f"uuid-{n}",
                "timestamp": stamp,
            }
        )
        if filler and kind == "assistant":
            result = [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "x" * filler}]
            yield json.dumps(
                {
                    "sessionId": session,
                    "type": "user",
                    "message": {"role": "user", "content": result},
                    "uuid": f"uuid-{n}-result",
                    "timestamp": stamp,
                }
            )
