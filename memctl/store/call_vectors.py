"""SQL for the vectors of the calls a message of tool notes ran or wrote (``call_vectors``,
m033): written by the slow path (memctl/ingest/call_vectors.py), read by recall's turn call
(retrieve/turns.py) by their message, never searched: searched, such notes came closer to
questions than their answers (docs/benchmarks.md, "Tool notes that answer").

One row a message: its shown calls' float32 vectors, in the order ``calls_shown`` lists
them, one after another; none when it shows no call, so that it is not read again. Not int8
as the messages' (``quantised``): a call is chosen over its neighbours by cosine, often
within a few thousandths (two writes of one file), and int8 chose another call than the
query-time embedding in 4 of fresh's 201 lines; float32 is 1.5 KB a call. m033's trigger
removes a message's row when its text changes (forget, redact); a forgotten session's go
with its messages.
"""

from __future__ import annotations

import json

from memctl.store.database import Database
from memctl.store.message_vectors import waiting_count, waiting_messages

# A message of tool notes: the parsers open it with a call's or a result's note, a
# sub-agent's with its mark first (ingest/parse/common.py).
NOTES = "(m.content LIKE '[tool %' OR m.content LIKE '[subagent] [tool %')"
# Messages of notes whose calls have no row yet (table alias m; FORGOTTEN as parameter).
_WAITING = (
    f"{NOTES} AND m.content != ? "
    "AND NOT EXISTS (SELECT 1 FROM call_vectors c WHERE c.message_rowid = m.rowid)"
)


def uncalled(db: Database, limit: int, session_id: str | None = None) -> list[tuple[int, str]]:
    """(rowid, text) of up to ``limit`` messages of tool notes (of one session, or any) whose
    calls have no vectors yet, newest first."""
    return waiting_messages(db, _WAITING, limit, session_id)


def uncalled_count(db: Database) -> int:
    """How many messages of tool notes wait for their calls' vectors."""
    return waiting_count(db, _WAITING)


def add_call_vectors(db: Database, rows: list[tuple[int, bytes]]) -> None:
    """Store (message rowid, its calls' vectors) rows, for the messages still there."""
    db.executemany(
        "INSERT OR REPLACE INTO call_vectors (message_rowid, vectors) "
        "SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM messages WHERE rowid = ?1)",
        rows,
    )


def call_vectors(db: Database, keys: list[str]) -> dict[str, bytes]:
    """Each of these messages (``session#seq``) whose calls have their row: its vectors."""
    pairs = [key.rpartition("#") for key in keys]
    wanted = [[session, int(seq)] for session, _, seq in pairs if seq.isdigit()]
    if not wanted:
        return {}
    rows = db.tuples(
        "SELECT msg.session_id || '#' || msg.seq, c.vectors FROM json_each(?) AS wanted "
        "CROSS JOIN messages msg ON msg.session_id = json_extract(wanted.value, '$[0]') "
        "AND msg.seq = json_extract(wanted.value, '$[1]') "
        "JOIN call_vectors c ON c.message_rowid = msg.rowid",
        [json.dumps(wanted)],
    )
    return {str(key): bytes(vectors) for key, vectors in rows}
