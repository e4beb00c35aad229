"""ChatGPT's data export: ``conversations.json``, a list of conversations.

Each conversation holds its messages as a tree: ``mapping`` from node id to
``{"message", "parent", "children"}``, where a regenerated answer or an
edited question makes a branch. The conversation as it was last seen is the
path from the root to ``current_node``; without one, the messages are taken
in time order. A message has ``author.role``, ``create_time`` (epoch
seconds) and ``content`` with a ``content_type``: ``text`` and
``multimodal_text`` carry ``parts`` (strings; images are dicts, left out),
``user_editable_context`` the user's custom instructions (kept: who the
user is, though hidden in the conversation). Other messages hidden from the
conversation, addressed to a tool (``recipient`` other than ``all``), or
written by the system or a tool are left out, and so are code, browsing
output and reasoning. A file holding a single conversation object
is read too.
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

NAME = "chatgpt"
KIND = Kind.CHAT
SIGN = re.compile(r'"mapping"\s*:\s*\{')
ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
TEXT_TYPES = ("text", "multimodal_text")
CONTEXT_FIELDS = ("user_profile", "user_instructions")


def looks_like(name: str, head: str) -> bool:
    return looks_like_json(name, head) and bool(SIGN.search(head))


def conversations(source: Input) -> Iterator[Conversation]:
    return (conversation(value) for value in exported_objects(source, "mapping"))


def conversation(value: dict[str, Any]) -> Conversation:
    mapping = value.get("mapping")
    if not isinstance(mapping, dict):
        raise InputError("a conversation without a mapping of messages")
    messages = [
        parsed
        for node in active_path(mapping, value.get("current_node"))
        if (parsed := message(node.get("message"))) is not None
    ]
    return Conversation(
        id=str(value.get("conversation_id") or value.get("id") or ""),
        title=str(value.get("title") or ""),
        messages=messages,
    )


def active_path(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The nodes from the root to ``current`` (each once, even in a malformed cycle)."""
    nodes = {k: v for k, v in mapping.items() if isinstance(v, dict)}
    if current not in nodes:
        return sorted(nodes.values(), key=_created)
    path, seen = [], set()
    while current in nodes and current not in seen:
        seen.add(current)
        path.append(nodes[current])
        current = nodes[current].get("parent")
    return path[::-1]


def _created(node: dict[str, Any]) -> float:
    message_ = node.get("message")
    created = message_.get("create_time") if isinstance(message_, dict) else None
    return float(created) if isinstance(created, int | float) else 0.0


def message(value: Any) -> Parsed | None:
    if not isinstance(value, dict):
        return None
    author, content = value.get("author") or {}, value.get("content") or {}
    role = ROLES.get(str(author.get("role"))) if isinstance(author, dict) else None
    if role is None or not isinstance(content, dict) or value.get("recipient", "all") != "all":
        return None
    kind = content.get("content_type")
    if kind == "user_editable_context" and role == Role.USER:
        fields = (content.get(name) for name in CONTEXT_FIELDS)
        # ChatGPT fences what the user wrote in ```; the fences are not theirs
        text = "\n".join(f.replace("```", "").strip() for f in fields if isinstance(f, str))
    else:
        metadata = value.get("metadata") or {}
        hidden = isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation")
        parts = content.get("parts") or [] if kind in TEXT_TYPES and not hidden else []
        text = "\n".join(p for p in parts if isinstance(p, str)).strip()
    return Parsed(role, text, timestamp(value.get("create_time"))) if text else None
