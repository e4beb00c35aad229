"""SQL for sync: this machine's host id, the index of the repository's files as last read
or written, the memories withheld from sync, and which memories changed since an export
(their triples too)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import astuple, dataclass
from typing import Any

from memctl.model import BOOKKEEPING, Visibility, new_id, now_iso
from memctl.store.database import Database

HOST_ID = "host_id"
HOST_ID_CHARS = 16
SYNC_KIND = "sync"
# The word a sync's writes log as their source (a create) or reason (an update) (sync/apply.py).
SYNC_SOURCE = "sync"
READ_COMMIT = "sync_read_commit"
# The key of the update event a sync logs when another machine's tombstone of a memory it
# removed for good marks one deleted here (its value: that host): the text is to be
# forgotten here too (``maintain.forgetting.forget_pulled``).
FORGOTTEN_BY = "forgotten_by"
# The key of the update event a sync logs when another machine's version that took text
# out (a redaction: ``redacted: true`` in its file) replaces the text here (its value: that
# host): the old text is to be taken out here too (``maintain.redaction.redact_pulled``).
REDACTED_BY = "redacted_by"
# The key of an update event of this machine that took text out of a memory (a redaction,
# a forget putting a merged memory back): its next file says so (``sync.outgoing``).
TEXT_WITHDRAWN = "text_withdrawn"


@dataclass(frozen=True)
class SyncFile:
    """One memory file of the repository: whose version, of when, in which state."""

    path: str
    memory_id: str
    host_id: str
    updated_at: str
    state: str
    blob: str  # the git blob id of the file's content
    # What its ``mac`` line signs (``provenance.file_digest``) and that line's MAC, None in
    # a file without one (an older memctl's, or a hand-made one): checked against the key
    # of the host it names when trust is decided (``provenance.unproven``).
    digest: str | None = None
    mac: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        """The order versions are resolved in: newest ``updated_at``, ties by host id."""
        return self.updated_at, self.host_id


_COLUMNS = "path, memory_id, host_id, updated_at, state, blob, digest, mac"


def host_id(db: Database) -> str:
    """This machine's id, made on first use and kept in the database (so it moves with it)."""
    with db.atomic():
        found = db.meta(HOST_ID)
        if not found:
            found = new_id()[:HOST_ID_CHARS]
            db.set_meta(HOST_ID, found)
    return found


def indexed_files(db: Database) -> dict[str, SyncFile]:
    """Every file of the index, by path."""
    return {row[0]: SyncFile(*row) for row in db.tuples(f"SELECT {_COLUMNS} FROM sync_files")}


def files_at(db: Database, paths: Iterable[str]) -> dict[str, SyncFile]:
    """The indexed files at these paths, by path."""
    rows = db.tuples(
        f"SELECT {_COLUMNS} FROM sync_files WHERE path IN (SELECT value FROM json_each(?))",
        (json.dumps(list(paths)),),
    )
    return {row[0]: SyncFile(*row) for row in rows}


def files_of(db: Database, memory_ids: Iterable[str]) -> dict[str, list[SyncFile]]:
    """The indexed files of these memories, by memory id."""
    found: dict[str, list[SyncFile]] = {}
    rows = db.tuples(
        f"SELECT {_COLUMNS} FROM sync_files WHERE memory_id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(memory_ids)),),
    )
    for row in rows:
        found.setdefault(row[1], []).append(SyncFile(*row))
    return found


def foreign_hosts(db: Database, memory_ids: Iterable[str]) -> dict[str, str]:
    """Memories whose text came from the sync repository, with the host its file names:
    those whose text a sync wrote last (created or rewritten from a file, whatever host
    id the file claims: a file naming this machine's own id is no less foreign, as this
    machine never reads its own words back), and those known only from other hosts'
    files."""
    ids = list(memory_ids)
    own = db.meta(HOST_ID) or ""
    found: dict[str, str] = {}
    for memory_id, files in files_of(db, ids).items():
        if files and all(f.host_id != own for f in files):
            found[memory_id] = max(files, key=lambda f: f.key).host_id
    found.update(synced_texts(db, ids))
    return found


def synced_texts(db: Database, memory_ids: list[str]) -> dict[str, str]:
    """memory id -> host, for the memories whose latest text came in by a sync (a create
    from a file, or an update whose ``after`` holds content, logged with its host)."""
    rows = db.tuples(
        "SELECT e.memory_id, json_extract(e.data, '$.host') FROM events e "
        "WHERE e.id IN (SELECT max(x.id) FROM events x "
        "  WHERE x.memory_id IN (SELECT value FROM json_each(?)) AND (x.action IN "
        "  ('create', 'import') OR (x.action = 'update' AND "
        "  json_extract(x.data, '$.after.content') IS NOT NULL)) GROUP BY x.memory_id) "
        "AND json_extract(e.data, '$.host') IS NOT NULL "
        "AND ? IN (json_extract(e.data, '$.source'), json_extract(e.data, '$.reason'))",
        (json.dumps(memory_ids), SYNC_SOURCE),
    )
    return {str(memory_id): str(host) for memory_id, host in rows}


def claimed_files(db: Database, hosts: dict[str, str]) -> dict[str, tuple[SyncFile, str | None]]:
    """memory id -> the newest indexed file of the host ``hosts`` names for it, and the
    memory's ``updated_at`` here (None when it is not here)."""
    rows = db.tuples(
        f"SELECT {', '.join(f'f.{c}' for c in _COLUMNS.split(', '))}, m.updated_at "
        "FROM sync_files f JOIN json_each(?) j ON f.memory_id = j.key AND f.host_id = j.value "
        "LEFT JOIN memories m ON m.id = f.memory_id ORDER BY f.updated_at",
        (json.dumps(hosts),),
    )
    return {row[1]: (SyncFile(*row[:-1]), row[-1]) for row in rows}


def hosts(db: Database) -> dict[str, int]:
    """Every machine whose files the repository brought in (this one too), with how many
    memories its files hold."""
    rows = db.tuples("SELECT host_id, count(DISTINCT memory_id) FROM sync_files GROUP BY host_id")
    return {str(host): int(count) for host, count in rows}


def put_files(db: Database, files: Iterable[SyncFile]) -> None:
    db.executemany(
        f"INSERT OR REPLACE INTO sync_files({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [astuple(f) for f in files],
    )


def drop_files(db: Database, paths: Iterable[str]) -> None:
    db.executemany("DELETE FROM sync_files WHERE path = ?", [(p,) for p in paths])


def move_files(db: Database, moves: dict[str, str | None]) -> None:
    """Give indexed files new paths (the repository's layout changed); None forgets one."""
    db.executemany(
        "DELETE FROM sync_files WHERE path = ?", [(p,) for p, n in moves.items() if not n]
    )
    db.executemany(
        "UPDATE OR REPLACE sync_files SET path = ? WHERE path = ?",
        [(n, p) for p, n in moves.items() if n],
    )
    db.set_meta(READ_COMMIT, "{}")  # its paths are another tree's now


def set_read_commit(db: Database, commit: str | None, bad: list[tuple[str, str]]) -> None:
    """Record that the index now holds exactly the good files of ``commit``'s tree (in
    the transaction that made it so) and ``bad`` its bad ones (path, why), with the
    index's size: a later change of the index by anything else shows, and
    ``read_commit`` no longer trusts the commit."""
    count = db.value("SELECT count(*) FROM sync_files")
    db.set_meta(READ_COMMIT, json.dumps({"commit": commit, "files": count, "bad": bad}))


def read_commit(db: Database) -> tuple[str, list[tuple[str, str]]] | None:
    """The commit whose files the index holds, when it still does, and its bad files."""
    found = json.loads(db.meta(READ_COMMIT) or "{}")
    count = db.value("SELECT count(*) FROM sync_files")
    if not found.get("commit") or found.get("files") != count:
        return None
    return str(found["commit"]), [(str(p), str(w)) for p, w in found.get("bad", [])]


def clear_index(db: Database) -> None:
    """Forget the index (another repository): the next sync reads every file again."""
    db.execute("DELETE FROM sync_files")
    db.set_meta(READ_COMMIT, "{}")


def withheld(db: Database, memory_ids: Iterable[str]) -> set[str]:
    rows = db.tuples(
        "SELECT memory_id FROM sync_withheld WHERE memory_id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(memory_ids)),),
    )
    return {r[0] for r in rows}


def set_withheld(db: Database, memory_ids: Iterable[str], on: bool) -> None:
    """Withhold memories from sync (or release them): even ``sync.include: all`` skips them."""
    ids = [(i,) for i in memory_ids]
    if on:
        at = now_iso()
        db.executemany(
            "INSERT OR IGNORE INTO sync_withheld(memory_id, at) VALUES (?, ?)",
            [(i, at) for (i,) in ids],
        )
    else:
        db.executemany("DELETE FROM sync_withheld WHERE memory_id = ?", ids)


def set_visibility(db: Database, memory_ids: Iterable[str], visibility: Visibility) -> None:
    db.execute(
        "UPDATE memories SET visibility = ? WHERE id IN (SELECT value FROM json_each(?))",
        (str(visibility), json.dumps(list(memory_ids))),
    )


def shareable_ids(db: Database, include_all: bool, memory_ids: list[str] | None) -> set[str]:
    """Of these memories (None: all), the ones sync may publish: shared ones, or with
    ``include_all`` every one the user has not withheld."""
    condition = "1" if include_all else "m.visibility = 'shared'"
    ids_clause, params = "", []
    if memory_ids is not None:
        ids_clause, params = (
            " AND m.id IN (SELECT value FROM json_each(?))",
            [json.dumps(memory_ids)],
        )
    rows = db.tuples(
        f"SELECT m.id FROM memories m WHERE {condition}{ids_clause} "
        "AND m.id NOT IN (SELECT memory_id FROM sync_withheld)",
        params,
    )
    return {r[0] for r in rows}


def existing_ids(db: Database, memory_ids: Iterable[str]) -> set[str]:
    rows = db.tuples(
        "SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(memory_ids)),),
    )
    return {r[0] for r in rows}


def last_event_id(db: Database) -> int:
    return int(db.value("SELECT coalesce(max(id), 0) FROM events"))


# Events that change nothing a sync file holds: an update of ``BOOKKEEPING`` fields alone
# (maintain marking an episode consolidated), a link that found its edge there at that
# weight (maintain consolidating again an episode another machine consolidated).
UNSENT = (
    "(action = 'update' AND EXISTS (SELECT 1 FROM json_each(data, '$.after')) "
    "AND NOT EXISTS (SELECT 1 FROM json_each(data, '$.after') "
    "WHERE key NOT IN (SELECT value FROM json_each(?)))) "
    "OR (action = 'link' AND json_extract(data, '$.existed') "
    "AND json_extract(data, '$.weight_before') = json_extract(data, '$.weight'))"
)


def changed_since(db: Database, after_event: int) -> set[str]:
    """Memories something other than a sync changed (or linked) after an event: a change
    no file holds (``UNSENT``) is none, so this machine sends no version of it."""
    rows = db.tuples(
        "SELECT DISTINCT memory_id FROM events WHERE id > ? AND memory_id IS NOT NULL "
        "AND action != 'access' AND (run_id IS NULL OR run_id NOT IN "
        f"(SELECT id FROM runs WHERE kind = ?)) AND NOT ({UNSENT})",
        (after_event, SYNC_KIND, json.dumps(sorted(BOOKKEEPING))),
    )
    return {r[0] for r in rows}


def restated_here(db: Database, own_host: str, after_generation: int) -> set[str]:
    """Memories whose triples a re-read by newer entity rules changed after the graph's
    generation ``after_generation`` (store/graph.py ``GENERATION``) and whose winning file
    this host wrote: its file goes out again (another host's is that host's to send)."""
    rows = db.tuples(
        "SELECT g.memory_id FROM graph_indexed g WHERE g.restated > ? AND ? = (SELECT "
        "f.host_id FROM sync_files f WHERE f.memory_id = g.memory_id "
        "ORDER BY f.updated_at DESC, f.host_id DESC LIMIT 1)",
        (after_generation, own_host),
    )
    return {r[0] for r in rows}


def paths_here(db: Database, own_host: str) -> set[str]:
    """Memories whose source names a path (an imported file's) and whose winning file this
    host wrote: sent once more by a memctl whose files name the file, not its path
    (sync/memfile.py ``shared_source``), so the path leaves the repository's head."""
    return _won_here(db, own_host, "m.source LIKE '%/%'", ())


# A memory's source naming a session by 32 hex digits (sync/memfile.py ``DERIVED_SESSION``).
DERIVED_SOURCE_GLOB = "session:" + "[0-9a-f]" * 32 + "*"


def session_ids_here(db: Database, own_host: str) -> set[str]:
    """Memories whose source names a session by 32 hex digits (capture's SHA-256 of a
    file's path or first message) and whose winning file this host wrote: sent once more
    by a memctl whose files name it keyed (sync/memfile.py ``shared_source``), so the
    digest leaves the repository's head."""
    return _won_here(db, own_host, "m.source GLOB ?", (DERIVED_SOURCE_GLOB,))


def unsigned_here(db: Database, own_host: str) -> set[str]:
    """Memories whose winning file this host wrote without a MAC (an older memctl): sent
    once more, signed, by the first sync of a memctl that signs its files."""
    return _won_here(
        db, own_host, "m.id IN (SELECT memory_id FROM sync_files WHERE mac IS NULL)", ()
    )


def _won_here(db: Database, own_host: str, condition: str, params: tuple[str, ...]) -> set[str]:
    """Memories meeting ``condition`` (over ``memories m``) whose winning file, the latest
    of their sync files, ``own_host`` wrote."""
    rows = db.tuples(
        f"SELECT m.id FROM memories m WHERE {condition} AND ? = (SELECT f.host_id "
        "FROM sync_files f WHERE f.memory_id = m.id "
        "ORDER BY f.updated_at DESC, f.host_id DESC LIMIT 1)",
        (*params, own_host),
    )
    return {r[0] for r in rows}


def own_files_under(db: Database, own_host: str, prefix: str) -> set[str]:
    """Memories with a file of this host's whose path begins with ``prefix`` (a scope's
    directory an older memctl named otherwise: ``sync.layout.shared_scope``)."""
    rows = db.tuples(
        "SELECT DISTINCT memory_id FROM sync_files WHERE host_id = ? AND substr(path, 1, ?) = ?",
        (own_host, len(prefix), prefix),
    )
    return {r[0] for r in rows}


def undone_sync_imports(db: Database, memory_ids: Iterable[str]) -> set[str]:
    """Of these memories, those whose latest change is the undo of a sync run."""
    rows = db.tuples(
        "SELECT e.memory_id FROM events e WHERE e.memory_id IN (SELECT value FROM json_each(?)) "
        "AND e.id = (SELECT max(id) FROM events WHERE memory_id = e.memory_id "
        "AND action != 'access') AND json_extract(e.data, '$.reason') = 'undo' "
        "AND json_extract(e.data, '$.undo_of') IN (SELECT id FROM runs WHERE kind = ?)",
        (json.dumps(list(memory_ids)), SYNC_KIND),
    )
    return {r[0] for r in rows}


def forgotten_by_sync(db: Database) -> list[str]:
    """The memories still here that a sync marked deleted from another machine's tombstone
    of a memory removed for good: deleted, their last change the update saying
    ``FORGOTTEN_BY`` (a restore since is a change)."""
    rows = db.tuples(
        "SELECT m.id FROM memories m WHERE m.state = 'deleted' AND json_extract((SELECT "
        "e.data FROM events e WHERE e.memory_id = m.id AND e.action IN ('update', 'state') "
        "ORDER BY e.id DESC LIMIT 1), ?) IS NOT NULL",
        (f"$.{FORGOTTEN_BY}",),
    )
    return sorted(row[0] for row in rows)


def withdrawn_at(db: Database, memory_ids: Iterable[str]) -> dict[str, str]:
    """Memory id -> when its text was last taken out here (``TEXT_WITHDRAWN``), for those
    of ``memory_ids`` it ever was."""
    rows = db.tuples(
        "SELECT memory_id, max(at) FROM events WHERE action = 'update' AND memory_id IN "
        "(SELECT value FROM json_each(?)) AND json_extract(data, ?) IS NOT NULL "
        "GROUP BY memory_id",
        (json.dumps(list(memory_ids)), f"$.{TEXT_WITHDRAWN}"),
    )
    return {row[0]: row[1] for row in rows}


def redacted_by_sync(db: Database) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The ``before`` and ``after`` of each update a sync made from another machine's
    version that took text out (``REDACTED_BY``); only the sync runs' events are read."""
    rows = db.tuples(
        "SELECT json_extract(data, '$.before'), json_extract(data, '$.after') FROM events "
        "WHERE run_id IN (SELECT id FROM runs WHERE kind = ?) AND action = 'update' "
        "AND json_extract(data, ?) IS NOT NULL ORDER BY id",
        (SYNC_KIND, f"$.{REDACTED_BY}"),
    )
    return [(json.loads(before or "{}"), json.loads(after or "{}")) for before, after in rows]
