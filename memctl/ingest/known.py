"""Capture's stage that keeps only what a session does not hold yet: its stored prefix
matched in order (``Known``), the new messages numbered on and inserted a batch at a
time (``new_messages``), a copy of a message a forget or redact took text out of stored as
what is left of it (``Copies``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

from memctl.ingest.parse.common import Parsed
from memctl.memories.lines import kept_speaker
from memctl.model import (
    KEYED,
    Message,
    Role,
    Session,
    content_hash,
    keyed_hash,
    message_digest_text,
    now_iso,
)
from memctl.store import taken_out
from memctl.store.database import Database
from memctl.store.sessions import insert_messages
from memctl.store.taken_out import COPY_MIN_CHARS

INSERT_BATCH = 500
# A capture looks each new message's digest up among those a forget or redact kept (a
# hook's few new messages) until this many, then reads them all at once (a backfill's
# thousands: one read, not a query each; measured in docs/benchmarks.md, s43-leak).
COPY_LOOKUPS = 64


class Known:
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

    def seen(self, message: Message, bare: str | None = None) -> bool:
        """Whether the session holds ``message``, or the same message as ``bare`` (its
        text before the secrets an earlier capture hid were hidden in it: a file read
        again from its start holds messages stored before that capture found them)."""
        digests = {message.content_hash}
        # a client's injected text is a system message; stored before memctl read it so,
        # it was the user's, and a transcript read again must not store it twice
        roles = (message.role, Role.USER) if message.role is Role.SYSTEM else (message.role,)
        for role in roles:
            for content in {message.content, message.content if bare is None else bare}:
                text = message_digest_text(str(role), content)
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


class CopyFinder:
    """Which messages, in order, repeat one a forget or a redact took text out of
    (``store.taken_out``, ``kept`` saying whether a keyed digest is one): a client's resume
    written after it, under a new id. A user's or assistant's message of
    ``COPY_MIN_CHARS`` or more makes what is read a resume; from there on each message
    repeating such a one is a copy, whatever its role."""

    def __init__(self, key: bytes, kept: Callable[[str], bool]) -> None:
        self._key = key
        self._kept = kept
        self._resumed = False

    def copied(self, role: Role, content: str) -> str | None:
        """The message's keyed digest when it is such a copy, else None."""
        digest = keyed_hash(self._key, message_digest_text(str(role), content))
        if not self._kept(digest):
            return None
        said = role is not Role.TOOL and len(content) >= COPY_MIN_CHARS
        self._resumed = self._resumed or said
        return digest if self._resumed else None


class Copies:
    """``CopyFinder`` over the store, and what is left of each copy's message."""

    def __init__(self, db: Database, key: bytes | None) -> None:
        self._db = db
        found = key is not None and taken_out.any_kept(db)
        self._finder = CopyFinder(key, self._is_kept) if key is not None and found else None
        self._looked = 0
        self._kept: frozenset[str] | None = None  # every kept digest, once read

    def _is_kept(self, digest: str) -> bool:
        self._looked += 1
        if self._kept is None and self._looked > COPY_LOOKUPS:
            self._kept = taken_out.digests(self._db)
        if self._kept is not None and digest not in self._kept:
            return False
        return taken_out.left_of(self._db, digest) is not None

    def left(self, message: Message) -> tuple[str, str, str] | None:
        """What to store of ``message`` when it is such a copy: the text and speaker the
        forget or redact left (``FORGOTTEN``, a redacted text), and its keyed digest; else
        None."""
        if self._finder is None:
            return None
        digest = self._finder.copied(message.role, message.content)
        left = None if digest is None else taken_out.left_of(self._db, digest)
        return None if digest is None or left is None else (*left, digest)


def new_messages(
    db: Database,
    parsed: Iterator[Parsed],
    known: Known,
    session: Session,
    write: bool,
    copies: Copies | None = None,
    hide: Callable[[str], str] | None = None,
) -> Iterator[Message]:
    """The messages the session does not hold yet, numbered on from its last, each stored
    as ``hide`` leaves it (the secrets earlier captures of the session hid, hidden), a copy
    of a forgotten one stored as forgotten; with ``write``, inserted as they go by, a batch
    at a time."""
    batch: list[Message] = []
    for item in parsed:
        content = item.content if hide is None else hide(item.content)
        message = Message(item.role, content, item.created_at or now_iso())
        message.speaker = kept_speaker(item.speaker)
        if known.seen(message, item.content):
            continue
        copied = copies.left(message) if copies is not None else None
        if copied is not None:  # as the forget or redact left the message it repeats
            message.content, message.speaker, message.content_hash = copied
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
