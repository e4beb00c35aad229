"""The keyed digests of the messages a forget or a redact took text out of (``taken_out``,
m036), so that a capture stores a later copy of one as what is left of it.

A client's resume writes a new session repeating the earlier conversation word for word
(Claude Code's ``--resume`` / ``--continue``, Codex's resume): one written after
``memctl sessions forget`` or ``redact`` brought the forgotten messages, or the value, back
into the store, however the forgotten session itself is passed over. So each such message's
digest is kept as an HMAC-SHA256 under the home's ``forget.key``, never a plain hash
(docs/privacy.md, "Hashes of forgotten text"), with the row of the message that holds what is
left of it (its redacted text, ``FORGOTTEN``; none once its session is forgotten), and a
capture stores a copy as that text (``FORGOTTEN`` when the row went), its digest keyed: what
``--with-copies`` makes of a copy stored before. Which new messages are copies is decided as
``store.forget.copies_of`` finds them: a user's or assistant's message of ``COPY_MIN_CHARS``
or more makes the capture a resume ("ok" is typed in many sessions, a client's stock tool
result shown in unrelated ones); from there on every message repeating one is a copy. A
forgotten session's message under 8 characters keeps no digest (``store.forget.MIN_NEEDLE``).
"""

from __future__ import annotations

import json

from memctl.model import KEYED, keyed_hash, message_digest_text
from memctl.store.database import Database

# What a forgotten message's text becomes, in place.
FORGOTTEN = "[forgotten]"
# A message shorter than this is no copy of one in another session: "ok, go ahead" or
# "please continue" is typed in many; a resumed conversation repeats whole requests and
# answers.
COPY_MIN_CHARS = 40


def keep_session(db: Database, key: bytes, session_id: str, shortest: int) -> None:
    """Keep the keyed digests of a session's messages of ``shortest`` characters or more
    before a forget deletes them: a shorter one ("ok", a PIN typed alone) is guessed in a
    moment by whoever holds the home's key with the database, and says too little to keep
    out of a later copy."""
    rows = db.tuples(
        "SELECT role, content FROM messages WHERE session_id = ? AND content != ? "
        "AND length(content) >= ?",
        (session_id, FORGOTTEN, shortest),
    )
    db.executemany(
        "INSERT OR IGNORE INTO taken_out (digest) VALUES (?)",
        [(keyed_hash(key, message_digest_text(role, text)),) for role, text in rows],
    )


def keep_rows(db: Database, rowids: list[int]) -> None:
    """Keep the digests of these messages, keyed in place (``store.forget.key_digests``),
    with their rows: a forget or a redact changes their text, not their digest."""
    db.execute(
        "INSERT OR REPLACE INTO taken_out (digest, message) SELECT content_hash, rowid "
        "FROM messages WHERE rowid IN (SELECT value FROM json_each(?)) "
        "AND substr(content_hash, 1, ?) = ?",
        (json.dumps(rowids), len(KEYED), KEYED),
    )


def any_kept(db: Database) -> bool:
    """Whether a forget or a redact kept a digest (a capture checks its messages only
    then)."""
    return db.value("SELECT 1 FROM taken_out LIMIT 1") is not None


def digests(db: Database) -> frozenset[str]:
    """Every digest kept."""
    return frozenset(digest for (digest,) in db.tuples("SELECT digest FROM taken_out"))


def left_of(db: Database, digest: str) -> tuple[str, str] | None:
    """What is left of the message whose keyed digest is ``digest``: its text and speaker
    now, or ``FORGOTTEN`` and no one once its row went; None when nothing was taken out of
    one such."""
    rows = db.tuples(
        "SELECT m.content, m.speaker, m.content_hash FROM taken_out t "
        "LEFT JOIN messages m ON m.rowid = t.message WHERE t.digest = ?",
        (digest,),
    )
    if not rows:
        return None
    content, speaker, kept = rows[0]
    if kept != digest:  # its row went (or a later message took its rowid)
        return FORGOTTEN, ""
    return str(content), str(speaker)
