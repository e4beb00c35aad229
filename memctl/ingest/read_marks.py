"""Opening a transcript for capture, read on from where its last capture ended.

A transcript file of JSON lines is read on from where its last capture ended:
the store keeps the byte offset and a digest of the bytes before it (the first
and last ``MARK_BYTES``), so capturing an unchanged 100 MB file again reads a
few KiB. A file whose digest changed (rewritten, truncated) is read again whole.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from memctl.config.files import known_forget_key
from memctl.context import Context
from memctl.errors import InputError, UsageError
from memctl.ingest.capture_report import CaptureReport, IngestOptions
from memctl.ingest.parse import Transcript, shape_of
from memctl.ingest.source import Input, wide_codec
from memctl.memories.operations import resolve_scope
from memctl.model import Session, format_time
from memctl.store.database import Database
from memctl.store.sessions import forget_read_mark, read_mark, save_read_mark, session_known_as

STDIN_NAME = "standard input"
# How a transcript file read before is known to be the same file: the first and the last
# this many bytes before the offset read to are hashed (with the offset).
MARK_BYTES = 4096


class Tracked:
    """A transcript file read from byte ``start``: how far reading got, and whether the
    last byte read ended a line (then the next capture can read on from there). With a
    ``stop`` (a line's end), the file seems to end there: one chunk of a big file."""

    def __init__(self, file: IO[bytes], path: str, start: int, stop: int | None = None) -> None:
        self.file, self.path, self.start, self.read_to = file, path, start, start
        self.stop = stop
        self.ends_line = False

    def read(self, size: int = -1) -> bytes:
        return self._seen(self.file.read(self._allowed(size)))

    def readline(self, size: int = -1) -> bytes:
        return self._seen(self.file.readline(self._allowed(size)))

    def _allowed(self, size: int) -> int:
        if self.stop is None:
            return size
        left = self.stop - self.read_to
        return left if size < 0 else min(size, left)

    def __iter__(self) -> Tracked:
        return self

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self) -> None:
        self.file.close()

    def _seen(self, data: bytes) -> bytes:
        if data:
            self.read_to += len(data)
            self.ends_line = data.endswith(b"\n")
        return data

    def digest(self) -> str:
        """The digest of the bytes before ``read_to``."""
        return digest_before(self.file.fileno(), self.read_to)


def line_end_after(fd: int, offset: int) -> int | None:
    """Where the line running at byte ``offset`` ends (just after its newline); None when
    the file ends first."""
    while True:
        block = os.pread(fd, MARK_BYTES * 16, offset)
        if not block:
            return None
        newline = block.find(b"\n")
        if newline >= 0:
            return offset + newline + 1
        offset += len(block)


def digest_before(fd: int, offset: int) -> str:
    found = hashlib.sha256(str(offset).encode())
    for start in sorted({0, max(0, offset - MARK_BYTES)}):
        found.update(os.pread(fd, min(MARK_BYTES, offset - start), start))
    return found.hexdigest()


@dataclass
class Opened:
    """A transcript to capture: its input (None: a file with nothing new since its last
    capture), the options to capture it with, and for a file, where reading began and how
    many of the session's messages came before that."""

    source: Input | None
    options: IngestOptions
    tracked: Tracked | None = None
    after: int = 0
    inside: str | None = None  # the block (``<private>``...) the last capture ended inside

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
        elif self.tracked is not None:
            self.tracked.close()

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_transcript(
    ctx: Context,
    path: str | None,
    stdin: Any,
    options: IngestOptions,
    whole: bool = False,
    chunk: int | None = None,
) -> Opened:
    """The transcript at ``path`` (or standard input), read on from its last capture when
    it is a file of JSON lines that only grew since (unless ``whole``); with ``chunk``,
    a file of JSON lines is read only to the end of the line ``chunk`` bytes on."""
    if path in (None, "-") or whole:
        return Opened(open_input(path, stdin), options)
    stream = _open_file(str(path))
    if wide_codec(stream.read(4)):  # UTF-16 or UTF-32: byte offsets are no line marks
        stream.close()
        return Opened(open_input(path, stdin), options)
    key = os.path.abspath(str(path))
    mark = read_mark(ctx.db, key, known_forget_key(ctx.settings.home))
    start, after, resumed, inside = 0, 0, options, None
    if mark is not None:
        session_id, client, offset, digest, count, block = mark
        size = os.fstat(stream.fileno()).st_size
        same = options.session_id in (None, session_id) and options.client in (None, client)
        if same and size >= offset and digest_before(stream.fileno(), offset) == digest:
            start, after, inside = offset, count, block
            resumed = replace(options, session_id=session_id, client=client)
    stream.seek(start)
    stop = None if chunk is None else line_end_after(stream.fileno(), start + max(chunk, 1))
    tracked = Tracked(stream, key, start, stop)
    try:
        source = Input(tracked, str(path), written_at=_written_at(stream))
    except InputError:
        if not start:
            raise
        return Opened(None, resumed, tracked, after, inside)  # nothing but blank lines since
    if stop is not None and shape_of(source) != "jsonl":
        tracked.stop = None  # one document: read whole
    return Opened(source, resumed, tracked, after, inside)


def pass_over(ctx: Context, opened: Opened) -> bool:
    """Remember a file's lines read since its last capture as read when they held no
    message (records a client writes between messages); False when there is no session
    to remember them for (a file read from its start) or the last line is cut."""
    tracked, session_id, client = opened.tracked, opened.options.session_id, opened.options.client
    if tracked is None or not tracked.start or not tracked.ends_line:
        return False
    if session_id is None or client is None:
        return False
    digest, count = tracked.digest(), opened.after
    with ctx.db.atomic():
        save_read_mark(
            ctx.db,
            tracked.path,
            session_id,
            client,
            tracked.read_to,
            digest,
            count,
            known_forget_key(ctx.settings.home),
            opened.inside,  # no message read: still inside it
        )
    return True


def unchanged(ctx: Context, opened: Opened, name: str) -> CaptureReport:
    """What capturing a transcript file with nothing new since its last capture did."""
    key = known_forget_key(ctx.settings.home)
    session = session_known_as(ctx.db, opened.options.session_id or "", key)
    report = CaptureReport(opened.options.session_id or "", opened.options.client or "")
    report.source = name
    if session is not None and session.forgotten_at:
        report.scope, report.forgotten_at = session.scope, session.forgotten_at
    elif session is not None:
        report.scope, report.messages_total = session.scope, session.message_count
        given = opened.options.scope
        if given and resolve_scope(ctx, given) != session.scope:
            report.scope_unchanged = session.scope
    return report


def open_input(path: str | None, stdin: Any) -> Input:
    """The transcript at ``path``, or standard input when ``path`` is None or '-'."""
    if path in (None, "-"):
        if stdin is None or stdin.isatty():
            raise UsageError(
                "give a transcript: its path (transcript) or its text on standard input",
                ["transcript"],
            )
        return Input(stdin.buffer if hasattr(stdin, "buffer") else stdin, STDIN_NAME)
    file = _open_file(path)
    return Input(file, str(Path(path)), written_at=_written_at(file))


def _written_at(file: IO[bytes]) -> str:
    return format_time(datetime.fromtimestamp(os.fstat(file.fileno()).st_mtime, UTC))


def _open_file(path: str) -> IO[bytes]:
    file = Path(path)
    if file.exists() and not file.is_file():
        what = "a directory" if file.is_dir() else "a pipe or a device"
        raise InputError(
            f"{path} is {what}, not a transcript file (pipe a transcript in: `memctl ingest -`)"
        )
    if not file.is_file():
        raise InputError(f"no such transcript file: {path}")
    try:
        return file.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None


def mark_read(
    db: Database,
    tracked: Tracked,
    transcript: Transcript,
    session: Session,
    key: bytes | None,
    inside: str | None,
) -> None:
    """Remember how far a file of JSON lines was read, when its last line was whole (a cut
    last line, still being written: the mark stays where this read began), and the block
    (``<private>``...) it ended ``inside``: the next capture reads on from there."""
    if transcript.shape != "jsonl":
        forget_read_mark(db, tracked.path, key)
    elif tracked.ends_line:
        digest = tracked.digest()
        count = session.message_count
        save_read_mark(
            db,
            tracked.path,
            session.id,
            transcript.client,
            tracked.read_to,
            digest,
            count,
            key,
            inside,
        )
