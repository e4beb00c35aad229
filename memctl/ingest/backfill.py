"""Every past transcript at once: each through the capture hook's fast path.

Each transcript is stored as the session-end hook stores it (``open_transcript``
then ``capture``): in its own transaction, scoped by the directory its session ran
in, its distillation queued, and how far the file was read remembered. So a
backfill cut short goes on where it stopped when run again, and a second run adds
nothing. A transcript memctl cannot read (binary, empty, not a transcript) is
counted with its reason and passed over; a truncated one stores what parses.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memctl.context import Context
from memctl.errors import InputError, UsageError
from memctl.ingest.capture import capture
from memctl.ingest.capture_report import CaptureReport, IngestOptions
from memctl.ingest.read_marks import open_transcript
from memctl.ingest.source import Input
from memctl.memories.privacy import safe_line
from memctl.model import parse_time
from memctl.store.sessions import get_session

# How many unreadable transcripts the summary names (the count covers them all).
MAX_NAMED_FAILURES = 20


@dataclass(frozen=True)
class StoredSession:
    """A past session a client keeps in a store of its own, not as a transcript file
    (OpenCode's database): ``read`` gives it as a document of the client's format."""

    id: str
    updated: float  # epoch seconds
    where: Path  # the store
    read: Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class Target:
    """One transcript a client keeps: the client's name, its parser (None: sniffed); a
    session of a client's own store has ``stored``."""

    client: str
    format: str | None
    path: Path
    size: int
    stored: StoredSession | None = None


@dataclass
class BackfillReport:
    """What a backfill stored (or, dry, would store)."""

    dry_run: bool = False
    transcripts: int = 0  # found
    stored: int = 0  # that added messages
    unchanged: int = 0  # with nothing new since their last capture
    failed: int = 0  # memctl could not read
    sessions: int = 0  # with new messages
    messages: int = 0  # new messages
    bytes: int = 0  # read
    malformed: int = 0  # lines or records that did not parse (a truncated last line...)
    jobs: int = 0  # distillation jobs queued (a session's files share its one job)
    per_client: dict[str, int] = field(default_factory=dict)  # transcripts found
    failures: list[str] = field(default_factory=list)  # "path: why", the first few
    job_ids: set[int] = field(default_factory=set)  # the jobs counted

    def to_dict(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if k != "job_ids"}


def store_all(
    ctx: Context,
    targets: list[Target],
    mode: str = "smart",
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> BackfillReport:
    """Store the new messages of every target, one transaction each; ``progress`` is told
    (done, total) after each."""
    report = BackfillReport(dry_run=dry_run, transcripts=len(targets))
    sessions: set[str] = set()
    for target in targets:
        report.per_client[target.client] = report.per_client.get(target.client, 0) + 1
    for done, target in enumerate(targets, 1):
        try:
            session = _store_one(ctx, target, mode, dry_run, report)
            if session:
                sessions.add(session)
        except (InputError, UsageError, UnicodeError, OSError) as exc:
            report.failed += 1
            if len(report.failures) < MAX_NAMED_FAILURES:
                why = safe_line(str(exc), 300)
                report.failures.append(why if str(target.path) in why else f"{target.path}: {why}")
        if progress is not None:
            progress(done, len(targets))
    report.sessions = len(sessions)
    return report


def _store_one(
    ctx: Context, target: Target, mode: str, dry_run: bool, report: BackfillReport
) -> str | None:
    """The session that got new messages from ``target``, if any."""
    options = IngestOptions(client=target.format, mode=mode)
    if target.stored is not None:
        return _store_session(ctx, target.stored, options, dry_run, report)
    with open_transcript(ctx, str(target.path), None, options) as opened:
        tracked = opened.tracked
        if opened.source is None:  # nothing new since its last capture
            report.unchanged += 1
            return None
        captured = capture(ctx, opened.source, opened.options, dry_run, opened)
        read = tracked.read_to - tracked.start if tracked else target.size
    return _counted(captured.report, read, report)


def _store_session(
    ctx: Context, stored: StoredSession, options: IngestOptions, dry: bool, report: BackfillReport
) -> str | None:
    """A session of a client's own store, read only when it changed since memctl stored it."""
    known = get_session(ctx.db, stored.id)
    if known is not None and parse_time(known.updated_at).timestamp() >= stored.updated:
        report.unchanged += 1
        return None
    data = json.dumps(stored.read(), ensure_ascii=False).encode()
    source = Input(io.BytesIO(data), f"{stored.where}#{stored.id}")
    # the document names its session: its own id, or a sub-agent's its parent's (OpenCode)
    captured = capture(ctx, source, replace(options, session_id=None), dry)
    return _counted(captured.report, len(data), report)


def _counted(found: CaptureReport, read: int, report: BackfillReport) -> str | None:
    report.bytes += read
    report.malformed += found.malformed
    if found.messages_new == 0:
        report.unchanged += 1
        return None
    report.stored += 1
    report.messages += found.messages_new
    if found.job_id is not None:  # a sub-agent's file queues its session's job again
        report.job_ids.add(found.job_id)
        report.jobs = len(report.job_ids)
    return found.session_id
