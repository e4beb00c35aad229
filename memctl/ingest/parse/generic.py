"""Generic transcripts: JSON ``{"messages": [{"role", "content"}]}`` (or a bare array),
JSONL of ``{"role", "content"}`` lines, or plain text with ``user:`` / ``assistant:`` lines.

``content`` may be a string or a list of ``{"type": "text", "text": ...}``
blocks. In plain text a line starting with a role name opens a message and the
lines after it continue it; text before the first such line is the user's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from memctl.ingest.parse.common import Parsed, Tally, block_text, timestamp
from memctl.lazy_re import lazy
from memctl.model import Role

ROLE_NAMES = {
    "user": Role.USER,
    "human": Role.USER,
    "assistant": Role.ASSISTANT,
    "ai": Role.ASSISTANT,
    "model": Role.ASSISTANT,
    "system": Role.SYSTEM,
    "tool": Role.TOOL,
}
SPEAKER = lazy(r"^\s*(user|human|assistant|ai|model|system)\s*:\s?(.*)$", re.I | re.S)


def record(value: Any, tally: Tally) -> list[Parsed]:
    """One ``{"role", "content"}`` object as a message."""
    if not isinstance(value, dict):
        tally.bad("message that is not an object")
        return []
    role = ROLE_NAMES.get(str(value.get("role", "")).lower())
    if role is None or "content" not in value:
        tally.bad("message without a known role and content")
        return []
    text = block_text(value["content"]).strip()
    if not text:
        tally.pass_over(f"{role} without text")
        return []
    tally.keep(str(role))
    created = timestamp(value.get("created_at") or value.get("timestamp") or value.get("time"))
    return [Parsed(role, text, created)]


def member(key: str | None, value: Any, tally: Tally) -> list[Parsed]:
    """One member of a JSON document: messages, or the session's id and title."""
    if key in ("messages", None):
        return record(value, tally)
    if key in ("session_id", "sessionId", "id") and isinstance(value, str):
        tally.session_id = tally.session_id or value
    elif key == "title" and isinstance(value, str):
        tally.title = value
    elif key == "cwd":
        tally.saw_cwd(value)
    return []


def jsonl_record(value: Any, tally: Tally) -> list[Parsed]:
    """A JSONL line: a message, or a whole ``{"messages": [...]}`` document on one line."""
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        found: list[Parsed] = []
        for key, item in value.items():
            items = item if key == "messages" else [item]
            for one in items:
                found += member(key, one, tally)
        return found
    return record(value, tally)


def text_messages(lines: Iterator[str], tally: Tally) -> Iterator[Parsed]:
    """Messages of a plain-text transcript."""
    role: Role = Role.USER
    body: list[str] = []
    for line in lines:
        speaker = SPEAKER.match(line)
        if speaker:
            tally.speakers += 1
            if "".join(body).strip():
                yield Parsed(role, "".join(body).strip())
            role, body = ROLE_NAMES[speaker.group(1).lower()], [speaker.group(2)]
        else:
            body.append(line)
    if "".join(body).strip():
        yield Parsed(role, "".join(body).strip())
