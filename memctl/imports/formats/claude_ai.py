"""Claude.ai's data export: ``conversations.json``, a list of conversations.

A conversation has ``uuid``, ``name``, ``created_at`` and ``chat_messages``;
a message has ``sender`` (``human`` or ``assistant``), ``created_at``, and its
text as ``content`` blocks (``{"type": "text", "text": ...}``; tool use and
tool results are left out) or, in older exports, as ``text``. Attachments'
extracted content is left out: it is the file, not the conversation. A file
holding a single conversation object is read too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from memctl.errors import InputError
from memctl.imports.formats.base import (
    Conversation,
    Kind,
    exported_objects,
    looks_like_json,
)
from memctl.ingest.parse.common import Parsed, timestamp
from memctl.ingest.source import Input
from memctl.model import Role

NAME = "claude-ai"
KIND = Kind.CHAT
SIGN = re.compile(r'"chat_messages"\s*:\s*\[')
SENDERS = {"human": Role.USER, "user": Role.USER, "assistant": Role.ASSISTANT}


def looks_like(name: str, head: str) -> bool:
    return looks_like_json(name, head) and bool(SIGN.search(head))


def conversations(source: Input) -> Iterator[Conversation]:
    return (conversation(value) for value in exported_objects(source, "chat_messages"))


def conversation(value: dict[str, Any]) -> Conversation:
    items = value.get("chat_messages")
    if not isinstance(items, list):
        raise InputError("a conversation without chat_messages")
    return Conversation(
        id=str(value.get("uuid") or value.get("id") or ""),
        title=str(value.get("name") or ""),
        messages=[parsed for item in items if (parsed := message(item)) is not None],
    )


def message(value: Any) -> Parsed | None:
    if not isinstance(value, dict):
        return None
    role = SENDERS.get(str(value.get("sender", "")).lower())
    if role is None:
        return None
    blocks = value.get("content")
    text = ""
    if isinstance(blocks, list):
        text = "\n".join(
            b["text"]
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ).strip()
    if not text and isinstance(value.get("text"), str):
        text = value["text"].strip()
    return Parsed(role, text, timestamp(value.get("created_at"))) if text else None
