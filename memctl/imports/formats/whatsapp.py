"""WhatsApp's chat export (Export chat, "Without media"): a ``.txt`` of one line a message.

Two shapes, one per phone:

- Android: ``12/31/23, 9:41 PM - Tim: text`` (or ``31/12/2023, 21:41 - Tim: text``);
- iOS: ``[31/12/2023, 21:41:05] Tim: text``, often behind a left-to-right mark.

A line that opens no message continues the one before it (a message of several lines).
A line with a time but no ``Name:`` (Android's "Messages and calls are end-to-end
encrypted", "Tim added Ann") or whose text opens with a left-to-right mark (iOS's) is the
app's notice: a system message without a speaker, except a media placeholder ("image
omitted", "<attached: …>"), which iOS marks too but its author sent. Each message keeps
its author as its speaker (role user: everyone in a chat between people is a user) and
its time. The export writes times in the phone's local time, without a zone: they are
read as this machine's. Day and month order is the one the file's dates allow (a first
number over 12 is a day, a second over 12 a day too); when every date allows both, a
12-hour clock is the US order (month first), a 24-hour one the day first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath

from memctl.imports.formats.base import Conversation, Kind
from memctl.ingest.parse.common import Parsed
from memctl.ingest.source import Input
from memctl.model import Role, format_time

NAME = "whatsapp"
KIND = Kind.CHAT
MARK = "\u200e"  # the left-to-right mark iOS writes before notices and some lines
_STAMP = (
    r"(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{1,4}),?\s(?P<time>\d{1,2}[:.]\d{2}(?:[:.]\d{2})?)"
    r"(?:[\s\u202f]?(?P<half>[AaPp]\.?\s?[Mm]\.?))?"
)
ANDROID = re.compile(rf"^{MARK}?{_STAMP}\s[-\u2013]\s(?P<rest>.*)$")
IOS = re.compile(rf"^{MARK}?\[{_STAMP}\]\s(?P<rest>.*)$")
# What iOS writes, behind its mark, for a file its author sent: an export "Without media"
# says "image omitted" ("report.pdf • 3 pages document omitted"), one with media
# "<attached: 00000012-PHOTO-2024-01-14-08-00-00.jpg>" (English exports)
MEDIA = re.compile(r"^(?:.*\bomitted|<attached: [^>\n]+>)$", re.S)
AUTHOR = re.compile(r"^(?P<name>[^:\n]{1,80}?):\s(?P<text>.*)$", re.S)
# The head opens with a message line and holds at least this many: a WhatsApp export, not
# a document that happens to start with a date.
HEAD_MESSAGES = 3


@dataclass
class _Line:
    """A message as read, its date still in the file's own order."""

    date: tuple[int, int, int]
    time: str
    half: str
    speaker: str
    text: str


def _opening(line: str) -> re.Match[str] | None:
    return ANDROID.match(line) or IOS.match(line)


def looks_like(name: str, head: str) -> bool:
    lines = [line for line in head.splitlines() if line.strip()]
    opening = [line for line in lines if _opening(line)]
    return bool(lines) and _opening(lines[0]) is not None and len(opening) >= HEAD_MESSAGES


def _parts(date: str) -> tuple[int, int, int]:
    a, b, c = (int(part) for part in re.split(r"[./-]", date))
    return a, b, c


def _line(found: re.Match[str]) -> _Line:
    rest = found["rest"]
    author = AUTHOR.match(rest)
    notice = author is None or (
        author["text"].startswith(MARK) and not MEDIA.match(author["text"].lstrip(MARK))
    )
    speaker, text = ("", rest) if author is None else (author["name"].strip(), author["text"])
    return _Line(
        _parts(found["date"]),
        found["time"].replace(".", ":"),
        (found["half"] or "").replace(".", "").replace(" ", "").upper(),
        "" if notice else speaker,
        text.lstrip(MARK),
    )


def _read(source: Input) -> list[_Line]:
    said: list[_Line] = []
    for raw in source.lines():
        line = raw.rstrip("\r\n")
        found = _opening(line)
        if found is not None:
            said.append(_line(found))
        elif said:
            said[-1].text += "\n" + line
    return said


def _day_first(said: list[_Line]) -> bool:
    """Whether the file's dates put the day first (see the module's docstring)."""
    for line in said:
        first, second, _ = line.date
        if first > 12 and first < 1000:
            return True
        if second > 12:
            return False
    return not any(line.half for line in said)


def _when(line: _Line, day_first: bool) -> str | None:
    a, b, c = line.date
    year, month, day = (a, b, c) if a >= 1000 else (c, b, a) if day_first else (c, a, b)
    year += 2000 if year < 100 else 0
    clock = line.time if line.time.count(":") == 2 else line.time + ":00"
    hour, minute, second = (int(part) for part in clock.split(":"))
    if line.half:
        hour = hour % 12 + (12 if line.half == "PM" else 0)
    try:
        local = datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
    return format_time(local.astimezone())


def conversations(source: Input) -> Iterator[Conversation]:
    said = _read(source)
    day_first = _day_first(said)
    messages = [
        Parsed(
            Role.USER if line.speaker else Role.SYSTEM,
            line.text.strip(),
            _when(line, day_first),
            line.speaker,
        )
        for line in said
        if line.text.strip()
    ]
    title = PurePath(source.name).stem
    yield Conversation(id=title, title=title, messages=messages)
