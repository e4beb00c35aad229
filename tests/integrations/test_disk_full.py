"""A disk full to its last byte never loses a session silently (issue 34, item 5): the
data directory on a real tmpfs filled to 0 bytes free; the session-end hook exits 0
and marks the transcript pending outside the full disk; `memctl doctor` names it; once
there is room, `memctl maintain` stores it, and doctor no longer names it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memctl.config import load_settings
from memctl.context import Context
from memctl.store.sessions import count_sessions
from tests.conftest import run_cli
from tests.ingesting import SESSION, TRANSCRIPTS

TMPFS_BYTES = 8 * 1024 * 1024  # room for a small store, then filled


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of its own (mounting one needs root; skipped where it cannot be made)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES},mode=0700", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> None:
    """Write until the disk has not one byte left."""
    descriptor = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (1 << 16, 1 << 12, 1):
            try:
                while True:
                    os.write(descriptor, b"\0" * size)
            except OSError:
                continue
    finally:
        os.close(descriptor)
    assert shutil.disk_usage(disk).free == 0


def _stored(home: Path) -> int:
    with Context(load_settings(home=home)) as ctx:
        return count_sessions(ctx.db)[0]


def test_a_session_ending_on_a_full_disk_is_named_then_captured(
    small_disk: Path, tmp_path: Path
) -> None:
    home = small_disk / "memctl"
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    env = {"MEMCTL_HOME": str(home), "XDG_RUNTIME_DIR": str(run_dir)}
    assert run_cli("remember", "we deploy with make release", env=env).returncode == 0
    transcript = tmp_path / "session.jsonl"
    shutil.copy(TRANSCRIPTS / "claude-code.jsonl", transcript)
    _fill(small_disk)

    event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    ended = run_cli(
        "-c", "ingest.spawn_worker=false", "hook", "claude-code", "SessionEnd",
        input=json.dumps(event), env=env,
    )  # fmt: skip
    assert (ended.returncode, ended.stdout) == (0, "")
    assert "disk full" in ended.stderr  # not even the log could be written: said here
    doctor = run_cli("doctor", env=env)
    assert f"not captured yet: {transcript}" in doctor.stdout
    assert "disk full" in doctor.stdout

    os.unlink(small_disk / "filler")
    assert _stored(home) == 0
    assert run_cli("maintain", env=env).returncode == 0
    assert _stored(home) == 1
    assert str(transcript) not in run_cli("doctor", env=env).stdout
