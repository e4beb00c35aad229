"""SQL for searching raw session messages (``recall --sessions``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memctl.store.database import Database
from memctl.store.fts import fts_phrases
from memctl.store.memories import MemoryFilter


@dataclass(frozen=True)
class MessageHit:
    """One message of a stored session, and its BM25."""

    session_id: str
    seq: int
    role: str
    content: str
    created_at: str
    scope: str
    score: float

    @property
    def key(self) -> str:
        return f"{self.session_id}#{self.seq}"


def search_messages(
    db: Database, phrases: Iterable[Sequence[str]], limit: int, where: MemoryFilter
) -> list[MessageHit]:
    """The best messages matching any of ``phrases`` in the filter's scopes (and before its
    ``before``)."""
    match = fts_phrases(phrases)
    if match is None:
        return []
    clauses: list[str] = ["1"]
    params: list[object] = []
    if where.scopes is not None:
        clauses.append(f"s.scope IN ({', '.join('?' * len(where.scopes))})")
        params.extend(where.scopes)
    if where.before is not None:
        clauses.append("msg.created_at < ?")
        params.append(where.before)
    rows = db.rows(
        "SELECT msg.session_id AS session_id, msg.seq AS seq, msg.role AS role, "
        "msg.content AS content, msg.created_at AS created_at, s.scope AS scope, "
        "f.score AS score FROM (SELECT rowid, bm25(messages_fts) AS score FROM messages_fts "
        "WHERE messages_fts MATCH ? ORDER BY score LIMIT ?) f "
        "JOIN messages msg ON msg.rowid = f.rowid JOIN sessions s ON s.id = msg.session_id "
        f"WHERE {' AND '.join(clauses)} ORDER BY f.score LIMIT ?",
        [match, limit * 4, *params, limit],
    )
    return [MessageHit(**row) for row in rows]
