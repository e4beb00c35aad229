"""Nothing lost under concurrency, crashes and a busy database: real processes, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memctl.store.database import Database
from memctl.store.migrations import MIGRATIONS

NO_LLM = {"MEMCTL_LLM": "none"}


def transcript(path: Path, n: int, tag: str) -> Path:
    lines = [
        json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": f"{tag} said {i}"})
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def memctl_process(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memctl", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **NO_LLM},
    )


def stored(home: Path, sql: str) -> int:
    with Database.open(home / "memctl.db") as db:
        return int(db.value(sql) or 0)


def test_sixteen_first_ingests_at_once_all_succeed_and_store_everything(
    home: Path, tmp_path: Path
) -> None:
    assert not home.exists()
    files = [transcript(tmp_path / f"t{i}.jsonl", 10, f"session {i}") for i in range(16)]
    processes = [memctl_process("ingest", "--mode", "raw", "--transcript", str(f)) for f in files]
    outcomes = [(p.communicate(timeout=300), p.returncode) for p in processes]
    assert [code for _, code in outcomes] == [0] * 16, [err for (_, err), _ in outcomes]
    assert all("Traceback" not in err for (_, err), _ in outcomes)
    # a process that could not get the database in time spooled its transcript
    done = subprocess.run(
        [sys.executable, "-m", "memctl", "-c", "ingest.spawn_worker=false", "maintain"],
        capture_output=True,
        text=True,
        env={**os.environ, **NO_LLM},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert stored(home, "SELECT count(*) FROM messages") == 160
    assert stored(home, "SELECT count(DISTINCT session_id) FROM messages") == 16
    assert stored(home, "PRAGMA user_version") == len(MIGRATIONS)
