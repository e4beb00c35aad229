"""mem0's memories, as ``get_all`` returns them and as people save them.

Three shapes: ``{"results": [...]}`` (the open-source ``Memory.get_all``),
``{"count", "next", "previous", "results": [...]}`` (a page of the platform's
v2 API) and a bare list (the platform's v1 API). Each item has ``id``,
``memory`` (the text), ``created_at``, ``updated_at``, ``metadata``, and on
the platform ``categories``: mem0's labels (personal_details, food, ...),
kept as tags and mapped to a memctl category where one fits. A memctl
category name in ``metadata.category`` wins; with neither, a mem0 memory, a
fact about its user, is a preference. Graph ``relations`` are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from memctl.imports.formats.base import Kind, Record, json_values, looks_like_json
from memctl.ingest.parse.common import timestamp
from memctl.ingest.source import Input
from memctl.model import Category

NAME = "mem0"
KIND = Kind.RECORDS
SIGN = re.compile(r'"memory"\s*:\s*"')
DEFAULT_CATEGORY = Category.PREFERENCES
CATEGORIES = {
    "personal_details": Category.PROFILE,
    "family": Category.PROFILE,
    "professional_details": Category.PROFILE,
    "health": Category.PROFILE,
    "user_preferences": Category.PREFERENCES,
    "food": Category.PREFERENCES,
    "music": Category.PREFERENCES,
    "fashion": Category.PREFERENCES,
    "entertainment": Category.PREFERENCES,
    "sports": Category.PREFERENCES,
    "travel": Category.PREFERENCES,
    "hobbies": Category.PREFERENCES,
    "technology": Category.ENTITIES,
    "milestones": Category.EVENTS,
}


def looks_like(name: str, head: str) -> bool:
    return looks_like_json(name, head) and bool(SIGN.search(head))


def records(source: Input) -> Iterator[Record]:
    for key, value in json_values(source, "results"):
        if key in (None, "results") and isinstance(value, dict):
            if isinstance(value.get("memory"), str) and value["memory"].strip():
                yield record(value)


def record(value: dict[str, Any]) -> Record:
    labels = value.get("categories") or []
    labels = [str(label) for label in labels] if isinstance(labels, list) else []
    return Record(
        id=str(value.get("id") or ""),
        content=value["memory"].strip(),
        category=category(value.get("metadata"), labels),
        tags=labels,
        created_at=timestamp(value.get("created_at")),
    )


def category(metadata: Any, labels: list[str]) -> Category:
    named = metadata.get("category") if isinstance(metadata, dict) else None
    if isinstance(named, str) and named in {c.value for c in Category}:
        return Category(named)
    mapped = [CATEGORIES[label] for label in labels if label in CATEGORIES]
    return mapped[0] if mapped else DEFAULT_CATEGORY
