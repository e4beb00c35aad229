"""Slack's workspace export: a zip (or it unpacked) of ``users.json``, ``channels.json`` and a
folder per channel of daily files (``general/2023-12-31.json``, each a list of messages).

An export is one import: ``bundle`` reads the zip, the unpacked folder, or one channel's
folder (``users.json`` then read from the folder above it, when there) and writes what it
holds as JSON lines, which ``conversations`` reads like any file (hashed, re-read, stored):

- a channel per conversation, its messages in time order, a thread's replies right after
  the message that began it;
- each message's author by name (``users.json``: the display name, else the real name,
  else the handle; a bot by its user name), ``<@U123>`` mentions by name too;
- an edited message as it was last written; a deleted one (a tombstone, "This message
  was deleted.") and joins / leaves / channel settings left out;
- its time from ``ts`` (epoch seconds).

A day file past ``DAY_BYTES`` or an export past ``EXPORT_BYTES`` (unpacked) is refused,
as is a zip without ``users.json`` or any channel folder, or a day file that is not a
JSON list: each one clear line naming the file.
"""

from __future__ import annotations

import json
import re
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, cast

from memctl.errors import InputError
from memctl.imports.formats.base import Conversation, Kind
from memctl.ingest.parse.common import Parsed, timestamp
from memctl.ingest.source import Input
from memctl.model import Role

NAME = "slack"
KIND = Kind.CHAT
SIGN = '{"slack_export":'
DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.json$")
# json.load holds a day file whole: a bound far past any real day (a busy channel's day is
# well under a MiB), so a zip bomb or a stray dump is refused, not read into memory.
DAY_BYTES = 64 << 20
EXPORT_BYTES = 4 << 30  # the unpacked export, all days together
SPOOL_BYTES = 1 << 20  # the bundle stays in memory up to this, then goes to disk
LEFT_OUT = {  # subtypes that say nothing anyone said
    "channel_join",
    "channel_leave",
    "channel_purpose",
    "channel_topic",
    "channel_name",
    "channel_archive",
    "channel_unarchive",
    "message_deleted",
    "tombstone",
    "pinned_item",
}
DELETED = "This message was deleted."
ZIP_MAGIC = b"PK\x03\x04"  # a zip's first member header (PKWARE's APPNOTE 4.3.7)
# A day file's opening: a list whose first message is Slack's (``type`` or ``ts`` first).
SLACK_MESSAGE = re.compile(r'\A\s*\[\s*\{\s*"(?:type|ts|user|client_msg_id)"\s*:')
SNIFF_BYTES = 4096
MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")


@dataclass
class _Export:
    """Where an export's files are: a zip's members or a folder's files, by relative path."""

    name: str
    files: dict[str, int]  # relative path -> size
    read: Any  # relative path -> bytes

    def json(self, path: str) -> Any:
        if self.files[path] > DAY_BYTES:
            raise InputError(
                f"{self.name}: {path} holds {self.files[path]:,} bytes, more than a Slack "
                f"export's file can ({DAY_BYTES:,})"
            )
        try:
            return json.loads(self.read(path))
        except (ValueError, UnicodeDecodeError) as error:
            raise InputError(f"{self.name}: {path} is not valid JSON: {error}") from None


def _zip(path: Path, name: str) -> _Export | None:
    if not zipfile.is_zipfile(path):
        with path.open("rb") as head:
            if head.read(len(ZIP_MAGIC)) == ZIP_MAGIC:  # a zip cut short, or damaged
                raise InputError(f"{name} is not a readable zip archive: its end is missing")
        return None
    try:
        archive = zipfile.ZipFile(path)
        files = {i.filename: i.file_size for i in archive.infolist() if not i.is_dir()}
    except (zipfile.BadZipFile, OSError) as error:
        raise InputError(f"{name} is not a readable zip archive: {error}") from None

    def read(member: str) -> bytes:
        try:
            return archive.read(member)
        except (zipfile.BadZipFile, OSError, ValueError) as error:
            raise InputError(f"{name}: {member} cannot be unpacked: {error}") from None

    return _Export(name, files, read)


def _folder(path: Path, name: str) -> _Export | None:
    """An unpacked export, or one channel's folder of day files (its users.json above)."""
    if (path / "users.json").is_file() or (path / "channels.json").is_file():
        root, prefix = path, ""
    elif _slack_days(path):
        root, prefix = path.parent, path.name + "/"
    else:
        return None
    files = {
        str(p.relative_to(root)): p.stat().st_size
        for p in sorted(root.rglob("*.json"))
        if p.parent == root or str(p.relative_to(root)).startswith(prefix)
    }
    return _Export(name, files, lambda relative: (root / relative).read_bytes())


def _slack_days(folder: Path) -> bool:
    """Whether ``folder`` is a Slack channel's: its first day file opens as Slack writes a
    message (a journal app's dated JSON files are not a chat)."""
    days = sorted(p for p in folder.iterdir() if DAY_FILE.match(p.name) and p.is_file())
    if not days:
        return False
    with days[0].open("rb") as first:
        head = first.read(SNIFF_BYTES).decode("utf-8", errors="replace")
    return SLACK_MESSAGE.match(head) is not None


def export(path: Path, name: str) -> _Export | None:
    """The Slack export at ``path`` (a zip or folder), None if it is not one."""
    found = _folder(path, name) if path.is_dir() else _zip(path, name)
    if found is None:
        return None
    if not any(DAY_FILE.match(PurePosixPath(p).name) for p in found.files):
        if path.is_dir():
            return None
        raise InputError(f"{name} is a zip archive, not a Slack export (no channel's day files)")
    return found


def _names(found: _Export) -> dict[str, str]:
    users = found.json("users.json") if "users.json" in found.files else []
    if not isinstance(users, list):
        raise InputError(f"{found.name}: users.json is not a list of users")
    return {str(u["id"]): _user_name(u) for u in users if isinstance(u, dict) and "id" in u}


def _user_name(user: dict[str, Any]) -> str:
    profile = _object(user.get("profile"))
    for name in (profile.get("display_name"), profile.get("real_name"), user.get("real_name")):
        if isinstance(name, str) and name.strip():
            return name.strip()
    return str(user.get("name") or user["id"])


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _days(found: _Export) -> dict[str, list[str]]:
    """Channel -> its day files, in date order."""
    channels: dict[str, list[str]] = {}
    total = 0
    for path in sorted(found.files):
        parts = PurePosixPath(path).parts
        if len(parts) >= 2 and DAY_FILE.match(parts[-1]):
            channels.setdefault(parts[-2], []).append(path)
            total += found.files[path]
    if total > EXPORT_BYTES:
        raise InputError(
            f"{found.name} unpacks to {total:,} bytes, more than memctl imports as one "
            f"Slack export ({EXPORT_BYTES:,}): import its channels' folders one at a time"
        )
    return channels


def bundle(path: Path, name: str) -> IO[bytes] | None:
    """The Slack export at ``path`` as JSON lines ``conversations`` reads; None if ``path``
    is no Slack export. An InputError for a malformed one."""
    found = export(path, name)
    if found is None:
        return None
    names = _names(found)
    out = cast(IO[bytes], tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES))
    out.write(f"{SIGN} {json.dumps(name)}}}\n".encode())
    for channel, days in _days(found).items():
        out.write(json.dumps({"channel": channel}).encode() + b"\n")
        for line in _thread_order(_channel(found, days, names)):
            out.write(json.dumps(line).encode() + b"\n")
    out.seek(0)
    return out


def _channel(found: _Export, days: list[str], names: dict[str, str]) -> Iterator[dict[str, Any]]:
    for day in days:
        messages = found.json(day)
        if not isinstance(messages, list):
            raise InputError(f"{found.name}: {day} is not a list of messages")
        for message in messages:
            if isinstance(message, dict) and (kept := _message(message, names)) is not None:
                yield kept


def _message(message: dict[str, Any], names: dict[str, str]) -> dict[str, Any] | None:
    text = message.get("text")
    if message.get("subtype") in LEFT_OUT or not isinstance(text, str) or not text.strip():
        return None
    if text.strip() == DELETED:
        return None
    user = str(message.get("user") or "")
    profile = _object(message.get("user_profile"))
    speaker = (
        names.get(user)
        or profile.get("display_name")
        or profile.get("real_name")
        or message.get("username")
        or user
    )
    ts = str(message.get("ts") or "")
    try:
        float(ts), float(message.get("thread_ts") or ts)
    except ValueError:  # no time: not a message Slack wrote
        return None
    return {
        "ts": ts,
        "thread": str(message.get("thread_ts") or ts),
        "speaker": str(speaker),
        "text": MENTION.sub(lambda m: "@" + names.get(m.group(1), m.group(1)), text.strip()),
    }


def _thread_order(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Time order, a thread's replies right after the message that began it."""
    said = list(messages)
    began = {m["ts"]: float(m["ts"]) for m in said}

    def key(m: dict[str, Any]) -> tuple[float, float]:
        return began.get(m["thread"], float(m["thread"])), float(m["ts"])

    return sorted(said, key=key)


def looks_like(name: str, head: str) -> bool:
    return head.lstrip().startswith(SIGN)


def conversations(source: Input) -> Iterator[Conversation]:
    lines = source.lines()
    next(lines)  # the bundle's first line names the export
    channel: Conversation | None = None
    for line in lines:
        value = json.loads(line)
        if "channel" in value:
            if channel is not None:
                yield channel
            channel = Conversation(id=value["channel"], title=f"#{value['channel']}", messages=[])
        elif channel is not None:
            reply = value["thread"] != value["ts"]
            text = f"(in a thread) {value['text']}" if reply else value["text"]
            channel.messages.append(
                Parsed(Role.USER, text, timestamp(float(value["ts"])), value["speaker"])
            )
    if channel is not None:
        yield channel
