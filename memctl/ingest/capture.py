"""The fast path: parse a transcript, scrub it, store its new messages verbatim, queue a job.

This is all an assistant's session-end hook waits for, so it imports nothing
heavy (no numpy, no model, no LLM client) and reads its input as a stream.
One transaction stores every new message or none. The same transcript again
adds nothing; a grown one adds only the messages after the part already
stored (matched by content hash, in order).

A transcript file of JSON lines is read on from where its last capture ended:
the store keeps the byte offset and a digest of the bytes before it (the first
and last ``MARK_BYTES``), so capturing an unchanged 100 MB file again reads a
few KiB. A file whose digest changed (rewritten, truncated) is read again whole.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import IO, Any

from memctl.config.files import forget_key, known_forget_key
from memctl.config.scope import folder_scope, keyed_path, project_root, project_scope
from memctl.context import Context
from memctl.errors import InputError, UsageError
from memctl.ingest.parse import Transcript, read_transcript, shape_of
from memctl.ingest.parse.common import REDACTED_ID, SUBAGENT, Parsed
from memctl.ingest.source import Input
from memctl.ingest.title import stored_title
from memctl.memories.followed import Followed, digests
from memctl.memories.injected import strip_injected
from memctl.memories.operations import kept_tags, resolve_scope
from memctl.memories.privacy import Redactions, kept_path, nothing_left, safe_line, secret_in_id
from memctl.memories.scrubber import MESSAGE_JOINS, Scrubber
from memctl.model import (
    KEYED,
    Message,
    Role,
    Session,
    content_hash,
    derived_session_id,
    format_time,
    keyed_hash,
    message_digest_text,
    now_iso,
)
from memctl.store import jobs
from memctl.store.database import Database
from memctl.store.sessions import (
    add_followed_digests,
    followed_digests,
    forget_read_mark,
    insert_messages,
    message_hashes,
    read_mark,
    said_before,
    save_read_mark,
    save_session,
    session_known_as,
)

MODES = ("smart", "raw")
INSERT_BATCH = 500
JOB_KIND = "ingest"


def queue_distillation(db: Database, session_id: str, problems: str | None = None) -> int:
    """Queue the background distillation of a session's new messages (the worker's job);
    ``problems``: what capture could not read, for the run's notes."""
    payload = {"mode": "smart", "notes": [problems] if problems else []}
    return jobs.enqueue(db, JOB_KIND, session_id, payload)


MAX_SESSION_ID = 200
TITLE_CHARS = 200  # of a transcript's own title, as stored (and spooled)
STDIN_NAME = "standard input"
# How a transcript file read before is known to be the same file: the first and the last
# this many bytes before the offset read to are hashed (with the offset).
MARK_BYTES = 4096


@dataclass(frozen=True)
class IngestOptions:
    """What `memctl ingest` was told about the transcript."""

    client: str | None = None
    session_id: str | None = None
    agent_id: str | None = None
    scope: str | None = None
    tags: tuple[str, ...] = ()
    mode: str = "smart"


@dataclass
class CaptureReport:
    """What the fast path did with one transcript."""

    session_id: str = ""
    client: str = ""
    scope: str = ""
    source: str = ""
    messages_read: int = 0
    messages_new: int = 0
    messages_total: int = 0
    private_messages_dropped: int = 0
    malformed: int = 0
    passed_over: int = 0
    nul_bytes: int = 0
    lines: dict[str, int] = field(default_factory=dict)  # kept / passed over, per kind
    cwd: str | None = None
    # where its project came from: "scope" (given), "transcript" (the directory it names),
    # "here" (it names none: the project memctl ran in); "" when nothing was stored
    scope_from: str = ""
    here: str = ""  # with "here": the project's directory
    problems: list[str] = field(default_factory=list)
    redactions: Redactions = field(default_factory=Redactions)
    job_id: int | None = None
    worker_pid: int | None = None
    forgotten_at: str | None = None  # `memctl sessions forget` took it: nothing is stored
    # --scope given for a session stored already with nothing new: the scope it keeps
    scope_unchanged: str = ""
    # the threads of sub-agents the new messages started (Codex), each in a transcript of
    # its own that the client's hooks never capture: the hook marks those pending
    spawned: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """As every door shows it: its paths as the session keeps them (``kept_path``)."""
        paths: dict[str, str | None] = {"source": kept_path(self.source)}
        paths |= {"here": kept_path(self.here), "cwd": self.cwd and kept_path(self.cwd)}
        return {**asdict(self), **paths, "redactions": self.redactions.to_dict()}


@dataclass
class Captured:
    """The report, and the newest new messages (what a dry run goes on to distil)."""

    report: CaptureReport
    session: Session
    recent: list[Message]


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
    if not file.is_file():
        raise InputError(f"no such transcript file: {path}")
    try:
        return file.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None


def scrubbed(
    transcript: Transcript, report: CaptureReport, scrubber: Scrubber[Parsed] | None = None
) -> Iterator[Parsed]:
    """The parsed messages with privacy applied by ``scrubber`` (``new_scrubber``'s by
    default), as one conversation (a secret or a ``<private>`` block may run on into the
    next message); messages left with nothing are dropped."""
    scrubber = scrubber or new_scrubber(transcript, report)
    for parsed in _read(transcript, report):
        yield from _kept(scrubber.push(parsed.content, parsed), report)
    yield from _kept(scrubber.close(), report)


def new_scrubber(transcript: Transcript, report: CaptureReport) -> Scrubber[Parsed]:
    """A scrubber of the transcript's messages, hiding where they repeat it each secret the
    parser's notes left out (``tally.taken``, filled as the parser reads), and a password of
    letters no word list knows (``swordfish``)."""
    return Scrubber(report.redactions, MESSAGE_JOINS, transcript.tally.taken, _known_word)


def _known_word(word: str) -> bool:
    # imported here: the word lists (~10 ms) load only when a password of letters is found
    from memctl.ingest.entities import known_word

    return known_word(word)


def _kept(scrubbed: Iterator[tuple[str, Parsed]], report: CaptureReport) -> Iterator[Parsed]:
    for text, parsed in scrubbed:
        if nothing_left(text):
            report.private_messages_dropped += 1
            continue
        yield Parsed(parsed.role, text.strip(), parsed.created_at)


def followed_before(db: Database, key: bytes | None, session_id: str) -> Followed | None:
    """The secrets earlier captures of the session hid where they were repeated
    (``memories.followed``), by keyed digest; None when there are none."""
    kinds = followed_digests(db, session_id) if key is not None else {}
    return Followed(key, kinds) if key is not None and kinds else None


def hidden_as_before(
    earlier: Followed | None, parsed: Iterator[Parsed], counts: Counter[str]
) -> Iterator[Parsed]:
    """The messages with each secret an earlier capture of the session hid (``earlier``)
    hidden too, counted in ``counts``."""
    if earlier is None:
        return parsed
    return (replace(p, content=earlier.hide(p.content, counts)) for p in parsed)


def hidden_title(
    title: str, scrubber: Scrubber[Parsed], earlier: Followed | None, counts: Counter[str]
) -> str:
    """A transcript's own title (the client's summary of the conversation, which may name
    a value the conversation hid: "Rotated SIGNING to ...") with each secret the messages'
    scrubber followed, and each an earlier capture hid, hidden too."""
    title = scrubber.hidden(title)
    return earlier.hide(title, counts) if earlier is not None else title


def keep_followed(ctx: Context, session_id: str, values: dict[str, str]) -> None:
    """Keep the digests of the secrets this capture hid where they were repeated, for the
    session's next capture (the home's ``forget.key`` made when there is none)."""
    if values:
        add_followed_digests(ctx.db, session_id, digests(forget_key(ctx.settings.home), values))


def _read(transcript: Transcript, report: CaptureReport) -> Iterator[Parsed]:
    for parsed in transcript.messages:
        report.messages_read += 1
        yield parsed


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


class _Known:
    """Which parsed messages a session already holds: its stored prefix, matched in order.

    Past the first difference (a rewritten transcript), a message counts as
    known while the rest of the stored messages still holds one like it. A forgotten or
    redacted message's digest is keyed (``store.forget.key_digests``): ``key`` gives a
    parsed message's keyed digest too, taken only when the session holds one. A file read
    on from its last capture may restate a message stored before that point (Gemini CLI
    writes the history again in a ``$set`` when a session is resumed or compressed: the
    tally's ``restated``): ``before`` says whether one of those words and that time is
    stored there.
    """

    def __init__(
        self,
        stored: list[str],
        key: Callable[[], bytes | None],
        before: Callable[[Message], bool] = lambda message: False,
    ) -> None:
        self._stored = stored
        self._index = 0
        self._rest: Counter[str] | None = None
        self._key = key() if any(d.startswith(KEYED) for d in stored) else None
        self._before = before

    def seen(self, message: Message) -> bool:
        digests = {message.content_hash}
        # a client's injected text is a system message; stored before memctl read it so,
        # it was the user's, and a transcript read again must not store it twice
        roles = (message.role, Role.USER) if message.role is Role.SYSTEM else (message.role,)
        for role in roles:
            text = message_digest_text(str(role), message.content)
            digests.add(content_hash(text))
            if self._key is not None:
                digests.add(keyed_hash(self._key, text))
        if self._rest is None:
            if self._index < len(self._stored) and self._stored[self._index] in digests:
                self._index += 1
                return True
            if self._index >= len(self._stored):
                return self._before(message)
            self._rest = Counter(self._stored[self._index :])
        for digest in digests:
            if self._rest[digest] > 0:
                self._rest[digest] -= 1
                return True
        return self._before(message)


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


def first_message(messages: Iterator[Parsed], transcript: Transcript, name: str) -> Parsed:
    """The first message; an InputError when the transcript holds none, a UsageError when
    it is text in which nobody speaks (a note or a README given to ingest, not import)."""
    first = next(messages, None)
    tally = transcript.tally
    if first is None:
        first_note = f": {tally.notes[0]}" if tally.notes else ""
        raise InputError(
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
                _mark(db, opened.tracked, transcript, session, key, scrubber.left_open)
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
        known = _Known(
            message_hashes(db, session_id, after),
            lambda: known_forget_key(ctx.settings.home),
            lambda m: (
                after > 0
                and transcript.tally.restated
                and said_before(db, session_id, after, m.content_hash, m.created_at)
            ),
        )
        earlier = followed_before(db, key, session_id)
        parsed = hidden_as_before(earlier, messages, report.redactions.secrets)
        for message in _new_messages(db, parsed, known, session, write=not dry_run):
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
                _mark(db, opened.tracked, transcript, session, key, scrubber.left_open)
        if report.messages_new and options.mode == "smart" and not dry_run:
            report.job_id = queue_distillation(db, session_id, transcript.tally.problems())
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


def _mark(
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


def _new_messages(
    db: Database, parsed: Iterator[Parsed], known: _Known, session: Session, write: bool
) -> Iterator[Message]:
    """The messages the session does not hold yet, numbered on from its last; with
    ``write``, inserted as they go by, a batch at a time."""
    batch: list[Message] = []
    for item in parsed:
        message = Message(item.role, item.content, item.created_at or now_iso())
        if known.seen(message):
            continue
        session.message_count += 1
        message.session_id, message.seq = session.id, session.message_count
        if write:
            batch.append(message)
            if len(batch) >= INSERT_BATCH:
                insert_messages(db, batch)
                batch = []
        yield message
    if batch:
        insert_messages(db, batch)


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
