"""Nothing lost under concurrency, crashes and a busy database: real processes, real files."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memctl.api import ingest as api
from memctl.config import load_settings
from memctl.context import Context
from memctl.ingest.apply import apply, prepare_writes
from memctl.ingest.facts import Decision, Fact, Verdict
from memctl.ingest.pipeline import record_decisions
from memctl.ingest.run import start_run
from memctl.memories.operations import get, remember, update
from memctl.model import Category
from memctl.store.database import Database
from memctl.store.migrations import MIGRATIONS
from memctl.store.runs import save_run
from tests.conftest import memctl_command, run_cli, run_memctl
from tests.fakes import HashEmbedder
from tests.holding import held
from tests.ingesting import distil

NO_LLM = {"MEMCTL_LLM": "none"}


def transcript(path: Path, n: int, tag: str) -> Path:
    lines = [
        json.dumps({"role": "user" if i % 2 == 0 else "assistant", "content": f"{tag} said {i}"})
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def memctl_process(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, **NO_LLM}
    return subprocess.Popen(
        memctl_command(list(args), env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
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
    maintain = ["-c", "ingest.spawn_worker=false", "maintain"]
    done = run_memctl(maintain, {**os.environ, **NO_LLM}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert stored(home, "SELECT count(*) FROM messages") == 160
    assert stored(home, "SELECT count(DISTINCT session_id) FROM messages") == 16
    assert stored(home, "PRAGMA user_version") == len(MIGRATIONS)


def wait_until(condition: Callable[[], bool], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def job_states(home: Path) -> list[str]:
    if not (home / "memctl.db").exists():
        return []
    with Database.open(home / "memctl.db") as db:
        return [row["state"] for row in db.rows("SELECT state FROM jobs ORDER BY id")]


def test_ingest_wait_killed_mid_job_is_finished_by_the_rerun(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"role": "user", "content": text})
            for text in (
                "I prefer helix for editing Rust code.",
                "We deploy the billing service with make release from main.",
                "Our staging database runs on host db-7.internal.",
            )
        )
        + "\n"
    )
    silent = socket.socket()  # an LLM that takes the request and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    args = ("-c", "llm=ollama", "-c", f"ollama.host={url}", "-c", "llm.timeout=600")
    waiting = subprocess.Popen(
        [sys.executable, "-m", "memctl", *args, "ingest", "--wait", "--transcript", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: job_states(home) == ["running"])
    finally:
        waiting.send_signal(signal.SIGKILL)
        waiting.wait()
        silent.close()
    again = ["ingest", "--wait", "--transcript", str(path)]
    rerun = run_memctl(again, {**os.environ, **NO_LLM}, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert "0 new" in rerun.stdout  # nothing new to store: the rerun finished the old job
    assert job_states(home) == ["done"]
    assert stored(home, "SELECT count(*) FROM memories WHERE state = 'active'") >= 2
    assert stored(home, "SELECT attempts FROM jobs") == 2


def test_a_hook_meeting_a_busy_database_spools_and_a_later_run_stores_it(
    home: Path, tmp_path: Path
) -> None:
    with Database.open(home / "memctl.db"):
        pass
    path = transcript(tmp_path / "t.jsonl", 20, "busy day")
    with held(home / "memctl.db"):
        hook = run_cli("-c", "ingest.lock_wait_ms=300", "ingest", "--transcript", str(path))
        again = run_cli("-c", "ingest.lock_wait_ms=300", "ingest", "--transcript", str(path))
    for done in (hook, again):
        assert done.returncode == 0, done.stderr
        assert "the database is busy" in done.stdout
    spooled = sorted((home / "spool").iterdir())
    assert len(spooled) == 2
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in spooled)
    assert (home / "spool").stat().st_mode & 0o777 == 0o700
    later = run_cli("-c", "ingest.spawn_worker=false", "maintain", env=NO_LLM)
    assert later.returncode == 0, later.stderr
    assert not list((home / "spool").iterdir())
    assert stored(home, "SELECT count(*) FROM messages") == 20  # twice spooled, stored once
    assert stored(home, "SELECT count(*) FROM sessions") == 1
    # the session is the file's own, as if the hook had stored it: ingesting it again adds none
    direct = run_cli(
        "-c", "ingest.spawn_worker=false", "ingest", "--json", "--transcript", str(path)
    )
    assert json.loads(direct.stdout)["messages_new"] == 0


class WatchedEmbedder(HashEmbedder):
    """Records, for every embedding, whether the store was inside a write transaction."""

    def __init__(self) -> None:
        super().__init__()
        self.ctx: Context | None = None
        self.in_transaction: list[bool] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        assert self.ctx is not None
        self.in_transaction.append(self.ctx.db.connection.in_transaction)
        return super().embed(texts)


def test_no_embedding_happens_inside_a_write_transaction(home: Path, tmp_path: Path) -> None:
    embedder = WatchedEmbedder()
    ctx = Context(load_settings(overrides={"llm": "none"}), embedder=embedder)
    embedder.ctx = ctx
    try:
        pinned = remember(ctx, "We deploy the billing service on Fridays.")
        update(ctx, pinned.id, content="We deploy the billing service on Thursdays.")
        distil(ctx, "user: I prefer helix for editing Rust code.\nuser: Our CI runs on buildkite.")
        note = tmp_path / "note.md"
        note.write_text("# Hosts\n\nOur staging database runs on host db-7.internal.\n")
        api.import_files(ctx, api.plan_import(api.ImportRequest(paths=(str(note),))))
        run = start_run(ctx, "ingest", None, pinned.scope)
        fact = Fact("We deploy the billing service on Thursdays at noon.", Category.EVENTS)
        (fact.vector,) = embedder.embed([fact.content])
        decisions = [Decision(Verdict.MERGE, fact, target_id=pinned.id)]
        prepare_writes(run, decisions)
        with ctx.db.atomic():
            apply(run, decisions)
            record_decisions(run, decisions)
            save_run(ctx.db, run.record)
        assert "noon" in get(ctx, pinned.id)[0].content
        api.undo(ctx, run.id)
        assert "noon" not in get(ctx, pinned.id)[0].content
    finally:
        ctx.close()
    assert len(embedder.in_transaction) >= 6
    assert not any(embedder.in_transaction)
