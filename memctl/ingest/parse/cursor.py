"""Cursor agent transcripts: JSONL, one record a line.

Cursor keeps them under ``~/.cursor/projects/<project>/agent-transcripts/``: a
conversation as ``<id>.jsonl`` (the CLI) or ``<id>/<id>.jsonl`` (the editor), a
sub-agent's as ``<id>/subagents/<agent>.jsonl``. ``<project>`` is the workspace's path
with every run of characters other than letters and digits written ``-``.

A line is ``{"role": "user"|"assistant", "message": {"content": [...]}}``, or a
``{"type": "turn_ended"}`` between turns (passed over). Content blocks are ``text`` and
``tool_use`` (without ids: Cursor keeps no tool results and no thinking); tool calls
become one-line notes. What a person typed is wrapped in ``<user_query>`` after a
``<timestamp>`` line, which dates the message; the assistant's withheld reasoning is
written ``[REDACTED]`` and dropped. No line names the session or its directory: the
file's place does (``origin``). A sub-agent's lines are kept as the conversation's own
sub-agent thread (``[subagent]``), as Claude Code's are.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path, PurePath
from typing import Any

from memctl.ingest.parse.claude import content_block
from memctl.ingest.parse.common import SUBAGENT, Parsed, Tally, timestamp
from memctl.lazy_re import lazy
from memctl.model import Role, format_time

ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT}
FOLDER = "agent-transcripts"
SUBAGENTS = "subagents"
STAMP = lazy(r"\A\s*<timestamp>(.*?)</timestamp>\s*", re.S)
QUERY_TAG = lazy(r"</?user_query>")
REDACTED = lazy(r"^\[REDACTED\][ \t]*\n?", re.M)
# "Tuesday, Jul 21, 2026, 6:57 PM (UTC+8)", as Cursor writes a prompt's time
SPOKEN_TIME = lazy(
    r"(?:\w+, )?(\w{3}) (\d{1,2}), (\d{4}), (\d{1,2}):(\d{2}) ([AP]M)"
    r"(?: \(UTC(?:([+-]\d{1,2})(?::?(\d{2}))?)?\))?"
)
SLUG_GAP = lazy(r"[^A-Za-z0-9]+")


def looks_like(record: dict[str, Any]) -> bool:
    return (
        record.get("role") in ROLES
        and isinstance(record.get("message"), dict)
        and "type" not in record
    )


@dataclass(frozen=True)
class Origin:
    """What a transcript's place says: its conversation, whether it is a sub-agent's, and
    the workspace it ran in: its folder when that is on this machine, else Cursor's name
    for it (a relative name: the session gets a project of its own, never the directory
    memctl runs in)."""

    session_id: str | None = None
    subagent: bool = False
    cwd: str | None = None


def origin(name: str) -> Origin:
    """The conversation a transcript file at ``name`` belongs to (none for a file outside
    Cursor's ``agent-transcripts`` folders)."""
    parts = PurePath(name).parts
    if FOLDER not in parts[:-1]:
        return Origin()
    at = len(parts) - 1 - parts[::-1].index(FOLDER)
    rest = parts[at + 1 :]
    session = PurePath(rest[0]).stem if len(rest) == 1 else rest[0]
    subagent = len(rest) == 3 and rest[1] == SUBAGENTS
    slug = parts[at - 1] if at else None
    return Origin(session or None, subagent, (workspace(slug) or slug) if slug else None)


def workspace(slug: str, root: Path = Path("/")) -> str | None:
    """The folder Cursor named ``slug``, found by walking down from ``root`` through the
    folders whose names it begins with; None when no such folder is here."""
    stack = [(root, slug)]
    while stack:
        folder, rest = stack.pop()
        try:
            names = sorted(os.listdir(folder), reverse=True)
        except OSError:
            continue
        for name in names:
            key = SLUG_GAP.sub("-", name).strip("-")
            path = folder / name
            if not key or not (rest == key or rest.startswith(key + "-")):
                continue
            if not path.is_dir():
                continue
            if rest == key:
                return str(path)
            stack.append((path, rest[len(key) + 1 :]))
    return None


def parser(name: str, tally: Tally) -> Callable[[dict[str, Any], Tally], list[Parsed]]:
    """The record parser for the transcript at ``name``; the tally learns its session and
    directory from the file's place, else from the paths its tool calls name (a copy kept
    elsewhere: ``tool_paths``)."""
    found = origin(name)
    tally.session_id = tally.session_id or found.session_id
    tally.saw_cwd(found.cwd)
    seen: list[str] = []  # the absolute paths its tool calls named, until a slug turns up

    def parse(record: dict[str, Any], tally: Tally) -> list[Parsed]:
        if not tally.cwd:
            seen.extend(tool_paths(record)[:MAX_PATHS])
            tally.saw_cwd(workspace_named(seen[-MAX_PATHS:]))
        return messages(record, tally, found.subagent)

    return parse


# Cursor's own files for a workspace, which its tools read (``agent-tools/<id>.txt``)
PROJECT_PATH = lazy(r"[/\\]\.cursor[/\\]projects[/\\]([^/\\]+)[/\\]")
MAX_PATHS = 50  # paths kept while looking: a transcript names its workspace early or not at all


def tool_paths(record: dict[str, Any]) -> list[str]:
    """The absolute paths a record's tool calls name (``{"path": "/Users/..."}``)."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    found = []
    for block in content if isinstance(content, list) else []:
        given = block.get("input") if isinstance(block, dict) else None
        for value in given.values() if isinstance(given, dict) else ():
            if isinstance(value, str) and PurePath(value).is_absolute():
                found.append(value)
    return found


def workspace_named(paths: list[str]) -> str | None:
    """The workspace a transcript's tool calls show, once one names Cursor's folder for it
    (``~/.cursor/projects/<slug>/``): the folder of a path it named whose name Cursor writes
    as ``slug`` (the real path, though not on this machine), else that folder here
    (``workspace``), else the slug itself; None while no path names the slug."""
    slugs = [m.group(1) for p in paths if (m := PROJECT_PATH.search(p))]
    if not slugs:
        return None
    slug = slugs[0]
    for path in paths:
        for folder in PurePath(path).parents:
            if SLUG_GAP.sub("-", str(folder)).strip("-") == slug:
                return str(folder)
    return workspace(slug) or slug


def messages(record: dict[str, Any], tally: Tally, subagent: bool = False) -> list[Parsed]:
    """The message one transcript line holds (none for a turn's end)."""
    role = ROLES.get(str(record.get("role")))
    if role is None:
        tally.pass_over(str(record.get("type") or record.get("role") or "untyped"))
        return []
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        tally.bad(f"{role} record without message.content")
        return []
    parts = [p for p in (content_block(b, tally) for b in content) if p is not None]
    text = "\n".join(t for t, _ in parts if t.strip())
    created = None
    if role is Role.USER:
        created, text = _dated(text)
        text = QUERY_TAG.sub("", text)
        tally.started_at = tally.started_at or created
    else:
        text = REDACTED.sub("", text)
    if not text.strip():
        tally.pass_over("subagent without text" if subagent else f"{role} without text")
        return []
    role = Role.TOOL if parts and all(result for _, result in parts) else role
    tally.keep(f"subagent {role}" if subagent else str(role))
    return [Parsed(role, (SUBAGENT if subagent else "") + text.strip(), created)]


def _dated(text: str) -> tuple[str | None, str]:
    """A user message's time (its ``<timestamp>`` line) and the text without that line."""
    stamp = STAMP.match(text)
    if stamp is None:
        return None, text
    return _time(stamp.group(1).strip()), text[stamp.end() :]


def _time(value: str) -> str | None:
    spoken = SPOKEN_TIME.fullmatch(value)
    if spoken is None:
        return timestamp(value)
    month, day, year, hour, minute, half, zone_hours, zone_minutes = spoken.groups()
    try:
        local = datetime.strptime(
            f"{month} {day} {year} {hour}:{minute} {half}", "%b %d %Y %I:%M %p"
        )
    except ValueError:
        return None
    sign = -1 if (zone_hours or "").startswith("-") else 1
    offset = timedelta(hours=abs(int(zone_hours or 0)), minutes=int(zone_minutes or 0))
    zone = timezone(sign * offset)
    return format_time(local.replace(tzinfo=zone).astimezone(UTC))
