"""Gemini CLI's session files of JSON lines (``chats/session-<time>-<id[:8]>.jsonl``,
version 0.61; older versions wrote one ``.json`` document, read by ``generic``).

The first line is the session's metadata (``sessionId``, ``projectHash``, ``startTime``;
a sub-agent's ``directories``). Then each line is one of:

- a message (``id``, ``timestamp``, ``type``: ``user``, ``gemini``, or the CLI's own
  ``info`` / ``error`` / ``warning``; ``content``; ``toolCalls``), read as ``generic``
  reads the messages of the older document. A message is written again, whole, each
  time it changes (its tokens counted, its tool calls' results in): the last line of an
  ``id`` is the message, at the place of its first;
- ``{"$set": {...}}``: metadata changed (``summary``; ``messages``: the history anew, as
  after a compression, where Gemini CLI drops what it summarised);
- ``{"$rewindTo": id}``: the user rewound the session to before that message (Gemini CLI
  drops it and every later one).

So the file is replayed whole before its messages are read, as Gemini CLI's
``loadConversationRecord`` does, but nothing said is dropped: a message a rewind or a
compression left behind was said, and the hooks stored it as it came (a backfill reads
the session as its capture did); ``$set`` messages are read as messages written again.
The session's folder is in ``.project_root`` beside its ``chats`` folder
(``~/.gemini/tmp/<project>/``): ``project_root``, for either format.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memctl.ingest.parse import generic
from memctl.ingest.parse.common import Parsed, Tally

REWIND = "$rewindTo"
SET = "$set"
PROJECT_ROOT = ".project_root"  # the project folder, written by Gemini CLI's ProjectRegistry
CHATS = "chats"
MAX_ROOT_BYTES = 4096  # a path, not a file to read whole


def looks_like(record: dict[str, Any]) -> bool:
    """A session file's first line: its metadata."""
    return isinstance(record.get("sessionId"), str) and isinstance(record.get("projectHash"), str)


def messages(records: Iterator[dict[str, Any]], tally: Tally) -> Iterator[Parsed]:
    """The session's messages once its records (each line's object) are replayed."""
    for record in replay(records, tally).values():
        yield from generic.record(record, tally)


def replay(records: Iterator[dict[str, Any]], tally: Tally) -> dict[str, dict[str, Any]]:
    """Every message of the session by id, in the order they first came, each as its last
    line has it; the tally learns the session's id, title and folder."""
    kept: dict[str, dict[str, Any]] = {}
    for record in records:
        if isinstance(record.get(REWIND), str):
            tally.pass_over("rewind")  # what came before it was said all the same
        elif isinstance(record.get("id"), str):
            kept[record["id"]] = record  # a changed message keeps its place
        elif isinstance(record.get(SET), dict):
            _set(kept, record[SET], tally)
        elif looks_like(record):
            _metadata(record, tally)
        else:
            tally.pass_over("record of no known kind")
    return kept


def _set(kept: dict[str, dict[str, Any]], changes: dict[str, Any], tally: Tally) -> None:
    if isinstance(changes.get("messages"), list):
        tally.restated = True
        for message in changes["messages"]:
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                kept[message["id"]] = message
    if isinstance(changes.get("summary"), str) and changes["summary"].strip():
        tally.title = changes["summary"].strip()
    _metadata(changes, tally)


def _metadata(record: dict[str, Any], tally: Tally) -> None:
    if isinstance(record.get("sessionId"), str):
        tally.session_id = tally.session_id or record["sessionId"]
    folders = record.get("directories")
    if isinstance(folders, list) and folders:
        tally.saw_cwd(folders[0])


def project_root(name: str) -> str | None:
    """The project folder Gemini CLI wrote beside the ``chats`` folder holding ``name``
    (a sub-agent's file is one folder deeper); None when there is none."""
    path = Path(name)
    for folder in path.parents[:2]:
        if folder.name == CHATS:
            marker = folder.parent / PROJECT_ROOT
            try:
                with marker.open("rb") as handle:
                    text = handle.read(MAX_ROOT_BYTES).decode("utf-8").strip()
            except (OSError, UnicodeError):
                return None
            return text if Path(text).is_absolute() else None
    return None
