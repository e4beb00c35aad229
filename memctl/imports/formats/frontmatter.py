"""Markdown with YAML front matter, as basic-memory and Obsidian write it.

The front matter is the block between a first line ``---`` and the next
``---`` (or ``...``) line. Its ``title`` names the document; its ``tags``
(a list, or a string of words separated by commas or spaces, ``#`` allowed)
and its ``type`` (basic-memory's note, person, project...; ``note`` says
nothing and is left out) become tags of every memory made from the file.
The body after it is read as Markdown. Front matter that is not a YAML
mapping is no front matter: the file is read as Markdown, whole.
"""

from __future__ import annotations

import re
from typing import Any

from memctl.config.safe_load import yaml_value
from memctl.imports.formats.base import Kind, TextDoc, pieces
from memctl.ingest.source import Input

NAME = "front-matter"
KIND = Kind.TEXT
BLOCK = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
UNTYPED = "note"


def front_matter(head: str) -> tuple[dict[str, Any], int] | None:
    """The front matter of a file from its head, and how many characters it spans."""
    found = BLOCK.match(head)
    if found is None:
        return None
    try:
        meta = yaml_value(found.group(1) or "") or {}
    except ValueError:
        return None
    return (meta, found.end()) if isinstance(meta, dict) else None


def looks_like(name: str, head: str) -> bool:
    return not name.lower().endswith((".yaml", ".yml")) and front_matter(head) is not None


def tags_of(meta: dict[str, Any]) -> list[str]:
    raw = meta.get("tags") or []
    words = re.split(r"[,\s]+", raw) if isinstance(raw, str) else raw
    tags = [str(t).strip().lstrip("#") for t in words if t is not None and str(t).strip("# ")]
    kind = meta.get("type")
    if isinstance(kind, str) and kind.strip() and kind.strip() != UNTYPED:
        tags.append(kind.strip())
    return tags


def read(source: Input) -> TextDoc:
    meta, length = front_matter(source.head_text) or ({}, 0)
    title = meta.get("title")
    return TextDoc(
        pieces(source, skip=length),
        title=str(title).strip() if title is not None else "",
        tags=tags_of(meta),
    )
