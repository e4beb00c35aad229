"""Sync format 2.0 meeting a repository that memctl 1.0 wrote: one migration, nothing lost."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from memctl.api import sync as sync_api
from memctl.errors import SyncError
from memctl.store import memories as store
from memctl.sync.layout import parse_path
from memctl.sync.migrate import MESSAGE
from tests.syncing import as_format_1, bare_repo, git, machine, plant, shared

SYNC = sync_api.SyncRequest()
FOREIGN = "c" * 16  # a machine still on memctl 1.0
MOMENT = "'2026-01-01T00:00:00.000Z'"

# A pre-receive hook that, the first time, runs another machine's whole sync while this
# push waits: that machine migrates and pushes first, so this push is refused.
HOOK = """#!{python}
import os, pathlib, subprocess, sys
sys.stdin.read()
mark = pathlib.Path({mark!r})
if mark.exists():
    mark.unlink()
    env = {{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}}
    env.update(MEMCTL_EMBEDDER="hash", MEMCTL_LLM="none")
    done = subprocess.run([{python!r}, "-m", "memctl", "--home", {home!r}, "sync"], env=env,
                          capture_output=True, text=True)
    pathlib.Path({log!r}).write_text(str(done.returncode) + done.stdout + done.stderr)
"""


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return bare_repo(tmp_path)


def _files(remote: Path) -> list[str]:
    return git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "main").split()


def _foreign_file(memory_id: str, text: str) -> bytes:
    times = f"created_at: {MOMENT}\nupdated_at: {MOMENT}\n"
    return f"id: {memory_id}\nstate: active\n{times}content: {text}\n".encode()


def test_two_machines_racing_migrate_a_format_1_repository_once(
    tmp_path: Path, remote: Path
) -> None:
    a, b = machine(tmp_path, "a", remote), machine(tmp_path, "b", remote)
    sync_api.init(a, str(remote))
    sync_api.init(b, str(remote))
    first = shared(a, "the staging database is rebuilt every Monday")
    sync_api.sync(a, SYNC)
    sync_api.sync(b, SYNC)
    # memctl 1.0 wrote the repository and both databases; a 1.0 machine pushed one more
    # memory, and a symlink at a valid 1.0 path; b promoted a memory it has not synced.
    as_format_1(remote, a, b)
    foreign = "d" * 32
    plant(
        remote,
        {f"memories/global/{foreign}_{FOREIGN}.yaml".encode(): _foreign_file(foreign, "on 1.0")},
        symlinks={f"memories/global/{'e' * 32}_{FOREIGN}.yaml".encode(): b"/etc/passwd"},
    )
    second = shared(b, "release notes go in CHANGES.md")
    preview = sync_api.sync(b, sync_api.SyncRequest(dry_run=True))
    assert preview.migrated and "1.0" in git("--git-dir", str(remote), "show", "main:memctl.yaml")

    mark, log = tmp_path / "race", tmp_path / "a-sync.log"
    mark.touch()
    hook = remote / "hooks" / "pre-receive"
    values = {"python": sys.executable, "mark": str(mark), "home": str(a.settings.home)}
    hook.write_text(HOOK.format(**values, log=str(log)))
    hook.chmod(0o755)
    reading: list[int] = []
    result = sync_api.sync(b, SYNC, lambda s, d, t: reading.append(t) if "read" in s else None)

    said = log.read_text()  # a's `memctl sync`, run inside b's push
    assert said.startswith("0") and "moved the repository from sync format 1.0 to 2.0" in said
    assert not result.migrated and result.push_retries >= 1 and result.pushed
    subjects = git("--git-dir", str(remote), "log", "--format=%s", "main").splitlines()
    assert subjects.count(MESSAGE) == 1, subjects
    # Every memory file is in its 2.0 place; the symlink moved with them, still refused.
    files = [f for f in _files(remote) if f.startswith("memories/")]
    assert all(parse_path(f) for f in files) and len(files) == 4
    assert 'format: "2.0"' in git("--git-dir", str(remote), "show", "main:memctl.yaml")
    assert any("symlink" in why for _, why in result.bad_files)
    # b read only the files new to it, the memory and the symlink (its index moved with
    # the files: the first memory's file is not read again); nothing lost.
    assert max(reading) == 2 and result.came_in["created"] == 1
    assert result.went_out["written"] == 1
    sync_api.sync(a, SYNC)
    for ctx in (a, b):
        for memory_id in (first.id, second.id, foreign):
            assert store.get_memory(ctx.db, memory_id) is not None
    a.close()
    b.close()


def test_a_read_only_machine_reads_format_1_and_follows_the_migration(
    tmp_path: Path, remote: Path
) -> None:
    a = machine(tmp_path, "a", remote)
    sync_api.init(a, str(remote))
    kept = shared(a, "we pin every dependency")
    sync_api.sync(a, SYNC)
    as_format_1(remote, a)
    before = git("--git-dir", str(remote), "rev-parse", "main")
    reader = machine(tmp_path, "r", remote, sync__readonly=True)
    sync_api.init(reader, str(remote))
    assert sync_api.sync(reader, SYNC).came_in["created"] == 1
    assert store.get_memory(reader.db, kept.id) is not None
    assert git("--git-dir", str(remote), "rev-parse", "main") == before  # no migration
    assert sync_api.sync(a, SYNC).migrated
    assert sync_api.status(reader).waiting_in == 0  # the same files, moved
    again = sync_api.sync(reader, SYNC)
    assert not any(again.came_in.values()) and not again.bad_files
    a.close()
    reader.close()


def test_a_newer_memctl_is_needed_for_a_newer_format(tmp_path: Path, remote: Path) -> None:
    a = machine(tmp_path, "a", remote)
    sync_api.init(a, str(remote))
    plant(remote, {b"memctl.yaml": b'format: "0.9"\n'})
    with pytest.raises(SyncError, match="names format 0.9, which never existed"):
        sync_api.sync(a, SYNC)
    a.close()
