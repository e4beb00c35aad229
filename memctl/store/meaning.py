"""The vector of a memory's content alone (``memory_plain_vectors``, m021), kept beside its
searched vector when that one also names what the memory mentions
(retrieve/vocabulary.py ``document_text``).

The searched vector (``memories_vec``) finds and ranks a memory; the relevance gate weighs
how close the query is to what the memory says, its content alone, so that the names
added for finding never make a question about something else a clear match
(retrieve/stages/fuse.py). A row goes with its memory (deleted with it: ON DELETE CASCADE)
and with its searched vector (``put_vector`` drops it: a new text, a new pair).
"""

from __future__ import annotations

from collections.abc import Sequence

from memctl.store.database import Database

# The meta key holding how far maintain has given existing memories their names
# (maintain/upkeep.py, ``embed_meaning``): "<version>:<last rowid done>" or "<version>".
MEANING_MARK = "meaning.done"
# The meta key holding the last rowid maintain has given questions written by rule
# (maintain/upkeep.py, ``write_questions``).
QUESTIONS_MARK = "questions.written"


def put_plain_vectors(db: Database, vectors: Sequence[tuple[str, bytes]]) -> None:
    """Keep (memory id, vector of its content alone) for memories whose searched vector
    also names what they mention."""
    for memory_id, vector in vectors:
        db.execute(
            "INSERT OR REPLACE INTO memory_plain_vectors (memory_rowid, embedding) "
            "SELECT rowid, ? FROM memories WHERE id = ?",
            (vector, memory_id),
        )


def drop_plain_vectors_of(db: Database, ids: list[str]) -> None:
    for memory_id in ids:
        db.execute(
            "DELETE FROM memory_plain_vectors WHERE memory_rowid = "
            "(SELECT rowid FROM memories WHERE id = ?)",
            (memory_id,),
        )


def drop_plain_vectors(db: Database) -> None:
    """Forget every content-alone vector and how far maintain named the memories (a new
    model re-embeds the store: maintain names them again)."""
    db.execute("DELETE FROM memory_plain_vectors")
    db.execute("DELETE FROM meta WHERE key = ?", (MEANING_MARK,))


def plain_vectors_for(db: Database, ids: list[str]) -> dict[str, bytes]:
    """The content-alone vectors of these memories (those that have one)."""
    if not ids:
        return {}
    return {
        str(memory_id): bytes(vector)
        for memory_id, vector in db.tuples(
            "SELECT m.id, p.embedding FROM memory_plain_vectors p "
            "JOIN memories m ON m.rowid = p.memory_rowid "
            f"WHERE m.id IN ({', '.join('?' * len(ids))})",
            ids,
        )
    }


def plain_vectors_by_rowid(db: Database) -> dict[int, bytes]:
    """Every content-alone vector, by its memory's rowid (maintain compares memories by
    what they say: maintain/similar.py)."""
    return {
        int(r): bytes(v)
        for r, v in db.tuples("SELECT memory_rowid, embedding FROM memory_plain_vectors")
    }


def notes_after(db: Database, rowid: int, limit: int) -> list[tuple[int, str, str, str]]:
    """(rowid, id, content, category) of up to ``limit`` active memories past ``rowid``."""
    return [
        (int(r), str(i), str(c), str(k))
        for r, i, c, k in db.tuples(
            "SELECT rowid, id, content, category FROM memories "
            "WHERE rowid > ? AND state = 'active' ORDER BY rowid LIMIT ?",
            (rowid, limit),
        )
    ]


def contents_after(db: Database, rowid: int, limit: int) -> list[tuple[int, str, str]]:
    """(rowid, id, content) of up to ``limit`` memories past ``rowid``, in rowid order."""
    return [
        (int(r), str(i), str(c))
        for r, i, c in db.tuples(
            "SELECT rowid, id, content FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?",
            (rowid, limit),
        )
    ]
