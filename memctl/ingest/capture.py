"""The fast path: parse a transcript, scrub it, store its new messages verbatim, queue a job.

This is all an assistant's session-end hook waits for, so it imports nothing
heavy (no numpy, no model, no LLM client) and reads its input as a stream.
One transaction stores every new message or none. The same transcript again
adds nothing; a grown one adds only the messages after the part already
stored (matched by content hash, in order).

Its stages, one module each: ``read_marks`` opens a file and reads on from its last
capture; ``parse`` reads the client's format; ``scrub`` applies privacy; ``known`` keeps
what the session does not hold yet; this module names the session, stores it, and
queues its distillation.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from contextlib import nullcontext
from itertools import chain
from pathlib import Path

from memctl.config.files import known_forget_key
from memctl.config.scope import folder_scope, keyed_path, project_root, project_scope
from memctl.context import Context
from memctl.errors import MemctlError, NoMessagesError, UsageError
from memctl.ingest.capture_report import MODES, Captured, CaptureReport, IngestOptions
from memctl.ingest.known import Copies, Known, new_messages
from memctl.ingest.parse import Transcript, read_transcript
from memctl.ingest.parse.common import REDACTED_ID, SUBAGENT, Parsed
from memctl.ingest.read_marks import STDIN_NAME, Opened, mark_read
from memctl.ingest.scrub import (
    followed_before,
    hidden_title,
    hider,
    keep_followed,
    new_scrubber,
    scrubbed,
)
from memctl.ingest.source import Input
from memctl.ingest.title import stored_title
from memctl.memories.injected import strip_injected
from memctl.memories.operations import kept_tags, resolve_scope
from memctl.memories.privacy import kept_path, safe_line, secret_in_id
from memctl.model import Message, Session, derived_session_id, now_iso
from memctl.store import jobs
from memctl.store.database import Database
from memctl.store.sessions import message_hashes, said_before, save_session, session_known_as
from memctl.store.touches import apply_unsynced

JOB_KIND = "ingest"


def queue_distillation(db: Database, session_id: str, problems: str | None = None) -> int:
    """Queue the background distillation of a session's new messages (the worker's job);
    ``problems``: what capture could not read, for the run's notes."""
    payload = {"mode": "smart", "notes": [problems] if problems else []}
    return jobs.enqueue(db, JOB_KIND, session_id, payload)


MAX_SESSION_ID = 200
TITLE_CHARS = 200  # of a transcript's own title, as stored (and spooled)


def session_id_of(options: IngestOptions, transcript: Transcript, name: str, first: str) -> str:
    """--session-id, else the transcript's own, else one derived from the file or first
    message (as for a transcript whose id Entire redacted: every such one would be one
    session)."""
    own = transcript.tally.session_id
    given = options.session_id or (own if own != REDACTED_ID else None)
    kind = secret_in_id(str(given)) if given and not options.session_id else None
    if kind:  # the transcript's own (one given by hand is refused: api.ingest)
        transcript.tally.notes.append(
            f"the transcript's session id looks like a secret ({kind}): named by its "
            "file or first message instead"
        )
    elif given:
        given = str(given).strip()
        if not given or len(given) > MAX_SESSION_ID or not given.isprintable():
            raise UsageError(f"unusable session id {safe_line(given, 60)!r}")
        return given
    origin = os.path.abspath(name) if name != STDIN_NAME else first
    return derived_session_id(transcript.client, origin)


def session_scope(ctx: Context, given: str | None, cwd: str | None) -> str:
    """--scope when given; else the project of the directory the session ran in (a stable
    ``path:<hash>`` of it when that directory is not on this machine, or is relative: it is
    never looked up from where memctl runs); else the current one."""
    if given not in (None, "", "project") or not cwd:
        return resolve_scope(ctx, given)
    directory = Path(cwd)
    key = ctx.settings.scope_key
    if directory.is_absolute() and directory.is_dir():
        return project_scope(directory, key)
    return keyed_path(folder_scope(cwd.rstrip("/\\")), key)


def capture(
    ctx: Context,
    source: Input,
    options: IngestOptions,
    dry_run: bool = False,
    opened: Opened | None = None,
) -> Captured:
    """Store the new messages of a transcript and queue their distillation (of a file
    ``opened`` by ``open_transcript``: remembering how far it was read)."""
    if options.mode not in MODES:
        raise UsageError(f"unknown mode {options.mode!r}: expected smart or raw")
    return store_transcript(
        ctx, read_transcript(source, options.client), source.name, options, dry_run, opened
    )


def first_message(messages: Iterator[Parsed], transcript: Transcript, name: str) -> Parsed | None:
    """The first message; None for an approval judge's transcript, whose turns are passed
    over (``judged``); an InputError when any other holds none, a UsageError when it is
    text in which nobody speaks (a note or a README given to ingest, not import)."""
    first = next(messages, None)
    tally = transcript.tally
    if first is None and tally.judge:
        return None
    if first is None:
        first_note = f": {tally.notes[0]}" if tally.notes else ""
        raise NoMessagesError(
            f"found no messages in {name} ({tally.skipped} records passed over, "
            f"{tally.malformed} malformed{first_note})"
        )
    if transcript.shape == "text" and transcript.guessed and not tally.speakers:
        # read to its end by now (one message, no turn): refused before anything is written
        raise UsageError(
            f"{name} is not a conversation (no line starts with user:, assistant: ...): "
            "`memctl import FILE` keeps a document; "
            "`memctl ingest --client generic FILE` stores it as one message anyway"
        )
    return first


def judged(report: CaptureReport, transcript: Transcript, name: str) -> CaptureReport:
    """The report on an approval judge's transcript: nothing stored, and why. Each of its
    turns quotes its parent's transcript again; kept, they doubled the parent's words in
    the store, each quote a near-copy of the last, and distilled into digests and facts
    of their own that crowded the parent's work out of recall and the session's start."""
    report.problems = [
        f"{name} is an approval judge's ({transcript.client} asked it whether one of "
        "its session's actions may run, quoting the session): no session stored"
    ]
    report.lines = dict(sorted(transcript.tally.lines.items()))
    return report


def store_transcript(
    ctx: Context,
    transcript: Transcript,
    name: str,
    options: IngestOptions,
    dry_run: bool = False,
    opened: Opened | None = None,
) -> Captured:
    """Store the new messages of a parsed transcript (read from ``name``), queue a job.

    The write lock is taken before the transcript is read past its head, so a
    caller that cannot get the database still holds the whole input.
    """
    report = CaptureReport(client=transcript.client, source=name)
    db = ctx.db
    recent: deque[Message] = deque(maxlen=ctx.settings.select_messages)
    # a dry run reads the store but writes nothing, so it takes no write lock
    scrubber = new_scrubber(transcript, report)
    key = known_forget_key(ctx.settings.home)
    with nullcontext() if dry_run else db.atomic():
        if opened is not None and opened.inside is not None:
            scrubber.inside(opened.inside)
        messages = scrubbed(transcript, report, scrubber)
        first = first_message(messages, transcript, name)
        if first is None:
            scope = session_scope(ctx, options.scope, transcript.tally.cwd)
            session = Session(transcript.tally.session_id or name, transcript.client, scope)
            return Captured(judged(report, transcript, name), session, [])
        session_id = session_id_of(options, transcript, name, first.content)
        cwd = transcript.tally.cwd
        stored = session_known_as(db, session_id, known_forget_key(ctx.settings.home))
        session = stored or Session(
            id=session_id, client=transcript.client, scope=session_scope(ctx, options.scope, cwd)
        )
        messages = chain([first], messages)
        if stored is None:
            messages, said = _said_anything(messages)
            if not said:  # the client's own context alone: no session (a Gemini resume's)
                report.problems = [
                    f"{name} holds nothing but what {transcript.client} "
                    "injected (its context): no session stored"
                ]
                report.lines = dict(sorted(transcript.tally.lines.items()))
                return Captured(report, session, [])
        if session.forgotten_at:  # `memctl sessions forget`: read past, never stored again
            for _ in messages:
                pass
            if opened and opened.tracked and not dry_run:
                mark_read(db, opened.tracked, transcript, session, key, scrubber.left_open)
            report.session_id, report.scope = session_id, session.scope
            report.forgotten_at = session.forgotten_at
            return Captured(report, session, [])
        session_id = session.id  # kept keyed once its name, a digest, quoted what went
        if options.scope:
            session.scope = resolve_scope(ctx, options.scope)
        if not dry_run:
            save_session(db, session)  # before its messages, which refer to it
        # named by its requests so far (no title of its own): named again once these are in
        by_requests = stored is not None and session.title == stored_title(db, session_id)
        after = opened.after if opened else 0
        known = Known(
            message_hashes(db, session_id, after),
            lambda: known_forget_key(ctx.settings.home),
            lambda m: (
                after > 0
                and transcript.tally.restated
                and said_before(db, session_id, after, m.content_hash, m.created_at)
            ),
        )
        earlier = followed_before(db, key, session_id)
        hide = hider(earlier, report.redactions.secrets)
        copies = Copies(db, key)
        for message in new_messages(db, messages, known, session, not dry_run, copies, hide):
            report.messages_new += 1
            recent.append(message)
        if not dry_run:
            keep_followed(ctx, session_id, scrubber.followed)
        _update_session(session, options, transcript, name)
        session.title = hidden_title(session.title, scrubber, earlier, report.redactions.secrets)
        if stored is None and cwd is None and transcript.tally.cwd and not options.scope:
            # its directory named further on (a Cursor transcript's tool paths): its project
            session.scope = session_scope(ctx, None, transcript.tally.cwd)
        if not session.cwd and not options.scope and session.scope == ctx.settings.project_scope:
            # a transcript that names no directory is the current project's: say which,
            # so that `memctl projects` names it from anywhere, not as ``path:<hash>``
            session.cwd = kept_path(str(project_root(ctx.settings.cwd)))
            report.scope_from, report.here = "here", session.cwd
        report.scope_from = report.scope_from or ("scope" if options.scope else "transcript")
        if not dry_run:
            if not session.title or (by_requests and not transcript.tally.title):
                session.title = stored_title(db, session_id)
            save_session(db, session)
            if opened and opened.tracked:
                mark_read(db, opened.tracked, transcript, session, key, scrubber.left_open)
        if report.messages_new and options.mode == "smart" and not dry_run:
            report.job_id = queue_distillation(db, session_id, transcript.tally.problems())
    if report.messages_new and not dry_run:
        _apply_touches(db)
    tally = transcript.tally
    report.session_id, report.scope = session_id, session.scope
    report.messages_total = session.message_count
    report.malformed, report.passed_over, report.problems = (
        tally.malformed,
        tally.skipped,
        tally.notes,
    )
    report.nul_bytes = tally.nul_bytes
    report.lines, report.cwd = dict(sorted(tally.lines.items())), tally.cwd
    report.spawned = list(tally.spawned)
    return Captured(report, session, list(recent))


def _apply_touches(db: Database) -> None:
    """Recall's spooled access counts, applied with this write: their commit takes no sync
    of its own (the close's checkpoint syncs the capture's anyway); a busy store leaves
    them for the next write, the capture stored all the same."""
    try:
        apply_unsynced(db)
    except (MemctlError, OSError):
        return


def _said_anything(messages: Iterator[Parsed]) -> tuple[Iterator[Parsed], bool]:
    """The messages again, and whether any holds more than the environment and
    instructions a client sets a session up with; read only as far as the first that
    does."""
    read: list[Parsed] = []
    for message in messages:
        read.append(message)
        if not strip_injected(message.content.removeprefix(SUBAGENT)).setting_up:
            return chain(read, messages), True
    return iter(read), False


def _update_session(
    session: Session, options: IngestOptions, transcript: Transcript, name: str
) -> None:
    tally = transcript.tally
    if tally.title:
        session.title = safe_line(tally.title, TITLE_CHARS)
    # the earliest: a sub-agent's file may be stored before its parent's (SubagentStop)
    # (readers write times in one format, format_time's, so the text orders them)
    started = [t for t in (session.started_at, tally.started_at) if t]
    session.started_at = min(started) if started else None
    session.cwd = session.cwd or kept_path(tally.cwd or "")
    session.agent_id = options.agent_id or session.agent_id
    session.tags = kept_tags([*session.tags, *options.tags])
    if not (session.source and tally.own_thread()):  # the session's file, not a sub-agent's
        session.source = kept_path(name)
    session.updated_at = now_iso()
