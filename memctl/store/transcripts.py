"""SQL for reading stored sessions back: listing them, paging a transcript, grepping messages.

``sessions grep`` takes user text as a full-text query through ``store.fts`` (words
only, each quoted), so FTS operators and quotes are searched for as words. The
unicode61 tokenizer keeps a run of CJK characters as one token, so a CJK word
inside a longer run is found by a substring scan (``instr``) instead: slower, but
only for queries that hold CJK text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from memctl.model import Message
from memctl.store.database import Database, Row
from memctl.store.sessions import message_from_row


@dataclass(frozen=True)
class SessionFilter:
    """Which sessions (and their messages) a listing or a grep covers."""

    scopes: tuple[str, ...] | None = None  # None: every scope
    client: str | None = None
    since: str | None = None  # ISO time: the session (or message) is at least this recent
    until: str | None = None  # ISO time: strictly before
    role: str | None = None  # grep only: messages of this role
    not_client: str | None = None  # leave out this client's sessions


@dataclass(frozen=True)
class SessionRow:
    """A stored session as ``sessions list`` shows it."""

    id: str
    client: str
    scope: str
    title: str
    started_at: str | None
    updated_at: str
    message_count: int
    at: str  # the time it is listed by (its own, or when it was stored)
    digest: str  # the session's digest memory's text, '' when it has none
    digest_id: str


@dataclass(frozen=True)
class GrepHit:
    """One matching message, its session's facts, and its rank (lower is better)."""

    session_id: str
    seq: int
    role: str
    content: str
    created_at: str
    client: str
    scope: str
    title: str
    score: float
    speaker: str = ""  # who said it, by name (a chat export's author); else ''


def _session_clauses(where: SessionFilter, time_column: str) -> tuple[list[str], list[object]]:
    clauses: list[str] = ["s.forgotten_at IS NULL"]
    params: list[object] = []
    if where.scopes is not None:
        clauses.append(f"s.scope IN ({', '.join('?' * len(where.scopes))})")
        params.extend(where.scopes)
    if where.client is not None:
        clauses.append("s.client = ?")
        params.append(where.client)
    if where.not_client is not None:
        clauses.append("s.client != ?")
        params.append(where.not_client)
    if where.since is not None:
        clauses.append(f"{time_column} >= ?")
        params.append(where.since)
    if where.until is not None:
        clauses.append(f"{time_column} < ?")
        params.append(where.until)
    return clauses, params


# A session's own time (when it began, as its transcript says), else when it was stored.
SESSION_TIME = "coalesce(s.started_at, s.created_at)"
# When memctl last stored messages of it.
STORED_TIME = "s.updated_at"
CLOCKS = {"session": SESSION_TIME, "stored": STORED_TIME}  # a listing's clock, by name


def list_sessions(
    db: Database,
    where: SessionFilter,
    limit: int,
    digest_tag: str,
    clock: str = "session",
    before: tuple[str, str] | None = None,
) -> list[SessionRow]:
    """Sessions newest first by ``clock`` (keyset: those after ``before``, a row's
    (time, id)), each with its digest (its active memory tagged ``digest_tag``) if any."""
    time_column = CLOCKS[clock]
    clauses, params = _session_clauses(where, time_column)
    if before is not None:
        clauses.append(f"({time_column}, s.id) < (?, ?)")
        params.extend(before)
    rows = db.rows(
        "SELECT s.id AS id, s.client AS client, s.scope AS scope, s.title AS title, "
        "s.started_at AS started_at, s.updated_at AS updated_at, "
        f"s.message_count AS message_count, {time_column} AS at, "
        "coalesce(d.content, '') AS digest, coalesce(d.id, '') AS digest_id FROM sessions s "
        "LEFT JOIN memories d ON d.rowid = (SELECT m.rowid FROM memories m "
        "WHERE m.session_id = s.id AND m.state = 'active' AND EXISTS "
        "(SELECT 1 FROM json_each(m.tags) WHERE value = ?) LIMIT 1) "
        f"WHERE {' AND '.join(clauses) or '1'} ORDER BY {time_column} DESC, s.id DESC LIMIT ?",
        [digest_tag, *params, limit],
    )
    return [SessionRow(**row) for row in rows]


def latest_session_start(db: Database, where: SessionFilter) -> str | None:
    """When the newest session ``where`` covers began (its own time), or None."""
    clauses, params = _session_clauses(where, SESSION_TIME)
    value = db.value(
        f"SELECT max({SESSION_TIME}) FROM sessions s WHERE {' AND '.join(clauses)}", params
    )
    return str(value) if value else None


def count_sessions_where(db: Database, where: SessionFilter, clock: str, cap: int) -> int:
    """How many sessions ``where`` covers, counted up to ``cap``."""
    clauses, params = _session_clauses(where, CLOCKS[clock])
    return int(
        db.value(
            f"SELECT count(*) FROM (SELECT 1 FROM sessions s WHERE {' AND '.join(clauses) or '1'}"
            " LIMIT ?)",
            [*params, cap],
        )
    )


def session_ids_like(db: Database, prefix: str, limit: int = 2) -> list[str]:
    """Ids of sessions starting with ``prefix`` (a unique prefix names a session)."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return [
        r[0]
        for r in db.tuples(
            "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
            (escaped + "%", limit),
        )
    ]


def message_range(db: Database, session_id: str, first: int, last: int) -> list[Message]:
    """The messages of a session numbered ``first`` to ``last`` (both included), in order."""
    rows = db.rows(
        "SELECT * FROM messages WHERE session_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
        (session_id, first, last),
    )
    return [message_from_row(r) for r in rows]


def seq_at(db: Database, session_id: str, at: str) -> int | None:
    """The number of the session's last message said at or before ``at`` (its first
    message when all came later); None when the session has no messages."""
    found = db.value(
        "SELECT coalesce((SELECT max(seq) FROM messages WHERE session_id = ? AND created_at <= ?),"
        " (SELECT min(seq) FROM messages WHERE session_id = ?))",
        (session_id, at, session_id),
    )
    return int(found) if found is not None else None


def max_seq(db: Database, session_id: str) -> int:
    """The number of the session's last message (0 when it has none)."""
    return int(
        db.value("SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?", (session_id,))
    )


HIT_COLUMNS = (
    "msg.session_id AS session_id, msg.seq AS seq, msg.role AS role, msg.content AS content, "
    "msg.created_at AS created_at, s.client AS client, s.scope AS scope, s.title AS title, "
    "msg.speaker AS speaker"
)


def fts_count(db: Database, match: str, cap: int) -> int:
    """How many messages match ``match``, counted up to ``cap`` (cheap: no ranking)."""
    return int(
        db.value(
            "SELECT count(*) FROM (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
            "LIMIT ?)",
            (match, cap),
        )
    )


def grep_fts(
    db: Database, match: str, where: SessionFilter, limit: int, ranked: bool = True
) -> list[GrepHit]:
    """Messages matching the FTS5 expression ``match`` (built by ``store.fts``, never user
    syntax): best BM25 first (``ranked``: every match is scored, about a microsecond each),
    or newest first (the index is walked backwards and stops at ``limit``)."""
    clauses, params = _session_clauses(where, "msg.created_at")
    if where.role is not None:
        clauses.append("msg.role = ?")
        params.append(where.role)
    joined = "JOIN messages msg ON msg.rowid = f.rowid JOIN sessions s ON s.id = msg.session_id"
    if ranked:  # ranked on the index alone: only the best (filtered: every) match is joined
        rows = db.rows(
            f"SELECT {HIT_COLUMNS}, f.rank AS score FROM (SELECT rowid, rank FROM messages_fts "
            f"WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?) f {joined} "
            f"WHERE {' AND '.join(clauses) or '1'} ORDER BY f.rank, msg.created_at DESC LIMIT ?",
            [match, -1 if clauses else limit, *params, limit],
        )
    else:
        rows = db.rows(
            f"SELECT {HIT_COLUMNS}, 0.0 AS score FROM messages_fts f {joined} "
            f"WHERE messages_fts MATCH ? {''.join(' AND ' + c for c in clauses)} "
            "ORDER BY f.rowid DESC LIMIT ?",
            [match, *params, limit],
        )
    return [GrepHit(**row) for row in rows]


def grep_substrings(
    db: Database, needles: list[str], where: SessionFilter, limit: int
) -> list[GrepHit]:
    """Messages holding every one of ``needles`` as a substring (case-insensitive for
    ASCII), newest first: for text the tokenizer does not cut into words (CJK runs)."""
    clauses, params = _session_clauses(where, "msg.created_at")
    if where.role is not None:
        clauses.append("msg.role = ?")
        params.append(where.role)
    for needle in needles:
        clauses.append("instr(lower(msg.content), ?) > 0")
        params.append(needle.lower())
    rows = db.rows(
        f"SELECT {HIT_COLUMNS}, 0.0 AS score FROM messages msg "
        "JOIN sessions s ON s.id = msg.session_id "
        f"WHERE {' AND '.join(clauses)} ORDER BY msg.created_at DESC, msg.rowid DESC LIMIT ?",
        [*params, limit],
    )
    return [GrepHit(**row) for row in rows]


def memory_session_rows(db: Database, session_ids: list[str]) -> dict[str, Row]:
    """id -> (client, title, started_at, message_count) of the given sessions."""
    if not session_ids:
        return {}
    rows = db.rows(
        "SELECT id, client, title, started_at, message_count FROM sessions "
        f"WHERE id IN ({', '.join('?' * len(session_ids))})",
        session_ids,
    )
    return {row["id"]: row for row in rows}


def count_scope_sessions(db: Database, scope: str) -> int:
    """How many sessions of ``scope`` are stored (a forgotten one's row is not a session)."""
    return int(
        db.value("SELECT count(*) FROM sessions WHERE scope = ? AND forgotten_at IS NULL", (scope,))
    )


# The text of a message that holds a tool call's note ('[tool ', as the parsers write one)
NOTES_ONLY = (
    "CASE WHEN m.role = 'assistant' AND instr(m.content, '[tool ') THEN m.content ELSE '' END"
)


def turns_before(
    db: Database, keys: list[tuple[str, int]], span: int
) -> dict[tuple[str, int], list[tuple[str, str]]]:
    """For each (session id, message number) of ``keys``: the message and the ``span``
    before it in its session, in order, as (role, text): the text of an assistant's message
    that holds a tool call's note (``NOTES_ONLY``: what memories/told_back.py reads), "" for
    any other. One statement whatever the number of keys: SQLite keeps it prepared (an OR
    of N terms was prepared anew for each N)."""
    if not keys:
        return {}
    rows = db.tuples(
        f"SELECT m.session_id, m.seq, m.role, {NOTES_ONLY} FROM json_each(?) AS k"
        " JOIN messages AS m ON m.session_id = k.value ->> 0"
        " AND m.seq BETWEEN (k.value ->> 1) - ? AND k.value ->> 1",
        (json.dumps(keys), span),
    )
    said = {(session, seq): (role, text) for session, seq, role, text in rows}
    return {
        (session, seq): [
            said[(session, n)] for n in range(seq - span, seq + 1) if (session, n) in said
        ]
        for session, seq in keys
    }


def turn_openings(
    db: Database, keys: list[tuple[str, int]], span: int
) -> dict[tuple[str, int], int]:
    """For each (session id, message number) of ``keys``: the number of the user's message
    that opens its turn (the last user message before it, at most ``span`` back); a key
    with none that close is left out. One statement whatever the number of keys."""
    if not keys:
        return {}
    rows = db.tuples(
        "SELECT k.value ->> 0, k.value ->> 1, max(m.seq) FROM json_each(?) AS k"
        " JOIN messages AS m ON m.session_id = k.value ->> 0 AND m.role = 'user'"
        " AND m.seq BETWEEN (k.value ->> 1) - ? AND (k.value ->> 1) - 1"
        " GROUP BY k.value ->> 0, k.value ->> 1",
        (json.dumps(keys), span),
    )
    return {(session, seq): opening for session, seq, opening in rows}
