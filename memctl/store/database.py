"""The one connection to memctl's SQLite file: apsw, WAL, sqlite-vec, migrations.

Every write goes through ``atomic()``: the outermost level is ``BEGIN
IMMEDIATE`` (so a writer waits for the lock up front instead of failing
half-way), nested levels are savepoints.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from memctl.config.files import home_problem, open_private
from memctl.errors import DatabaseBusyError, EmbedderMismatchError, StoreError
from memctl.store import cjk
from memctl.store.migrations import MIGRATIONS

Row = dict[str, Any]
# meta keys tracking vector writes for the vector index: a counter of every write, the
# generation up to which changes are not journaled one by one, and the journal.
VECTORS_GENERATION, VECTORS_REWRITTEN = "vectors_generation", "vectors_rewritten"
# The full-text indexes: a deleted row leaves its terms in old segments until they merge.
MEMORIES_FTS, MESSAGES_FTS, QUESTIONS_FTS = "memories_fts", "messages_fts", "memory_questions_fts"
FTS_TABLES = (MESSAGES_FTS, MEMORIES_FTS, QUESTIONS_FTS)
VECTORS_CHANGES, VECTORS_JOURNAL = "vectors_changes", 256
# Less free space than this on the database's disk when SQLite fails to write: disk full.
DISK_FULL_BYTES = 1 << 20
# How long a process waits between tries at switching a new file to WAL mode.
WAL_RETRY_SECONDS = 0.01
# A store on a read-only disk is read as it is (``read_only``), unless it needs what only
# a write gives: a migration, or its WAL's changes folded in; in a folder this user cannot
# write, SQLite cannot keep the -wal and -shm files it reads through.
READ_ONLY_FOLDER = (
    "its folder cannot be written (SQLite keeps its -wal and -shm files there); copy the "
    "folder where it can be written and point MEMCTL_HOME there"
)
READ_ONLY_OLD = (
    "{path} is read-only and an older memctl wrote it; copy its folder where it can be "
    "written and point MEMCTL_HOME there"
)
# SQLite virtual-machine steps between two looks at the clock of a time limit (~1 ms of work).
LIMIT_STEPS = 10_000
# Pages read through a memory map of the file, not copied into each connection's cache: a
# full-text search walks long postings lists, and a resident process's child or a CLI
# process starts with an empty cache (docs/benchmarks.md, "Recall at 100,000 memories
# plus 1,000,000 messages: the resident child"). SQLite caps it at its own maximum.
MMAP_BYTES = 1 << 32
# A new store's schema in one script, what the migrations make of an empty file (written by
# scripts/gen_schema.py): ~8 ms of CPU, not ~17 ms for the migrations' ~160 statements, in
# each of the ~1,200 stores the test suite makes and in a user's first command.
SCHEMA_FILE = Path(__file__).with_name("schema.sql")


def sqlite_vec_path() -> str:
    """Path of the sqlite-vec loadable extension, found without importing the package.

    ``import sqlite_vec`` pulls in sqlite3 and numpy; the extension file is all we need.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StoreError("the sqlite-vec package is not installed (pip install sqlite-vec)")
    return str(Path(next(iter(spec.submodule_search_locations))) / "vec0")


def _sql_tracer(cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
    print(f"SQL: {sql.strip()} {bindings!r}", file=sys.stderr)
    return True


@contextmanager
def translated_errors(path: Path) -> Iterator[None]:
    """Turn SQLite failures a user can meet into one-line StoreErrors."""
    try:
        yield
    except apsw.BusyError:
        raise DatabaseBusyError(
            f"the database {path} is locked by another process; try again"
        ) from None
    except (apsw.NotADBError, apsw.CorruptError):
        raise StoreError(
            f"{path} is not a memctl database or is damaged: `memctl restore BACKUP` brings "
            "back a backup ($MEMCTL_HOME/backups), as `memctl doctor` says"
        ) from None
    except apsw.CantOpenError:
        folder = "" if os.access(path.parent, os.W_OK) else f": {READ_ONLY_FOLDER}"
        raise StoreError(f"cannot open the database {path}{folder}") from None
    except apsw.InterruptError:
        raise StoreError(f"a read of {path} ran past its time limit and was stopped") from None
    except apsw.ReadOnlyError:
        raise StoreError(f"the database {path} is read-only") from None
    except apsw.FullError:
        raise StoreError(f"disk full: no space left on the disk holding {path}") from None
    except apsw.IOError as exc:
        if _disk_full(path):
            raise StoreError(f"disk full: no space left on the disk holding {path}") from None
        raise StoreError(f"cannot read or write the database {path}: {exc}") from None


def _disk_full(path: Path) -> bool:
    """Whether the disk holding ``path`` has no room for another page (SQLite says only
    "disk I/O error" when a write into its shared memory or journal fails for want of it)."""
    import shutil  # here: it loads the compression modules, ~3 ms of every command

    try:
        return shutil.disk_usage(path.parent).free < DISK_FULL_BYTES
    except OSError:
        return False


class Database:
    """A memctl database file. Use ``Database.open`` and close it (or use ``with``)."""

    def __init__(
        self, connection: apsw.Connection, path: Path, busy_timeout_ms: int = 5000
    ) -> None:
        self.connection = connection
        self.path = path
        # the data directory whose keys the store's digests are made with (migrations): the
        # file's folder, but a backup's is the store's (``backups/`` holds no key)
        self.home = path.parent
        self._depth = 0
        self._busy_timeout_ms = busy_timeout_ms
        self._readers: dict[int, Database] = {}
        self.frozen = False  # opened read-only: its folder (a read-only disk) takes no write

    @classmethod
    def open(cls, path: Path, busy_timeout_ms: int = 5000, home: Path | None = None) -> Database:
        """Open (creating if needed, private to this user) and migrate the database, whose
        data directory is ``home`` (default: its folder)."""
        problem = home_problem(path.parent)  # another user's, or every user's to write in
        if problem:
            raise StoreError(problem)
        with translated_errors(path):
            frozen = read_only(path)
            if not frozen:
                _create_private(path)
            connection = _connect(path, frozen)
            connection.setbusytimeout(busy_timeout_ms)
            connection.enable_load_extension(True)
            connection.load_extension(sqlite_vec_path())
            connection.enable_load_extension(False)
            if os.environ.get("MEMCTL_DEBUG_SQL"):
                connection.exec_trace = _sql_tracer
            db = cls(connection, path, busy_timeout_ms)
            db.home = home or path.parent
            connection.execute("PRAGMA foreign_keys = ON")
            connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
            if not frozen:
                _use_wal(connection, busy_timeout_ms)
            # after the first read: on a file that is no database, it fails less clearly
            cjk.register(connection)
            db.frozen = frozen
            if frozen and db._schema_version() != len(MIGRATIONS):
                raise StoreError(READ_ONLY_OLD.format(path=path))
            db.migrate()
        return db

    def reader(self, lane: int = 0) -> Database:
        """A second connection to the same file (opened once per ``lane``, migrated already),
        for reads of plain and full-text tables in another thread (one per lane): one
        connection serves one statement at a time, and a statement waiting for it waits
        long. While this connection is in a transaction, itself: the other would not see
        what it wrote."""
        if self.connection.in_transaction:
            return self
        if lane not in self._readers:
            with translated_errors(self.path):
                connection = _connect(self.path, self.frozen)
                connection.setbusytimeout(self._busy_timeout_ms)
                cjk.register(connection)
                connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
            if os.environ.get("MEMCTL_DEBUG_SQL"):
                connection.exec_trace = _sql_tracer
            self._readers[lane] = Database(connection, self.path, self._busy_timeout_ms)
        return self._readers[lane]

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()
        self.connection.close()

    def set_busy_timeout(self, busy_timeout_ms: int) -> None:
        """How long a statement waits for another process's lock before giving up."""
        self.connection.setbusytimeout(busy_timeout_ms)
        self._busy_timeout_ms = busy_timeout_ms
        for reader in self._readers.values():
            reader.set_busy_timeout(busy_timeout_ms)

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def atomic(self) -> Iterator[Database]:
        """A transaction (outermost) or savepoint (nested); rolled back on any exception."""
        name = f"sp{self._depth}"
        with translated_errors(self.path):
            self.connection.execute("BEGIN IMMEDIATE" if self._depth == 0 else f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield self
        except BaseException:
            self._depth -= 1
            if self._depth == 0:
                self.connection.execute("ROLLBACK")
            else:
                self.connection.execute(f"ROLLBACK TO {name}; RELEASE {name}")
            raise
        self._depth -= 1
        with translated_errors(self.path):
            self.connection.execute("COMMIT" if self._depth == 0 else f"RELEASE {name}")

    @contextmanager
    def without_fsync(self) -> Iterator[Database]:
        """Commits inside skip the fsync (WAL ``synchronous = NORMAL``): for writes whose loss
        in a power cut costs nothing, such as access counts. The database stays consistent."""
        self.execute("PRAGMA synchronous = NORMAL")
        try:
            yield self
        finally:
            self.execute("PRAGMA synchronous = FULL")

    @contextmanager
    def time_limit(self, seconds: float) -> Iterator[Database]:
        """Statements inside stop with a StoreError once ``seconds`` have passed (the
        viewer's pages: a slow read must not hold a server thread)."""
        deadline = time.monotonic() + seconds
        self.connection.set_progress_handler(lambda: time.monotonic() > deadline, LIMIT_STEPS)
        try:
            yield self
        finally:
            self.connection.set_progress_handler(None)

    @contextmanager
    def reading(self) -> Iterator[Database]:
        """A read transaction: every query inside sees one snapshot; takes no write lock."""
        if self._depth:
            yield self
            return
        with translated_errors(self.path):
            self.connection.execute("BEGIN")
        self._depth += 1
        try:
            yield self
        finally:
            self._depth -= 1
            self.connection.execute("COMMIT")

    def execute(self, sql: str, params: Any = ()) -> None:
        with translated_errors(self.path):
            self.connection.execute(sql, params)

    def executemany(self, sql: str, rows: Any) -> None:
        with translated_errors(self.path):
            self.connection.executemany(sql, rows)

    def upsert(self, table: str, values: dict[str, Any], key: str = "id") -> None:
        """Insert a row, or update every other column of the row with the same ``key``."""
        names = list(values)
        updates = ", ".join(f"{n} = excluded.{n}" for n in names if n != key)
        self.execute(
            f"INSERT INTO {table}({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
            f"ON CONFLICT({key}) DO UPDATE SET {updates}",
            [values[n] for n in names],
        )

    def rows(self, sql: str, params: Any = ()) -> list[Row]:
        """All rows of a query as dicts keyed by column name."""
        with translated_errors(self.path):
            cursor = self.connection.execute(sql, params)
            try:
                names = [d[0] for d in cursor.get_description()]
            except apsw.ExecutionCompleteError:
                return []
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def tuples(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        """All rows as plain tuples: for bulk reads, where a dict per row costs too much."""
        with translated_errors(self.path):
            return self.connection.execute(sql, params).fetchall()

    def batches(
        self, sql: str, params: Any = (), size: int = 8192
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows as plain tuples, ``size`` at a time: for reads too big to hold at once."""
        with translated_errors(self.path):
            cursor = self.connection.execute(sql, params)
            while batch := list(itertools.islice(cursor, size)):
                yield batch

    def value(self, sql: str, params: Any = ()) -> Any:
        """The first column of the first row, or None."""
        with translated_errors(self.path):
            row = self.connection.execute(sql, params).fetchone()
        return None if row is None else row[0]

    @property
    def changes(self) -> int:
        return self.connection.changes()

    def last_rowid(self) -> int:
        return self.connection.last_insert_rowid()

    def migrate(self) -> None:
        """Apply every migration newer than ``PRAGMA user_version``, all in one transaction:
        a new store is made with one commit (one fsync, not one a migration: half the time
        of a first command), and a failed upgrade leaves the store as it was. A new store
        (version 0) is made from ``SCHEMA_FILE``, which brings it to the version it holds;
        the migrations after that one, if any, follow.

        Safe with any number of processes opening a new store at once: the version is
        read again inside the ``BEGIN IMMEDIATE``, so one writer applies the migrations
        and the others, waiting for the lock, find them applied.
        """
        if self._schema_version() == len(MIGRATIONS):
            return
        with self.atomic():
            if self._schema_version() == 0:
                self.execute(SCHEMA_FILE.read_text(encoding="utf-8"))
            for version in range(self._schema_version(), len(MIGRATIONS)):
                MIGRATIONS[version](self)
                self.execute(f"PRAGMA user_version = {version + 1}")

    def _schema_version(self) -> int:
        version = int(self.value("PRAGMA user_version"))
        if version > len(MIGRATIONS):
            raise StoreError(
                f"{self.path} was written by a newer memctl (schema {version}); upgrade memctl"
            )
        return version

    def meta(self, key: str) -> str | None:
        return self.value("SELECT value FROM meta WHERE key = ?", (key,))

    def set_meta(self, key: str, value: str) -> None:
        self.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def note_vector_write(self, changed: int | None = None, everything: bool = False) -> None:
        """Record a change to ``memories_vec`` (inside the writer's transaction), so that the
        vector index (store/vector_index.py) catches up: an append past the highest rowid
        (the default), the vector of rowid ``changed`` replaced or removed, or
        ``everything`` (a new model). Changed rowids are journaled in ``meta``, the latest
        VECTORS_JOURNAL of them; older ones only move ``vectors_rewritten`` on.
        """
        generation = int(self.meta(VECTORS_GENERATION) or 0) + 1
        self.set_meta(VECTORS_GENERATION, str(generation))
        if everything:
            self.set_meta(VECTORS_REWRITTEN, str(generation))
            self.set_meta(VECTORS_CHANGES, "[]")
        elif changed is not None:
            journal = json.loads(self.meta(VECTORS_CHANGES) or "[]") + [[generation, changed]]
            if len(journal) > VECTORS_JOURNAL:
                forgotten, journal = journal[:-VECTORS_JOURNAL], journal[-VECTORS_JOURNAL:]
                self.set_meta(VECTORS_REWRITTEN, str(forgotten[-1][0]))
            self.set_meta(VECTORS_CHANGES, json.dumps(journal))

    def vector_model(self) -> tuple[str, int] | None:
        """(model name, dimension) that made this store's vectors, if any were made."""
        name, dim = self.meta("embed_model"), self.meta("embed_dim")
        return (name, int(dim)) if name and dim else None

    def ensure_vector_model(self, name: str, dim: int) -> None:
        """Create the vector table for this model, or refuse if another model made the vectors."""
        recorded = self.vector_model()
        if recorded == (name, dim):
            return
        if recorded is not None:
            raise EmbedderMismatchError(
                f"this store's vectors were made by {recorded[0]} ({recorded[1]}-d), not the "
                f"configured {name} ({dim}-d); run `memctl reembed` to rebuild them all, "
                "or change the embedder setting back"
            )
        with self.atomic():
            self.create_vector_table(name, dim)

    def create_vector_table(self, name: str, dim: int) -> None:
        """(Re)create an empty vector table for ``dim``-d vectors of model ``name``."""
        with self.atomic():
            self.execute("DROP TABLE IF EXISTS memories_vec")
            for table in ("message_vectors", "call_vectors"):  # another model's: made again
                if self.value("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)):
                    self.execute(f"DELETE FROM {table}")
            self.execute(
                f"CREATE VIRTUAL TABLE memories_vec USING vec0("
                f"embedding float[{int(dim)}] distance_metric=cosine)"
            )
            self.set_meta("embed_model", name)
            self.set_meta("embed_dim", str(int(dim)))
            self.execute("DELETE FROM maintain_compared")  # every vector is new
            self.note_vector_write(everything=True)


def _use_wal(connection: apsw.Connection, busy_timeout_ms: int) -> None:
    """Switch the file to WAL mode (once per file, remembered in it).

    The switch needs the file to itself for a moment; a process that meets
    another one switching (or reading a new file in its old mode) waits up to
    the busy timeout and tries again.
    """
    deadline = time.monotonic() + busy_timeout_ms / 1000
    while True:
        try:
            if _journal_mode(connection, "PRAGMA journal_mode") == "wal":
                return
            if _journal_mode(connection, "PRAGMA journal_mode = WAL") == "wal":
                return
        except apsw.BusyError:
            pass
        if time.monotonic() >= deadline:
            raise apsw.BusyError("cannot switch the database to WAL mode")
        time.sleep(WAL_RETRY_SECONDS)


def _journal_mode(connection: apsw.Connection, pragma: str) -> str:
    row = connection.execute(pragma).fetchone()
    return str(row[0]) if row else ""


def read_only(path: Path) -> bool:
    """Whether the store is a file on a disk mounted read-only (a snapshot, a backup
    disk), all of it in the file (no WAL beside it): nothing can change it while it is
    read. A folder that only this user cannot write is not: its owner may write it."""
    wal = path.with_name(path.name + "-wal")
    if not path.is_file() or wal.exists():
        return False
    try:
        return bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _connect(path: Path, frozen: bool) -> apsw.Connection:
    """A connection to the store; ``frozen``: read-only, told that nothing changes the file
    (SQLite then needs no -shm file beside it, which that folder could not hold)."""
    if not frozen:
        return apsw.Connection(str(path))
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    return apsw.Connection(f"{path.as_uri()}?immutable=1", flags=flags)


def _create_private(path: Path) -> None:
    """Create the data directory (0700) and database file (0600) before SQLite does."""
    try:
        if not path.exists():
            os.close(open_private(path, os.O_CREAT | os.O_WRONLY))
    except OSError as exc:
        raise StoreError(f"cannot create {path}: {exc.strerror}") from None
