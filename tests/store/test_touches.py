"""Recall's spooled access counts (store/touches.py) on a real store: applied exactly once,
never to a forgotten memory, and neither lost nor doubled by a process killed mid-apply."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.api.memory import delete_for_good
from memctl.context import Context
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.source import Input
from memctl.maintain.pipeline import maintain
from memctl.memories import operations
from memctl.model import Action, Memory, now_iso
from memctl.store.events import list_events
from memctl.store.touches import apply_spooled, spool, spool_path
from memctl.store.writes import Writer

EARLY = "2026-11-01T10:00:00Z"  # before any memory of a test was stored


def put(ctx: Context, content: str) -> Memory:
    memory = Memory(content=content)
    with ctx.db.atomic():
        Writer(ctx.db).create(memory, ctx.vectors([content])[0])
    return memory


def count(ctx: Context, memory: Memory) -> int:
    return operations.get(ctx, memory.id)[0].access_count


def spool_files(ctx: Context) -> list[Path]:
    path = spool_path(ctx.db.path)
    return sorted(path.parent.glob(path.name + "*"))


def test_spooled_touches_are_applied_once_with_their_time_and_events(ctx: Context) -> None:
    deploy, backup = put(ctx, "We deploy with make ship"), put(ctx, "Backups run nightly")
    stored, at = operations.get(ctx, deploy.id)[0].stored_at, now_iso()
    spool(ctx.db, [deploy.id, backup.id], at, 0.1)
    spool(ctx.db, [deploy.id], stored, 0.1)  # an older line applied later: its time loses
    assert count(ctx, deploy) == 0  # nothing written by a recall
    assert apply_spooled(ctx.db) == 3
    got = operations.get(ctx, deploy.id)[0]
    assert (got.access_count, got.last_accessed_at) == (2, at)
    assert count(ctx, backup) == 1 and spool_files(ctx) == []
    accesses = [e for e in list_events(ctx.db, deploy.id, 20) if e.action == Action.ACCESS]
    assert sorted(e.at for e in accesses) == sorted([stored, at])
    assert apply_spooled(ctx.db) == 0 and count(ctx, deploy) == 2


def test_a_torn_or_foreign_line_in_the_spool_costs_only_itself(ctx: Context) -> None:
    """A power cut can tear the line being appended, and anything may write into the file:
    the lines around such a line are still applied, and the apply neither fails nor stops."""
    deploy = put(ctx, "We deploy with make ship")
    at = now_iso()
    spool(ctx.db, [deploy.id], at, 0.1)
    with spool_path(ctx.db.path).open("ab") as spooled:
        spooled.write(b'["2026-11-30T10:00:00Z", 0.1, ["' + deploy.id.encode()[:9] + b"\n")
        spooled.write(b"garbage{{\n\x00\xff\n[1, 2]\n" + json.dumps([at, 0.1, 7]).encode() + b"\n")
    spool(ctx.db, [deploy.id], at, 0.1)
    apply_spooled(ctx.db)
    assert count(ctx, deploy) == 2 and spool_files(ctx) == []


def test_a_forget_wins_over_a_waiting_touch(ctx: Context) -> None:
    archived, deleted, later = (put(ctx, text) for text in ("Old fact", "Secret-ish", "Later"))
    spool(ctx.db, [archived.id, deleted.id, later.id], now_iso(), 0.5)
    operations.forget(ctx, archived.id)  # archived: no access counted on it
    delete_for_good(ctx, deleted.id)  # the forget applies what waits, then forgets
    assert spool_files(ctx) == [] and count(ctx, later) == 1
    assert count(ctx, archived) == 0
    # a touch a recall spooled just before the forget, applied after it: nothing
    spool(ctx.db, [archived.id, deleted.id], now_iso(), 0.5)
    assert apply_spooled(ctx.db) == 0 and count(ctx, archived) == 0
    # a line older than a memory's storing does not credit it
    spool(ctx.db, [later.id], EARLY, 0.5)
    assert apply_spooled(ctx.db) == 0 and count(ctx, later) == 1


def test_maintain_applies_the_spool_before_its_tasks(ctx: Context) -> None:
    memory = put(ctx, "We deploy with make ship")
    spool(ctx.db, [memory.id], now_iso(), 0.1)
    maintain(ctx, only="decay", dry_run=True)  # a dry run counts them on its copy only
    assert count(ctx, memory) == 0 and spool_files(ctx) != []
    maintain(ctx, only="decay")
    assert count(ctx, memory) == 1 and spool_files(ctx) == []


def test_a_capture_applies_the_spool_with_its_write(ctx: Context, tmp_path: Path) -> None:
    memory = put(ctx, "We deploy with make ship")
    spool(ctx.db, [memory.id], now_iso(), 0.1)
    line = {"type": "user", "sessionId": "s1", "message": {"role": "user", "content": "hi"}}
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with transcript.open("rb") as raw:
        assert capture(ctx, Input(raw, str(transcript)), IngestOptions("claude-code")).report
    assert count(ctx, memory) == 1 and spool_files(ctx) == []


def killed_applying(ctx: Context, when: Callable[[pytest.MonkeyPatch], None]) -> None:
    """Apply the spool in a forked process killed at ``when``'s patch (a crash)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        with pytest.MonkeyPatch.context() as patch:
            when(patch)
            apply_spooled(Context(ctx.settings).db)
        os._exit(3)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 9  # killed where patched


def exits(*_: object, **__: object) -> None:
    os._exit(9)


@pytest.mark.parametrize(
    "crash",
    [
        lambda patch: patch.setattr(Writer, "accessed", exits),  # mid-transaction
        lambda patch: patch.setattr(Path, "unlink", exits),  # committed, file not removed
    ],
    ids=["before-commit", "after-commit"],
)
def test_a_process_killed_mid_apply_neither_loses_nor_doubles(
    ctx: Context, crash: Callable[[pytest.MonkeyPatch], None]
) -> None:
    memory = put(ctx, "We deploy with make ship")
    spool(ctx.db, [memory.id], now_iso(), 0.1)
    killed_applying(ctx, crash)
    assert len(spool_files(ctx)) == 1  # the spool, taken under a token, is still there
    spool(ctx.db, [memory.id], now_iso(), 0.1)  # and a recall after the crash
    apply_spooled(ctx.db)
    assert count(ctx, memory) == 2 and spool_files(ctx) == []


def test_a_touch_spooled_as_an_apply_takes_the_spool_goes_into_the_next(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = put(ctx, "We deploy with make ship")
    spool(ctx.db, [memory.id], now_iso(), 0.0)
    lock, raced = fcntl.flock, []

    def flock(fd: int, operation: int) -> None:
        if not raced:  # an apply takes the spool between this recall's open and its lock
            raced.append(fd)
            apply_spooled(ctx.db)
        lock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock)
    spool(ctx.db, [memory.id], now_iso(), 0.0)
    monkeypatch.undo()
    assert raced and count(ctx, memory) == 1  # the apply counted the line before
    apply_spooled(ctx.db)
    assert count(ctx, memory) == 2 and spool_files(ctx) == []
