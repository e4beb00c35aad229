-- The schema of a new store: what memctl/store/migrations.py makes of an empty file, in one
-- script (Database.migrate). Written by scripts/gen_schema.py; edit that, or add a migration
-- and run it again.
CREATE TABLE memories (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            content TEXT NOT NULL,
            l0_abstract TEXT NOT NULL DEFAULT '',
            l1_overview TEXT NOT NULL DEFAULT '',
            l2_content TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL CHECK (kind IN ('episodic', 'semantic', 'pinned')),
            category TEXT NOT NULL CHECK (category IN ('profile', 'preferences', 'entities', 'events', 'cases', 'patterns')),
            tier TEXT NOT NULL CHECK (tier IN ('core', 'working', 'peripheral')),
            state TEXT NOT NULL CHECK (state IN ('active', 'superseded', 'contradicted', 'archived', 'deleted')),
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
            visibility TEXT NOT NULL CHECK (visibility IN ('private', 'shared')),
            tags TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL DEFAULT '',
            session_id TEXT,
            agent_id TEXT,
            content_hash TEXT NOT NULL
        , decayed_at TEXT, consolidated_at TEXT, stored_at TEXT NOT NULL DEFAULT '');
CREATE TABLE relations (
            src_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            dst_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            type TEXT NOT NULL,
            weight REAL NOT NULL DEFAULT 1.0,
            created_at TEXT NOT NULL,
            PRIMARY KEY (src_id, dst_id, type)
        );
CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            action TEXT NOT NULL,
            memory_id TEXT,
            run_id TEXT,
            data TEXT NOT NULL DEFAULT '{}'
        );
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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
        , cwd TEXT NOT NULL DEFAULT '', forgotten_at TEXT);
CREATE TABLE messages (
            rowid INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
            content TEXT NOT NULL,
            created_at TEXT NOT NULL,
            content_hash TEXT NOT NULL, speaker TEXT NOT NULL DEFAULT '',
            UNIQUE (session_id, seq)
        );
CREATE TABLE jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            session_id TEXT,
            payload TEXT NOT NULL DEFAULT '{}',
            state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            claimed_by TEXT,
            claimed_at TEXT,
            created_at TEXT NOT NULL,
            finished_at TEXT,
            run_id TEXT,
            error TEXT
        );
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
        , holder TEXT, door TEXT, batch TEXT);
CREATE TABLE noise_vectors (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            content TEXT NOT NULL,
            model TEXT NOT NULL,
            vector BLOB NOT NULL,
            created_at TEXT NOT NULL
        );
CREATE TABLE imports (
            id TEXT PRIMARY KEY,
            sha256 TEXT NOT NULL,
            scope TEXT NOT NULL,
            path TEXT NOT NULL,
            format TEXT NOT NULL,
            strategy TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL CHECK (status IN ('stored', 'done', 'failed')),
            bytes INTEGER NOT NULL DEFAULT 0,
            session_id TEXT,
            run_id TEXT,
            counts TEXT NOT NULL DEFAULT '{}',
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (sha256, scope)
        );
CREATE TABLE sync_files (
            path TEXT PRIMARY KEY,
            memory_id TEXT NOT NULL,
            host_id TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            state TEXT NOT NULL,
            blob TEXT NOT NULL
        , digest TEXT, mac TEXT);
CREATE TABLE sync_withheld (memory_id TEXT PRIMARY KEY, at TEXT NOT NULL);
CREATE TABLE maintain_compared (rowid INTEGER NOT NULL, task TEXT NOT NULL, PRIMARY KEY (rowid, task)) WITHOUT ROWID;
CREATE TABLE transcript_reads (
            path TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            client TEXT NOT NULL,
            offset INTEGER NOT NULL,
            digest TEXT NOT NULL,
            messages INTEGER NOT NULL
        , inside TEXT);
CREATE TABLE entities (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            kind TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
CREATE TABLE entity_aliases (
            key TEXT PRIMARY KEY,
            alias TEXT NOT NULL,
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE
        );
CREATE TABLE triples (
            id INTEGER PRIMARY KEY,
            subject INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            predicate TEXT NOT NULL,
            object INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'superseded')),
            superseded_by INTEGER REFERENCES triples(id) ON DELETE SET NULL,
            created_at TEXT NOT NULL,
            UNIQUE (subject, predicate, object)
        );
CREATE TABLE triple_sources (
            triple_id INTEGER NOT NULL REFERENCES triples(id) ON DELETE CASCADE,
            memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            message TEXT NOT NULL DEFAULT '', origin TEXT NOT NULL DEFAULT 'rules' CHECK (origin IN ('rules', 'llm', 'host', 'sync', 'unknown')),
            PRIMARY KEY (triple_id, memory_id)
        ) WITHOUT ROWID;
CREATE TABLE entity_mentions (
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            PRIMARY KEY (entity_id, memory_id)
        ) WITHOUT ROWID;
CREATE TABLE graph_indexed (
            memory_id TEXT PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            content_hash TEXT NOT NULL
        , rules INTEGER NOT NULL DEFAULT 0, restated INTEGER NOT NULL DEFAULT 0);
CREATE TABLE profile_lines (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            section TEXT NOT NULL,
            text TEXT NOT NULL,
            sources TEXT NOT NULL,
            written_by TEXT NOT NULL,
            written_at TEXT NOT NULL
        );
CREATE TABLE memory_questions (
            rowid INTEGER PRIMARY KEY,
            memory_rowid INTEGER NOT NULL REFERENCES memories(rowid) ON DELETE CASCADE,
            text TEXT NOT NULL,
            embedding BLOB,
            model TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            UNIQUE (memory_rowid, text)
        );
CREATE TABLE scope_counts (
            scope TEXT NOT NULL,
            state TEXT NOT NULL,
            n INTEGER NOT NULL,
            PRIMARY KEY (scope, state)
        ) WITHOUT ROWID;
CREATE TABLE message_vectors (
            rowid INTEGER PRIMARY KEY,
            message_rowid INTEGER NOT NULL REFERENCES messages(rowid) ON DELETE CASCADE,
            part INTEGER NOT NULL,
            embedding BLOB NOT NULL,
            UNIQUE (message_rowid, part)
        );
CREATE TABLE memory_plain_vectors (
            memory_rowid INTEGER PRIMARY KEY REFERENCES memories(rowid) ON DELETE CASCADE,
            embedding BLOB NOT NULL
        );
CREATE TABLE message_term_counts (
            term TEXT PRIMARY KEY,
            messages INTEGER NOT NULL
        ) WITHOUT ROWID;
CREATE TABLE message_counts_drift (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            added INTEGER NOT NULL,
            removed INTEGER NOT NULL
        );
CREATE VIRTUAL TABLE memories_fts USING fts5(
                content, l0_abstract, tags, content='memories', content_rowid='rowid',
                tokenize='cjk_bigrams porter unicode61 remove_diacritics 2'
            );
CREATE VIRTUAL TABLE memories_vocab USING fts5vocab(memories_fts, 'row');
CREATE VIRTUAL TABLE messages_fts USING fts5(
                content, content='messages', content_rowid='rowid',
                tokenize='cjk_bigrams porter unicode61 remove_diacritics 2'
            );
CREATE VIRTUAL TABLE messages_vocab USING fts5vocab(messages_fts, 'row');
CREATE VIRTUAL TABLE memory_questions_fts USING fts5(
                text, content='memory_questions', content_rowid='rowid',
                tokenize='cjk_bigrams porter unicode61 remove_diacritics 2'
            );
CREATE VIRTUAL TABLE memory_questions_vocab USING fts5vocab(memory_questions_fts, 'row');
CREATE TABLE followed_secrets (
            session_id TEXT NOT NULL,
            digest TEXT NOT NULL,
            kind TEXT NOT NULL,
            PRIMARY KEY (session_id, digest)
        ) WITHOUT ROWID;
CREATE TABLE call_vectors (
            message_rowid INTEGER PRIMARY KEY REFERENCES messages(rowid) ON DELETE CASCADE,
            vectors BLOB NOT NULL
        );
CREATE TABLE message_lengths (
            block INTEGER PRIMARY KEY,
            lengths BLOB NOT NULL
        );
CREATE TABLE taken_out (digest TEXT PRIMARY KEY, message INTEGER) WITHOUT ROWID;
CREATE INDEX memories_state ON memories(state);
CREATE INDEX memories_scope ON memories(scope);
CREATE INDEX memories_category ON memories(category);
CREATE INDEX memories_created_at ON memories(created_at);
CREATE INDEX memories_content_hash ON memories(content_hash);
CREATE INDEX memories_session_id ON memories(session_id);
CREATE INDEX relations_dst ON relations(dst_id);
CREATE INDEX events_memory ON events(memory_id);
CREATE INDEX sessions_scope ON sessions(scope, updated_at);
CREATE INDEX jobs_state ON jobs(state, id);
CREATE INDEX runs_started ON runs(started_at);
CREATE INDEX events_run ON events(run_id);
CREATE INDEX sync_files_memory ON sync_files(memory_id);
CREATE INDEX memories_session_time ON memories(session_id, created_at);
CREATE INDEX entity_aliases_entity ON entity_aliases(entity_id);
CREATE INDEX triples_object ON triples(object);
CREATE INDEX triple_sources_memory ON triple_sources(memory_id);
CREATE INDEX entity_mentions_memory ON entity_mentions(memory_id);
CREATE INDEX profile_lines_scope ON profile_lines(scope, section);
CREATE INDEX memories_scope_state ON memories(scope, state, created_at);
CREATE INDEX sessions_own_time ON sessions(coalesce(started_at, created_at), id);
CREATE INDEX runs_batch ON runs(batch) WHERE batch IS NOT NULL;
CREATE INDEX graph_indexed_restated ON graph_indexed(restated) WHERE restated > 0;
CREATE INDEX events_link_target ON events(json_extract(data, '$.dst_id')) WHERE action IN ('link', 'unlink');
CREATE VIEW memory_question_vectors AS
        SELECT q.rowid AS rowid, q.embedding AS embedding FROM memory_questions q
        WHERE q.embedding IS NOT NULL
          AND q.model = (SELECT value FROM meta WHERE key = 'embed_model');
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, content, l0_abstract, tags)
            VALUES (new.rowid, new.content, new.l0_abstract, new.tags);
        END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, content, l0_abstract, tags)
            VALUES ('delete', old.rowid, old.content, old.l0_abstract, old.tags);
        END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, l0_abstract, tags
        ON memories BEGIN
            INSERT INTO memories_fts(memories_fts, rowid, content, l0_abstract, tags)
            VALUES ('delete', old.rowid, old.content, old.l0_abstract, old.tags);
            INSERT INTO memories_fts(rowid, content, l0_abstract, tags)
            VALUES (new.rowid, new.content, new.l0_abstract, new.tags);
        END;
CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events BEGIN
                SELECT RAISE(ABORT, 'events are append-only');
            END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events BEGIN
                SELECT RAISE(ABORT, 'events are append-only');
            END;
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts(rowid, content) VALUES (new.rowid, new.content);
        END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
        END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
            INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
            INSERT INTO messages_fts(rowid, content) VALUES (new.rowid, new.content);
        END;
CREATE TRIGGER maintain_compared_changed AFTER UPDATE OF content, kind, scope, state
        ON memories WHEN old.content IS NOT new.content OR old.kind IS NOT new.kind
            OR old.scope IS NOT new.scope OR old.state IS NOT new.state BEGIN
            DELETE FROM maintain_compared WHERE rowid = new.rowid;
        END;
CREATE TRIGGER maintain_compared_deleted AFTER DELETE ON memories BEGIN
            DELETE FROM maintain_compared WHERE rowid = old.rowid;
        END;
CREATE TRIGGER triple_sources_gone AFTER DELETE ON triple_sources
        WHEN NOT EXISTS (SELECT 1 FROM triple_sources WHERE triple_id = old.triple_id)
        BEGIN DELETE FROM triples WHERE id = old.triple_id; END;
CREATE TRIGGER memory_questions_ai AFTER INSERT ON memory_questions BEGIN
            INSERT INTO memory_questions_fts(rowid, text) VALUES (new.rowid, new.text);
        END;
CREATE TRIGGER memory_questions_ad AFTER DELETE ON memory_questions BEGIN
            INSERT INTO memory_questions_fts(memory_questions_fts, rowid, text)
            VALUES ('delete', old.rowid, old.text);
        END;
CREATE TRIGGER scope_counts_insert AFTER INSERT ON memories BEGIN INSERT INTO scope_counts VALUES (new.scope, new.state, 1) ON CONFLICT (scope, state) DO UPDATE SET n = n + 1; END;
CREATE TRIGGER scope_counts_delete AFTER DELETE ON memories BEGIN UPDATE scope_counts SET n = n - 1 WHERE scope = old.scope AND state = old.state; END;
CREATE TRIGGER scope_counts_update AFTER UPDATE OF scope, state ON memories WHEN old.scope IS NOT new.scope OR old.state IS NOT new.state BEGIN UPDATE scope_counts SET n = n - 1 WHERE scope = old.scope AND state = old.state; INSERT INTO scope_counts VALUES (new.scope, new.state, 1) ON CONFLICT (scope, state) DO UPDATE SET n = n + 1; END;
CREATE TRIGGER message_vectors_ai AFTER INSERT ON message_vectors BEGIN INSERT INTO meta (key, value) VALUES ('message_vectors_generation', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1; END;
CREATE TRIGGER message_vectors_ad AFTER DELETE ON message_vectors BEGIN INSERT INTO meta (key, value) VALUES ('message_vectors_generation', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;
            INSERT INTO meta (key, value) SELECT 'message_vectors_rewritten', value FROM meta
            WHERE key = 'message_vectors_generation'
            ON CONFLICT (key) DO UPDATE SET value = excluded.value;
        END;
CREATE TRIGGER messages_text_changed AFTER UPDATE OF content ON messages
        WHEN new.content IS NOT old.content BEGIN
            DELETE FROM message_vectors WHERE message_rowid = new.rowid;
        END;
CREATE TRIGGER message_counts_insert AFTER INSERT ON messages BEGIN UPDATE message_counts_drift SET added = added + 1; END;
CREATE TRIGGER message_counts_delete AFTER DELETE ON messages BEGIN UPDATE message_counts_drift SET removed = removed + 1; END;
CREATE TRIGGER message_counts_update AFTER UPDATE OF content ON messages BEGIN UPDATE message_counts_drift SET removed = removed + 1; UPDATE message_counts_drift SET added = added + 1; END;
CREATE TRIGGER memory_question_vectors_ai AFTER INSERT ON memory_questions BEGIN INSERT INTO meta (key, value) VALUES ('question_vectors_generation', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1; END;
CREATE TRIGGER memory_question_vectors_ad AFTER DELETE ON memory_questions BEGIN INSERT INTO meta (key, value) VALUES ('question_vectors_generation', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1; 
        INSERT INTO meta (key, value) VALUES ('question_vectors_changes', '[]') ON CONFLICT (key) DO NOTHING;
        UPDATE meta SET value = json_insert(value, '$[#]', json_array(
            (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'question_vectors_generation'), old.rowid))
        WHERE key = 'question_vectors_changes';
        INSERT INTO meta (key, value) SELECT 'question_vectors_rewritten', value FROM meta
        WHERE key = 'question_vectors_generation' AND (SELECT json_array_length(value) FROM meta
            WHERE key = 'question_vectors_changes') > 256
        ON CONFLICT (key) DO UPDATE SET value = excluded.value;
        UPDATE meta SET value = '[]'
        WHERE key = 'question_vectors_changes' AND json_array_length(value) > 256; END;
CREATE TRIGGER memory_question_vectors_au AFTER UPDATE ON memory_questions BEGIN INSERT INTO meta (key, value) VALUES ('question_vectors_generation', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1; 
        INSERT INTO meta (key, value) SELECT 'question_vectors_rewritten', value FROM meta
        WHERE key = 'question_vectors_generation' ON CONFLICT (key) DO UPDATE SET value = excluded.value;
        INSERT INTO meta (key, value) VALUES ('question_vectors_changes', '[]')
        ON CONFLICT (key) DO UPDATE SET value = '[]'; END;
CREATE TRIGGER messages_calls_changed AFTER UPDATE OF content ON messages
        WHEN new.content IS NOT old.content BEGIN
            DELETE FROM call_vectors WHERE message_rowid = new.rowid;
        END;
PRAGMA user_version = 36;
