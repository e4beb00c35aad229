"""Schema migrations: an append-only list, applied in order on open.

Migration N brings the schema to ``PRAGMA user_version = N``. Never edit a
released migration; add the next one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from memctl.model import KEYED, PATH_KEY, content_hash, now_iso, path_key
from memctl.store.cjk import TOKENIZER


class Database(Protocol):
    """What a migration needs of the store's connection: statements, and rows to rewrite."""

    def execute(self, sql: str, params: Any = ()) -> None: ...

    def tuples(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]: ...

    @property
    def home(self) -> Path: ...


def _in(column: str, values: tuple[str, ...]) -> str:
    quoted = ", ".join(f"'{v}'" for v in values)
    return f"CHECK ({column} IN ({quoted}))"


def m001_initial(db: Database) -> None:
    """Memories with their full-text index, relations, the event log and meta."""
    kinds = ("episodic", "semantic", "pinned")
    categories = ("profile", "preferences", "entities", "events", "cases", "patterns")
    tiers = ("core", "working", "peripheral")
    states = ("active", "superseded", "contradicted", "archived", "deleted")
    db.execute(f"""
        CREATE TABLE memories (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            content TEXT NOT NULL,
            l0_abstract TEXT NOT NULL DEFAULT '',
            l1_overview TEXT NOT NULL DEFAULT '',
            l2_content TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL {_in("kind", kinds)},
            category TEXT NOT NULL {_in("category", categories)},
            tier TEXT NOT NULL {_in("tier", tiers)},
            state TEXT NOT NULL {_in("state", states)},
            importance REAL NOT NULL,
            confidence REAL NOT NULL,
            strength REAL NOT NULL,
            access_count INTEGER NOT NULL DEFAULT 0,
            last_accessed_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            invalidated_at TEXT,
            superseded_by TEXT,
            scope TEXT NOT NULL,
            visibility TEXT NOT NULL {_in("visibility", ("private", "shared"))},
            tags TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL DEFAULT '',
            session_id TEXT,
            agent_id TEXT,
            content_hash TEXT NOT NULL
        )""")
    for column in ("state", "scope", "category", "created_at", "content_hash", "session_id"):
        db.execute(f"CREATE INDEX memories_{column} ON memories({column})")
    db.execute("""
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            content, l0_abstract, tags,
            content='memories', content_rowid='rowid',
            tokenize='unicode61 remove_diacritics 2'
        )""")
    db.execute("""
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, content, l0_abstract, tags)
            VALUES (new.rowid, new.content, new.l0_abstract, new.tags);
        END""")
    db.execute("""
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, content, l0_abstract, tags)
            VALUES ('delete', old.rowid, old.content, old.l0_abstract, old.tags);
        END""")
    db.execute("""
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, l0_abstract, tags
        ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, content, l0_abstract, tags)
            VALUES ('delete', old.rowid, old.content, old.l0_abstract, old.tags);
            INSERT INTO memories_fts(rowid, content, l0_abstract, tags)
            VALUES (new.rowid, new.content, new.l0_abstract, new.tags);
        END""")
    db.execute("""
        CREATE TABLE relations (
            src_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            dst_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            type TEXT NOT NULL,
            weight REAL NOT NULL DEFAULT 1.0,
            created_at TEXT NOT NULL,
            PRIMARY KEY (src_id, dst_id, type)
        )""")
    db.execute("CREATE INDEX relations_dst ON relations(dst_id)")
    db.execute("""
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            action TEXT NOT NULL,
            memory_id TEXT,
            run_id TEXT,
            data TEXT NOT NULL DEFAULT '{}'
        )""")
    db.execute("CREATE INDEX events_memory ON events(memory_id)")
    for verb in ("UPDATE", "DELETE"):
        db.execute(f"""
            CREATE TRIGGER events_append_only_{verb.lower()} BEFORE {verb} ON events BEGIN
                SELECT RAISE(ABORT, 'events are append-only');
            END""")
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def _fts_triggers(db: Database, table: str, columns: tuple[str, ...]) -> None:
    """Keep the external-content FTS table ``<table>_fts`` in step with ``table``."""
    cols = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    fts = f"{table}_fts"
    db.execute(f"""
        CREATE TRIGGER {fts}_insert AFTER INSERT ON {table} BEGIN
            INSERT INTO {fts}(rowid, {cols}) VALUES (new.rowid, {new});
        END""")
    db.execute(f"""
        CREATE TRIGGER {fts}_delete AFTER DELETE ON {table} BEGIN
            INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.rowid, {old});
        END""")
    db.execute(f"""
        CREATE TRIGGER {fts}_update AFTER UPDATE OF {cols} ON {table} BEGIN
            INSERT INTO {fts}({fts}, rowid, {cols}) VALUES ('delete', old.rowid, {old});
            INSERT INTO {fts}(rowid, {cols}) VALUES (new.rowid, {new});
        END""")


def m002_ingest(db: Database) -> None:
    """Sessions and their messages (full-text indexed), the job queue, ingest runs,
    learned noise vectors, and an index of events by run (for undo)."""
    db.execute("""
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            client TEXT NOT NULL,
            scope TEXT NOT NULL,
            agent_id TEXT,
            title TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT '',
            tags TEXT NOT NULL DEFAULT '[]',
            started_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0,
            extracted_through INTEGER NOT NULL DEFAULT 0
        )""")
    db.execute("CREATE INDEX sessions_scope ON sessions(scope, updated_at)")
    roles = ("user", "assistant", "system", "tool")
    db.execute(f"""
        CREATE TABLE messages (
            rowid INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL {_in("role", roles)},
            content TEXT NOT NULL,
            created_at TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            UNIQUE (session_id, seq)
        )""")
    db.execute("""
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            content, content='messages', content_rowid='rowid',
            tokenize='unicode61 remove_diacritics 2'
        )""")
    _fts_triggers(db, "messages", ("content",))
    states = ("queued", "running", "done", "failed")
    db.execute(f"""
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            session_id TEXT,
            payload TEXT NOT NULL DEFAULT '{{}}',
            state TEXT NOT NULL {_in("state", states)},
            attempts INTEGER NOT NULL DEFAULT 0,
            claimed_by TEXT,
            claimed_at TEXT,
            created_at TEXT NOT NULL,
            finished_at TEXT,
            run_id TEXT,
            error TEXT
        )""")
    db.execute("CREATE INDEX jobs_state ON jobs(state, id)")
    db.execute("""
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            session_id TEXT,
            job_id INTEGER,
            llm TEXT NOT NULL DEFAULT '',
            started_at TEXT NOT NULL,
            finished_at TEXT,
            messages INTEGER NOT NULL DEFAULT 0,
            facts INTEGER NOT NULL DEFAULT 0,
            tokens INTEGER NOT NULL DEFAULT 0,
            token_budget INTEGER NOT NULL DEFAULT 0,
            counts TEXT NOT NULL DEFAULT '{}',
            decisions TEXT NOT NULL DEFAULT '[]',
            notes TEXT NOT NULL DEFAULT '[]',
            undo_of TEXT,
            undone_by TEXT
        )""")
    db.execute("CREATE INDEX runs_started ON runs(started_at)")
    db.execute("CREATE INDEX events_run ON events(run_id)")
    db.execute("""
        CREATE TABLE noise_vectors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            content TEXT NOT NULL,
            model TEXT NOT NULL,
            vector BLOB NOT NULL,
            created_at TEXT NOT NULL
        )""")


def m003_imports(db: Database) -> None:
    """Imported files: one row per content hash and scope, so a file is not imported twice."""
    statuses = ("stored", "done", "failed")
    db.execute(f"""
        CREATE TABLE imports (
            id TEXT PRIMARY KEY,
            sha256 TEXT NOT NULL,
            scope TEXT NOT NULL,
            path TEXT NOT NULL,
            format TEXT NOT NULL,
            strategy TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL {_in("status", statuses)},
            bytes INTEGER NOT NULL DEFAULT 0,
            session_id TEXT,
            run_id TEXT,
            counts TEXT NOT NULL DEFAULT '{{}}',
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (sha256, scope)
        )""")


def m004_sync(db: Database) -> None:
    """The sync repository's files as this machine last read or wrote them, and the
    memories the user withheld from sync (``memctl unpromote``)."""
    db.execute("""
        CREATE TABLE sync_files (
            path TEXT PRIMARY KEY,
            memory_id TEXT NOT NULL,
            host_id TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            state TEXT NOT NULL,
            blob TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX sync_files_memory ON sync_files(memory_id)")
    db.execute("CREATE TABLE sync_withheld (memory_id TEXT PRIMARY KEY, at TEXT NOT NULL)")


def m005_maintain(db: Database) -> None:
    """What maintain keeps on a memory: when its strength was last decayed and when an
    episode was consolidated into facts."""
    db.execute("ALTER TABLE memories ADD COLUMN decayed_at TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN consolidated_at TEXT")


def m006_recall_evidence(db: Database) -> None:
    """How many memories contain each word (recall weighs the words a candidate shares with
    the query by their rarity), and each session's memories in time order (neighbour context)."""
    db.execute("CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, 'row')")
    db.execute("CREATE INDEX memories_session_time ON memories(session_id, created_at)")


def m007_maintain_compared(db: Database) -> None:
    """Which memories maintain's similarity search (``task`` dedup or merge) has compared
    with every other one since their vector, text, kind, scope or state last changed: the
    next run compares only the others. Any such change forgets the row (triggers; a new
    vector forgets it in store/memories.py)."""
    db.execute(
        "CREATE TABLE maintain_compared (rowid INTEGER NOT NULL, task TEXT NOT NULL, "
        "PRIMARY KEY (rowid, task)) WITHOUT ROWID"
    )
    db.execute("""
        CREATE TRIGGER maintain_compared_changed AFTER UPDATE OF content, kind, scope, state
        ON memories WHEN old.content IS NOT new.content OR old.kind IS NOT new.kind
            OR old.scope IS NOT new.scope OR old.state IS NOT new.state BEGIN
            DELETE FROM maintain_compared WHERE rowid = new.rowid;
        END""")
    db.execute("""
        CREATE TRIGGER maintain_compared_deleted AFTER DELETE ON memories BEGIN
            DELETE FROM maintain_compared WHERE rowid = old.rowid;
        END""")


# English inflections share one indexed term ("recipes" finds "recipe", "played" finds
# "plays"): +1.6 R@10 on LoCoMo dev, +0.018 R_all@5 on LongMemEval (docs/benchmarks.md).
STEMMED = "porter unicode61 remove_diacritics 2"


def m008_stemmed_fts(db: Database) -> None:
    """Both full-text indexes again, stemmed (``STEMMED``), rebuilt from their tables."""
    db.execute("DROP TABLE memories_vocab")
    db.execute("DROP TABLE memories_fts")
    db.execute(f"""
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            content, l0_abstract, tags,
            content='memories', content_rowid='rowid', tokenize='{STEMMED}'
        )""")
    db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")
    db.execute("CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, 'row')")
    db.execute("DROP TABLE messages_fts")
    db.execute(f"""
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            content, content='messages', content_rowid='rowid', tokenize='{STEMMED}'
        )""")
    db.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")


def m009_stored_at(db: Database) -> None:
    """When each memory entered this store (decay and archive count from it): its first
    event, or its own date when that is later."""
    db.execute("ALTER TABLE memories ADD COLUMN stored_at TEXT NOT NULL DEFAULT ''")
    db.execute(
        "UPDATE memories SET stored_at = max(created_at, coalesce("
        "(SELECT min(at) FROM events WHERE memory_id = memories.id), ''))"
    )


def m010_transcript_reads(db: Database) -> None:
    """How far capture has read each transcript file: its byte offset, a digest of what lay
    before it, and the session's message count then (ingest/read_marks.py reads on from it)."""
    db.execute("""
        CREATE TABLE transcript_reads (
            path TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            client TEXT NOT NULL,
            offset INTEGER NOT NULL,
            digest TEXT NOT NULL,
            messages INTEGER NOT NULL
        )""")


def m011_run_holder(db: Database) -> None:
    """Which process runs each run (``kind@host:pid``): a run whose process died is failed."""
    db.execute("ALTER TABLE runs ADD COLUMN holder TEXT")


def m012_session_cwd(db: Database) -> None:
    """The directory a session ran in, as its transcript says (host-model tasks name the
    project by it; the scope alone may be a ``path:<hash>``)."""
    db.execute("ALTER TABLE sessions ADD COLUMN cwd TEXT NOT NULL DEFAULT ''")


def m013_entities_triples(db: Database) -> None:
    """The knowledge graph: entities (a canonical name, a kind, aliases), triples between
    them (active or superseded, with what superseded them), each triple linked to the
    memories and session messages it came from. A triple whose last source goes, goes.
    And the written profile: lines per scope and section, each with its source memories."""
    db.execute("""
        CREATE TABLE entities (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""")
    db.execute("""
        CREATE TABLE entity_aliases (
            key TEXT PRIMARY KEY,
            alias TEXT NOT NULL,
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE
        )""")
    db.execute("CREATE INDEX entity_aliases_entity ON entity_aliases(entity_id)")
    db.execute(f"""
        CREATE TABLE triples (
            id INTEGER PRIMARY KEY,
            subject INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            predicate TEXT NOT NULL,
            object INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            state TEXT NOT NULL DEFAULT 'active' {_in("state", ("active", "superseded"))},
            superseded_by INTEGER REFERENCES triples(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            UNIQUE (subject, predicate, object)
        )""")
    db.execute("CREATE INDEX triples_object ON triples(object)")
    db.execute("""
        CREATE TABLE triple_sources (
            triple_id INTEGER NOT NULL REFERENCES triples(id) ON DELETE CASCADE,
            memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            message TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (triple_id, memory_id)
        ) WITHOUT ROWID""")
    db.execute("CREATE INDEX triple_sources_memory ON triple_sources(memory_id)")
    db.execute("""
        CREATE TABLE entity_mentions (
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            PRIMARY KEY (entity_id, memory_id)
        ) WITHOUT ROWID""")
    db.execute("CREATE INDEX entity_mentions_memory ON entity_mentions(memory_id)")
    db.execute("""
        CREATE TABLE graph_indexed (
            memory_id TEXT PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            content_hash TEXT NOT NULL
        )""")
    db.execute("""
        CREATE TABLE profile_lines (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            section TEXT NOT NULL,
            text TEXT NOT NULL,
            sources TEXT NOT NULL,
            written_by TEXT NOT NULL,
            written_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX profile_lines_scope ON profile_lines(scope, section)")
    db.execute("""
        CREATE TRIGGER triple_sources_gone AFTER DELETE ON triple_sources
        WHEN NOT EXISTS (SELECT 1 FROM triple_sources WHERE triple_id = old.triple_id)
        BEGIN DELETE FROM triples WHERE id = old.triple_id; END""")


def m014_forget_everywhere(db: Database) -> None:
    """When a session was forgotten (``memctl sessions forget``): its messages are gone, its
    row and read marks stay, so capture never stores it again."""
    db.execute("ALTER TABLE sessions ADD COLUMN forgotten_at TEXT")


def m015_projects_titles(db: Database) -> None:
    """Projects are listed with their memories counted by state and their latest one
    (``store.projects``): an index that answers that alone, without reading the rows.
    Sessions are listed by their own time (``store.transcripts.SESSION_TIME``), a page at
    a time: an index in that order. An edit's run names the door it came through (the
    viewer's edits among the CLI's)."""
    db.execute("CREATE INDEX memories_scope_state ON memories(scope, state, created_at)")
    db.execute("CREATE INDEX sessions_own_time ON sessions(coalesce(started_at, created_at), id)")
    db.execute("ALTER TABLE runs ADD COLUMN door TEXT")


def m016_memory_questions(db: Database) -> None:
    """Questions a memory answers, written when it was stored (by the host model): their own
    rows, full-text indexed and with a vector, each pointing at its memory and removed with
    it; recall searches them to find the memory, and never shows them."""
    db.execute("""
        CREATE TABLE memory_questions (
            rowid INTEGER PRIMARY KEY,
            memory_rowid INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
            text TEXT NOT NULL,
            embedding BLOB,
            model TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            UNIQUE (memory_rowid, text)
        )""")
    db.execute(f"""
        CREATE VIRTUAL TABLE memory_questions_fts USING fts5(
            text, content='memory_questions', content_rowid='rowid', tokenize='{STEMMED}'
        )""")
    db.execute("""
        CREATE TRIGGER memory_questions_ai AFTER INSERT ON memory_questions BEGIN
            INSERT INTO memory_questions_fts(rowid, text) VALUES (new.rowid, new.text);
        END""")
    db.execute("""
        CREATE TRIGGER memory_questions_ad AFTER DELETE ON memory_questions BEGIN
            INSERT INTO memory_questions_fts(memory_questions_fts, rowid, text)
            VALUES ('delete', old.rowid, old.text);
        END""")


def m017_counts_and_import_batches(db: Database) -> None:
    """How many memories each scope holds in each state, kept by triggers: `memctl projects`
    and the viewer's projects page read a few rows instead of counting 100,000 (the
    covering index of m015 still meant reading every entry). An import's files keep a run
    each (the unit a crashed import is recovered by) that share a batch: `runs` lists them,
    and `undo` takes them back, as one run."""
    db.execute("""
        CREATE TABLE scope_counts (
            scope TEXT NOT NULL,
            state TEXT NOT NULL,
            n INTEGER NOT NULL,
            PRIMARY KEY (scope, state)
        ) WITHOUT ROWID""")
    db.execute(
        "INSERT INTO scope_counts SELECT scope, state, count(*) FROM memories GROUP BY scope, state"
    )
    add = (
        "INSERT INTO scope_counts VALUES (new.scope, new.state, 1) "
        "ON CONFLICT (scope, state) DO UPDATE SET n = n + 1;"
    )
    take = "UPDATE scope_counts SET n = n - 1 WHERE scope = old.scope AND state = old.state;"
    db.execute(f"CREATE TRIGGER scope_counts_insert AFTER INSERT ON memories BEGIN {add} END")
    db.execute(f"CREATE TRIGGER scope_counts_delete AFTER DELETE ON memories BEGIN {take} END")
    db.execute(
        "CREATE TRIGGER scope_counts_update AFTER UPDATE OF scope, state ON memories "
        f"WHEN old.scope IS NOT new.scope OR old.state IS NOT new.state BEGIN {take} {add} END"
    )
    db.execute("ALTER TABLE runs ADD COLUMN batch TEXT")
    db.execute("CREATE INDEX runs_batch ON runs(batch) WHERE batch IS NOT NULL")


# The messages' vector generation and the last one that removed a vector (meta keys; the
# vector index reads them, store/vector_index.py MESSAGE_VECTORS).
MESSAGE_VECTORS_GENERATION = "message_vectors_generation"
MESSAGE_VECTORS_REWRITTEN = "message_vectors_rewritten"


def m018_message_vectors(db: Database) -> None:
    """Vectors of session messages, made by the slow path (store/message_vectors.py): a
    message's user or assistant text in parts of at most a chunk, one int8 vector a part,
    removed with their message (a forgotten session) or when its text changes (a forgotten
    message, a redaction). Each write moves the messages' vector generation on; a removal
    marks every vector rewritten, so the search's index (store/vector_index.py) is made
    again from this table and keeps nothing of the text that went."""
    db.execute("""
        CREATE TABLE message_vectors (
            rowid INTEGER PRIMARY KEY,
            message_rowid INTEGER NOT NULL REFERENCES messages(rowid) ON DELETE CASCADE,
            part INTEGER NOT NULL,
            embedding BLOB NOT NULL,
            UNIQUE (message_rowid, part)
        )""")
    moved_on = (
        f"INSERT INTO meta (key, value) VALUES ('{MESSAGE_VECTORS_GENERATION}', '1') "
        "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;"
    )
    db.execute(f"""
        CREATE TRIGGER message_vectors_ai AFTER INSERT ON message_vectors BEGIN {moved_on} END""")
    db.execute(f"""
        CREATE TRIGGER message_vectors_ad AFTER DELETE ON message_vectors BEGIN {moved_on}
            INSERT INTO meta (key, value) SELECT '{MESSAGE_VECTORS_REWRITTEN}', value FROM meta
            WHERE key = '{MESSAGE_VECTORS_GENERATION}'
            ON CONFLICT (key) DO UPDATE SET value = excluded.value;
        END""")
    db.execute("""
        CREATE TRIGGER messages_text_changed AFTER UPDATE OF content ON messages
        WHEN new.content IS NOT old.content BEGIN
            DELETE FROM message_vectors WHERE message_rowid = new.rowid;
        END""")


# Where a memory's statement of a triple came from (``triple_sources.origin``): the rules,
# an LLM's or the host model's fact, a synced file; unknown when it was stored before
# memctl kept it, by a memory a model or a sync wrote (it may be given: a re-read keeps it).
TRIPLE_ORIGINS = ("rules", "llm", "host", "sync", "unknown")


def m019_graph_origin(db: Database) -> None:
    """Where each triple's statement by a memory came from (``TRIPLE_ORIGINS``), and the
    version of the entity rules that read each memory (``graph_indexed.rules``, 0 before):
    when the rules change, maintain reads every memory again and takes back only what the
    rules stated. A statement stored before this migration is the rules' unless an ingest
    or import run with a model, or a sync, wrote its memory: then it is unknown, and kept."""
    db.execute(
        "ALTER TABLE triple_sources ADD COLUMN origin TEXT NOT NULL DEFAULT 'rules' "
        f"{_in('origin', TRIPLE_ORIGINS)}"
    )
    db.execute("ALTER TABLE graph_indexed ADD COLUMN rules INTEGER NOT NULL DEFAULT 0")
    db.execute("""
        UPDATE triple_sources SET origin = 'unknown' WHERE memory_id IN (
            SELECT e.memory_id FROM events e JOIN runs r ON r.id = e.run_id
            WHERE r.kind IN ('ingest', 'import') AND r.llm NOT IN ('', 'rules')
            UNION SELECT e.memory_id FROM events e
            WHERE json_extract(e.data, '$.host') IS NOT NULL
            AND 'sync' IN (json_extract(e.data, '$.source'), json_extract(e.data, '$.reason')))""")


def m020_graph_restated(db: Database) -> None:
    """The graph's generation at which a re-read by newer entity rules last changed what a
    memory states (0: never): sync sends such a memory's file again, so the machines that
    took its triples take back what the newer rules no longer read."""
    db.execute("ALTER TABLE graph_indexed ADD COLUMN restated INTEGER NOT NULL DEFAULT 0")
    db.execute("CREATE INDEX graph_indexed_restated ON graph_indexed(restated) WHERE restated > 0")


def m021_meaning(db: Database) -> None:
    """The vector of a memory's content alone, beside its searched vector when that one also
    names what the memory mentions (store/meaning.py); the relevance gate weighs it. Existing
    memories get their names from ``maintain`` (upkeep, ``embed_meaning``)."""
    db.execute("""
        CREATE TABLE memory_plain_vectors (
            memory_rowid INTEGER PRIMARY KEY REFERENCES memories(rowid) ON DELETE CASCADE,
            embedding BLOB NOT NULL
        )""")


# When text was taken out that the file may still hold in its free pages or its WAL (a meta
# key: set by a forget and by m022, removed once store/forget.py ``compact`` empties them).
FORGOTTEN_IN_FILE = "forgotten_in_file"


def m022_paths(db: Database) -> None:
    """A transcript's read mark is kept under a digest of its path (``model.path_key``),
    not the path, which may name a folder after a token: the old paths' pages are the
    next compaction's to rewrite (``FORGOTTEN_IN_FILE``)."""
    for (path,) in db.tuples("SELECT path FROM transcript_reads"):
        if not path.startswith(PATH_KEY):
            db.execute(
                "UPDATE transcript_reads SET path = ? WHERE path = ?", (path_key(path), path)
            )
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                (FORGOTTEN_IN_FILE, now_iso()),
            )


def m023_counts(db: Database) -> None:
    """How many session messages held each indexed word when ``maintain`` last counted them
    (``message_term_counts``, from the ``messages_vocab`` table), and how many messages were
    written and taken away since (``message_counts_drift``, kept by triggers): recall tells
    a common word from a rare one by these bounds, and steps over its postings only when
    they do not decide (store/message_search.py). No row in the drift table: not counted."""
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS messages_vocab USING fts5vocab(messages_fts, 'row')"
    )
    db.execute("""
        CREATE TABLE IF NOT EXISTS message_term_counts (
            term TEXT PRIMARY KEY,
            messages INTEGER NOT NULL
        ) WITHOUT ROWID""")
    db.execute("""
        CREATE TABLE IF NOT EXISTS message_counts_drift (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            added INTEGER NOT NULL,
            removed INTEGER NOT NULL
        )""")
    add = "UPDATE message_counts_drift SET added = added + 1;"
    take = "UPDATE message_counts_drift SET removed = removed + 1;"
    on = "CREATE TRIGGER IF NOT EXISTS message_counts"
    db.execute(f"{on}_insert AFTER INSERT ON messages BEGIN {add} END")
    db.execute(f"{on}_delete AFTER DELETE ON messages BEGIN {take} END")
    db.execute(f"{on}_update AFTER UPDATE OF content ON messages BEGIN {take} {add} END")


# The stored questions' vector generation, the last one that rewrote them all, and the
# journal of removed questions' rowids ([generation, rowid], at most QUESTION_JOURNAL; meta
# keys; the vector index reads them, store/vector_index.py QUESTION_VECTORS).
QUESTION_VECTORS_GENERATION = "question_vectors_generation"
QUESTION_VECTORS_REWRITTEN = "question_vectors_rewritten"
QUESTION_VECTORS_CHANGES = "question_vectors_changes"
QUESTION_JOURNAL = 256  # as the memories' vectors' journal (database.py VECTORS_JOURNAL)


def m024_question_index(db: Database) -> None:
    """The stored questions' vectors as the vector index reads them (the view
    ``memory_question_vectors``: those of the store's model), kept in step by triggers, as
    the memories' vectors are by Database.note_vector_write: each write moves the
    questions' vector generation on; a removed question's rowid is journaled, so the index
    (store/vector_index.py) marks its row dead instead of being made again (a full journal
    marks every one rewritten); a changed one marks every one rewritten. Forgetting and
    redacting make the index again at once (maintain/everywhere.py), so its files keep
    nothing of a forgotten question."""
    generation, rewritten, changes = (
        QUESTION_VECTORS_GENERATION,
        QUESTION_VECTORS_REWRITTEN,
        QUESTION_VECTORS_CHANGES,
    )
    db.execute("""
        CREATE VIEW IF NOT EXISTS memory_question_vectors AS
        SELECT q.rowid AS rowid, q.embedding AS embedding FROM memory_questions q
        WHERE q.embedding IS NOT NULL
          AND q.model = (SELECT value FROM meta WHERE key = 'embed_model')""")
    moved_on = (
        f"INSERT INTO meta (key, value) VALUES ('{generation}', '1') "
        "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;"
    )
    all_rewritten = f"""
        INSERT INTO meta (key, value) SELECT '{rewritten}', value FROM meta
        WHERE key = '{generation}' ON CONFLICT (key) DO UPDATE SET value = excluded.value;
        INSERT INTO meta (key, value) VALUES ('{changes}', '[]')
        ON CONFLICT (key) DO UPDATE SET value = '[]';"""
    journaled = f"""
        INSERT INTO meta (key, value) VALUES ('{changes}', '[]') ON CONFLICT (key) DO NOTHING;
        UPDATE meta SET value = json_insert(value, '$[#]', json_array(
            (SELECT CAST(value AS INTEGER) FROM meta WHERE key = '{generation}'), old.rowid))
        WHERE key = '{changes}';
        INSERT INTO meta (key, value) SELECT '{rewritten}', value FROM meta
        WHERE key = '{generation}' AND (SELECT json_array_length(value) FROM meta
            WHERE key = '{changes}') > {QUESTION_JOURNAL}
        ON CONFLICT (key) DO UPDATE SET value = excluded.value;
        UPDATE meta SET value = '[]'
        WHERE key = '{changes}' AND json_array_length(value) > {QUESTION_JOURNAL};"""
    on = "CREATE TRIGGER IF NOT EXISTS memory_question_vectors"
    db.execute(f"{on}_ai AFTER INSERT ON memory_questions BEGIN {moved_on} END")
    db.execute(f"{on}_ad AFTER DELETE ON memory_questions BEGIN {moved_on} {journaled} END")
    db.execute(f"{on}_au AFTER UPDATE ON memory_questions BEGIN {moved_on} {all_rewritten} END")


def m025_question_vocab(db: Database) -> None:
    """How many stored questions hold each indexed word, read from their full-text index
    (``memory_questions_vocab``, as ``memories_vocab`` reads the memories'): recall's
    questions' BM25 then spares the questions that hold only a common word of the query
    (store/pruned_bm25.py). The index keeps the counts itself: nothing to maintain."""
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS memory_questions_vocab "
        "USING fts5vocab(memory_questions_fts, 'row')"
    )


# What stands in the events for a hash of a text taken out (store.forget.FORGOTTEN: this
# module loads before store.forget, which imports the database).
HASH_TAKEN_OUT = "[forgotten]"


# The trigger that keeps events from being changed: a migration that rewrites them (m026,
# m032) drops it and makes it again.
EVENTS_APPEND_ONLY_UPDATE = (
    "CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events BEGIN "
    "SELECT RAISE(ABORT, 'events are append-only'); END"
)


def m026_forgotten_hashes(db: Database) -> None:
    """The events keep no SHA-256 of a text forgotten or redacted before forget and
    redact took those out (``store.forget.erase_quotes``): a ``content_hash`` beside a
    ``content`` it is not the hash of (the text was rewritten), and a permanent delete's
    (its memory is gone for good). A short secret's hash is found by trying values."""
    rows = db.tuples("SELECT id, data FROM events WHERE instr(data, '\"content_hash\"')")
    changed = []
    for event_id, data in rows:
        value = json.loads(data)
        if _unhash(value) | _unhash_deleted(value):
            changed.append((json.dumps(value, ensure_ascii=False), event_id))
    if changed:
        db.execute("DROP TRIGGER IF EXISTS events_append_only_update")
        for data, event_id in changed:
            db.execute("UPDATE events SET data = ? WHERE id = ?", (data, event_id))
        db.execute(EVENTS_APPEND_ONLY_UPDATE)


def _unhash(value: Any) -> bool:
    """Mark each ``content_hash`` in ``value`` that is not its ``content``'s; whether any."""
    if isinstance(value, list):
        return any([_unhash(v) for v in value])
    if not isinstance(value, dict):
        return False
    found = any([_unhash(v) for v in value.values()])
    text, digest = value.get("content"), value.get("content_hash")
    if (
        isinstance(text, str)
        and digest not in (None, HASH_TAKEN_OUT)
        and digest != content_hash(text)
    ):
        value["content_hash"] = HASH_TAKEN_OUT
        return True
    return found


def _unhash_deleted(value: Any) -> bool:
    """Mark a permanent delete's ``content_hash`` (its memory is gone); whether it was."""
    if isinstance(value, dict) and value.get("permanent") and "content" not in value:
        if value.get("content_hash") not in (None, HASH_TAKEN_OUT):
            value["content_hash"] = HASH_TAKEN_OUT
            return True
    return False


def m027_sync_file_macs(db: Database) -> None:
    """What each sync file's ``mac`` line signs and that MAC: whether the machine it names
    wrote it is checked against that machine's key when trust is decided."""
    have = {str(row[1]) for row in db.tuples("PRAGMA table_info(sync_files)")}
    for column in ("digest", "mac"):  # a store set back to an older version has them
        if column not in have:
            db.execute(f"ALTER TABLE sync_files ADD COLUMN {column} TEXT")


# The full-text indexes' tokenizer from m028 on: runs of Chinese, Japanese and Korean letters
# as their bigrams (store/cjk.py), every other word as STEMMED makes it.
BIGRAMS_STEMMED = f"{TOKENIZER} {STEMMED}"
# Each full-text index: its table (whose rowids and columns it indexes) and columns.
FULL_TEXT = (
    ("memories", "content, l0_abstract, tags"),
    ("messages", "content"),
    ("memory_questions", "text"),
)


def m028_cjk_bigrams(db: Database) -> None:
    """The three full-text indexes again, a run of CJK letters as its bigrams
    (``BIGRAMS_STEMMED``), rebuilt from their tables; the messages' word counts (m023), when
    they were taken, taken again from the new index (the old ones count whole runs)."""
    for table, columns in FULL_TEXT:
        db.execute(f"DROP TABLE IF EXISTS {table}_vocab")
        db.execute(f"DROP TABLE {table}_fts")
        db.execute(f"""
            CREATE VIRTUAL TABLE {table}_fts USING fts5(
                {columns}, content='{table}', content_rowid='rowid',
                tokenize='{BIGRAMS_STEMMED}'
            )""")
        db.execute(f"INSERT INTO {table}_fts({table}_fts) VALUES ('rebuild')")
        db.execute(f"CREATE VIRTUAL TABLE {table}_vocab USING fts5vocab({table}_fts, 'row')")
    if db.tuples("SELECT 1 FROM message_counts_drift"):
        db.execute("DELETE FROM message_term_counts")
        db.execute("INSERT INTO message_term_counts SELECT term, doc FROM messages_vocab")
        db.execute("UPDATE message_counts_drift SET added = 0, removed = 0")


def m029_followed_secrets(db: Database) -> None:
    """The secrets a capture of a session hid where its messages repeated them bare, as
    keyed digests (``store.sessions.followed_digests``), so that the session's next capture
    hides them too; each row's kind is the redaction mark's."""
    db.execute("""
        CREATE TABLE IF NOT EXISTS followed_secrets (
            session_id TEXT NOT NULL,
            digest TEXT NOT NULL,
            kind TEXT NOT NULL,
            PRIMARY KEY (session_id, digest)
        ) WITHOUT ROWID""")


def m030_read_inside(db: Database) -> None:
    """The block (``<private>``, memctl's context, a private key) a transcript file's last
    capture ended inside, by name (``memories.privacy.BLOCK_NAMES``), with how far it was
    read: the next capture, reading on from there, hides what comes up to its close."""
    have = {str(row[1]) for row in db.tuples("PRAGMA table_info(transcript_reads)")}
    if "inside" not in have:  # a store set back to an older version has it
        db.execute("ALTER TABLE transcript_reads ADD COLUMN inside TEXT")


# The events that add or take a relation: the condition of the index on their target
# (m031), written the same in a query (``events.list_events``) so SQLite takes that index.
LINK_EVENTS = "action IN ('link', 'unlink')"


def m031_link_targets(db: Database) -> None:
    """The link and unlink events by the memory they point at (``data.dst_id``): a link
    made from another memory is in its target's history too (``events.list_events``),
    as its Relations show it, without reading every event."""
    db.execute(
        "CREATE INDEX IF NOT EXISTS events_link_target ON events(json_extract(data, '$.dst_id')) "
        f"WHERE {LINK_EVENTS}"
    )


# Where a scope is stored: each table's scope column (``scope_counts`` follows ``memories``
# by its triggers), and the texts that quote one (an event's before and after, a job's
# payload, a run's notes, an alias in ``meta``: its key and the scope it names).
SCOPE_PLACES = (
    ("memories", "scope"),
    ("sessions", "scope"),
    ("imports", "scope"),
    ("profile_lines", "scope"),
    ("events", "data"),
    ("jobs", "payload"),
    ("runs", "counts"),
    ("runs", "decisions"),
    ("runs", "notes"),
    ("meta", "key"),
    ("meta", "value"),
)


PLAIN_GLOB = "path:" + "[0-9a-f]" * 16  # config.scope.PLAIN_PATH, as a GLOB pattern


def m032_keyed_path_scopes(db: Database) -> None:
    """Every ``path:`` scope an older memctl stored (a plain digest of a folder: anyone with
    a copy of the database could confirm a guessed folder) as its keyed name
    (``config.scope.keyed_path``), under the home's key, made only when there is one to
    rewrite. The events are rewritten too (as m026 does): an undo sets their scopes back.
    The old names' pages are the next compaction's to rewrite (``FORGOTTEN_IN_FILE``)."""
    from memctl.config.files import forget_key
    from memctl.config.scope import PLAIN_PATH, keyed_path

    quoted = re.compile(rf"\b{PLAIN_PATH.pattern}\b")
    found = {
        (table, column): rows
        for table, column in SCOPE_PLACES
        if (rows := db.tuples(f"SELECT rowid, {column} FROM {table} WHERE {column} LIKE '%path:%'"))
    }
    if not found:
        return
    key = forget_key(db.home)
    db.execute("DROP TRIGGER IF EXISTS events_append_only_update")
    for (table, column), rows in found.items():
        for rowid, text in rows:
            keyed = quoted.sub(lambda m: keyed_path(m.group(0), key), text)
            if keyed != text:
                db.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (keyed, rowid))
    db.execute(EVENTS_APPEND_ONLY_UPDATE)
    # the counts moved with the memories (by their trigger), leaving the old names at 0
    db.execute(f"DELETE FROM scope_counts WHERE n = 0 AND scope GLOB '{PLAIN_GLOB}'")
    db.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
        (FORGOTTEN_IN_FILE, now_iso()),
    )


def m033_call_vectors(db: Database) -> None:
    """Vectors of the calls a message of tool notes ran or wrote, as recall shows them beside
    its turn's said message (store/call_vectors.py): made by the slow path, never searched
    (read by their message), removed with their message or when its text changes. Made only
    where missing: a store an older memctl marked older runs the later migrations again."""
    db.execute("""
        CREATE TABLE IF NOT EXISTS call_vectors (
            message_rowid INTEGER PRIMARY KEY REFERENCES messages(rowid) ON DELETE CASCADE,
            vectors BLOB NOT NULL
        )""")
    db.execute("""
        CREATE TRIGGER IF NOT EXISTS messages_calls_changed AFTER UPDATE OF content ON messages
        WHEN new.content IS NOT old.content BEGIN
            DELETE FROM call_vectors WHERE message_rowid = new.rowid;
        END""")


def m034_message_lengths(db: Database) -> None:
    """The session messages' lengths in tokens, in blobs of rows (store/message_lengths.py):
    recall scores a word's messages from them and its postings instead of FTS5's read of
    each row's length. Written with the words' counts, when they were taken (again when a
    store an older memctl marked older runs this again: it may have counted without them)."""
    db.execute("""
        CREATE TABLE IF NOT EXISTS message_lengths (
            block INTEGER PRIMARY KEY,
            lengths BLOB NOT NULL
        )""")
    if db.tuples("SELECT 1 FROM message_counts_drift"):
        # imported here: numpy, needed only by a store whose counts were taken
        from memctl.store.message_lengths import write_lengths

        write_lengths(db)


def m035_message_speakers(db: Database) -> None:
    """Who said each message, by name, where the transcript or export knows it (a WhatsApp
    or Slack export's author, a "Name: text" transcript's turn, a client naming its user):
    ``role`` says only user / assistant / system / tool. '' where nobody named the author;
    old stores are upgraded in place, their messages left ''. Added only where missing: a
    store an older memctl marked older runs the later migrations again."""
    columns = {row[1] for row in db.tuples("PRAGMA table_info(messages)")}
    if "speaker" not in columns:
        db.execute("ALTER TABLE messages ADD COLUMN speaker TEXT NOT NULL DEFAULT ''")


def m036_taken_out(db: Database) -> None:
    """The keyed digests of the messages a forget or a redact took text out of, with the
    row holding what is left (store/taken_out.py), so that a capture stores a client's later
    copy of one (a resume under a new id) as that; with those an older forget or redact
    left keyed in place (``store.forget.key_digests``)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS taken_out (digest TEXT PRIMARY KEY, message INTEGER) "
        "WITHOUT ROWID"
    )
    db.execute(
        "INSERT OR IGNORE INTO taken_out (digest, message) SELECT content_hash, rowid "
        "FROM messages WHERE substr(content_hash, 1, ?) = ?",
        (len(KEYED), KEYED),
    )


MIGRATIONS: list[Callable[[Database], None]] = [
    m001_initial,
    m002_ingest,
    m003_imports,
    m004_sync,
    m005_maintain,
    m006_recall_evidence,
    m007_maintain_compared,
    m008_stemmed_fts,
    m009_stored_at,
    m010_transcript_reads,
    m011_run_holder,
    m012_session_cwd,
    m013_entities_triples,
    m014_forget_everywhere,
    m015_projects_titles,
    m016_memory_questions,
    m017_counts_and_import_batches,
    m018_message_vectors,
    m019_graph_origin,
    m020_graph_restated,
    m021_meaning,
    m022_paths,
    m023_counts,
    m024_question_index,
    m025_question_vocab,
    m026_forgotten_hashes,
    m027_sync_file_macs,
    m028_cjk_bigrams,
    m029_followed_secrets,
    m030_read_inside,
    m031_link_targets,
    m032_keyed_path_scopes,
    m033_call_vectors,
    m034_message_lengths,
    m035_message_speakers,
    m036_taken_out,
]
