"""memctl sync, promote and unpromote as real processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memctl.api import ingest as ingest_api
from memctl.api import memory as memory_api
from memctl.api import sync as sync_api
from memctl.api.memory import RememberRequest, UpdateRequest, remember
from memctl.ui.views import can_undo
from tests.conftest import memctl_command, run_cli
from tests.syncing import bare_repo, git, machine, shared

NO_LLM = {"MEMCTL_LLM": "none"}
SYNC = sync_api.SyncRequest()


def cli(home: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = run_cli("--home", str(home), *args, env={**NO_LLM, **(env or {})})
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.fresh
def test_init_promote_sync_status_and_two_syncs_at_once(tmp_path: Path) -> None:
    remote = bare_repo(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    narrow = {"COLUMNS": "80"}  # each line whole, the terminal folding it: paths unbroken
    assert cli(a, "sync", "init", str(remote), env=narrow).splitlines() == [
        f"laid out the empty repository and cloned {remote} into {a / 'sync' / 'repo'}"
    ]
    with machine(tmp_path, "a", remote) as ctx:  # in-process: no model to load
        memory_id = remember(
            ctx, RememberRequest("rebase before merging", scope="global")
        ).memory.id
        other = remember(ctx, RememberRequest("not shared", scope="global")).memory.id
    assert "promoted 1 memory\n" in cli(a, "promote", memory_id[:8])
    cli(a, "delete", other)
    refused = run_cli("--home", str(a), "promote", other, env=NO_LLM)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "is deleted: a deleted memory is not shared" in refused.stderr
    said = cli(a, "sync", "--dry-run", env=narrow).splitlines()[-1]
    assert said.startswith(f"{remote}: would import 0 new, 0 updated, 0 conflicts kept")
    assert "would write 1 file," in said and said.endswith("; 0 bad files skipped")
    status = json.loads(cli(a, "sync", "status", "--json"))
    assert status["waiting_out"] == 1 and status["remote"] == str(remote)
    env = {**os.environ, **NO_LLM}
    command = memctl_command(["--home", str(a), "sync", "--json"], env)  # forked
    both = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)]
    both.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env))
    results = [p.communicate(timeout=120) for p in both]
    assert [p.returncode for p in both] == [0, 0], [r[1] for r in results]
    written = sorted(json.loads(out)["went_out"]["written"] for out, _ in results)
    assert written == [0, 1]
    commits = git("--git-dir", str(remote), "log", "--format=%s").splitlines()
    assert len(commits) == 2  # the layout, then one sync's commit
    cli(b, "sync", "init", str(remote))
    assert "import 1 new" in cli(b, "sync")
    assert memory_id in cli(b, "list", "--json")
    assert "unpromoted 1 memory\n" in cli(a, "unpromote", memory_id)
    assert "remove 1" in cli(a, "sync")


def test_sync_without_git_is_one_clear_line(tmp_path: Path) -> None:
    remote = bare_repo(tmp_path)
    done = run_cli(
        "--home", str(tmp_path / "a"), "sync", "init", str(remote), env={"PATH": "/nonexistent"}
    )
    assert done.returncode == 7
    assert done.stderr.strip().splitlines() == [
        "memctl: error: memctl sync needs git, which is not installed (or not on PATH)"
    ]


def test_sync_before_init_says_what_to_do(tmp_path: Path) -> None:
    done = run_cli("--home", str(tmp_path / "a"), "sync", env=NO_LLM)
    assert done.returncode == 2
    assert "memctl sync init REMOTE" in done.stderr


def test_a_repository_that_is_not_memctls_is_refused(tmp_path: Path) -> None:
    remote = bare_repo(tmp_path)
    hand = tmp_path / "hand"
    git("clone", "--quiet", str(remote), str(hand))
    (hand / "main.c").write_text("int main(void) { return 0; }\n")
    git("add", "-A", cwd=hand)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "code", cwd=hand)
    git("push", "--quiet", "origin", "HEAD", cwd=hand)
    done = run_cli("--home", str(tmp_path / "a"), "sync", "init", str(remote), env=NO_LLM)
    assert done.returncode == 7
    assert "neither empty nor a memctl sync repository" in done.stderr


def test_a_sync_killed_midway_is_finished_by_the_next(tmp_path: Path) -> None:
    from memctl.api import sync as sync_api
    from memctl.model import Action, Memory, Visibility
    from memctl.store import memories as store
    from memctl.store.events import log_event

    remote = bare_repo(tmp_path)
    a = machine(tmp_path, "a", remote)
    sync_api.init(a, str(remote))
    with a.db.atomic():
        for n in range(300):
            memory = Memory(f"fact number {n}", scope="global", visibility=Visibility.SHARED)
            store.insert_memory(a.db, memory, None)
            log_event(a.db, Action.CREATE, memory.id)
    command = [sys.executable, "-m", "memctl", "--home", str(tmp_path / "a"), "sync"]
    victim = subprocess.Popen(command, env={**os.environ, **NO_LLM}, stderr=subprocess.PIPE)
    lock = tmp_path / "a" / "sync" / "lock"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and victim.poll() is None:
        if lock.exists() and lock.read_text().strip() == str(victim.pid):
            break
        time.sleep(0.02)
    time.sleep(0.3)
    victim.send_signal(signal.SIGKILL)
    victim.communicate()
    result = sync_api.sync(a, sync_api.SyncRequest())
    assert sync_api.sync(a, sync_api.SyncRequest()).went_out == {"written": 0, "removed": 0}
    files = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "HEAD").split()
    assert len([f for f in files if f.startswith("memories/")]) == 300, result
    a.close()


@contextmanager
def small_disk(path: Path, size: str = "1m") -> Iterator[Path]:
    """A real filesystem of ``size`` at ``path`` (a tmpfs: needs the right to mount)."""
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    if mounted.returncode:
        pytest.skip("cannot mount a small filesystem here (needs root or CAP_SYS_ADMIN)")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def test_sync_on_a_nearly_full_disk_says_so_and_loses_nothing(tmp_path: Path) -> None:
    """The clone's disk has 10 KiB left: git cannot write its objects. One line, exit 4,
    the disk named; once there is room, the next sync pushes every memory."""
    remote, home = bare_repo(tmp_path), tmp_path / "a"
    cli(home, "sync", "init", str(remote))
    with machine(tmp_path, "a", remote) as ctx:
        for n in range(30):
            remember(ctx, RememberRequest(f"fact {n}: staging is stage{n}", scope="global"))
    cli(home, "promote", "--all")
    repo = home / "sync" / "repo"
    with small_disk(tmp_path / "disk") as disk:
        shutil.copytree(repo, disk / "repo", symlinks=True)
        shutil.rmtree(repo)
        repo.symlink_to(disk / "repo")
        free = os.statvfs(disk)
        (disk / "fill").write_bytes(b"\0" * (free.f_bavail * free.f_frsize - 10 * 1024))
        full = run_cli("--home", str(home), "sync", env=NO_LLM)
        assert full.returncode == 4, full.stderr
        assert full.stderr.startswith("memctl: error: disk full") and str(repo) in full.stderr
        assert len(full.stderr.strip().splitlines()) == 1
        (disk / "fill").unlink()
        cli(home, "sync")
        files = git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "HEAD")
        assert sum(name.startswith("memories/") for name in files.splitlines()) == 30


def test_a_blank_or_unpushable_remote_is_refused_in_one_line(tmp_path: Path) -> None:
    """`sync init ""` is not the current directory; a working copy's checked-out branch
    refuses pushes: said at once with git's reason, not retried as a race, nothing kept."""
    home = tmp_path / "home"
    blank = run_cli("--home", str(home), "sync", "init", "", env=NO_LLM)
    assert blank.returncode != 0 and "give the repository" in blank.stderr
    work = tmp_path / "work"
    git("init", "--quiet", str(work))
    done = run_cli("--home", str(home), "sync", "init", str(work), env=NO_LLM)
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"cannot push to {work}" in done.stderr and "checked out" in done.stderr
    shown = json.loads(cli(home, "config", "show", "--json"))
    assert shown["sync.remote"]["value"] == ""  # nothing recorded
    assert git("-C", str(work), "branch", "--list") == ""  # the working copy is untouched


@pytest.mark.fresh
def test_sync_trust_lists_other_machines_and_lets_one_open_sessions(tmp_path: Path) -> None:
    remote = bare_repo(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    cli(a, "sync", "init", str(remote))
    cli(b, "sync", "init", str(remote))
    with machine(tmp_path, "a", remote) as ctx:
        theirs = remember(
            ctx, RememberRequest("I prefer tabs over spaces", category="preferences")
        ).memory
        host = str(ctx.db.meta("host_id"))
    cli(a, "promote", theirs.id)
    cli(a, "sync")
    umask = os.umask(0)
    os.umask(umask)
    pushed = [p for p in (remote / "objects").rglob("*") if p.is_file() and len(p.name) == 38]
    assert pushed  # the shared repository's files: as readable as the pusher's umask says
    assert all(bool(p.stat().st_mode & 0o004) == (not umask & 0o004) for p in pushed)
    said = cli(b, "sync")  # the memories came in: why they open no session, and the fix
    assert f"not in sync.trust ({host[:8]}: 1)" in said and "`memctl sync key` there" in said
    listed = json.loads(cli(b, "sync", "trust", "--json"))
    shown = {"id": host, "memories": 1, "trusted": False, "signed": False, "unsigned": 0}
    assert listed == {"trust": "", "hosts": [shown], "unsigned_own": 0}
    start = ("hook", "claude-code", "SessionStart")
    assert "tabs over spaces" not in cli(b, *start)
    untrusted = cli(b, "context")  # why the block is empty: who said it, not its size
    assert "may not open a session" in untrusted and "`memctl sync trust`" in untrusted
    assert "did not fit the budgets" not in untrusted
    checks = json.loads(run_cli("--home", str(b), "doctor", "--json").stdout)
    modes = next(c for c in checks if c["name"] == "modes")  # the clone's files: private
    assert modes["status"] == "ok", modes["detail"]
    key = cli(a, "sync", "key").splitlines()[0]  # the machine's id and its key, to copy
    pasted = run_cli("--home", str(b), "sync", "trust", "-", input=f"{key}\n", env=NO_LLM)
    trusted = pasted.stdout  # the key pasted, not typed: no shell history keeps it
    assert f"sync.trust is now {host}" in trusted and "the files its key signed" in trusted
    assert key.partition(":")[2] not in trusted + (b / "config.yaml").read_text()
    assert f"host {host[:8]}) I prefer tabs over spaces" in cli(b, *start)
    assert "sync.trust is now empty" in cli(b, "sync", "trust", "--remove", host[:8])
    assert "tabs over spaces" not in cli(b, *start)
    assert "the files its key signed" in cli(b, "sync", "trust", key)  # as an argument too
    cli(b, "sync", "trust", "--remove", host[:8])
    empty = run_cli("--home", str(b), "sync", "trust", "-", input="", env=NO_LLM)
    assert empty.returncode == 2 and "nothing on standard input" in empty.stderr
    bad = run_cli("--home", str(b), "sync", "trust", "../evil")
    assert bad.returncode == 2 and "is not a host id" in bad.stderr


def test_a_sync_that_only_kept_a_conflict_has_nothing_to_undo(tmp_path: Path) -> None:
    """B's sync meets A's older edit of a memory B edited since: B's version stands, A's is
    kept in a conflict event, no memory changed. `undo` of that run (the viewer's Undo)
    made an undo run of 0 changes, as a run with no event at all did."""
    remote = bare_repo(tmp_path)
    a, b = machine(tmp_path, "a", remote), machine(tmp_path, "b", remote)
    with a, b:  # in-process: no model to load
        sync_api.init(a, str(remote))
        sync_api.init(b, str(remote))
        memory = shared(a, "the staging host is stage-1")
        sync_api.sync(a, SYNC)
        sync_api.sync(b, SYNC)
        memory_api.update(a, UpdateRequest(memory.id, text="the staging host is stage-2"))
        sync_api.sync(a, SYNC)
        time.sleep(0.01)  # B's edit is the newer
        memory_api.update(b, UpdateRequest(memory.id, text="the staging host is stage-3"))
        assert sync_api.sync(b, SYNC).came_in["conflicts"] == 1
        run = ingest_api.runs(b, 1)[0]
        assert run.kind == "sync" and can_undo(b, run) == (False, None)  # no Undo beside it
    runs = json.loads(cli(b.settings.home, "runs", "--json"))
    assert runs[0]["id"] == run.id and runs[0]["counts"]["conflicts"] == 1
    refused = run_cli("--home", str(b.settings.home), "undo", run.id[:8], env=NO_LLM)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.endswith(
        f"sync {run.id[:8]} cannot be undone: nothing is left to put back; "
        "`memctl undo RUN_ID` takes back an earlier run (`memctl runs`)\n"
    )
    assert json.loads(cli(b.settings.home, "runs", "--json")) == runs  # no undo run
