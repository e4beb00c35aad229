"""A plain transcript of a chat between people: lines that open with who speaks.

    Tim: Did you book Edinburgh?
    John: Not yet.
    [8 May 2023] Tim: I will, then.

The file is shaped so when, in its first 64 KiB, at least ``SHAPED_SHARE`` of the
non-blank lines open with a name and a colon (``memories.lines.line_speaker``), and at
least two names open ``NAME_LINES`` lines each (front matter's "Title: ... Author: ..."
names each once). It is then one conversation, a message per turn: a turn runs until the
next line that opens with a name (a message of several lines stays whole), keeps its
author as its speaker and its text without the name. A turn of ``user:`` / ``assistant:``
(``human:``, ``ai:``, ``system:``) takes that role and no speaker; any other name is a
user named so. Lines before the first turn (a title) are a system message. Any other text
file is a document (``markdown``), stored in pieces.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import PurePath

from memctl.imports.formats.base import Conversation, Kind
from memctl.ingest.parse.common import Parsed, timestamp
from memctl.ingest.source import Input
from memctl.memories.lines import SPEAKER, line_speaker
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


def looks_like(name: str, head: str) -> bool:
    lines = [line for line in head.splitlines() if line.strip()]
    names = Counter(speaker for line in lines if (speaker := line_speaker(line)))
    speaking = sum(names.values())
    return (
        speaking >= SHAPED_SHARE * len(lines)
        and sum(1 for n in names.values() if n >= NAME_LINES) >= 2
        and not set(map(str.lower, names)) <= set(ROLES)
    )


def _turn(speaker: str, body: list[str], created: str | None) -> Parsed | None:
    text = "".join(body).strip()
    if not text:
        return None
    role = ROLES.get(speaker.lower())
    if role is not None:
        return Parsed(role, text, created)
    return Parsed(Role.USER if speaker else Role.SYSTEM, text, created, speaker)


def turns(source: Input) -> Iterator[Parsed]:
    speaker, body, created = "", [], None
    for line in source.lines():
        found = SPEAKER.match(line)
        if found is None:
            body.append(line)
            continue
        if (turn := _turn(speaker, body, created)) is not None:
            yield turn
        dated = DATED.match(line)
        speaker, body = found.group(1), [line[found.end() :]]
        created = timestamp(dated.group(1)) if dated else None
    if (turn := _turn(speaker, body, created)) is not None:
        yield turn


def conversations(source: Input) -> Iterator[Conversation]:
    title = PurePath(source.name).stem
    yield Conversation(id=title, title=title, messages=list(turns(source)))
