"""SpecStory histories (``.specstory/history/*.md``): the Markdown SpecStory keeps of a chat
with Cursor, Copilot Chat, Claude Code, Codex CLI or another agent, and Cursor's own chat
export (``_Exported on … from Cursor …_``), of the same shape. Though Markdown, such a
file is a conversation, not a document: it is read by the same reader as ``memctl ingest``
(``memctl.ingest.parse.specstory``), known by its content, and imported as one chat."""

from __future__ import annotations

from collections.abc import Iterator

from memctl.imports.formats.base import Conversation, Kind
from memctl.ingest.parse import specstory
from memctl.ingest.parse.common import Tally
from memctl.ingest.source import Input

NAME = "specstory"
KIND = Kind.CHAT


def looks_like(name: str, head: str) -> bool:
    return specstory.looks_like(head)


def conversations(source: Input) -> Iterator[Conversation]:
    tally = Tally()
    speaker = specstory.speaker_pattern(source.head_text)
    messages = list(specstory.messages(source.lines(), source.name, tally, speaker))
    yield Conversation(id=tally.session_id or "", title=tally.title, messages=messages)
