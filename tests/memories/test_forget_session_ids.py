"""A session stored without an id of its own is named by a SHA-256 of its client and its
file's path (or its first message): a forgotten session keeps no such digest, which anyone
holding the database (or a backup, or a log) tries guessed paths and openings against.
Real SQLite files, the rules path, the bytes of every file under the home."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.api import ingest as ingest_api
from memctl.api import memory as memory_api
from memctl.api import sessions as sessions_api
from memctl.api.ingest import IngestRequest
from memctl.context import Context
from memctl.errors import NotFoundError
from memctl.ingest.capture_report import CaptureReport
from memctl.maintain.backup import make_backup
from memctl.maintain.spawn import LOG_DIR, LOG_FILE
from memctl.model import Session, now_iso
from memctl.store.sessions import save_session
from tests.memories.test_forget_everywhere import _files_holding

OPENING = "hi"  # a first message anyone guesses
PLAN = "user: we let the berlin team go in march\nassistant: I will draft the memo.\n"


def _derived(origin: str) -> str:
    """The id capture gives a plain-text session read from ``origin`` (a file's absolute
    path, or the first message of standard input)."""
    return hashlib.sha256(f"generic\0{origin}".encode()).hexdigest()[:32]


def _stdin(ctx: Context, text: str) -> CaptureReport:
    request = IngestRequest(None, stdin=io.BytesIO(text.encode()), mode="raw")
    return ingest_api.ingest(ctx, request).report


def _worker_log(home: Path) -> Callable[[str], None]:
    """What the detached worker prints, as it lands in its log (``maintain.worker``)."""
    log = home / LOG_DIR / LOG_FILE
    log.parent.mkdir(exist_ok=True)

    def write(line: str) -> None:
        with log.open("a") as file:
            file.write(f"{line}\n")

    return write


def test_a_forgotten_session_keeps_no_id_derived_from_its_path_or_first_message(
    make_ctx: Callable[..., Context], home: Path, tmp_path: Path
) -> None:
    ctx = make_ctx(ingest__spawn_worker="false")
    folder = tmp_path / "acme-layoffs"
    folder.mkdir()
    notes = folder / "plan.txt"
    notes.write_text(PLAN)
    by_path = ingest_api.ingest(ctx, IngestRequest(str(notes))).report.session_id
    assert by_path == _derived(str(notes))
    ingest_api.drain_jobs(ctx, "worker", _worker_log(home))  # its run and the log name it
    by_opening = _stdin(ctx, f"user: {OPENING}\nassistant: hello\nuser: codename bluefin\n")
    by_opening = by_opening.session_id
    assert by_opening == _derived(OPENING)
    make_backup(ctx.settings, ctx.db)
    assert f"{LOG_DIR}/{LOG_FILE}" in _files_holding(home, by_path)
    assert _files_holding(home, by_opening)
    for session_id in (by_path, by_opening):
        sessions_api.forget(ctx, session_id)
    assert _files_holding(home, by_path) == [] and _files_holding(home, by_opening) == []
    # capture knows them still: read again, nothing is stored, and the id stays out
    notes.write_text(PLAN + "user: and the paris office in may\n")
    again = ingest_api.ingest(ctx, IngestRequest(str(notes), mode="raw")).report
    assert again.messages_new == 0 and again.forgotten_at
    again = _stdin(ctx, f"user: {OPENING}\nassistant: hello\n")
    assert (again.session_id, again.messages_new) == (by_opening, 0) and again.forgotten_at
    with pytest.raises(NotFoundError, match=f"session {by_opening} was forgotten on"):
        sessions_api.show(ctx, by_opening)
    ctx.close()
    assert _files_holding(home, by_path) == [] and _files_holding(home, by_opening) == []


def test_a_session_an_older_memctl_forgot_loses_its_derived_id_at_the_next_forget(
    ctx: Context, home: Path
) -> None:
    old = _derived(OPENING)
    with ctx.db.atomic():
        save_session(
            ctx.db, Session(old, "generic", ctx.settings.project_scope, forgotten_at=now_iso())
        )
    sessions_api.forget(ctx, _stdin(ctx, "user: another day\nassistant: hello\n").session_id)
    again = _stdin(ctx, f"user: {OPENING}\nassistant: hello\n")
    assert (again.session_id, again.messages_new) == (old, 0) and again.forgotten_at
    ctx.close()
    assert _files_holding(home, old) == []


def test_a_session_named_by_its_first_message_loses_that_name_when_the_message_goes(
    ctx: Context, home: Path
) -> None:
    """Read from standard input, a session is named by a SHA-256 of its first message: once
    a value in it is redacted, or the message forgotten, the name would confirm a guess of
    it (a dictionary's password tried in the words around ``[REDACTED]``)."""
    said = "user: the lab wifi works with hunter2024 tonight\nassistant: noted\n"
    redacted = _stdin(ctx, said).session_id
    forgotten = _stdin(ctx, "user: we let the berlin team go\nassistant: noted\n").session_id
    assert redacted == _derived("the lab wifi works with hunter2024 tonight")
    memory_api.redact(ctx, "hunter2024")
    sessions_api.forget(ctx, f"{forgotten}#1")
    assert _files_holding(home, redacted) == [] and _files_holding(home, forgotten) == []
    kept = sessions_api.show(ctx, redacted)  # still stored, under its name keyed
    assert [m.content for m in kept.messages][1] == "noted"
    again = _stdin(ctx, said)
    assert (again.session_id, again.messages_new) == (kept.session.id, 0)
    assert _stdin(ctx, "user: we let the berlin team go\nassistant: noted\n").messages_new == 0
    ctx.close()
    assert _files_holding(home, redacted) == [] and _files_holding(home, forgotten) == []


def test_a_forgotten_session_s_short_id_a_person_chose_is_in_no_record(
    make_ctx: Callable[..., Context], home: Path
) -> None:
    """s25-leak keyed a forgotten session's id wherever it stood, but a quote shorter than
    8 characters is taken out of no text (it would take "Tokyo" with "ok"): an id a person
    gave (``memctl ingest --session-id hr-q3``) stayed in the forget's own event, the
    events of the memories it distilled (one another session also states, kept, names it
    as its source before) and in every backup."""
    ctx = make_ctx(ingest__spawn_worker="false")
    rule = "user: Always run ruff check before committing in this repo.\nassistant: Noted.\n"
    for session_id in ("hr-q3", "kept-session-0001"):
        request = IngestRequest(None, stdin=io.BytesIO(rule.encode()), session_id=session_id)
        ingest_api.ingest(ctx, request)
        ingest_api.drain_jobs(ctx, "worker", _worker_log(home))
    make_backup(ctx.settings, ctx.db)
    assert _files_holding(home, "hr-q3")
    done = sessions_api.forget(ctx, "hr-q3")
    assert done.kept  # the rule stays, its source now the other session
    assert _files_holding(home, "hr-q3") == []
    assert "hr-q3" not in str(ctx.db.tuples("SELECT data FROM events"))


def test_a_forgotten_short_id_leaves_no_note_maintain_wrote_of_its_jobs(
    make_ctx: Callable[..., Context], home: Path
) -> None:
    """``maintain`` drains a session's jobs and keeps what they said in its run's notes
    ("jobs: session hr-q3: 2 messages embedded", "jobs: job 1 session hr-q3: run …"), and
    a forget of one message names it in its own run ("sessions forget … hr-q3#2"). s35-leak
    renamed a short id only as a whole value or a value's head: both notes kept it after
    the session was forgotten, in the store and every backup."""
    from memctl.api.maintain import MaintainRequest, maintain

    ctx = make_ctx(ingest__spawn_worker="false")
    ingest_api.ingest(ctx, IngestRequest(None, stdin=io.BytesIO(PLAN.encode()), session_id="hr-q3"))
    maintain(ctx, MaintainRequest(skip="sync"))
    notes = str(ctx.db.tuples("SELECT notes FROM runs"))
    assert "session hr-q3: " in notes
    sessions_api.forget(ctx, "hr-q3#2")
    assert "hr-q3#2" in str(ctx.db.tuples("SELECT notes FROM runs"))
    make_backup(ctx.settings, ctx.db)
    sessions_api.forget(ctx, "hr-q3")
    assert "hr-q3" not in str(ctx.db.tuples("SELECT notes, decisions FROM runs"))
    ctx.close()
    assert _files_holding(home, "hr-q3") == []
    assert _files_holding(home, "berlin") == []
