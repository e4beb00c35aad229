"""The raw text of an imported file, stored before anything is distilled from it.

It becomes a session ``import-<id>`` (client ``import``), so nothing is lost
if distilling fails, and its text is searchable like any transcript:

- a document: its text in pieces of at most 8 KiB cut between lines, in
  order (joined, they are the file as read, after privacy);
- a chat export: for each conversation a system message naming it, then
  its messages with their roles, times and (where the export names them) speakers, a
  named speaker's message stored as ``Name: text`` (``memories.lines.said_line``);
- another tool's memories: one message each.

Privacy comes first, as on ingest's fast path: ``<private>`` blocks and
secrets never reach the database. One transaction stores all or nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

from memctl.config.files import known_forget_key
from memctl.config.scope import project_root
from memctl.context import Context
from memctl.imports.distil import Plan
from memctl.imports.files import Reading
from memctl.imports.formats.base import Kind
from memctl.ingest.entities import known_word
from memctl.ingest.known import Copies
from memctl.memories.lines import kept_speaker, said_line
from memctl.memories.privacy import Redactions, kept_path, nothing_left, safe_line, scrub
from memctl.memories.scrubber import scrub_messages, scrub_stream
from memctl.model import IMPORTED, Message, Role, Session, now_iso
from memctl.store.imports import ImportRecord, save_import
from memctl.store.sessions import insert_messages, save_session

CLIENT = IMPORTED
# Messages are inserted in batches of at most this many characters.
INSERT_CHARS = 1 << 19


def session_id(record: ImportRecord) -> str:
    return f"import-{record.id}"


def store_raw(ctx: Context, plan: Plan, record: ImportRecord, tags: list[str]) -> Redactions:
    """Store the file's text as the record's session; what privacy took out is returned."""
    found = Redactions()
    session = Session(
        id=session_id(record),
        client=CLIENT,
        scope=record.scope,
        title=plan.survey.title or plan.target.name,
        source=plan.target.source,
        tags=tags,
        cwd=_here(ctx, record.scope),
    )
    db = ctx.db
    with db.atomic(), plan.target.open() as reading:
        save_session(db, session)  # before its messages, which refer to it
        batch: list[Message] = []
        size = 0
        copies = Copies(db, known_forget_key(ctx.settings.home))
        for role, text, created, speaker in _messages(plan, reading, found):
            session.message_count += 1
            seq = session.message_count
            message = Message(role, text, created or now_iso(), session.id, seq, speaker=speaker)
            copied = copies.left(message)
            if copied is not None:  # a conversation imported again after a forget or redact
                message.content, message.speaker, message.content_hash = copied
            batch.append(message)
            size += len(text)
            if size >= INSERT_CHARS:
                insert_messages(db, batch)
                batch, size = [], 0
        insert_messages(db, batch)
        session.updated_at = now_iso()
        save_session(db, session)
        record.session_id = session.id
        save_import(db, record)
    return found


def _here(ctx: Context, scope: str) -> str:
    """The directory an import into the current project ran in (its work tree's root), so
    that `memctl projects` and the viewer name it from anywhere, not as ``path:<hash>``; ''
    for another scope (``--scope``: no directory of this run is its)."""
    if scope != ctx.settings.project_scope:
        return ""
    return kept_path(str(project_root(ctx.settings.cwd)))


def _messages(
    plan: Plan, reading: Reading, found: Redactions
) -> Iterator[tuple[Role, str, str | None, str]]:
    """(role, text, time, speaker) of each message to store."""
    kind, module = plan.survey.kind, plan.survey.format
    if kind == Kind.TEXT:
        for piece in scrub_stream(module.read(reading).pieces, found):
            yield Role.USER, piece, None, ""
    elif kind == Kind.CHAT:
        for conversation in module.conversations(reading):
            named = safe_line(f"conversation: {conversation.title} ({conversation.id})")
            # dated as the conversation began (undated, a recall showed it "now", beside
            # its messages a year old)
            began = next((m.created_at for m in conversation.messages if m.created_at), None)
            yield Role.SYSTEM, named, began, ""
            said = ((m.content, m) for m in conversation.messages)
            for text, message in scrub_messages(said, found, known=known_word):
                if not nothing_left(text):
                    said_by = kept_speaker(message.speaker)
                    line = said_line(said_by, text.strip())
                    yield message.role, line, message.created_at, said_by
    else:
        for record in module.records(reading):
            text = _clean(record.content, found)
            if text:
                yield Role.USER, text, record.created_at, ""


def _clean(text: str, found: Redactions) -> str:
    cleaned, got = scrub(text)
    found.add(got)
    return "" if nothing_left(cleaned) else cleaned.strip()
