"""memctl's sync YAML: one memory per file, imported as it is (ids kept).

The shape (``memctl sync`` writes it) is the ``Memory`` record: its fields
as top-level keys (``id``, ``content``, ``l0_abstract``, ``l1_overview``,
``l2_content``, ``kind``, ``category``, ``tier``, ``state``, ``importance``,
``confidence``, ``strength``, ``access_count``, ``last_accessed_at``,
``created_at``, ``updated_at``, ``invalidated_at``, ``superseded_by``,
``scope``, ``visibility``, ``tags``, ``source``, ``session_id``,
``agent_id``, ``content_hash``), only ``content`` required, plus
``relations``: a list of ``{dst_id, type, weight, created_at}`` as in the
JSONL export. YAML timestamps become memctl's ISO form. Recognised by a
``.yaml`` / ``.yml`` name and top-level ``content`` and ``id``, ``kind`` or
``category`` keys.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

from memctl.config.safe_load import yaml_value
from memctl.errors import InputError
from memctl.imports.formats.base import Kind
from memctl.ingest.source import Input
from memctl.model import format_time

NAME = "memctl-yaml"
KIND = Kind.NATIVE
SUFFIXES = (".yaml", ".yml")
CONTENT = re.compile(r"^content\s*:", re.M)
FIELD = re.compile(r"^(?:id|kind|category)\s*:", re.M)
MAX_CHARS = 1 << 22


def looks_like(name: str, head: str) -> bool:
    return name.lower().endswith(SUFFIXES) and bool(CONTENT.search(head) and FIELD.search(head))


def plain(value: Any) -> Any:
    """YAML's values as JSON's: timestamps as ISO strings."""
    if isinstance(value, datetime):  # a naive YAML timestamp is UTC
        return format_time(value if value.tzinfo else value.replace(tzinfo=UTC))
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def lines(source: Input) -> Iterator[tuple[int, str]]:
    """The memory as one JSON line, the form ``memctl.sync.records`` imports."""
    text = ""
    for chunk in source.chunks():
        text += chunk
        if len(text) > MAX_CHARS:
            raise InputError(f"{source.name} is too big for one memory ({len(text)}+ characters)")
    try:
        record = yaml_value(text)
    except ValueError as exc:
        raise InputError(f"{source.name} is not valid YAML ({exc})") from None
    if not isinstance(record, dict) or not isinstance(record.get("content"), str):
        raise InputError(f"{source.name} is not a memctl memory: no 'content' string")
    yield 1, json.dumps(plain(record), ensure_ascii=False)
