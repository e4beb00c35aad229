"""SQL for ``memctl maintain``: what each task reads in bulk, writes in bulk, and upkeep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import apsw

from memctl.model import Kind, State, Tier
from memctl.store import cjk
from memctl.store.database import (
    FTS_TABLES,
    MEMORIES_FTS,
    VECTORS_GENERATION,
    Database,
)
from memctl.store.migrations import MIGRATIONS

ACTIVE = str(State.ACTIVE)


def decay_rows(db: Database, before: dict[str, str]) -> list[tuple[Any, ...]]:
    """(id, kind, strength, created_at, stored_at, last_accessed_at, decayed_at) of the active
    memories of the kinds in ``before`` whose strength was last set (created, stored,
    accessed, decayed) before the kind's time."""
    clauses = " OR ".join(
        "(kind = ? AND max(created_at, stored_at, coalesce(last_accessed_at, ''), "
        "coalesce(decayed_at, '')) < ?)"
        for _ in before
    )
    if not clauses:
        return []
    return db.tuples(
        "SELECT id, kind, strength, created_at, stored_at, last_accessed_at, decayed_at "
        "FROM memories "
        f"WHERE state = ? AND strength > 0 AND ({clauses})",
        (ACTIVE, *(v for pair in before.items() for v in pair)),
    )


def set_strengths(db: Database, rows: list[tuple[str, float, str]]) -> None:
    """(id, strength, decayed_at) for many memories, in one statement (caller's transaction)."""
    db.executemany(
        "UPDATE memories SET strength = ?, decayed_at = ? WHERE id = ?",
        [(strength, at, memory_id) for memory_id, strength, at in rows],
    )


def supersede_many(db: Database, rows: list[tuple[str, str, str]]) -> None:
    """(id, survivor id, time) for many memories: superseded by the survivor, in one
    statement (caller's transaction)."""
    db.executemany(
        "UPDATE memories SET state = ?, invalidated_at = ?, superseded_by = ?, "
        "updated_at = ? WHERE id = ?",
        [(str(State.SUPERSEDED), at, survivor, at, memory_id) for memory_id, survivor, at in rows],
    )


def episodes_to_consolidate(db: Database, before: str, limit: int) -> list[str]:
    """Active episodic memories created before ``before`` and not consolidated, oldest first."""
    return [
        r[0]
        for r in db.tuples(
            "SELECT id FROM memories WHERE kind = ? AND state = ? AND consolidated_at IS NULL "
            "AND created_at < ? ORDER BY created_at, id LIMIT ?",
            (str(Kind.EPISODIC), ACTIVE, before, limit),
        )
    ]


def similarity_rows(db: Database, task: str) -> list[tuple[Any, ...]]:
    """(rowid, scope, kind, age, compared) of every active memory that is not pinned, by
    rowid: ``age`` is the later of when it was said and when it entered the store (a fact
    consolidated today from an old episode is new), ``compared`` 1 when ``task`` compared
    it already (maintain_compared)."""
    return db.tuples(
        "SELECT m.rowid, m.scope, m.kind, max(m.created_at, m.stored_at), "
        "c.rowid IS NOT NULL FROM memories m "
        "LEFT JOIN maintain_compared c ON c.rowid = m.rowid AND c.task = ? "
        "WHERE m.state = ? AND m.kind != ? ORDER BY m.rowid",
        (task, ACTIVE, str(Kind.PINNED)),
    )


def mark_compared(db: Database, task: str, rowids: list[int]) -> None:
    """Remember that ``task`` compared these memories with every other one."""
    db.executemany(
        "INSERT OR IGNORE INTO maintain_compared(rowid, task) VALUES (?, ?)",
        [(rowid, task) for rowid in rowids],
    )


def forget_compared(db: Database) -> None:
    """Forget what every task compared: the next search compares every memory again."""
    db.execute("DELETE FROM maintain_compared")


def ids_of_rowids(db: Database, rowids: list[int]) -> dict[int, str]:
    rows = db.tuples(
        "SELECT m.rowid, m.id FROM json_each(?) AS wanted CROSS JOIN memories m "
        "ON m.rowid = wanted.value",
        (json.dumps(rowids),),
    )
    return {rowid: memory_id for rowid, memory_id in rows}


def exact_duplicates(db: Database) -> list[list[str]]:
    """Groups of active, unpinned memories of one scope with the same content, oldest first."""
    rows = db.tuples(
        "SELECT scope, content_hash, json_group_array(id) FROM ("
        "  SELECT scope, content_hash, id FROM memories WHERE state = ? AND kind != ? "
        "  AND content_hash IN (SELECT content_hash FROM memories WHERE state = ? "
        "    GROUP BY content_hash, scope HAVING count(*) > 1) ORDER BY created_at, id"
        ") GROUP BY scope, content_hash HAVING count(*) > 1",
        (ACTIVE, str(Kind.PINNED), ACTIVE),
    )
    return [json.loads(ids) for _, _, ids in rows]


def archive_candidates(
    db: Database, weaker_than: float, unused_before: str, limit: int
) -> list[str]:
    """Active memories, neither pinned nor core, weaker than ``weaker_than`` and neither
    stored nor recalled since ``unused_before``, episodes only once consolidated; weakest
    first."""
    return [
        r[0]
        for r in db.tuples(
            "SELECT id FROM memories WHERE state = ? AND kind != ? AND tier != ? "
            "AND (kind != ? OR consolidated_at IS NOT NULL) "
            "AND strength < ? AND max(stored_at, coalesce(last_accessed_at, '')) < ? "
            "ORDER BY strength, id LIMIT ?",
            (
                ACTIVE,
                str(Kind.PINNED),
                str(Tier.CORE),
                str(Kind.EPISODIC),
                weaker_than,
                unused_before,
                limit,
            ),
        )
    ]


def stale_running_runs(db: Database, kind: str) -> list[str]:
    """Runs of ``kind`` still marked running (their process died)."""
    return [
        r[0]
        for r in db.tuples("SELECT id FROM runs WHERE kind = ? AND status = 'running'", (kind,))
    ]


def mark_runs(db: Database, run_ids: list[str], status: str) -> None:
    db.executemany("UPDATE runs SET status = ? WHERE id = ?", [(status, i) for i in run_ids])


def integrity_problems(db: Database, full: bool = True) -> list[str]:
    """What ``PRAGMA integrity_check`` (or, not ``full``, ``quick_check``) finds wrong (empty
    when the store is sound).

    FTS5 keeps each index's structure per connection, and both checks read it as kept: once
    another connection has optimized an index (another process's maintain), they report
    "fts5: corruption found reading blob" for the segments it merged away, until a search of
    that table reads the structure again (SQLite 3.54). So each index is searched first (a
    row no index holds)."""
    for table in FTS_TABLES:
        db.tuples(f"SELECT rowid FROM {table} WHERE rowid = 0")
    found = [r[0] for r in db.tuples(f"PRAGMA {'integrity' if full else 'quick'}_check")]
    return [] if found == ["ok"] else found


def optimize_fts(db: Database, table: str = MEMORIES_FTS) -> None:
    """Merge the full-text index's segments into one."""
    with db.atomic():
        db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


def fts_segments(db: Database, table: str) -> int:
    """How many segments the full-text index ``table`` holds (FTS5's ``%_idx`` has a row for
    each leaf page of each segment): one after an optimize, more after any write since."""
    return int(db.value(f"SELECT count(DISTINCT segid) FROM {table}_idx"))


def vacuum_into(db: Database, path: Path) -> None:
    """A compact, consistent copy of the whole database at ``path`` (which must not exist)."""
    db.execute("VACUUM INTO ?", (str(path),))


def checkpoint(db: Database) -> None:
    """Write the WAL back into the database file and empty it."""
    db.tuples("PRAGMA wal_checkpoint(TRUNCATE)")


def change_mark(db: Database) -> str:
    """Moves whenever a memory, vector or relation changes: the newest event and the
    vectors' generation."""
    newest = db.value("SELECT max(id) FROM events") or 0
    generation = db.meta(VECTORS_GENERATION) or "0"
    return f"{newest}:{generation}"


def schema_of(path: Path) -> int:
    """The schema a store file is at (``PRAGMA user_version``), read without migrating it."""
    connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(next(iter(connection.execute("PRAGMA user_version")))[0])
    finally:
        connection.close()


def schema_now() -> int:
    """The schema this memctl brings a store to."""
    return len(MIGRATIONS)


def backup_problems(path: Path) -> list[str]:
    """Why a file is not a sound memctl store (empty when it is one)."""
    try:
        connection = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            version = next(iter(connection.execute("PRAGMA user_version")))[0]
            cjk.register(connection)  # the check reads the full-text indexes
            found = [r[0] for r in connection.execute("PRAGMA integrity_check")]
            tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
        finally:
            connection.close()
    except apsw.Error as error:
        return [f"{type(error).__name__}: {error}"]
    if found != ["ok"]:
        return found
    if "memories" not in tables or not 0 < version <= len(MIGRATIONS):
        return [f"no memctl schema (version {version})"]
    return []
