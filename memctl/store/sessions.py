"""SQL for sessions and their messages (the raw transcripts, full-text indexed)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from memctl.config import Settings
from memctl.lazy_re import lazy
from memctl.model import KEYED, Memory, Message, Role, Session, keyed_hash, path_key
from memctl.store.database import Database, Row

# A memory distilled from a session message names it and who said it:
# ``session:<session id>#<seq>:<role>`` (before issue 22 without the role).
SESSION_SOURCE = lazy(r"^session:(.+)#(\d+)(?::[a-z]+)?$")
# ... or the messages it sums up (a digest): ``session:<session id>#<first>-<last>``.
SESSION_RANGE = lazy(r"^session:(.+)#(\d+)(?:-(\d+))?(?::[a-z]+)?$")
# ... or only the session (a fact its tool calls show): ``session:<session id>``.
SESSION_ONLY = lazy(r"^session:([^#]+)$")

SESSION_COLUMNS = (
    "id",
    "client",
    "scope",
    "agent_id",
    "title",
    "source",
    "tags",
    "started_at",
    "created_at",
    "updated_at",
    "message_count",
    "extracted_through",
    "cwd",
    "forgotten_at",
)


def _session(row: Row) -> Session:
    return Session(**{**row, "tags": json.loads(row["tags"])})


def get_session(db: Database, session_id: str) -> Session | None:
    rows = db.rows("SELECT * FROM sessions WHERE id = ?", (session_id,))
    return _session(rows[0]) if rows else None


# A forgotten session is kept under its id keyed: HMAC-SHA256 under the home's
# ``forget.key``, its first 32 hex digits (a derived id's length). A session stored without
# an id of its own is named by a SHA-256 of its client and its file's path or its first
# message (``model.derived_session_id``), which anyone holding the database tries
# guessed paths and openings against; a hand-given id may name what it was about. So is a
# session named by its first message once that message is forgotten or redacted.
KEYED_ID = "keyed-"
KEYED_ID_DIGITS = 32


def keyed_session_id(key: bytes, session_id: str) -> str:
    """The id the session once known as ``session_id`` is kept under."""
    digest = keyed_hash(key, session_id).removeprefix(KEYED)
    return KEYED_ID + digest[:KEYED_ID_DIGITS]


def session_known_as(db: Database, session_id: str, key: bytes | None) -> Session | None:
    """The session with this id, or the one that had it (kept keyed with ``key``: capture
    still knows it, and stores nothing of it again)."""
    found = get_session(db, session_id)
    if found is None and key is not None and session_id:
        found = get_session(db, keyed_session_id(key, session_id))
    return found


def save_session(db: Database, session: Session) -> None:
    """Insert a session, or update every column of the one with its id."""
    values = {**session.to_dict(), "tags": json.dumps(session.tags, ensure_ascii=False)}
    db.upsert("sessions", {c: values[c] for c in SESSION_COLUMNS})


def followed_digests(db: Database, session_id: str) -> dict[str, str]:
    """The keyed digests of the secrets earlier captures of a session hid where its
    messages repeated them (``memories.followed``): digest -> kind."""
    rows = db.tuples(
        "SELECT digest, kind FROM followed_secrets WHERE session_id = ?", (session_id,)
    )
    return {str(digest): str(kind) for digest, kind in rows}


def add_followed_digests(db: Database, session_id: str, digests: dict[str, str]) -> None:
    db.executemany(
        "INSERT OR IGNORE INTO followed_secrets (session_id, digest, kind) VALUES (?, ?, ?)",
        [(session_id, digest, kind) for digest, kind in digests.items()],
    )


def message_hashes(db: Database, session_id: str, after: int = 0) -> list[str]:
    """Content hashes of a session's messages in order (seq ``after`` + 1, + 2, ...)."""
    return [
        r["content_hash"]
        for r in db.rows(
            "SELECT content_hash FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq",
            (session_id, after),
        )
    ]


def said_before(
    db: Database, session_id: str, through: int, content_hash: str, created_at: str
) -> bool:
    """Whether the session holds, at seq ``through`` or before, a message of these words
    (``content_hash``) said at ``created_at``."""
    return (
        db.value(
            "SELECT 1 FROM messages WHERE session_id = ? AND seq <= ? AND content_hash = ? "
            "AND created_at = ? LIMIT 1",
            (session_id, through, content_hash, created_at),
        )
        is not None
    )


def _mark_keys(path: str, key: bytes | None) -> tuple[str, str]:
    """The keys a transcript's read mark may be kept under: the digest of its path, and
    for a forgotten session's transcript that digest keyed (``key_read_marks``; the
    plain one again when the home has no key)."""
    plain = path_key(path)
    return plain, plain if key is None else keyed_hash(key, plain)


def read_mark(
    db: Database, path: str, key: bytes | None
) -> tuple[str, str, int, str, int, str | None] | None:
    """(session id, client, offset, digest, messages, the block its capture ended inside)
    of how far ``path`` was read."""
    rows = db.tuples(
        "SELECT session_id, client, offset, digest, messages, inside FROM transcript_reads "
        "WHERE path IN (?, ?)",
        _mark_keys(path, key),
    )
    if not rows:
        return None
    session_id, client, offset, digest, count, inside = rows[0]
    return session_id, client, offset, digest, count, inside


def save_read_mark(
    db: Database,
    path: str,
    session_id: str,
    client: str,
    offset: int,
    digest: str,
    count: int,
    key: bytes | None,
    inside: str | None = None,
) -> None:
    """Remember how far ``path`` was read, and the block (``<private>``...) its capture
    ended inside; a forgotten session's mark under the keyed digest of its path."""
    plain, keyed = _mark_keys(path, key)
    forgotten = db.value("SELECT forgotten_at FROM sessions WHERE id = ?", (session_id,))
    kept, other = (keyed, plain) if forgotten else (plain, keyed)
    db.execute("DELETE FROM transcript_reads WHERE path = ?", (other,))
    db.upsert(
        "transcript_reads",
        {
            "path": kept,
            "session_id": session_id,
            "client": client,
            "offset": offset,
            "digest": digest,
            "messages": count,
            "inside": inside,
        },
        key="path",
    )


def forget_read_mark(db: Database, path: str, key: bytes | None) -> None:
    db.execute("DELETE FROM transcript_reads WHERE path IN (?, ?)", _mark_keys(path, key))


def key_read_marks(db: Database, session_id: str, key: bytes) -> None:
    """A forgotten session's read marks kept under the keyed digest of their transcript's
    path: the plain digest is tried against guessed paths (the project's folder is in a
    Claude Code transcript's path) by anyone holding the database."""
    rows = db.tuples(
        "SELECT path FROM transcript_reads WHERE session_id = ? AND path NOT LIKE ?",
        (session_id, KEYED + "%"),
    )
    db.executemany(
        "UPDATE transcript_reads SET path = ? WHERE path = ?",
        [(keyed_hash(key, path), path) for (path,) in rows],
    )


def insert_messages(db: Database, messages: Iterable[Message]) -> None:
    db.executemany(
        "INSERT INTO messages(session_id, seq, role, content, created_at, content_hash, "
        "speaker) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            (m.session_id, m.seq, str(m.role), m.content, m.created_at, m.content_hash, m.speaker)
            for m in messages
        ),
    )


def message_from_row(row: Row) -> Message:
    return Message(
        role=Role(row["role"]),
        content=row["content"],
        created_at=row["created_at"],
        session_id=row["session_id"],
        seq=row["seq"],
        content_hash=row["content_hash"],
        speaker=row["speaker"],
    )


def latest_messages(db: Database, session_id: str, after_seq: int, limit: int) -> list[Message]:
    """The last ``limit`` messages of a session with seq > ``after_seq``, oldest first."""
    rows = db.rows(
        "SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq DESC LIMIT ?",
        (session_id, after_seq, limit),
    )
    return [message_from_row(r) for r in reversed(rows)]


def messages_after(
    db: Database, session_id: str, after_seq: int, limit: int | None = None
) -> list[Message]:
    """The messages of a session with seq > ``after_seq``, oldest first (at most ``limit``)."""
    rows = db.rows(
        "SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
        (session_id, after_seq, -1 if limit is None else limit),
    )
    return [message_from_row(r) for r in rows]


def messages_near(db: Database, session_id: str, seq: int, reach: int) -> list[Message]:
    """The messages of a session within ``reach`` of message ``seq`` (itself among them),
    oldest first."""
    rows = db.rows(
        "SELECT * FROM messages WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
        (session_id, seq - reach, seq + reach),
    )
    return [message_from_row(r) for r in rows]


def sessions_with_undistilled(db: Database, limit: int) -> list[Session]:
    """Sessions holding messages not distilled yet, oldest update first."""
    rows = db.rows(
        "SELECT * FROM sessions WHERE message_count > extracted_through "
        "ORDER BY updated_at, id LIMIT ?",
        (limit,),
    )
    return [_session(r) for r in rows]


def set_extracted_through(db: Database, session_id: str, seq: int) -> None:
    db.execute(
        "UPDATE sessions SET extracted_through = max(extracted_through, ?) WHERE id = ?",
        (seq, session_id),
    )


def count_sessions(db: Database) -> tuple[int, int]:
    """(sessions, messages) stored: a forgotten session's row, kept so that a capture does
    not store it again, is none."""
    return (
        db.value("SELECT count(*) FROM sessions WHERE forgotten_at IS NULL"),
        db.value("SELECT count(*) FROM messages"),
    )


def source_range(source: str | None) -> tuple[str, int, int] | None:
    """(session id, first, last message) a memory's ``source`` names; None for another source."""
    found = SESSION_RANGE.match(source or "")
    if not found:
        return None
    first = int(found[2])
    return found[1], first, int(found[3]) if found[3] else first


def named_session(source: str | None) -> str | None:
    """The session any ``session:`` source names (a message, a range, the session)."""
    found = SESSION_RANGE.match(source or "") or SESSION_ONLY.match(source or "")
    return found[1] if found else None


def source_session(source: str | None) -> str | None:
    """The session a ``session:<id>`` source (no message named) names; None for another."""
    found = SESSION_ONLY.match(source or "")
    return found[1] if found else None


def folded_sources(
    db: Database, memory_ids: list[str], fold_reasons: tuple[str, ...]
) -> dict[str, list[tuple[str, str, str]]]:
    """memory id -> (source, when it was said, the memory it came as) of every piece of
    evidence folded into the memory after it was made, oldest first: the fact of each
    MERGE (its update event names the fact's ``source``; a run undone no longer counts)
    and each memory a maintain fold (``fold_reasons``) superseded by it."""
    found: dict[str, list[tuple[str, str, str]]] = {}
    if not memory_ids:
        return found
    wanted = json.dumps(memory_ids)
    merges = db.tuples(
        "SELECT e.memory_id, json_extract(e.data, '$.source'), "
        "coalesce(json_extract(e.data, '$.source_at'), e.at) FROM events e "
        "WHERE e.memory_id IN (SELECT value FROM json_each(?)) AND e.action = 'update' "
        "AND json_extract(e.data, '$.source') IS NOT NULL AND (e.run_id IS NULL OR e.run_id "
        "NOT IN (SELECT id FROM runs WHERE undone_by IS NOT NULL)) ORDER BY e.id",
        (wanted,),
    )
    for memory_id, source, at in merges:
        found.setdefault(memory_id, []).append((source, at, memory_id))
    folds = db.tuples(
        "SELECT m.superseded_by, m.source, m.created_at, m.id FROM memories m "
        "WHERE m.superseded_by IN (SELECT value FROM json_each(?)) AND m.state = 'superseded' "
        "AND EXISTS (SELECT 1 FROM events e WHERE e.memory_id = m.id AND e.action = 'state' "
        "AND json_extract(e.data, '$.reason') IN (SELECT value FROM json_each(?))) "
        "ORDER BY m.created_at, m.id",
        (wanted, json.dumps(list(fold_reasons))),
    )
    for survivor, source, at, folded in folds:
        found.setdefault(survivor, []).append((source, at, folded))
    return found


def source_times(db: Database, memories: Iterable[Memory]) -> dict[str, str]:
    """When each memory's source message was said, for memories distilled from a session
    message (``source`` ``session:<id>#<seq>``): memory id -> the message's time."""
    wanted: dict[tuple[str, int], list[str]] = {}
    for memory in memories:
        found = SESSION_SOURCE.match(memory.source or "")
        if found:
            wanted.setdefault((found[1], int(found[2])), []).append(memory.id)
    if not wanted:
        return {}
    rows = db.tuples(
        "SELECT m.session_id, m.seq, m.created_at FROM json_each(?) AS k JOIN messages m "
        "ON m.session_id = json_extract(k.value, '$[0]') AND m.seq = json_extract(k.value, '$[1]')",
        (json.dumps(list(wanted)),),
    )
    return {memory_id: at for sid, seq, at in rows for memory_id in wanted[(sid, seq)]}


def last_stored_by_client(db: Database) -> dict[str, str]:
    """When a session of each client's was last stored or grown (its ``updated_at``)."""
    rows = db.rows("SELECT client, max(updated_at) AS at FROM sessions GROUP BY client")
    return {str(r["client"]): str(r["at"]) for r in rows if r["at"]}


# A request's first characters are enough to title its session (a pasted log can be MBs).
REQUEST_HEAD = 4000


def first_message_starting(db: Database, session_id: str, prefix: str) -> str:
    """The first message of a session that starts with ``prefix`` (its first characters);
    '' when none does."""
    found = db.value(
        "SELECT substr(content, 1, ?) FROM messages WHERE session_id = ? "
        "AND substr(content, 1, ?) = ? ORDER BY seq LIMIT 1",
        (REQUEST_HEAD, session_id, len(prefix), prefix),
    )
    return str(found or "")


def first_requests(db: Database, session_id: str, count: int, unless: str = "") -> list[str]:
    """The first ``count`` user messages of a session (each its first characters), in order;
    only those not starting with ``unless`` (when given), unless all do."""
    query = (
        "SELECT substr(content, 1, ?) FROM messages WHERE session_id = ? AND role = 'user' "
        "AND (? = '' OR substr(content, 1, length(?)) != ?) ORDER BY seq LIMIT ?"
    )
    values = (REQUEST_HEAD, session_id, unless, unless, unless, count)
    found = [r[0] for r in db.tuples(query, values)]
    if found or not unless:
        return found
    return first_requests(db, session_id, count)


def message_vector_count(db: Database) -> int:
    """How many message parts have a vector."""
    return int(db.value("SELECT count(*) FROM message_vectors") or 0)


def keeps_message_vectors(db: Database, settings: Settings) -> bool:
    """Whether this store's session messages are to have vectors (``recall.message_vectors``:
    on, off, or auto: while the store holds at most ``recall.message_vectors_up_to``)."""
    choice = settings.recall_message_vectors
    if choice != "auto":
        return bool(choice == "on")
    return bool(count_sessions(db)[1] <= settings.recall_message_vectors_up_to)
