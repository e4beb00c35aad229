"""memctl maintain on real stores with a controlled clock: memories made "days ago"."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memctl.api.maintain import MaintainRequest, RestoreRequest, maintain, restore
from memctl.cli.maintain import show_report
from memctl.context import Context
from memctl.errors import InputError, StoreError, UsageError
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.pipeline import run_session
from memctl.ingest.undo import undo
from memctl.maintain.backup import backups
from memctl.maintain.lock import maintain_lock
from memctl.memories.operations import update
from memctl.memories.strength import current_strength
from memctl.model import (
    Category,
    Kind,
    Memory,
    Message,
    Relation,
    RelationType,
    Role,
    Session,
    State,
    Tier,
    format_time,
    now_iso,
)
from memctl.store import memories as store
from memctl.store.database import MESSAGES_FTS
from memctl.store.events import count_events
from memctl.store.forget import forget_messages
from memctl.store.maintenance import fts_segments, optimize_fts, vacuum_into
from memctl.store.memories import MemoryFilter
from memctl.store.message_search import counts_stale, search_messages, stored_bounds
from memctl.store.projects import project_rows
from memctl.store.relations import add_relation, relations_of
from memctl.store.runs import get_run
from memctl.store.sessions import insert_messages, save_session
from tests.conftest import run_cli
from tests.fakes import HashEmbedder
from tests.ingesting import source
from tests.ollama_server import Delay, FakeOllama

NOW = datetime.now(UTC)


def put(ctx: Context, content: str, days_ago: float = 0.0, **fields: Any) -> Memory:
    """A memory created and stored ``days_ago`` days before NOW, with its vector."""
    at = format_time(NOW - timedelta(days=days_ago))
    memory = Memory(content=content, created_at=at, stored_at=at, **fields)
    (vector,) = ctx.vectors([content])
    with ctx.db.atomic():
        store.insert_memory(ctx.db, memory, vector)
    return memory


def get(ctx: Context, memory: Memory) -> Memory:
    found = store.get_memory(ctx.db, memory.id)
    assert found is not None
    return found


def run(ctx: Context, **request: Any) -> Any:
    return maintain(ctx, MaintainRequest(**request))


def test_decay_by_kind_and_pinned_never(make_ctx: Any) -> None:
    ctx = make_ctx()
    episode = put(ctx, "We shipped the release on Friday.", 10, kind=Kind.EPISODIC)
    fact = put(ctx, "The API is written in Go.", 10, kind=Kind.SEMANTIC)
    pinned = put(ctx, "Never force-push to main.", 100, kind=Kind.PINNED)
    fresh = put(ctx, "The CI runs on GitHub Actions.", 0, kind=Kind.SEMANTIC)
    report = run(ctx, only="decay")
    assert report.task("decay").counts["decayed"] == 2
    assert math.isclose(get(ctx, episode).strength, math.exp(-1.5), rel_tol=0.01)
    assert math.isclose(get(ctx, fact).strength, math.exp(-0.3), rel_tol=0.01)
    assert get(ctx, pinned).strength == 1.0 and get(ctx, pinned).decayed_at is None
    assert get(ctx, fresh).strength == 1.0
    # recall reads the same model: right after the run, stored and current agree
    stored = get(ctx, episode)
    assert math.isclose(current_strength(stored, NOW, ctx.settings), stored.strength, rel_tol=0.01)
    # five days later the episode has faded further from where maintain left it
    later = NOW + timedelta(days=5)
    assert math.isclose(
        current_strength(stored, later, ctx.settings), math.exp(-0.15 * 15), rel_tol=0.01
    )
    assert run(ctx, only="decay").task("decay").counts["decayed"] == 0
    assert run(ctx, only="decay", now=later).task("decay").counts["decayed"] == 3


def test_consolidate_turns_old_episodes_into_linked_facts(make_ctx: Any) -> None:
    ctx = make_ctx()
    old = put(
        ctx,
        "Long debugging session today. I prefer pytest over unittest for every project.",
        5,
        kind=Kind.EPISODIC,
        category=Category.EVENTS,
    )
    recent = put(ctx, "I prefer vim keybindings in every editor.", 1, kind=Kind.EPISODIC)
    report = run(ctx, only="consolidate")
    change = report.task("consolidate").changes[0]
    assert change["id"] == old.id and change["memories"]
    fact = get(ctx, Memory("x", id=change["memories"][0]))
    assert fact.kind == Kind.SEMANTIC and "pytest over unittest" in fact.content
    assert fact.created_at == get(ctx, old).created_at  # said then, not when maintain ran
    # so the project's last activity is the episode's day, not the day maintain ran
    (row,) = project_rows(ctx.db, ())
    assert row.last_activity == get(ctx, recent).created_at
    assert any(
        r.src_id == old.id and r.dst_id == fact.id and r.type == RelationType.SUPPORTS
        for r in relations_of(ctx.db, old.id)
    )
    assert get(ctx, old).state == State.ACTIVE and get(ctx, old).consolidated_at
    assert get(ctx, recent).consolidated_at is None
    again = run(ctx, only="consolidate").task("consolidate")
    assert again.changes == []


def test_a_digest_gives_no_fact_of_the_turns_it_quotes(make_ctx: Any) -> None:
    """Its Asked and Decided lines join cut user turns by "; ": ingest read those turns
    whole, and read again they would make one glued fact of two rules. Its Outcome is the
    assistant's closing answer: no rule of the user's."""
    ctx = make_ctx()
    digest = put(
        ctx,
        "Session of 2026-01-08 (claude-code) — we always use uv for Python dependencies\n"
        "Asked: we always use uv for Python dependencies\n"
        "Decided: never push to main without a review; I prefer pytest over unittest\n"
        "Found: the staging database is called pelican-stage\n"
        "Outcome: Done, the lock file is regenerated.\n\n"
        "Then: From now on we use uv instead of Poetry.",
        5,
        kind=Kind.EPISODIC,
        category=Category.EVENTS,
        tags=["digest", "session"],
    )
    change = run(ctx, only="consolidate").task("consolidate").changes[0]
    assert change["id"] == digest.id
    assert change["facts"] == ["Found: the staging database is called pelican-stage"]


def test_the_report_reads_as_a_person_would_say_it(
    make_ctx: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table says "1 episode consolidated, 1 fact", not "1 consolidate, 1 facts"; a
    skipped task says why once, in its row."""
    ctx = make_ctx()
    put(ctx, "Long debugging session. I prefer pytest over unittest.", 5, kind=Kind.EPISODIC)
    show_report(run(ctx, only="consolidate,sync"))
    shown = " ".join(capsys.readouterr().out.split())
    assert "consolidate done 1 episode consolidated, 1 fact (" in shown, shown
    assert "sync skipped sync.auto is off" in shown and shown.count("sync.auto is off") == 1
    assert re.search(r"run \w{12} of \d{4}-\d\d-\d\d \d\d:\d\d UTC: 0/\d+ LLM tokens", shown)


def test_merge_old_similar_semantic_memories_carries_relations(make_ctx: Any) -> None:
    ctx = make_ctx(maintain__merge_similarity=0.7)
    short = put(ctx, "The deploy script lives in ops/deploy.sh", 10)
    full = put(ctx, "The deploy script lives in ops/deploy.sh and needs AWS credentials", 10)
    young = put(ctx, "The deploy script lives in ops/deploy.sh", 1, scope="other")
    neighbour = put(ctx, "Production runs in eu-west-1.", 10)
    add_relation(ctx.db, Relation(short.id, neighbour.id, RelationType.RELATED))
    report = run(ctx, only="consolidate")
    assert report.task("consolidate").counts["merge"] == 1
    assert get(ctx, short).state == State.SUPERSEDED and get(ctx, short).superseded_by == full.id
    assert get(ctx, full).state == State.ACTIVE
    assert get(ctx, young).state == State.ACTIVE
    edges = {(r.src_id, r.dst_id, r.type) for r in relations_of(ctx.db, full.id)}
    assert (full.id, neighbour.id, RelationType.RELATED) in edges
    assert (full.id, short.id, RelationType.SUPERSEDES) in edges


def test_merge_with_the_llm_writes_the_merged_text(
    make_ctx: Any, ollama_server: FakeOllama
) -> None:
    ctx = make_ctx(llm_url=ollama_server.url, maintain__merge_similarity=0.7)
    short = put(ctx, "The deploy script lives in ops/deploy.sh", 10)
    full = put(ctx, "The deploy script lives in ops/deploy.sh and needs AWS credentials", 10)
    merged = "Deploy with ops/deploy.sh; it needs AWS credentials."
    ollama_server.script_chat({"content": merged})
    report = run(ctx, only="consolidate")
    assert report.run.tokens > 0 and report.run.token_budget == 20000
    assert get(ctx, full).content == merged and get(ctx, short).superseded_by == full.id
    assert "ops/deploy.sh" in ollama_server.requests_to("/api/chat")[0]["messages"][-1]["content"]
    saved = get_run(ctx.db, report.run.id)
    assert saved is not None and saved.tokens == report.run.tokens
    undo(ctx, report.run.id)
    assert get(ctx, full).content.endswith("needs AWS credentials")
    assert get(ctx, short).state == State.ACTIVE


def test_consolidate_with_the_llm_extracts_facts(make_ctx: Any, ollama_server: FakeOllama) -> None:
    ctx = make_ctx(llm_url=ollama_server.url)
    episode = put(ctx, "We spent the morning on the flaky login test.", 5, kind=Kind.EPISODIC)
    fact = {
        "content": "The login test is flaky because of a race in the session cache.",
        "category": "cases",
        "importance": 0.8,
        "confidence": 0.9,
    }
    known = {**fact, "content": "The team uses pytest-xdist to run tests.", "category": "entities"}
    ollama_server.script_chat({"facts": [fact, known]}, {"decisions": []})
    change = run(ctx, only="consolidate").task("consolidate").changes[0]
    assert change["id"] == episode.id
    assert change["facts"] == ["The team uses pytest-xdist to run tests."]  # cases stay episodes
    made = get(ctx, Memory("x", id=change["memories"][0]))
    assert made.kind == Kind.SEMANTIC and made.source == f"memory:{episode.id}"


def test_an_llm_that_fails_is_noted_on_the_run(make_ctx: Any, ollama_server: FakeOllama) -> None:
    ctx = make_ctx(llm_url=ollama_server.url)
    ollama_server.chat_fn = lambda messages: {"no": "facts"}  # never a valid answer
    episode = put(ctx, "I prefer tea over coffee in the morning.", 5, kind=Kind.EPISODIC)
    report = run(ctx, only="consolidate")
    assert report.task("consolidate").changes[0]["id"] == episode.id  # the rules did it
    notes = get_run(ctx.db, report.run.id).notes  # type: ignore[union-attr]
    assert any("rule-based stages for the rest of this run" in note for note in notes)


def test_dedup_same_scope_never_pinned(make_ctx: Any) -> None:
    ctx = make_ctx()
    a = put(ctx, "The staging database is Postgres 16.", 1)
    b = put(ctx, "The staging database is Postgres 16.", 0)
    elsewhere = put(ctx, "The staging database is Postgres 16.", 0, scope="other")
    p1 = put(ctx, "Always run the linter.", 0, kind=Kind.PINNED)
    p2 = put(ctx, "Always run the linter.", 0, kind=Kind.PINNED)
    opposite = put(ctx, "The staging database is not Postgres 16.", 0)
    report = run(ctx, only="dedup")
    assert report.task("dedup").counts["dedup"] == 1
    assert {get(ctx, a).state, get(ctx, b).state} == {State.ACTIVE, State.SUPERSEDED}
    for untouched in (elsewhere, p1, p2, opposite):
        assert get(ctx, untouched).state == State.ACTIVE
    assert run(ctx, only="dedup").task("dedup").changes == []


def test_only_new_or_changed_memories_are_compared_again(make_ctx: Any) -> None:
    ctx = make_ctx()
    old = [put(ctx, f"Service {n} runs on port {8000 + n} behind nginx.", 1) for n in range(6)]
    first = run(ctx, only="dedup").task("dedup")
    assert first.counts == {"compared": 6}
    assert run(ctx, only="dedup").task("dedup").counts == {}  # nothing new: nothing compared
    copy = put(ctx, old[2].content.lower(), 0)  # not the same text: a near duplicate
    store.update_memory(ctx.db, old[4].id, {"scope": "elsewhere"})
    again = run(ctx, only="dedup").task("dedup")
    assert again.counts["compared"] == 2  # the new one and the one that moved
    assert again.counts["dedup"] == 1
    assert {get(ctx, old[2]).state, get(ctx, copy).state} == {State.ACTIVE, State.SUPERSEDED}


def test_a_merge_stopped_by_its_limit_goes_on_next_run(make_ctx: Any) -> None:
    ctx = make_ctx(maintain__merge_similarity=0.7, maintain__merge_max_clusters=1)
    for topic in ("deploy script lives in ops/deploy.sh", "test suite runs with pytest -x"):
        put(ctx, f"The {topic}", 10)
        put(ctx, f"The {topic} on every machine", 10)
    first = run(ctx, only="consolidate").task("consolidate")
    assert first.counts["merge"] == 1 and "stopped at 1 clusters" in first.notes[0]
    second = run(ctx, only="consolidate").task("consolidate")
    assert second.counts["merge"] == 1
    assert "merge" not in run(ctx, only="consolidate").task("consolidate").counts


def test_archive_weak_unused_but_not_pinned_or_core(make_ctx: Any) -> None:
    ctx = make_ctx()
    weak = put(ctx, "A one-off note about lunch.", 40, strength=0.05)
    core = put(ctx, "My name is Ada.", 40, strength=0.05, tier=Tier.CORE)
    pinned = put(ctx, "Pinned rule.", 40, strength=0.05, kind=Kind.PINNED)
    used = put(ctx, "Recalled last week.", 40, strength=0.05)
    store.update_memory(ctx.db, used.id, {"last_accessed_at": format_time(NOW - timedelta(days=7))})
    strong = put(ctx, "Still strong.", 40, strength=0.9)
    report = run(ctx, only="archive")
    assert [c["id"] for c in report.task("archive").changes] == [weak.id]
    assert get(ctx, weak).state == State.ARCHIVED
    for kept in (core, pinned, used, strong):
        assert get(ctx, kept).state == State.ACTIVE


def test_an_episode_is_archived_only_once_consolidated(make_ctx: Any) -> None:
    ctx = make_ctx()
    episode = put(ctx, "I prefer dark mode in every editor.", 40, kind=Kind.EPISODIC, strength=0.05)
    report = run(ctx, only="archive")
    assert report.task("archive").changes == [] and get(ctx, episode).state == State.ACTIVE
    report = run(ctx, only="consolidate,archive")
    assert get(ctx, episode).consolidated_at is not None
    assert [c["id"] for c in report.task("archive").changes] == [episode.id]
    assert get(ctx, episode).state == State.ARCHIVED


def test_dry_run_plans_with_ids_and_writes_nothing(make_ctx: Any) -> None:
    ctx = make_ctx()
    episode = put(ctx, "I prefer dark mode in every editor.", 5, kind=Kind.EPISODIC)
    weak = put(ctx, "Old note.", 40, strength=0.05)
    events = count_events(ctx.db)
    report = run(ctx, dry_run=True)
    planned = {t.task: t for t in report.tasks}
    assert episode.id in [c["id"] for c in planned["decay"].changes]
    assert planned["consolidate"].changes[0]["id"] == episode.id
    assert planned["archive"].changes[0]["id"] == weak.id
    assert all(t.status in ("planned", "skipped") for t in report.tasks)
    assert count_events(ctx.db) == events and get(ctx, weak).state == State.ACTIVE
    assert backups(ctx.settings) == []


def test_undo_reverts_a_whole_maintain_run(make_ctx: Any) -> None:
    ctx = make_ctx()
    episode = put(ctx, "I prefer pytest over unittest for every project.", 5, kind=Kind.EPISODIC)
    dup_a = put(ctx, "The cache is Redis.", 2)
    dup_b = put(ctx, "The cache is Redis.", 2)
    weak = put(ctx, "Old note.", 40, strength=0.05)
    report = run(ctx, skip="upkeep")
    assert get(ctx, weak).state == State.ARCHIVED
    fact_id = report.task("consolidate").changes[0]["memories"][0]
    done = undo(ctx, report.run.id)
    assert done.reverted > 0 and done.skipped == []
    assert get(ctx, weak).state == State.ACTIVE
    assert {get(ctx, dup_a).state, get(ctx, dup_b).state} == {State.ACTIVE}
    assert get(ctx, episode).strength == 1.0 and get(ctx, episode).consolidated_at is None
    assert get(ctx, Memory("x", id=fact_id)).state == State.DELETED
    runs = json.loads(run_cli("runs", "--json", env={"MEMCTL_LLM": "none"}).stdout)
    assert {r["kind"] for r in runs} == {"maintain", "undo"}


def test_second_run_changes_nothing(make_ctx: Any) -> None:
    ctx = make_ctx()
    put(ctx, "I prefer tabs.", 5, kind=Kind.EPISODIC)
    put(ctx, "The cache is Redis.", 9)
    put(ctx, "The cache is Redis.", 9)
    put(ctx, "Old note.", 40, strength=0.05)
    run(ctx)
    events = count_events(ctx.db)
    again = run(ctx)
    assert count_events(ctx.db) == events
    assert all(not t.changes for t in again.tasks), [t.to_dict() for t in again.tasks]


def test_two_maintains_at_once(make_ctx: Any, home: Path) -> None:
    ctx = make_ctx()
    with maintain_lock(ctx.settings) as holder:
        assert holder is None
        done = run_cli("maintain", env={"MEMCTL_LLM": "none"})
        assert run(ctx).locked_by == str(os.getpid())
    assert done.returncode == 0
    assert f"another maintain is running (pid {os.getpid()})" in done.stdout
    assert run(ctx).locked_by is None


def test_kill_during_maintain_then_a_clean_rerun(home: Path) -> None:
    with FakeOllama() as server:
        config = {"MEMCTL_EMBEDDER": "ollama", "MEMCTL_OLLAMA_HOST": server.url}
        os.environ.update(config)
        try:
            from memctl.config import load_settings

            ctx = Context(load_settings())
            episode = put(ctx, "I prefer tea over coffee in the morning.", 5, kind=Kind.EPISODIC)
            faded = put(ctx, "We shipped on Friday.", 10, kind=Kind.EPISODIC)
            server.script_chat(Delay(60))
            process = subprocess.Popen(
                [sys.executable, "-m", "memctl", "maintain"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 60
            while not server.requests_to("/api/chat") and time.monotonic() < deadline:
                time.sleep(0.05)
            process.send_signal(signal.SIGKILL)
            process.wait()
            assert get(ctx, faded).strength < 0.5  # decay committed before the kill
            killed = [r for r in ctx.db.rows("SELECT id, status FROM runs")]
            assert [r["status"] for r in killed] == ["running"]
            assert get(ctx, episode).consolidated_at is None
            os.environ["MEMCTL_LLM"] = "none"
            ctx.close()
            ctx = Context(load_settings())
            report = run(ctx)
            assert report.task("decay").counts["decayed"] == 0
            assert episode.id in [c["id"] for c in report.task("consolidate").changes]
            assert get_run(ctx.db, killed[0]["id"]).status == "interrupted"  # type: ignore[union-attr]
            assert ctx.db.value("PRAGMA integrity_check") == "ok"
            ctx.close()
        finally:
            for name in [*config, "MEMCTL_LLM"]:
                os.environ.pop(name, None)


def test_a_backup_a_day_when_something_changed(make_ctx: Any) -> None:
    ctx = make_ctx()
    put(ctx, "First.", 0)
    assert run(ctx, only="upkeep").task("upkeep").changes[-1]["action"] == "backup"
    put(ctx, "Second.", 0)
    assert len(backups(ctx.settings)) == 1  # the newest is younger than a day
    (first,) = backups(ctx.settings)
    killed = [ctx.settings.db_path.with_name("memctl.db.restoring"), Path(f"{first}.partial")]
    for left in killed:  # what a killed restore and a killed backup leave
        shutil.copyfile(first, left)
    assert not [
        c for c in run(ctx, only="upkeep").task("upkeep").changes if c["action"] == "backup"
    ]
    assert not any(left.exists() for left in killed)  # removed though no backup was due
    (newest,) = backups(ctx.settings)
    day_ago = time.time() - 25 * 3600
    os.utime(newest, (day_ago, day_ago))
    run(ctx, only="upkeep")
    assert len(backups(ctx.settings)) == 2


@pytest.mark.fresh
def test_a_backup_killed_midway_is_never_the_newest(make_ctx: Any, home: Path) -> None:
    ctx = make_ctx()
    put(ctx, "First.", 0)
    folder = home / "backups"
    folder.mkdir(mode=0o700)
    left = folder / "memctl-29991231T000000000000Z.db.partial"  # what kill -9 leaves
    left.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    assert backups(ctx.settings) == []  # so a backup is due, and restore never picks it
    run(ctx, only="upkeep")
    (made,) = backups(ctx.settings)
    assert not left.exists() and stat.S_IMODE(made.stat().st_mode) == 0o600
    assert run_cli("restore", str(made)).returncode == 0


def test_a_forget_removes_a_killed_restore_s_copy_not_one_being_made(make_ctx: Any) -> None:
    from memctl.api.memory import delete_for_good

    ctx = make_ctx()
    one, two = put(ctx, "First.", 0), put(ctx, "Second.", 0)
    copy = ctx.settings.db_path.with_name("memctl.db.restoring")
    copy.write_bytes(b"SQLite format 3\x00")
    with maintain_lock(ctx.settings) as holder:  # a restore holds it while it copies
        assert holder is None
        delete_for_good(ctx, one.id)
    assert copy.exists()
    delete_for_good(ctx, two.id)  # a killed restore's lock went with it
    assert not copy.exists()


def test_backup_and_restore_round_trip(make_ctx: Any, home: Path) -> None:
    ctx = make_ctx(maintain__backups=2, maintain__backup_every_hours=0)
    kept = put(ctx, "Kept in the backup.", 0)
    run(ctx, only="upkeep")
    (saved,) = backups(ctx.settings)
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    later = put(ctx, "Written after the backup.", 0)
    result = restore(ctx, RestoreRequest(saved))
    assert result.previous_saved_as.exists()
    ctx2 = make_ctx(maintain__backups=2, maintain__backup_every_hours=0)
    assert store.get_memory(ctx2.db, kept.id) is not None
    assert store.get_memory(ctx2.db, later.id) is None
    assert len(ctx2.db.rows("SELECT rowid FROM memories_vec")) == 1
    with sqlite3.connect(result.previous_saved_as) as old:
        assert old.execute("SELECT count(*) FROM memories").fetchone()[0] == 2
    put(ctx2, "Another change.", 0)
    run(ctx2, only="upkeep")
    assert len(backups(ctx2.settings)) == 2  # the newest two are kept
    junk = home / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(InputError):
        restore(ctx2, RestoreRequest(junk))


def test_damaged_store_is_reported_with_exit_status_4(make_ctx: Any, home: Path) -> None:
    ctx = make_ctx()
    for number in range(300):
        put(ctx, f"Memory number {number} with some words to fill pages.", 0)
    run(ctx, only="upkeep")  # a fresh backup: the next runs make the quick check
    ctx.close()
    path = ctx.settings.db_path
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = raw.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'memories_created_at'"
        ).fetchone()[0]
        page_size = raw.execute("PRAGMA page_size").fetchone()[0]
    with open(path, "r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\x0d" + b"\xff" * 15)
    with pytest.raises(StoreError, match="damaged"):
        run(make_ctx())
    done = run_cli("maintain", env={"MEMCTL_LLM": "none"})
    assert done.returncode == 4 and "damaged" in done.stderr


def test_cli_only_skip_json_and_crontab(home: Path) -> None:
    env = {"MEMCTL_LLM": "none"}
    data = json.loads(run_cli("maintain", "--only", "decay,archive", "--json", env=env).stdout)
    assert [t["task"] for t in data["tasks"]] == ["decay", "archive"]
    data = json.loads(
        run_cli("maintain", "--full", "--skip", "sync,upkeep", "--json", env=env).stdout
    )
    assert "upkeep" not in [t["task"] for t in data["tasks"]]
    table = run_cli("maintain", env=env).stdout
    assert "sync.auto is off" in table and "decay" in table
    bad = run_cli("maintain", "--only", "nonsense", env=env)
    assert bad.returncode == 2 and "unknown maintain task 'nonsense'" in bad.stderr
    schedule = run_cli("maintain", "--print-crontab", env=env).stdout
    assert "maintain" in schedule and "OnCalendar=hourly" in schedule
    assert schedule.splitlines()[1].split()[:5] == ["17", "*", "*", "*", "*"]


def test_unknown_task_in_request() -> None:
    with pytest.raises(UsageError):
        from memctl.config import load_settings
        from memctl.maintain.pipeline import chosen_tasks

        chosen_tasks(load_settings(), "decay,bogus", None)


def backfill(ctx: Context, days_ago: float) -> None:
    """Ingest and distil a session whose messages were written ``days_ago`` days before NOW."""
    at = format_time(NOW - timedelta(days=days_ago))
    lines = [
        {"role": "user", "content": text, "created_at": at}
        for text in (
            "I prefer pytest over unittest for every project.",
            "We deploy the API with GitHub Actions to Fly.io every Friday.",
            "Remember that the staging database is Postgres 16 on port 5433.",
        )
    ]
    text = "\n".join(json.dumps(line) for line in lines)
    capture(ctx, source(text), IngestOptions(session_id=f"old-{days_ago}"))
    run_session(ctx, f"old-{days_ago}")


def test_backfilled_history_survives_the_first_maintain(make_ctx: Any) -> None:
    ctx = make_ctx()
    backfill(ctx, 400)
    made = store.list_memories(ctx.db, store.MemoryFilter(states=(State.ACTIVE,)), None)
    assert made and all(m.created_at < format_time(NOW - timedelta(days=300)) for m in made)
    report = run(ctx, skip="upkeep,sync")
    assert report.task("archive").changes == [] and report.task("decay").changes == []
    left = store.list_memories(ctx.db, store.MemoryFilter(states=(State.ACTIVE,)), None)
    assert {m.id for m in made} <= {m.id for m in left}
    # A year on, unused, they fade and leave recall like any other memory.
    later = maintain(ctx, MaintainRequest(skip="upkeep,sync", now=NOW + timedelta(days=365)))
    assert later.task("archive").changes


def plan_of(report: Any) -> dict[str, list[tuple[str, str]]]:
    """Each task's (action, existing memory id) pairs: new memories' ids differ by run."""
    return {t.task: sorted((c["action"], c["id"]) for c in t.changes) for t in report.tasks}


def test_dry_run_plans_exactly_what_the_run_does(make_ctx: Any) -> None:
    ctx = make_ctx()
    for n in range(4):
        put(ctx, f"Episode {n}: I prefer dark mode in editor {n}.", 40, kind=Kind.EPISODIC)
    put(ctx, "Old note that nobody read.", 60, strength=0.3)
    put(ctx, "The cache is Redis.", 2)
    put(ctx, "The cache is Redis.", 2)
    later = NOW + timedelta(days=30)
    planned = maintain(ctx, MaintainRequest(dry_run=True, skip="upkeep,sync", now=later))
    done = maintain(ctx, MaintainRequest(skip="upkeep,sync", now=later))
    assert planned.task("archive").changes, "the plan archives what decay and consolidate free"
    assert plan_of(planned) == plan_of(done)
    assert [t.status for t in planned.tasks] == ["planned"] * len(planned.tasks)
    assert not list(ctx.settings.home.glob(".dry-run-*"))


def test_an_imported_memory_counts_from_its_import(make_ctx: Any, tmp_path: Path) -> None:
    ctx = make_ctx()
    old = format_time(NOW - timedelta(days=500))
    line = {"content": "The build uses Bazel.", "created_at": old, "stored_at": old}
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert run_cli("import", str(path), env={"MEMCTL_LLM": "none"}).returncode == 0
    (memory,) = store.list_memories(ctx.db, store.MemoryFilter(), None)
    assert memory.created_at == old and memory.stored_at > format_time(NOW - timedelta(days=1))


def test_reembed_in_length_order_gives_each_memory_its_own_vector(ctx: Context) -> None:
    """Memories are embedded longest first, in batches: every vector still lands on its memory."""
    from memctl.embed import BATCH_TEXTS
    from memctl.maintain.reembed import reembed

    contents = [f"note {i} " + "word " * ((i * 7) % 40) for i in range(BATCH_TEXTS + 9)]
    memories = [put(ctx, content) for content in contents]
    seen: list[tuple[int, int]] = []
    assert reembed(ctx, lambda done, total: seen.append((done, total))) == len(contents)
    assert seen == [(BATCH_TEXTS, len(contents)), (len(contents), len(contents))]
    stored = store.vectors_for(ctx.db, [m.id for m in memories])
    for memory, vector in zip(memories, ctx.vectors(contents), strict=True):
        assert stored[memory.id] == vector


def _twin(ctx: Context, home: Path) -> Context:
    """A context on a copy of ctx's store, with the same settings but its home."""
    home.mkdir()
    vacuum_into(ctx.db, home / ctx.settings.db_path.name)
    return Context(dataclasses.replace(ctx.settings, home=home), embedder=HashEmbedder())


def _state(ctx: Context, at: datetime) -> list[tuple[Any, ...]]:
    """Every memory as what maintain decides (ids of memories maintain made are random:
    a memory is its text), with its strength as of ``at`` to 3 places."""
    every = MemoryFilter(states=None)
    found = store.list_memories(ctx.db, every, None)
    text = {m.id: m.content for m in found}
    return sorted(
        (
            m.content,
            m.scope,
            str(m.kind),
            str(m.state),
            text.get(m.superseded_by or ""),
            m.consolidated_at,
            round(current_strength(m, at, ctx.settings), 3),
            sorted(
                (text[r.src_id], text[r.dst_id], str(r.type)) for r in relations_of(ctx.db, m.id)
            ),
        )
        for m in found
    )


def test_an_incremental_run_ends_where_a_full_run_does(make_ctx: Any, tmp_path: Path) -> None:
    ctx = make_ctx(maintain__merge_similarity=0.75, maintain__backup_every_hours=1000)
    facts = [
        put(ctx, text, 10)
        for text in (
            "Billing runs on port 8001 behind nginx.",
            "The search service answers from Elasticsearch 8.",
            "Auth tokens expire after 15 minutes.",
            "Mail goes out through Postmark.",
        )
    ]
    put(ctx, "Mail goes out through Postmark for every message.", 10, scope="elsewhere")
    put(ctx, "The deploy script lives in ops/deploy.sh", 10)
    put(ctx, "The cache is Redis.", 9)
    put(ctx, "The cache is Redis.", 9)
    put(ctx, "I prefer pytest over unittest for every project.", 5, kind=Kind.EPISODIC)
    put(ctx, "A one-off note about lunch.", 40, strength=0.05)
    run(ctx, now=NOW)
    # What happens between two runs: copies of compared memories, a memory moved to
    # another's scope, a text changed into another's, a partner for a merge.
    put(ctx, facts[0].content.lower(), 9)
    put(ctx, "The cache is Redis.", 0)
    store.update_memory(ctx.db, facts[3].id, {"scope": "elsewhere"})
    update(ctx, facts[2].id, content=facts[1].content)
    put(ctx, "The deploy script lives in ops/deploy.sh and needs AWS credentials", 10)
    put(ctx, "We moved the staging database to Postgres 16 today.", 6, kind=Kind.EPISODIC)
    later = NOW + timedelta(days=1)
    twin = _twin(ctx, tmp_path / "twin")
    incremental = run(ctx, now=later)
    full = run(twin, now=later, full=True)
    try:
        assert _state(ctx, later) == _state(twin, later)
    finally:
        twin.close()
    for report in (incremental, full):  # four merges, one exact copy
        assert report.task("consolidate").counts["merge"] == 4
        assert report.task("dedup").counts["dedup"] == 1
    assert incremental.task("dedup").counts["compared"] < full.task("dedup").counts["compared"]
    # and a full run after the incremental one finds nothing more to fold
    again = run(ctx, now=later, full=True)
    assert [c for t in again.tasks for c in t.changes if c["action"] in ("dedup", "merge")] == []


def captured_one_by_one(ctx: Context, sessions: int = 4) -> None:
    """Sessions written as captures write them, each in a transaction of its own: each
    leaves segments of its own in the messages' full-text index."""
    for n in range(sessions):
        with ctx.db.atomic():
            save_session(ctx.db, Session(id=f"s-{n}", client="generic", scope="global"))
            insert_messages(
                ctx.db,
                [
                    Message(
                        Role.USER,
                        f"deploy {n}: billing restarts at noon",
                        session_id=f"s-{n}",
                        seq=1,
                    ),
                    Message(
                        Role.ASSISTANT, f"noted, billing rollout {n}", session_id=f"s-{n}", seq=2
                    ),
                ],
            )


def test_upkeep_merges_the_session_messages_index_into_one_segment(make_ctx: Any) -> None:
    """Each capture writes its messages in a transaction of its own, and each leaves a
    segment in the messages' full-text index: maintain merges them into one (a recall
    searches one segment faster), finds what it found before, and does it once."""
    ctx = make_ctx()
    captured_one_by_one(ctx)
    found = search_messages(ctx.db, [("billing",)], 20, MemoryFilter())
    segments = fts_segments(ctx.db, MESSAGES_FTS)
    assert segments >= 4
    assert run(ctx, dry_run=True).task("upkeep").counts["messages_fts_optimized"] == 1
    assert fts_segments(ctx.db, MESSAGES_FTS) == segments, "a dry run writes nothing"
    assert run(ctx).task("upkeep").counts["messages_fts_optimized"] == 1
    assert fts_segments(ctx.db, MESSAGES_FTS) == 1
    assert search_messages(ctx.db, [("billing",)], 20, MemoryFilter()) == found
    assert len(found) == 8
    assert "messages_fts_optimized" not in run(ctx).task("upkeep").counts


def test_upkeep_counts_each_words_messages_after_any_message_write(make_ctx: Any) -> None:
    """maintain counts how many messages hold each word (a recall tells common words from
    rare ones by it), once after any message was written or taken away, not again until
    the next; a dry run counts nothing."""
    ctx = make_ctx()
    captured_one_by_one(ctx)
    assert run(ctx, dry_run=True).task("upkeep").counts["message_words_counted"] == 1
    assert counts_stale(ctx.db), "a dry run writes nothing"
    assert run(ctx).task("upkeep").counts["message_words_counted"] == 1
    assert stored_bounds(ctx.db, [("billing",)]) == {("billing",): (8, 8)}
    assert "message_words_counted" not in run(ctx).task("upkeep").counts
    with ctx.db.atomic():
        forget_messages(ctx.db, "s-0", None, now_iso(), bytes(32))
    assert run(ctx).task("upkeep").counts["message_words_counted"] == 1
    assert stored_bounds(ctx.db, [("billing",)]) == {("billing",): (6, 6)}


def test_a_store_another_connection_optimized_is_not_called_damaged(make_ctx: Any) -> None:
    """This connection read the messages' index, then another one merged it (as another
    process's maintain does): SQLite's checks, run on this connection, read the index as it
    last saw it and called the store damaged (exit status 4, nothing done); they no
    longer do."""
    ctx = make_ctx()
    captured_one_by_one(ctx)
    found = search_messages(ctx.db, [("billing",)], 20, MemoryFilter())
    other = make_ctx()  # the same store, a connection of its own, optimizes as upkeep does
    optimize_fts(other.db, MESSAGES_FTS)
    assert fts_segments(ctx.db, MESSAGES_FTS) == 1
    assert run(ctx, only="upkeep").task("upkeep").status == "done"
    assert search_messages(ctx.db, [("billing",)], 20, MemoryFilter()) == found
