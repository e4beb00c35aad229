"""Claude Code transcripts: JSONL, one record a line.

Records of ``type`` user and assistant carry ``message.content``: a string,
or a list of blocks. ``text`` blocks are kept, ``tool_use`` and
``tool_result`` become one-line notes, ``thinking`` is dropped. A user record
holding only tool results is a ``tool`` message. ``summary`` gives the
session title; ``system``, ``file-history-snapshot``, ``queue-operation``,
meta lines (``isMeta``) and sub-agent lines (``isSidechain``) are passed over.
"""

from __future__ import annotations

from typing import Any

from memctl.ingest.parse.common import (
    Parsed,
    Tally,
    timestamp,
    tool_result_note,
    tool_use_note,
    without_reminders,
)
from memctl.model import Role

ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}


def looks_like(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    return (kind in ROLES and isinstance(record.get("message"), dict)) or (
        kind == "summary" and "leafUuid" in record
    )


def _block(block: Any) -> tuple[str, bool] | None:
    """(text, is a tool result) of one content block; None for blocks that say nothing."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return without_reminders(block["text"]), False
    if kind == "tool_use":
        return tool_use_note(str(block.get("name") or ""), block.get("input")), False
    if kind == "tool_result":
        return tool_result_note(block.get("content") or "", bool(block.get("is_error"))), True
    if kind == "image":
        return "[image]", False
    return None  # thinking, redacted_thinking, and kinds yet unknown


def messages(record: dict[str, Any], tally: Tally) -> list[Parsed]:
    """The messages one transcript line holds (usually one, often none)."""
    kind = record.get("type")
    if kind == "summary":
        tally.title = str(record.get("summary") or tally.title)
        return []
    if kind not in ROLES or record.get("isMeta") or record.get("isSidechain"):
        tally.skipped += 1
        return []
    message = record.get("message")
    if not isinstance(message, dict) or "content" not in message:
        tally.bad(f"{kind} record without message.content")
        return []
    tally.session_id = tally.session_id or record.get("sessionId")
    created = timestamp(record.get("timestamp"))
    tally.started_at = tally.started_at or created
    content = message["content"]
    if isinstance(content, str):
        text, only_tools = without_reminders(content), False
    elif isinstance(content, list):
        parts = [p for p in map(_block, content) if p is not None]
        text = "\n".join(t for t, _ in parts if t.strip())
        only_tools = bool(parts) and all(is_result for _, is_result in parts)
    else:
        tally.bad(f"{kind} record whose content is neither text nor blocks")
        return []
    if not text.strip():
        tally.skipped += 1
        return []
    role = Role.TOOL if only_tools else ROLES[kind]
    return [Parsed(role, text.strip(), created)]
