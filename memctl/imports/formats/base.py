"""What the format readers give the pipeline, and the helpers they share."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from memctl.errors import InputError
from memctl.ingest.parse.common import Parsed
from memctl.ingest.source import Input, json_members
from memctl.model import Category

# Text is read, scrubbed and stored in pieces of at most this many characters, cut
# after a line break when the piece holds one: a stored piece is a message, which
# `recall` may return, so it stays small.
PIECE_CHARS = 1 << 13
JSON_START = re.compile(r'\A\s*(?:\{\s*(?:"|\})|\[\s*(?:[\{\["\]]|-?\d|true|false|null))')


class Kind(StrEnum):
    """What reading a format gives."""

    TEXT = "text"  # one document, distilled by a strategy
    CHAT = "chat"  # conversations, distilled fact by fact
    RECORDS = "records"  # memories of another tool, one fact each
    NATIVE = "native"  # memctl's own memories, imported with their ids
    SESSION = "session"  # an assistant's transcript, taken in as `memctl ingest` takes it


@dataclass
class TextDoc:
    """A document: its title and tags (from front matter) and its body, a piece at a time."""

    pieces: Iterator[str]
    title: str = ""
    tags: list[str] = field(default_factory=list)


@dataclass
class Conversation:
    """One conversation of a chat export, its messages in order."""

    id: str
    title: str
    messages: list[Parsed]


@dataclass
class Record:
    """One memory of another tool."""

    id: str
    content: str
    category: Category
    tags: list[str] = field(default_factory=list)
    created_at: str | None = None


def pieces(source: Input, skip: int = 0, size: int = PIECE_CHARS) -> Iterator[str]:
    """The text of ``source`` after its first ``skip`` characters, in pieces of at most
    ``size`` characters, each cut after a line break when it holds one."""
    rest = ""
    for chunk in source.chunks(size):
        text = rest + chunk
        if skip:
            dropped = min(skip, len(text))
            text, skip = text[dropped:], skip - dropped
        start = 0
        while len(text) - start >= size:
            end = text.rfind("\n", start, start + size) + 1 or start + size
            yield text[start:end]
            start = end
        rest = text[start:]
    if rest:
        yield rest


def lines(chunks: Iterator[str]) -> Iterator[str]:
    """The lines of a text given in pieces, each with its line break."""
    rest = ""
    for chunk in chunks:
        text, start = rest + chunk, 0
        while (end := text.find("\n", start)) != -1:
            yield text[start : end + 1]
            start = end + 1
        rest = text[start:]
    if rest:
        yield rest


def json_values(source: Input, streamed: str = "") -> Iterator[tuple[str | None, Any]]:
    """``json_members`` of the file, a malformed document an InputError naming it."""
    try:
        yield from json_members(source.chunks(), streamed)
    except ValueError as error:
        raise InputError(f"{source.name} is not valid JSON: {error}") from None


def whole_object(source: Input) -> dict[str, Any]:
    """A file holding one JSON object, decoded whole (a single conversation is small)."""
    return {str(key): value for key, value in json_values(source)}


def exported_objects(source: Input, holding: str) -> Iterator[dict[str, Any]]:
    """The objects of an export holding the key ``holding``: the elements of a top-level
    array (the usual export), or the file's one object (a single conversation)."""
    if source.head_text.lstrip().startswith("{"):
        yield whole_object(source)
        return
    for _, value in json_values(source):
        if isinstance(value, dict) and holding in value:
            yield value


def looks_like_json(name: str, head: str) -> bool:
    return name.lower().endswith((".json", ".jsonl")) or bool(JSON_START.match(head))
