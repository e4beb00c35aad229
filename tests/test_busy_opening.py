"""A hook's ingest meeting a busy database before it read the transcript: opening a new
store (its switch to WAL mode, its migrations) or taking an old path scope into a project's
new one. Another real process holds the write lock; the hook spools, never exits 4."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from memctl.ingest import pending
from memctl.integrations import hooks
from memctl.store.database import Database
from tests.conftest import run_cli
from tests.holding import WRITE_LOCK, held
from tests.ingesting import SESSION
from tests.integrations.test_integrations_hooks import big_transcript
from tests.test_reliability import NO_LLM, stored, transcript

WAIT = ("-c", "ingest.lock_wait_ms=300", "-c", "ingest.spawn_worker=false")
# A new file in the old journal mode with a table, its write lock held: no switch to WAL.
OLD_JOURNAL_LOCK = WRITE_LOCK.replace(
    "db.execute('BEGIN IMMEDIATE')",
    "db.execute('CREATE TABLE held (x)'); db.execute('BEGIN IMMEDIATE')",
)
# A new, empty file in WAL mode, its write lock held: no migrations.
NEW_WAL_LOCK = WRITE_LOCK.replace(
    "db.execute('BEGIN IMMEDIATE')",
    "db.execute('PRAGMA journal_mode = WAL'); db.execute('BEGIN IMMEDIATE')",
)


def _hook_spools_then_maintain_stores(home: Path, tmp_path: Path, lock: str, cwd: Path) -> None:
    path = transcript(tmp_path / "t.jsonl", 6, "busy start")
    db = home / "memctl.db"
    with held(db, lock):
        hook = run_cli(*WAIT, "ingest", "--transcript", str(path), cwd=cwd)
    assert hook.returncode == 0, hook.stderr
    assert "the database is busy" in hook.stdout
    assert len(list((home / "spool").iterdir())) == 1
    later = run_cli("-c", "ingest.spawn_worker=false", "maintain", env=NO_LLM, cwd=cwd)
    assert later.returncode == 0, later.stderr
    assert not list((home / "spool").iterdir())
    assert stored(home, "SELECT count(*) FROM messages") == 6


def test_a_busy_switch_to_wal_mode_spools_the_transcript(home: Path, tmp_path: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    _hook_spools_then_maintain_stores(home, tmp_path, OLD_JOURNAL_LOCK, tmp_path)


def test_busy_migrations_of_a_new_store_spool_the_transcript(home: Path, tmp_path: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    _hook_spools_then_maintain_stores(home, tmp_path, NEW_WAL_LOCK, tmp_path)


def test_a_busy_adoption_of_a_projects_old_scope_spools_the_transcript(
    home: Path, tmp_path: Path
) -> None:
    with Database.open(home / "memctl.db"):
        pass
    project = tmp_path / "app"
    project.mkdir()
    for git in (["init", "-q"], ["remote", "add", "origin", "https://example.com/team/app.git"]):
        subprocess.run(["git", *git], cwd=project, check=True)
    _hook_spools_then_maintain_stores(home, tmp_path, WRITE_LOCK, project)


def test_a_busy_opening_with_scope_by_name_leaves_the_file_unread(
    home: Path, tmp_path: Path
) -> None:
    """The spool needs the database to resolve a scope given by name: nothing is read, the
    hook exits 0 and says so, and a later ingest stores the whole file."""
    home.mkdir(parents=True, exist_ok=True)
    path = transcript(tmp_path / "t.jsonl", 4, "named scope")
    with held(home / "memctl.db", NEW_WAL_LOCK):
        hook = run_cli(*WAIT, "ingest", "--scope", "team-app", "--transcript", str(path))
    assert hook.returncode == 0, hook.stderr
    assert f"the database is busy: {path} was not read" in hook.stdout
    assert not (home / "spool").exists() or not list((home / "spool").iterdir())
    later = run_cli(*WAIT, "ingest", "--scope", "team-app", "--transcript", str(path))
    assert later.returncode == 0, later.stderr
    assert stored(home, "SELECT count(*) FROM messages") == 4


def test_a_session_end_hook_on_a_busy_new_store_leaves_a_big_transcript_to_maintain(
    home: Path, tmp_path: Path
) -> None:
    """Too big for the hook to spool within the client's timeout: the file stays unread and
    pending, with no error; maintain captures every message once the store is free."""
    home.mkdir(parents=True, exist_ok=True)
    path = big_transcript(tmp_path / "huge.jsonl", tmp_path, 400, 1, 6000)
    assert path.stat().st_size > hooks.INLINE_BYTES
    event = {"session_id": SESSION, "transcript_path": str(path), "cwd": str(tmp_path)}
    with held(home / "memctl.db", NEW_WAL_LOCK):
        hook = run_cli(*WAIT, "hook", "claude-code", "SessionEnd", input=json.dumps(event))
    assert (hook.returncode, hook.stdout) == (0, "")
    (mark,) = pending.grown(home, "", 24, 10)
    assert (mark.path, mark.size, mark.error) == (str(path), -1, "")
    later = run_cli("-c", "ingest.spawn_worker=false", "maintain", env=NO_LLM)
    assert later.returncode == 0, later.stderr
    assert stored(home, "SELECT count(*) FROM messages") == 400
