"""A new store is made from memctl/store/schema.sql: the same file the migrations make."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memctl.store.database import Database
from memctl.store.migrations import MIGRATIONS
from tests.conftest import ROOT, store_at_version


def _made(db: Any) -> tuple[list[tuple[Any, ...]], dict[str, list[tuple[Any, ...]]]]:
    """A store's schema (every ``sqlite_master`` row but its page number) and every row
    of its tables (not a full-text index's own: an emptied index and a new one differ in
    bytes, not in what they hold)."""
    schema = db.tuples("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name")
    listed = db.tuples("PRAGMA table_list")
    tables = [  # sqlite_schema: read above, without its page numbers
        str(n)
        for s, n, kind, *_ in listed
        if (s, kind) == ("main", "table") and n != "sqlite_schema"
    ]
    rows = {t: sorted(db.tuples(f'SELECT * FROM "{t}"'), key=repr) for t in tables}
    return schema, rows


def test_a_new_store_is_the_store_the_migrations_make(tmp_path: Path) -> None:
    connection, migrated = store_at_version(tmp_path / "migrated", len(MIGRATIONS))
    expected = _made(migrated)
    connection.close()
    with Database.open(tmp_path / "new" / "memctl.db") as new:
        assert new.value("PRAGMA user_version") == len(MIGRATIONS)
        assert _made(new) == expected
        assert new.value("PRAGMA integrity_check") == "ok"


def test_the_schema_file_holds_every_migration() -> None:
    """A migration added without ``scripts/gen_schema.py`` run again is applied after the
    script (so a new store is still right), but each new store pays for it: this fails."""
    done = subprocess.run(
        [sys.executable, "scripts/gen_schema.py", "--check"], cwd=ROOT, capture_output=True
    )
    assert done.returncode == 0, done.stdout.decode()


def test_a_migration_newer_than_the_schema_file_runs_on_a_new_store(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def adds_a_table(db: Database) -> None:
        db.execute("CREATE TABLE added_by_an_upgrade (id INTEGER PRIMARY KEY)")

    monkeypatch.setattr("memctl.store.database.MIGRATIONS", [*MIGRATIONS, adds_a_table])
    with Database.open(home / "memctl.db") as db:
        assert db.value("PRAGMA user_version") == len(MIGRATIONS) + 1
        assert db.rows("SELECT * FROM added_by_an_upgrade") == []
