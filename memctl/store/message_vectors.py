"""SQL for session messages' vectors (``message_vectors``, m018): written by the slow path
(memctl/ingest/message_vectors.py), searched by recall's sessions leg.

A message's user or assistant text is embedded in parts (at most a chunk each), one
int8 vector a part (a quarter of float32's bytes: 384 bytes for MiniLM); a message is
as close to a query as its closest part. The vectors are searched through their own vector index
(``MESSAGE_VECTORS``), the sign-bit prefilter of store/vector_query.py first: a
million messages are too many to compare whole at every query. m018's triggers
remove a message's vectors with it, or when its text changes (forget, redact).

numpy is imported at module level: only the slow path and recall import this module.
"""

from __future__ import annotations

import json

import numpy as np

from memctl.store.database import Database
from memctl.store.memories import MemoryFilter
from memctl.store.message_search import MessageHit, message_clauses
from memctl.store.vector_index import MESSAGE_VECTORS, VectorIndex, vector_index
from memctl.store.vector_query import OVERFETCH, Scores, first_fetch

# The roles whose messages are embedded (tool output and system text are not said by anyone).
EMBEDDED_ROLES = ("user", "assistant")
# How many of the best parts one look at the messages' filter reads before it gives up
# over-fetching and applies the filter to every message first.
FILTER_ALL = 16_384


def quantised(vector: np.ndarray) -> bytes:
    """A vector as stored: int8, scaled so that its largest component is +-127 (whatever
    the model's range; the search divides by the stored vector's length). For MiniLM a
    step is about 1/500 of a unit, where sqlite-vec's own int8 quantiser (a fixed
    [-1, 1] range) gives 1/127."""
    values = np.asarray(vector, dtype=np.float32)
    largest = float(np.abs(values).max()) or 1.0
    return np.rint(values * (127.0 / largest)).astype(np.int8).tobytes()


_ROLES = ", ".join(f"'{r}'" for r in EMBEDDED_ROLES)
# An assistant message that opens with a tool call's note ("[tool Edit: utils.py]",
# ingest/tools.py) is the call, not something said: embedded, such notes came closest to
# questions about the files they name and pushed the answers out of the top 5 (docs/
# benchmarks.md, "Message vectors").
TOOL_NOTE = "[tool %"
# A sub-agent's report, the one tool message embedded: memctl's readers open it with this
# mark (SUBAGENT_REPORT, ingest/tools.py). It is what a sub-agent said; without a
# vector it competed on its words alone (docs/benchmarks.md, "A sub-agent's report found by
# meaning").
REPORT_MARK = "[subagent report]"
# Messages that should have vectors and have none (table alias m; FORGOTTEN as parameter).
_WAITING = (
    f"(m.role IN ({_ROLES}) OR (m.role = 'tool' AND m.content LIKE '{REPORT_MARK}%')) "
    f"AND m.content NOT IN (?, '') AND m.content NOT LIKE '{TOOL_NOTE}' "
    "AND NOT EXISTS (SELECT 1 FROM message_vectors v WHERE v.message_rowid = m.rowid)"
)


def unembedded(db: Database, limit: int, session_id: str | None = None) -> list[tuple[int, str]]:
    """(rowid, text) of up to ``limit`` messages (of one session, or any) that should have
    vectors and have none, newest first (a store backfilled over several maintain runs has
    its latest sessions' first)."""
    return waiting_messages(db, _WAITING, limit, session_id)


def waiting_messages(
    db: Database, waiting: str, limit: int, session_id: str | None = None
) -> list[tuple[int, str]]:
    """(rowid, text) of up to ``limit`` messages (of one session, or any) that the condition
    ``waiting`` (table alias m, the forgotten text as its parameter) holds for, newest first."""
    from memctl.store.forget import FORGOTTEN  # forget's SQL: not a recall's

    condition, params = "1", [FORGOTTEN]
    if session_id is not None:
        condition, params = "m.session_id = ?", [session_id, FORGOTTEN]
    return [
        (int(rowid), str(text))
        for rowid, text in db.tuples(
            f"SELECT m.rowid, m.content FROM messages m WHERE {condition} AND {waiting} "
            "ORDER BY m.rowid DESC LIMIT ?",
            [*params, limit],
        )
    ]


def unembedded_count(db: Database) -> int:
    """How many messages wait for their vectors."""
    return waiting_count(db, _WAITING)


def waiting_count(db: Database, waiting: str) -> int:
    """How many messages the condition ``waiting`` holds for (as ``waiting_messages``)."""
    from memctl.store.forget import FORGOTTEN

    return int(db.value(f"SELECT count(*) FROM messages m WHERE {waiting}", [FORGOTTEN]) or 0)


def drop_message_vectors(db: Database) -> None:
    """Remove every message's vectors (one transaction)."""
    with db.atomic():
        db.execute("DELETE FROM message_vectors")


def message_rowids(db: Database) -> dict[tuple[str, int], int]:
    """(session id, seq) -> rowid of every stored message (a benchmark's fill)."""
    return {
        (s, int(q)): int(r) for r, s, q in db.tuples("SELECT rowid, session_id, seq FROM messages")
    }


def add_message_vectors(db: Database, rows: list[tuple[int, int, bytes]]) -> None:
    """Store (message rowid, part, int8 vector) rows, for the messages still there."""
    db.executemany(
        "INSERT OR REPLACE INTO message_vectors (message_rowid, part, embedding) "
        "SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM messages WHERE rowid = ?1)",
        rows,
    )


def _hits(db: Database, rowids: list[int], where: MemoryFilter) -> dict[int, MessageHit]:
    """Part rowid -> its message, for those of ``rowids`` whose message passes ``where``."""
    clauses, params = message_clauses(where)
    rows = db.rows(
        "SELECT v.rowid AS part, msg.session_id AS session_id, msg.seq AS seq, "
        "msg.role AS role, msg.content AS content, msg.created_at AS created_at, "
        "s.scope AS scope, msg.speaker AS speaker FROM json_each(?) AS wanted "
        "CROSS JOIN message_vectors v ON v.rowid = wanted.value "
        "JOIN messages msg ON msg.rowid = v.message_rowid "
        f"JOIN sessions s ON s.id = msg.session_id WHERE {clauses}",
        [json.dumps(rowids), *params],
    )
    return {int(row.pop("part")): MessageHit(**row, score=0.0) for row in rows}


def nearest_messages(
    index: VectorIndex, scores: Scores, limit: int, where: MemoryFilter
) -> list[tuple[MessageHit, float]]:
    """The ``limit`` messages passing ``where`` closest to the query (by their closest part),
    with their cosine distance, closest first."""
    if scores.total == 0 or limit <= 0:
        return []
    fetch = first_fetch(scores, limit)
    while True:
        positions, similarities = scores.best(fetch)
        found = _best_per_message(index, positions, similarities, where)
        if len(found) >= limit or fetch >= scores.total:
            return found[:limit]
        if fetch >= FILTER_ALL:
            return _nearest_filtered(index, scores, limit, where)
        fetch = min(scores.total, fetch * OVERFETCH)


def _best_per_message(
    index: VectorIndex, positions: np.ndarray, similarities: np.ndarray, where: MemoryFilter
) -> list[tuple[MessageHit, float]]:
    rowids = index.rowids[positions].tolist()
    passing = _hits(index.db, rowids, where)
    best: dict[str, tuple[MessageHit, float]] = {}
    for rowid, similarity in zip(rowids, similarities.tolist(), strict=True):
        hit = passing.get(rowid)
        if hit is not None and hit.key not in best:  # best first: the first part is closest
            best[hit.key] = (hit, 1.0 - similarity)
    return list(best.values())


def _nearest_filtered(
    index: VectorIndex, scores: Scores, limit: int, where: MemoryFilter
) -> list[tuple[MessageHit, float]]:
    """Apply the filter to every message first (a scope that holds few of them)."""
    clauses, params = message_clauses(where)
    allowed = [
        r[0]
        for r in index.db.tuples(
            "SELECT v.rowid FROM message_vectors v JOIN messages msg ON msg.rowid = "
            f"v.message_rowid JOIN sessions s ON s.id = msg.session_id WHERE {clauses}",
            params,
        )
    ]
    wanted = index.positions_of(np.asarray(allowed, dtype=np.int64))
    # every part of the closest messages: at most all of each message's parts
    positions, similarities = scores.best(min(len(wanted), limit * 8), wanted)
    return _best_per_message(index, positions, similarities, where)[:limit]


def message_distances(index: VectorIndex, scores: Scores, keys: list[str]) -> dict[str, float]:
    """Cosine distance of each of these messages (``session#seq``) that has vectors, by its
    closest part."""
    return {key: distance for key, (_, distance) in closest_parts(index, scores, keys).items()}


def closest_parts(
    index: VectorIndex, scores: Scores, keys: list[str]
) -> dict[str, tuple[int, float]]:
    """Each of these messages (``session#seq``) that has vectors: its part closest to the
    query (its number, as ``parts`` cuts the message) and that part's cosine distance."""
    if not keys or scores.total == 0:
        return {}
    pairs = [key.rpartition("#") for key in keys]
    rows = index.db.tuples(
        "SELECT v.rowid, msg.session_id || '#' || msg.seq, v.part FROM json_each(?) AS wanted "
        "CROSS JOIN messages msg ON msg.session_id = json_extract(wanted.value, '$[0]') "
        "AND msg.seq = json_extract(wanted.value, '$[1]') "
        "JOIN message_vectors v ON v.message_rowid = msg.rowid",
        [json.dumps([[session, int(seq)] for session, _, seq in pairs if seq.isdigit()])],
    )
    key_of = {int(rowid): (str(key), int(part)) for rowid, key, part in rows}
    if not key_of:
        return {}
    positions = index.positions_of(np.fromiter(key_of, dtype=np.int64, count=len(key_of)))
    closest: dict[str, tuple[int, float]] = {}
    for rowid, similarity in zip(
        index.rowids[positions].tolist(), scores.of(positions).tolist(), strict=True
    ):
        key, part = key_of[rowid]
        if 1.0 - similarity < closest.get(key, (0, 2.0))[1]:
            closest[key] = (part, 1.0 - similarity)
    return closest


def session_closeness(index: VectorIndex, scores: Scores, sessions: list[str]) -> dict[str, float]:
    """How close each of these sessions is to the query as a whole: the mean, over its
    messages that have vectors, of each message's similarity (by its closest part). A
    session none of whose messages has a vector is left out."""
    if not sessions or scores.total == 0:
        return {}
    rows = index.db.tuples(
        "SELECT v.rowid, msg.rowid, wanted.key FROM json_each(?) AS wanted "
        "CROSS JOIN messages msg ON msg.session_id = wanted.value "
        "JOIN message_vectors v ON v.message_rowid = msg.rowid",
        [json.dumps(sessions)],
    )
    if not rows:
        return {}
    table = np.asarray(rows, dtype=np.int64)
    parts, messages, owners = table[np.argsort(table[:, 0])].T
    positions = index.positions_of(parts)
    live = np.searchsorted(parts, index.rowids[positions])  # the rows in the index now
    similarities = scores.of(positions).astype(np.float64)
    # each message's closest part: its parts in a row, the closest first
    order = np.lexsort((-similarities, messages[live]))
    message, first = distinct_first(messages[live][order])
    best, owner = similarities[order][first], owners[live][order][first]
    counts = np.bincount(owner, minlength=len(sessions))
    sums = np.bincount(owner, weights=best, minlength=len(sessions))
    return {s: float(sums[n] / counts[n]) for n, s in enumerate(sessions) if counts[n]}


def distinct_first(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of a sorted array and the position of each one's first."""
    if not len(values):
        return values, np.zeros(0, dtype=np.int64)
    first = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    return values[first], first


def message_vector_index(db: Database) -> VectorIndex:
    """The index of the messages' vectors, brought up to date."""
    return vector_index(db, MESSAGE_VECTORS)
