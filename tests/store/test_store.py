"""The store on real SQLite files: schema, transactions, permissions, locking, FTS safety."""

from __future__ import annotations

import stat
from pathlib import Path

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memctl.context import Context
from memctl.errors import AmbiguousIdError, EmbedderMismatchError, NotFoundError, StoreError
from memctl.memories import operations as memories
from memctl.model import Action, Memory, now_iso
from memctl.store import memories as store
from memctl.store.database import Database
from memctl.store.events import log_event
from memctl.store.fts import fts_query
from memctl.store.memories import MemoryFilter
from memctl.store.migrations import MIGRATIONS
from tests.conftest import store_at_version
from tests.fakes import HashEmbedder


def test_open_creates_a_private_migrated_wal_database(home: Path) -> None:
    db = Database.open(home / "memctl.db")
    assert db.value("PRAGMA user_version") == len(MIGRATIONS)
    assert db.value("PRAGMA journal_mode") == "wal"
    tables = {r["name"] for r in db.rows("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"memories", "memories_fts", "relations", "events", "meta"} <= tables
    db.close()
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    for path in home.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_wal_and_shm_files_are_private_too(ctx: Context) -> None:
    memories.remember(ctx, "a fact to force a write to the WAL")
    files = list(ctx.settings.home.glob("memctl.db*"))
    assert {p.name for p in files} >= {"memctl.db", "memctl.db-wal"}
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in files)


def test_reopening_keeps_data_and_does_not_migrate_twice(ctx: Context) -> None:
    memory = memories.remember(ctx, "persisted across opens")
    ctx.close()
    again = Database.open(ctx.settings.db_path)
    assert store.get_memory(again, memory.id).content == "persisted across opens"
    assert again.value("PRAGMA user_version") == len(MIGRATIONS)


def test_a_database_from_a_newer_memctl_is_refused(home: Path) -> None:
    home.mkdir(mode=0o700)
    raw = apsw.Connection(str(home / "memctl.db"))
    raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    raw.close()
    with pytest.raises(StoreError, match="newer memctl"):
        Database.open(home / "memctl.db")


def test_a_file_that_is_not_a_database_is_a_clear_error(home: Path) -> None:
    home.mkdir(mode=0o700)
    (home / "memctl.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a memctl database"):
        Database.open(home / "memctl.db")


def test_a_locked_database_is_a_clear_error_and_loses_nothing(ctx: Context) -> None:
    kept = memories.remember(ctx, "written before the lock")
    other = apsw.Connection(str(ctx.settings.db_path))
    other.execute("BEGIN IMMEDIATE")
    impatient = Database.open(ctx.settings.db_path, busy_timeout_ms=50)
    with pytest.raises(StoreError, match="locked"), impatient.atomic():
        pass
    other.execute("ROLLBACK")
    assert store.get_memory(impatient, kept.id) is not None


def test_atomic_rolls_back_everything_on_error(ctx: Context) -> None:
    db = ctx.db
    with pytest.raises(RuntimeError), db.atomic():
        store.insert_memory(db, Memory(content="outer"), None)
        with db.atomic():
            store.insert_memory(db, Memory(content="inner"), None)
        raise RuntimeError("boom")
    assert store.list_memories(db, MemoryFilter(), None) == []


def test_nested_savepoint_rolls_back_alone(ctx: Context) -> None:
    db = ctx.db
    with db.atomic():
        store.insert_memory(db, Memory(content="kept"), None)
        with pytest.raises(RuntimeError), db.atomic():
            store.insert_memory(db, Memory(content="dropped"), None)
            raise RuntimeError("inner failure")
    assert [m.content for m in store.list_memories(db, MemoryFilter(), None)] == ["kept"]


def test_events_are_append_only(ctx: Context) -> None:
    memories.remember(ctx, "something that makes an event")
    with pytest.raises(apsw.ConstraintError, match="append-only"):
        ctx.db.execute("UPDATE events SET action = 'tampered'")
    with pytest.raises(apsw.ConstraintError, match="append-only"):
        ctx.db.execute("DELETE FROM events")
    assert ctx.db.value("SELECT count(*) FROM events") == 1


HOSTILE = [
    '"',
    '""',
    "'",
    "*",
    "-",
    "a:b",
    "content:evil",
    "NEAR(a b)",
    "NEAR",
    "AND",
    "OR",
    "NOT",
    "a AND",
    "(",
    ")",
    "((a)",
    '"unbalanced',
    "^start",
    "x*",
    "-neg",
    "{col}:x",
    "a OR OR b",
    "\\",
    "%",
    '";"',
    "DROP TABLE memories;--",
    "\x01\x02",
    "😀",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_fts_queries_never_raise(ctx: Context, query: str) -> None:
    memories.remember(ctx, "NEAR the door AND the window: (careful) with * and - signs")
    store.fts_search(ctx.db, query, 10, MemoryFilter())


def test_fts_operators_are_searched_as_words(ctx: Context) -> None:
    memory = memories.remember(ctx, "use NOT gates and OR gates")
    hits = store.fts_search(ctx.db, "NOT", 10, MemoryFilter())
    assert [h[0] for h in hits] == [memory.id]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_makes_a_valid_fts_query(text: str) -> None:
    db = _SCRATCH.get("db")
    if db is None:
        import tempfile

        db = _SCRATCH["db"] = Database.open(Path(tempfile.mkdtemp()) / "fts.db")
        store.insert_memory(db, Memory(content="some searchable words here"), None)
    store.fts_search(db, text, 5, MemoryFilter())
    query = fts_query(text)
    assert query is None or query.count('"') % 2 == 0


_SCRATCH: dict[str, Database] = {}


def test_fts_matches_without_diacritics(ctx: Context) -> None:
    memory = memories.remember(ctx, "Meeting at the café in Zürich")
    assert [h[0] for h in store.fts_search(ctx.db, "cafe zurich", 5, MemoryFilter())] == [memory.id]


def test_id_prefixes_resolve_uniquely_or_fail_listing_candidates(ctx: Context) -> None:
    db = ctx.db
    for suffix in ("1" * 28, "2" * 28):
        store.insert_memory(db, Memory(id="abcd" + suffix, content=suffix), None)
    assert store.resolve_id(db, "abcd1") == "abcd" + "1" * 28
    with pytest.raises(AmbiguousIdError) as caught:
        store.resolve_id(db, "abcd")
    assert "abcd1111" in str(caught.value) and "abcd2222" in str(caught.value)
    with pytest.raises(NotFoundError):
        store.resolve_id(db, "ffff")


def test_vectors_of_another_model_are_refused(ctx: Context) -> None:
    memories.remember(ctx, "made with the hash model")
    other = Context(ctx.settings, embedder=HashEmbedder(dim=32, name="test:other"))
    with pytest.raises(EmbedderMismatchError, match="memctl reembed"):
        memories.remember(other, "would mix two models")
    other.close()
    assert len(store.list_memories(ctx.db, MemoryFilter(), None)) == 1


def test_a_memory_reads_back_field_for_field_by_every_reader(ctx: Context) -> None:
    from memctl.model import Category, Kind, State, Tier, Visibility

    memory = Memory(
        "a memory with every field set",
        l0_abstract="abstract",
        kind=Kind.PINNED,
        category=Category.CASES,
        tier=Tier.CORE,
        state=State.CONTRADICTED,
        importance=0.9,
        access_count=3,
        last_accessed_at="2026-01-02T03:04:05.000Z",
        invalidated_at="2026-01-03T00:00:00.000Z",
        scope="project:x",
        visibility=Visibility.SHARED,
        tags=["deploy", "ünïcode"],
        session_id="s1",
        agent_id="agent",
    )
    store.insert_memory(ctx.db, memory, None)
    assert store.get_memory(ctx.db, memory.id) == memory
    assert store.get_memories(ctx.db, [memory.id]) == {memory.id: memory}
    assert store.list_memories(ctx.db, MemoryFilter(states=None), None) == [memory]
    assert store.same_content(ctx.db, memory.content_hash, "project:x") == memory
    read = store.get_memory(ctx.db, memory.id)
    assert read is not None and type(read.kind) is Kind and type(read.state) is State


def test_fts_matches_inflections_of_english_words(ctx: Context) -> None:
    memory = memories.remember(ctx, "Nate tried three new recipes and played chess all weekend")
    memories.remember(ctx, "the weekly report is due on Friday")
    for query in ("recipe", "plays", "playing chess"):
        assert [h[0] for h in store.fts_search(ctx.db, query, 5, MemoryFilter())] == [memory.id]


def test_word_counts_are_read_through_the_stemmed_index(ctx: Context) -> None:
    for text in ("one recipe", "two recipes", "a recipe book", "nothing else"):
        memories.remember(ctx, text)
    _, counts = store.word_document_counts(ctx.db, ["recipes", "recipe", "cooking"])
    assert counts == {"recipes": 3, "recipe": 3}
    assert store.indexed_terms(ctx.db, ["Played", "naïve"]) == {"Played": "plai", "naïve": "naiv"}


def test_an_upgrade_that_fails_midway_leaves_the_store_as_it_was(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The migrations a store lacks are applied in one transaction: one that fails takes
    the ones before it back, and the next open applies them all."""
    Database.open(home / "memctl.db").close()

    def adds_a_table(db: Database) -> None:
        db.execute("CREATE TABLE added_by_an_upgrade (id INTEGER PRIMARY KEY)")

    def fails(db: Database) -> None:
        raise StoreError("this migration fails")

    monkeypatch.setattr("memctl.store.database.MIGRATIONS", [*MIGRATIONS, adds_a_table, fails])
    with pytest.raises(StoreError, match="this migration fails"):
        Database.open(home / "memctl.db")
    raw = apsw.Connection(str(home / "memctl.db"))
    assert raw.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    added = "SELECT 1 FROM sqlite_master WHERE name = 'added_by_an_upgrade'"
    assert raw.execute(added).fetchall() == []
    raw.close()

    monkeypatch.setattr("memctl.store.database.MIGRATIONS", [*MIGRATIONS, adds_a_table])
    with Database.open(home / "memctl.db") as db:
        assert db.value("PRAGMA user_version") == len(MIGRATIONS) + 1
        assert db.rows("SELECT * FROM added_by_an_upgrade") == []


def test_an_older_store_is_reindexed_stemmed_on_open(home: Path) -> None:
    connection, old = store_at_version(home, 7)
    path = home / "memctl.db"
    memory = Memory(content="she shared her favourite recipes", created_at="2019-05-01T10:00:00Z")
    values = {k: v for k, v in memory.to_dict().items() if k != "stored_at"}
    values["tags"] = "[]"
    old.execute(
        f"INSERT INTO memories({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
        list(values.values()),
    )
    log_event(old, Action.CREATE, memory.id, {})  # a backfill: stored today, dated 2019
    assert store.fts_search(old, "recipe", 5, MemoryFilter()) == []
    connection.close()

    db = Database.open(path)
    assert db.value("PRAGMA user_version") == len(MIGRATIONS)
    hits = store.fts_search(db, "recipe", 5, MemoryFilter())
    found = [store.get_memory(db, h[0]) for h in hits]
    assert [m.content for m in found if m] == ["she shared her favourite recipes"]
    assert found[0] and found[0].stored_at[:4] == now_iso()[:4] != "2019"
    db.close()


def test_the_reader_connection_sees_what_is_committed_and_closes_with_the_store(
    ctx: Context,
) -> None:
    first = memories.remember(ctx, "committed before the reader opened")
    reader = ctx.db.reader()
    assert reader is not ctx.db and reader.connection is not ctx.db.connection
    assert reader is ctx.db.reader()  # opened once
    second = memories.remember(ctx, "committed after the reader opened")
    found = reader.tuples("SELECT id FROM memories ORDER BY rowid")
    assert [row[0] for row in found] == [first.id, second.id]
    with ctx.db.atomic():  # a transaction's own writes: only its connection sees them
        assert ctx.db.reader() is ctx.db
    ctx.db.close()
    with pytest.raises(apsw.ConnectionClosedError):
        reader.tuples("SELECT 1")


def test_a_read_past_its_time_limit_stops_with_one_line(ctx: Context) -> None:
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
    with pytest.raises(StoreError, match="ran past its time limit"), ctx.db.time_limit(0.01):
        ctx.db.value(endless)
    assert ctx.db.value("SELECT 1") == 1  # the connection is whole, and no longer limited


def test_an_older_store_gains_the_speaker_column_in_place_its_messages_kept(
    home: Path,
) -> None:
    """m035 adds ``messages.speaker`` to a store an older memctl wrote: its messages stay,
    speaker ''; a store marked older than it is (its migrations run again) is left as is."""
    connection, old = store_at_version(home, 33)
    old.execute(
        "INSERT INTO sessions (id, client, scope, created_at, updated_at) "
        "VALUES ('old', 'generic', 'global', '2026-01-05T10:00:00Z', '2026-01-05T10:00:00Z')"
    )
    old.execute(
        "INSERT INTO messages (session_id, seq, role, content, created_at, content_hash) "
        "VALUES ('old', 1, 'user', 'kept through the upgrade', '2026-01-05T10:00:00Z', 'h1')"
    )
    connection.close()
    db = Database.open(home / "memctl.db")
    assert db.tuples("SELECT content, speaker FROM messages") == [("kept through the upgrade", "")]
    db.execute("UPDATE messages SET speaker = 'Tim'")
    db.execute("PRAGMA user_version = 33")
    db.close()
    with Database.open(home / "memctl.db") as again:
        assert again.tuples("SELECT speaker FROM messages") == [("Tim",)]
        assert again.value("PRAGMA user_version") == len(MIGRATIONS)


def test_an_older_store_s_forgotten_messages_keep_their_keyed_digests_for_later_copies(
    home: Path,
) -> None:
    """m036 keeps the digests an older forget of single messages or a redact left keyed on
    them, with their rows (a later resume's copy of one is stored as what is left of it),
    not a plain hash."""
    connection, old = store_at_version(home, 35)
    old.execute(
        "INSERT INTO sessions (id, client, scope, created_at, updated_at) "
        "VALUES ('old', 'generic', 'global', '2026-01-05T10:00:00Z', '2026-01-05T10:00:00Z')"
    )
    old.executemany(
        "INSERT INTO messages (session_id, seq, role, content, created_at, content_hash) "
        "VALUES ('old', ?, 'user', ?, '2026-01-05T10:00:00Z', ?)",
        [
            (1, "[forgotten]", "hmac:aa"),
            (2, "ask [REDACTED] about it", "hmac:bb"),
            (3, "[forgotten]", "plain-sha256"),
        ],
    )
    connection.close()
    with Database.open(home / "memctl.db") as db:
        kept = db.tuples("SELECT digest, message FROM taken_out ORDER BY digest")
        rows = dict(db.tuples("SELECT content_hash, rowid FROM messages"))
        assert kept == [("hmac:aa", rows["hmac:aa"]), ("hmac:bb", rows["hmac:bb"])]
