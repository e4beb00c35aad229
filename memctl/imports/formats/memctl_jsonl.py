"""memctl's own JSONL export (``memctl export``): one memory a line, imported as it is.

A line is a JSON object with a ``content`` string (and no ``role``, which
would make it a transcript line); ids are kept and ids already present
skipped, so importing an export twice changes nothing (``memctl.sync.records``).
"""

from __future__ import annotations

from collections.abc import Iterator

from memctl.config.safe_load import json_value
from memctl.imports.formats.base import Kind
from memctl.ingest.source import Input

NAME = "memctl-jsonl"
KIND = Kind.NATIVE
TRANSCRIPT_KEYS = frozenset({"role", "message", "type"})


def looks_like(name: str, head: str) -> bool:
    first = next((line for line in head.splitlines() if line.strip()), "")
    try:
        value = json_value(first)
    except ValueError:
        return False
    return (
        isinstance(value, dict)
        and isinstance(value.get("content"), str)
        and not TRANSCRIPT_KEYS & value.keys()
    )


def lines(source: Input) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines."""
    for number, line in enumerate(source.lines(), start=1):
        if line.strip():
            yield number, line.strip()
