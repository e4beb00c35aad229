#!/usr/bin/env python3
"""Write memctl/store/schema.sql: what the migrations (memctl/store/migrations.py) make of
an empty file, the script a new store is made with at once (``Database.migrate``).

    python scripts/gen_schema.py            # rewrites the file: run it after adding a migration
    python scripts/gen_schema.py --check    # writes nothing; exit 1 if it is stale

The script is the migrated file's ``sqlite_master``, as SQLite keeps each statement (an
``ALTER TABLE ... ADD COLUMN`` is in its table's ``CREATE TABLE``): tables, then indexes,
views and triggers, each in the order the migrations made them, without the tables a
virtual table makes for itself. It ends by setting ``user_version`` to the number of
migrations it holds: a later migration not yet in it runs after it, as on any older store.
tests/store/test_schema.py holds a store made from it to one the migrations made.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import apsw
from regenerated import write_or_check

from memctl.store import cjk
from memctl.store.database import SCHEMA_FILE, Database, sqlite_vec_path
from memctl.store.migrations import MIGRATIONS

HEADER = """\
-- The schema of a new store: what memctl/store/migrations.py makes of an empty file, in one
-- script (Database.migrate). Written by scripts/gen_schema.py; edit that, or add a migration
-- and run it again.
"""
# sqlite_master's kinds of statement, in the order the script makes them: a trigger or
# an index needs its table made first.
KINDS = ("table", "index", "view", "trigger")


def migrated_schema() -> str:
    """The script: every migration applied to an empty file, then its schema read back."""
    with tempfile.TemporaryDirectory(prefix="memctl-schema-") as folder:
        path = Path(folder) / "memctl.db"
        connection = apsw.Connection(str(path))
        connection.enable_load_extension(True)
        connection.load_extension(sqlite_vec_path())
        cjk.register(connection)  # the tokenizer of m028
        db = Database(connection, path)
        for migration in MIGRATIONS:
            migration(db)
        shadows = {name for _, name, kind, *_ in db.tuples("PRAGMA table_list") if kind == "shadow"}
        made = db.tuples("SELECT type, name, sql FROM sqlite_master ORDER BY rowid")
        connection.close()
    statements = [
        f"{sql};"
        for kind in KINDS
        for type_, name, sql in made
        # sqlite_sequence: SQLite's own, made with the first AUTOINCREMENT table
        if type_ == kind and sql and name not in shadows and not name.startswith("sqlite_")
    ]
    return HEADER + "\n".join([*statements, f"PRAGMA user_version = {len(MIGRATIONS)};"]) + "\n"


if __name__ == "__main__":
    sys.exit(write_or_check(SCHEMA_FILE, migrated_schema, __doc__, "scripts/gen_schema.py"))
