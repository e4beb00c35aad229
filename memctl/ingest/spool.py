"""The spool: transcripts a hook could not store because the database was busy.

A session-end hook's ingest waits ``ingest.lock_wait_ms`` for the database.
When another process holds it longer, the transcript is parsed and scrubbed
as usual and written to ``$MEMCTL_HOME/spool/<time>-<pid>.jsonl`` (0600):
a header line (where it came from, its session, scope and options), then one
generic ``{"role", "content", "created_at"}`` line per message. The hook
exits 0. The next ingest or maintain stores every spooled transcript through
the same capture path (so a session spooled twice, or also ingested
directly, adds each message once) and then deletes the file. A spooled file
that cannot be stored at all is renamed ``*.failed`` and kept.

The spooled text holds no more than the store would: a secret an earlier capture of the
session hid is hidden where it is repeated (the session's keyed digests, read when the busy
database can still be read), and a forgotten session's transcript is not written at all.
A message the session holds as it was before that hiding (stored bare before a later
message showed the secret) is checked against the store first, as capture checks it, and
left out: its hidden copy would not match it at replay and would be stored again.
The header's ``followed`` keeps the keyed digests of the secrets this capture hid, which
storing it keeps for the session's next capture (its text holds only their marks).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from itertools import chain
from pathlib import Path
from typing import Any

from memctl.config.files import forget_key, known_forget_key, private_dir, write_private
from memctl.config.safe_load import json_value
from memctl.context import Context
from memctl.errors import DatabaseBusyError, InputError, UsageError
from memctl.ingest.capture import (
    TITLE_CHARS,
    first_message,
    judged,
    session_id_of,
    store_transcript,
)
from memctl.ingest.capture_report import Captured, CaptureReport, IngestOptions
from memctl.ingest.known import Known
from memctl.ingest.parse import read_transcript
from memctl.ingest.parse.common import Parsed
from memctl.ingest.scrub import (
    followed_before,
    hidden_title,
    new_scrubber,
    scrubbed,
)
from memctl.ingest.source import Input
from memctl.memories.followed import Followed, digests
from memctl.memories.operations import resolve_scope
from memctl.memories.privacy import kept_path, safe_line
from memctl.model import Message, Session, now_iso
from memctl.store.sessions import add_followed_digests, message_hashes, session_known_as

SPOOL_DIR = "spool"
SUFFIX = ".jsonl"
FAILED = ".failed"
# How long the spool waits to read the busy store: not at all. A reader of a WAL store waits
# for no writer; one that would wait (a store being opened or migrated) would add to the
# hook's own ``ingest.lock_wait_ms`` already spent.
READ_WAIT_MS = 0


def spool_dir(ctx: Context) -> Path:
    return ctx.settings.home / SPOOL_DIR


@dataclass
class Spooled:
    """What spooling did: the file written, or for a forgotten session, nothing written
    and the report that says so."""

    path: Path | None
    report: CaptureReport


def spool(
    ctx: Context,
    source: Input,
    options: IngestOptions,
    inside: str | None = None,
    after: int = 0,
) -> Spooled:
    """Parse and scrub the transcript and write it to the spool (``inside``: the block,
    ``<private>``..., the file's last capture ended inside, read on from there; ``after``:
    how many of the session's messages came before where reading began)."""
    transcript = read_transcript(source, options.client)
    report = CaptureReport(source=source.name)
    scrubber = new_scrubber(transcript, report)
    if inside is not None:
        scrubber.inside(inside)
    messages = scrubbed(transcript, report, scrubber)
    first = first_message(messages, transcript, source.name)
    if first is None:
        return Spooled(None, judged(report, transcript, source.name))
    session_id = session_id_of(options, transcript, source.name, first.content)
    stored, earlier, known = _stored(ctx, session_id, after)
    if stored is not None and stored.forgotten_at:  # never stored again: nothing to keep
        for _ in messages:
            pass
        report.session_id, report.client, report.scope = session_id, stored.client, stored.scope
        report.forgotten_at = stored.forgotten_at
        return Spooled(None, report)
    counts = report.redactions.secrets
    kept = list(_hidden_unless_held(earlier, known, chain([first], messages), counts))
    tally = transcript.tally
    title = hidden_title(safe_line(tally.title, TITLE_CHARS), scrubber, earlier, counts)
    header = {
        "source": kept_path(source.name),  # a folder named after a token: as stored
        "client": transcript.client,
        "title": title,  # as the store keeps it: no secret
        "started_at": tally.started_at,
        "options": asdict(
            IngestOptions(
                client=transcript.client,
                session_id=session_id,
                agent_id=options.agent_id,
                scope=resolve_scope(ctx, options.scope),
                tags=options.tags,
                mode=options.mode,
            )
        ),
        "followed": digests(forget_key(ctx.settings.home), scrubber.followed)
        if scrubber.followed
        else {},
    }
    lines = [json.dumps(header, ensure_ascii=False)] + [
        json.dumps(
            {"role": str(m.role), "content": m.content, "created_at": m.created_at},
            ensure_ascii=False,
        )
        for m in kept
    ]
    directory = private_dir(spool_dir(ctx))
    path = directory / f"{time.time_ns()}-{os.getpid()}{SUFFIX}"
    write_private(path, "\n".join(lines) + "\n")
    return Spooled(path, report)


def _stored(
    ctx: Context, session_id: str, after: int
) -> tuple[Session | None, Followed | None, Known | None]:
    """The session as the store keeps it, the secrets its earlier captures hid (by keyed
    digest) and, when there are some, which messages it holds from ``after`` on (capture's
    ``Known``), when the busy database can be read at once; else none."""
    key = known_forget_key(ctx.settings.home)
    try:
        with ctx.lock_wait(READ_WAIT_MS):
            stored = session_known_as(ctx.db, session_id, key)
            earlier = followed_before(ctx.db, key, stored.id) if stored else None
            if stored is None or earlier is None:
                return stored, earlier, None
            return stored, earlier, Known(message_hashes(ctx.db, stored.id, after), lambda: key)
    except DatabaseBusyError:
        return None, None, None


def _hidden_unless_held(
    earlier: Followed | None, known: Known | None, parsed: Iterator[Parsed], counts: Counter[str]
) -> Iterator[Parsed]:
    """The messages with each secret an earlier capture of the session hid hidden too
    (``earlier``, counted in ``counts``), but for one the session holds as it was before
    that hiding: a transcript read again from its start holds messages stored bare before
    a later one showed the secret. Capture checks those against the store before it hides them
    (``Known.seen``, bare or hidden); the spool did so only at replay, on the hidden text,
    so each was stored a second time. Checked here, in capture's order, such a message is
    left out: it is stored, and its hidden copy was all the spool could keep of it."""
    for item in parsed:
        hidden = item.content if earlier is None else earlier.hide(item.content, counts)
        if known is not None:
            held = known.seen(
                Message(item.role, hidden, item.created_at or now_iso()), item.content
            )
            if held and hidden != item.content:
                continue
        yield replace(item, content=hidden)


@dataclass
class Replayed:
    """What storing the spool did: the transcripts stored, and the files that failed."""

    stored: list[Captured] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def jobs(self) -> list[int]:
        return [c.report.job_id for c in self.stored if c.report.job_id is not None]


def replay(ctx: Context) -> Replayed:
    """Store every spooled transcript, oldest first, and delete its file.

    Stops quietly at a database that is still busy: the rest waits for the next run.
    """
    done = Replayed()
    directory = spool_dir(ctx)
    for path in sorted(directory.glob(f"*{SUFFIX}")) if directory.is_dir() else []:
        try:
            done.stored.append(_store(ctx, path))
        except FileNotFoundError:
            continue  # another process stored it first
        except DatabaseBusyError:
            break
        except (InputError, UsageError, ValueError, KeyError, TypeError) as error:
            path.rename(path.with_suffix(FAILED))
            done.failed.append(f"{path.name}: {error}")
            continue
        path.unlink(missing_ok=True)
    return done


def _store(ctx: Context, path: Path) -> Captured:
    with path.open("rb") as file:
        header = json_value(file.readline().decode("utf-8"))
        options = IngestOptions(**{**header["options"], "tags": tuple(header["options"]["tags"])})
        transcript = read_transcript(Input(file, str(path)), "generic")
        transcript.client = str(header["client"])
        transcript.tally.title = str(header["title"] or "")
        transcript.tally.started_at = header["started_at"]
        followed = {str(d): str(k) for d, k in dict(header.get("followed") or {}).items()}
        with ctx.db.atomic():  # the digests with the messages, or neither
            captured = store_transcript(ctx, transcript, str(header["source"]), options)
            if followed and not captured.report.forgotten_at:
                add_followed_digests(ctx.db, captured.session.id, followed)
        return captured


def _kept(folder: Path) -> list[Path]:
    """Every spooled transcript: waiting ones (``*.jsonl``, and a copy half-written when
    its writer was killed), and failed ones (``*.failed``, renamed by ``replay``)."""
    if not folder.is_dir():
        return []
    return sorted({*folder.glob(f"*{SUFFIX}*"), *folder.glob(f"*{FAILED}")})


def redact_spooled(ctx: Context, needle: str, mark: str) -> int:
    """Replace ``needle`` by ``mark`` in every string of every spooled transcript, stored
    ones and failed ones (``memctl redact``: else the next maintain stores the value back);
    how many files changed."""
    folder = spool_dir(ctx)
    changed = 0
    for path in _kept(folder):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            continue
        rewritten = "".join(_line_redacted(line, needle, mark) + "\n" for line in text.splitlines())
        if rewritten != text:
            write_private(path, rewritten)
            changed += 1
    return changed


def _line_redacted(line: str, needle: str, mark: str) -> str:
    """One spooled line with ``needle`` replaced in its strings (in its text when it is no
    JSON: a failed file's)."""
    try:
        value = json_value(line)
    except ValueError:
        return line.replace(needle, mark)
    return json.dumps(_replaced(value, needle, mark), ensure_ascii=False)


def _replaced(value: Any, needle: str, mark: str) -> Any:
    """``value`` (parsed JSON) with ``needle`` replaced in each of its strings."""
    if isinstance(value, str):
        return value.replace(needle, mark)
    if isinstance(value, list):
        return [_replaced(item, needle, mark) for item in value]
    if isinstance(value, dict):
        return {key: _replaced(item, needle, mark) for key, item in value.items()}
    return value


def drop_session(ctx: Context, session_id: str) -> int:
    """Remove every spooled transcript of ``session_id`` (``memctl sessions forget``); how
    many."""
    folder = spool_dir(ctx)
    dropped = 0
    for path in _kept(folder):
        try:
            with path.open("rb") as file:
                header = json_value(file.readline().decode("utf-8"))
            named = header["options"]["session_id"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if named == session_id:
            path.unlink(missing_ok=True)
            dropped += 1
    return dropped
