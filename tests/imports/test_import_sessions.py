"""`memctl import` of a folder of assistants' session transcripts: taken in as `memctl
ingest FILE` takes each one (real processes, real SQLite files)."""

from __future__ import annotations

import shutil
from pathlib import Path

from memctl.store.database import Database
from tests.conftest import run_cli

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
SESSIONS = ("codex-0.171.jsonl", "claude-code.jsonl")
# no LLM, no detached worker: the distillation stays queued for the test to see
QUIET = {"MEMCTL_LLM": "none", "MEMCTL_INGEST_SPAWN_WORKER": "false"}

STORED = """SELECT s.client, s.message_count, (SELECT count(*) FROM jobs j
    WHERE j.session_id = s.id AND j.state = 'queued') FROM sessions s ORDER BY s.client"""


def _stored(home: Path) -> list[tuple[object, ...]]:
    with Database.open(home / "memctl.db") as db:
        return db.tuples(STORED)


def test_a_folder_of_assistant_sessions_is_taken_in_as_ingest_takes_each(
    tmp_path: Path, home: Path
) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in SESSIONS:
        shutil.copy(TRANSCRIPTS / name, folder / name)
    ingested = tmp_path / "ingested"
    for name in SESSIONS:
        done = run_cli("ingest", str(folder / name), env={**QUIET, "MEMCTL_HOME": str(ingested)})
        assert done.returncode == 0, done.stderr

    done = run_cli("import", str(folder), env=QUIET)
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert "looks like JSON" not in said
    assert "2 assistant transcripts: 22 messages of 2 sessions stored verbatim" in said
    assert "queued for distillation" in said
    stored = _stored(home)
    assert [row[0] for row in stored] == ["claude-code", "codex"]
    assert stored == _stored(ingested)  # the same sessions, messages and queued jobs
    assert all(messages and jobs == 1 for _, messages, jobs in stored)

    again = run_cli("import", str(folder), env=QUIET)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "2 assistant transcripts with nothing new" in " ".join(again.stdout.split())
    assert _stored(home) == stored  # nothing stored twice
