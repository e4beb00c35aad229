"""A plain transcript of a chat between people: lines that open with who speaks.

    Tim: Did you book Edinburgh?
    John: Not yet.
    [8 May 2023] Tim: I will, then.

The file is shaped so when, in its first 64 KiB, at least ``SHAPED_SHARE`` of the
non-blank lines open with a name and a colon (a person's name, ``ingest.entities.speaker``:
"Note:", "Summary:" are labels, not speakers), and at least two names open ``NAME_LINES``
lines each (front matter's "Title: ... Author: ..." names each once). It is then one
conversation, a message per turn: a turn runs until the next line that opens with a name
or a role (a message of several lines stays whole), keeps its author as its speaker and
its text after the name (stored as ``Name: text`` again: ``imports.raw``). A turn of
``user:`` / ``assistant:`` (``human:``, ``ai:``, ``system:``) takes that role and no
speaker. Lines before the first turn (a title) are a system message. Any other text file
is a document (``markdown``), stored in pieces.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import PurePath

from memctl.imports.formats.base import Conversation, Kind
from memctl.ingest.entities import speaker
from memctl.ingest.parse.common import Parsed, timestamp
from memctl.ingest.source import Input
from memctl.memories.lines import SPEAKER
from memctl.model import Role

NAME = "transcript"
KIND = Kind.CHAT
# Measured on nothing: a rule of shape. Most lines open with a speaker (a long turn of
# several lines lowers the share), and a dialogue has two people who each speak twice.
SHAPED_SHARE = 0.6
NAME_LINES = 2
ROLES = {
    "user": Role.USER,
    "human": Role.USER,
    "assistant": Role.ASSISTANT,
    "ai": Role.ASSISTANT,
    "system": Role.SYSTEM,
}
DATED = re.compile(r"^\[([^\]]{1,40})\]\s*")
ROLE_LINE = re.compile(r"^\s*(user|human|assistant|ai|system)\s*:\s?", re.I)


def _opening(line: str) -> tuple[str, int] | None:
    """(speaker, where its text starts) of a line that opens a turn: a role word, or a name
    that is a person's (``ingest.entities.speaker``: "Note:", "Summary:" are labels)."""
    role = ROLE_LINE.match(line)
    if role is not None:
        return role.group(1), role.end()
    found = SPEAKER.match(line)
    if found is None or speaker(line) is None:
        return None
    return found.group(1), found.end()


def looks_like(name: str, head: str) -> bool:
    lines = [line for line in head.splitlines() if line.strip()]
    names = Counter(opened[0] for line in lines if (opened := _opening(line)))
    speaking = sum(names.values())
    return (
        speaking >= SHAPED_SHARE * len(lines)
        and sum(1 for n in names.values() if n >= NAME_LINES) >= 2
        and not set(map(str.lower, names)) <= set(ROLES)
    )


def _turn(said_by: str, body: list[str], created: str | None) -> Parsed | None:
    text = "".join(body).strip()
    if not text:
        return None
    role = ROLES.get(said_by.lower())
    if role is not None:
        return Parsed(role, text, created)
    return Parsed(Role.USER if said_by else Role.SYSTEM, text, created, said_by)


def turns(source: Input) -> Iterator[Parsed]:
    said_by, body, created = "", [], None
    for line in source.lines():
        opened = _opening(line)
        if opened is None:
            body.append(line)
            continue
        if (turn := _turn(said_by, body, created)) is not None:
            yield turn
        dated = DATED.match(line)
        said_by, body = opened[0], [line[opened[1] :]]
        created = timestamp(dated.group(1)) if dated else None
    if (turn := _turn(said_by, body, created)) is not None:
        yield turn


def conversations(source: Input) -> Iterator[Conversation]:
    title = PurePath(source.name).stem
    yield Conversation(id=title, title=title, messages=list(turns(source)))
