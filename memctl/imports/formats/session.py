"""An assistant's own session transcript (a Codex rollout, a Claude Code, Cursor, Gemini,
Copilot or OpenCode session file): the format ``memctl ingest`` reads.

It is recognised as ingest recognises it (``ingest.parse.guess_client`` on the first
64 KiB): JSON whose records are a known assistant's, not generic messages. Such a file is
not distilled by import's strategies: it is taken in by ingest's capture path
(``imports.sessions``), so importing it is ``memctl ingest FILE``.
"""

from __future__ import annotations

import io

from memctl.errors import InputError
from memctl.imports.formats.base import Kind, looks_like_json
from memctl.ingest.parse import guess_client, shape_of
from memctl.ingest.source import Input

NAME = "assistant session"
KIND = Kind.SESSION
GENERIC = "generic"  # guess_client's answer when no assistant's records show


def client(name: str, head: str) -> str:
    """The assistant whose transcript ``head`` begins, or ``GENERIC``."""
    try:
        source = Input(io.BytesIO(head.encode()), name)
    except InputError:
        return GENERIC
    return guess_client(source, shape_of(source))


def looks_like(name: str, head: str) -> bool:
    return looks_like_json(name, head) and client(name, head) != GENERIC
