"""Transcripts waiting to be captured, and capturing a big one a chunk at a time.

A capture hook marks its transcript pending (``$MEMCTL_HOME/hooks/pending/<hash>.json``,
size -1: never captured whole) before it stores anything, and records the size it
captured once done. Whatever stops it (killed at the client's hook timeout, a full
disk, a transcript too big to capture within that timeout and handed to the worker),
the mark stays, and the next capture hook, the detached worker or ``memctl maintain``
captures the transcript again: capture stores only what it has not stored. When the data
directory's disk is full, the mark goes to a spare directory of this user's on another
file system (``spare_dir``), and ``memctl doctor`` names every transcript not captured.

One process captures a transcript at a time (``capturing``: a lock file beside the
mark, released by the system when its holder dies). A big transcript of JSON lines
is captured ``CHUNK_BYTES`` at a time, one transaction each, its read mark moving on
after each: other writers wait at most a chunk, and a capture killed midway keeps
every chunk it finished.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from memctl.config import Settings, settings_from_flags
from memctl.config.files import DIR_MODE, open_private, write_private
from memctl.context import Context
from memctl.errors import InputError, NoMessagesError
from memctl.home import HOOKS
from memctl.memories.privacy import safe_line

if TYPE_CHECKING:  # capturing imports them: a session-start hook marks with the rest alone
    from memctl.ingest.capture_report import IngestOptions

# One transaction's share of a big transcript: about a second of capture (a first capture
# ran at ~1.1 MB per CPU second, i22b's note), so other writers wait no longer than that.
CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class Pending:
    path: str  # the transcript
    client: str  # the assistant (clients/ registry name)
    session_id: str | None
    cwd: str  # where the session ran: the capture's settings and scope
    size: int  # when last captured whole (-1: not yet)
    seen: float  # time of the last capture hook (epoch seconds)
    format: str | None = None  # the transcript's parser (None: sniffed)
    error: str = ""  # why its last capture failed (a full disk), for `memctl doctor`


def pending_dir(home: Path) -> Path:
    return home / HOOKS / "pending"


def _name(transcript: str, suffix: str = ".json") -> str:
    return hashlib.sha1(transcript.encode()).hexdigest()[:20] + suffix


def _entry_path(home: Path, transcript: str, suffix: str = ".json") -> Path:
    return pending_dir(home) / _name(transcript, suffix)


# Errors of a disk with no room left (a full disk, a quota, a file size limit).
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def spare_dir(home: Path, create: bool = False) -> Path | None:
    """Where a capture hook marks its transcript pending when the data directory's disk
    is full: ``$XDG_RUNTIME_DIR`` (a memory file system on most systems) or the temporary
    directory, in ``memctl-<uid>/<home's hash>/``; None when there is none of this user's
    own (a folder another user made, or a link, is never used)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    root = Path(base) / f"memctl-{os.getuid()}"
    if create:
        with contextlib.suppress(OSError):
            os.mkdir(root, DIR_MODE)
    try:
        info = os.lstat(root)
    except OSError:
        return None
    mine = stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
    if not mine or stat.S_IMODE(info.st_mode) & 0o077:
        return None
    return root / hashlib.sha1(str(home.absolute()).encode()).hexdigest()[:16]


def remember(home: Path, entry: Pending) -> None:
    """Mark ``entry`` pending in the data directory; when its disk is full, in the spare
    directory (``spare_dir``), so the next hook, the worker or maintain captures it."""
    text = json.dumps(asdict(entry))
    try:
        write_private(_entry_path(home, entry.path), text)
    except OSError as exc:
        spare = spare_dir(home, create=True) if exc.errno in NO_ROOM else None
        if spare is None:
            raise
        write_private(spare / _name(entry.path), text)
        return
    spare = spare_dir(home)
    if spare is not None:
        (spare / _name(entry.path)).unlink(missing_ok=True)


def marked(home: Path, transcript: str) -> bool:
    """Whether ``transcript`` is marked pending (in the data directory)."""
    return _entry_path(home, transcript).exists()


def forget(home: Path, transcript: str) -> None:
    _entry_path(home, transcript).unlink(missing_ok=True)
    spare = spare_dir(home)
    if spare is not None:
        (spare / _name(transcript)).unlink(missing_ok=True)


def drop_marks(home: Path, wanted: Callable[[Pending], bool]) -> int:
    """Remove the pending marks ``wanted`` picks, in the data directory and the spare one
    (a forgotten session's, one whose path holds a redacted value: a mark keeps the
    transcript's path and directory as given, to open it again); how many transcripts'
    marks went. Capture marks a transcript again when its session's next hook runs."""
    dropped: set[str] = set()
    for path, entry in _marks(home):
        if entry is not None and wanted(entry):
            path.unlink(missing_ok=True)
            dropped.add(entry.path)
    return len(dropped)


def rewrite_errors(home: Path, change: Callable[[str], str]) -> int:
    """Each mark's ``error`` (why its last capture failed, quoting the exception: a newer
    privacy filter may hide more of it) set to ``change`` of it, the rest of the mark as
    it is (capture needs its path as given); how many marks changed."""
    changed = 0
    for path, entry in _marks(home):
        if entry is None or not entry.error or change(entry.error) == entry.error:
            continue
        write_private(path, json.dumps(asdict(replace(entry, error=change(entry.error)))))
        changed += 1
    return changed


def _entries(home: Path) -> Iterator[tuple[Path, Pending]]:
    """Every pending mark (the data directory's, then the spare directory's), once per
    transcript; an unreadable one is removed."""
    seen = set()
    for path, entry in _marks(home):
        if entry is None:
            path.unlink(missing_ok=True)
        elif entry.path not in seen:
            seen.add(entry.path)
            yield path, entry


def _marks(home: Path) -> Iterator[tuple[Path, Pending | None]]:
    """Every mark file, the data directory's then the spare directory's, with its entry
    (None: a file that cannot be read as one)."""
    for folder in (pending_dir(home), spare_dir(home)):
        if folder is None or not folder.is_dir():
            continue
        for path in folder.glob("*.json"):
            try:
                yield path, Pending(**json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError):
                yield path, None


def uncaptured(home: Path, older_than: float) -> list[Pending]:
    """The transcripts marked pending and never captured whole whose capture failed (a
    full disk) or began more than ``older_than`` seconds ago (killed), newest first."""
    now = time.time()
    found = [
        e
        for _, e in _entries(home)
        if e.size < 0 and (e.error or now - e.seen > older_than) and Path(e.path).exists()
    ]
    return sorted(found, key=lambda e: e.seen, reverse=True)


def grown(home: Path, skip: str, max_age_hours: float, limit: int | None) -> list[Pending]:
    """Pending transcripts (other than ``skip``) that grew since their last capture, or were
    never captured whole, newest first (at most ``limit``); entries captured once and idle
    longer than ``max_age_hours``, or whose transcript is gone, are dropped."""
    if limit == 0:
        return []
    found = []
    now = time.time()
    for path, entry in _entries(home):
        if entry.path == skip:
            continue
        if entry.size >= 0 and now - entry.seen > max_age_hours * 3600:
            path.unlink(missing_ok=True)
            continue
        try:
            size = Path(entry.path).stat().st_size
        except OSError:
            path.unlink(missing_ok=True)
            continue
        if size != entry.size:
            found.append(entry)
    found.sort(key=lambda e: e.seen, reverse=True)
    return found[:limit]


@contextlib.contextmanager
def capturing(home: Path, transcript: str) -> Iterator[bool]:
    """Hold the capture lock of ``transcript``; yields False (at once) when another
    process holds it."""
    path = _entry_path(home, transcript, ".lock")
    descriptor = open_private(path, os.O_WRONLY | os.O_CREAT)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            path.unlink(missing_ok=True)  # while held: a waiting opener finds it gone
    finally:
        os.close(descriptor)


@dataclass
class Chunked:
    """What capturing a transcript a chunk at a time stored."""

    session_id: str = ""
    chunks: int = 0
    messages_new: int = 0
    jobs: int = 0
    forgotten: bool = False  # its session was forgotten: nothing is stored of it again
    spawned: list[str] = field(default_factory=list)  # the sub-agents' threads it started


def capture_in_chunks(
    ctx: Context, path: str, options: IngestOptions, chunk: int = CHUNK_BYTES
) -> Chunked:
    """Store every new message of the transcript at ``path``, a transaction per chunk."""
    from memctl.ingest.capture import capture
    from memctl.ingest.read_marks import open_transcript, pass_over

    done, start = Chunked(), -1
    while True:
        with open_transcript(ctx, path, None, options, chunk=chunk) as opened:
            tracked = opened.tracked
            if opened.source is None or tracked is None or tracked.start <= start:
                return done  # nothing new, or no way on from here
            start = tracked.start
            try:
                found = capture(ctx, opened.source, opened.options, opened=opened).report
            except InputError:
                if not pass_over(ctx, opened):  # a chunk with no message in it
                    raise
            else:
                done.session_id = found.session_id
                done.forgotten = found.forgotten_at is not None
                done.messages_new += found.messages_new
                done.jobs += found.job_id is not None
                done.spawned += [t for t in found.spawned if t not in done.spawned]
            done.chunks += 1
            if tracked.stop is None:
                return done


def settings_for(settings: Settings, cwd: Path) -> Settings:
    """The settings a command run in ``cwd`` gets (its project), with this one's flags."""
    if not cwd.is_dir() or cwd == settings.cwd:
        return settings
    overrides = {k: v for k, v in settings.values.items() if settings.sources[k] == "flag"}
    return settings_from_flags(settings.home, overrides, cwd)


def capture_entry(ctx: Context, entry: Pending) -> Chunked | None:
    """Capture a pending transcript in its session's project, a chunk at a time, and
    record its size; None when another process is capturing it."""
    from memctl.ingest.capture_report import IngestOptions

    home = ctx.settings.home
    with capturing(home, entry.path) as mine:
        if not mine:
            return None
        size = Path(entry.path).stat().st_size
        options = IngestOptions(client=entry.format, session_id=entry.session_id)
        settings = settings_for(ctx.settings, Path(entry.cwd))
        with contextlib.ExitStack() as stack:
            here = settings is ctx.settings
            there = ctx if here else stack.enter_context(ctx.elsewhere(settings))
            try:
                done = capture_in_chunks(there, entry.path, options)
            except NoMessagesError:
                no_messages_yet(home, entry, size)
                return Chunked()
        if done.forgotten:  # its path, directory and id, which the forget took out
            forget(home, entry.path)
        else:
            remember(home, replace(entry, size=size))
            mark_spawned(home, entry, done.session_id, done.spawned)
    return done


def no_messages_yet(home: Path, entry: Pending, size: int) -> None:
    """A pending transcript that holds no message (a session started, its first prompt not
    written yet; or one that said nothing): it stays pending, with the size read, so it is
    read again once it grows (the session's first turn, even one its client is killed in)
    and dropped once idle for ``hooks.recapture_hours``, as a captured one is."""
    remember(home, replace(entry, size=size, seen=time.time(), error=""))


def mark_spawned(home: Path, parent: Pending, session_id: str, threads: list[str]) -> None:
    """Mark pending the rollouts of the sub-agents ``threads`` that the parent's new
    messages started (Codex runs no hook in a sub-agent's thread, nor in one the person
    resumes), under the session that started them: what captured the parent (a hook, the
    worker, maintain) stores what each has said, and the next one what it says after."""
    from memctl.ingest.parse.codex import thread_rollout

    for thread in threads:
        found = thread_rollout(parent.path, thread)
        if found and found != parent.path:
            entry = replace(parent, path=found, session_id=session_id, size=-1, seen=time.time())
            remember(home, entry)


def capture_grown(ctx: Context, log: Callable[[str], None]) -> list[tuple[Pending, Chunked | str]]:
    """Capture every pending transcript that grew or was never captured whole, then the
    sub-agents' rollouts those captures marked (``mark_spawned``): what each stored, or why
    it could not (said to ``log``; the mark stays: tried again next time)."""
    settings = ctx.settings
    results: list[tuple[Pending, Chunked | str]] = []
    tried: set[str] = set()
    while True:  # again for the sub-agents' rollouts a capture marked pending
        found = grown(settings.home, "", settings.hooks_recapture_hours, None)
        todo = [entry for entry in found if entry.path not in tried]
        if not todo:
            return results
        for entry in todo:
            tried.add(entry.path)
            try:
                done = capture_entry(ctx, entry)
            except Exception as exc:  # one transcript's failure stops none of the others
                why = safe_line(f"{type(exc).__name__}: {exc}", 300)
                log(f"capture of {safe_line(entry.path)} failed: {why}")
                results.append((entry, why))
                continue
            if done is not None:
                results.append((entry, done))
