"""Capture's stage that keeps only what a session does not hold yet: its stored prefix
matched in order (``Known``), the new messages numbered on and inserted a batch at a
time (``new_messages``)."""

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
from memctl.store.database import Database
from memctl.store.sessions import insert_messages

INSERT_BATCH = 500


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


def new_messages(
    db: Database,
    parsed: Iterator[Parsed],
    known: Known,
    session: Session,
    write: bool,
    hide: Callable[[str], str] | None = None,
) -> Iterator[Message]:
    """The messages the session does not hold yet, numbered on from its last, each stored
    as ``hide`` leaves it (the secrets earlier captures of the session hid, hidden); with
    ``write``, inserted as they go by, a batch at a time."""
    batch: list[Message] = []
    for item in parsed:
        content = item.content if hide is None else hide(item.content)
        message = Message(item.role, content, item.created_at or now_iso())
        message.speaker = kept_speaker(item.speaker)
        if known.seen(message, item.content):
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
