"""Files memctl writes on its own (the hooks' log, the maintain and sync locks) are made
0600 whatever the umask, and never written through a symbolic link planted in their
place (issue 34: `hooks.log` was created 0644; a link there had memctl append to, or
lock, whatever it pointed at). Real `memctl` processes on a real data directory."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.syncing import bare_repo

HOOK_ARGS = ("hook", "claude-code", "SessionEnd")
# a hook with no transcript to capture: it logs why, and exits 0
EMPTY_PAYLOAD = json.dumps({"session_id": "s-none"})


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The umask most users have (022), inherited by the memctl processes run."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_hooks_log_is_made_private_under_an_open_umask(home: Path, open_umask: None) -> None:
    done = run_cli(*HOOK_ARGS, input=EMPTY_PAYLOAD)
    log = home / "logs" / "hooks.log"
    assert done.returncode == 0, done.stderr
    assert "nothing captured" in log.read_text()
    assert _mode(log) == 0o600


def test_a_hooks_log_an_older_memctl_left_readable_is_made_private(
    home: Path, open_umask: None
) -> None:
    log = home / "logs" / "hooks.log"
    log.parent.mkdir(parents=True)
    log.write_text("2026-01-01T00:00:00+00:00 claude-code Stop: older line\n")
    log.chmod(0o644)
    assert run_cli(*HOOK_ARGS, input=EMPTY_PAYLOAD).returncode == 0
    assert _mode(log) == 0o600
    first, rest = log.read_text().split("\n", 1)
    assert first.endswith("older line") and "nothing captured" in rest


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's own text\n")
    victim.chmod(0o644)
    return victim


def _plant(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def test_a_symlink_at_the_hooks_log_is_not_followed(home: Path, tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    _plant(home / "logs" / "hooks.log", victim)
    done = run_cli(*HOOK_ARGS, input=EMPTY_PAYLOAD)
    assert done.returncode == 0  # a hook never fails the session
    assert "nothing captured" in done.stderr  # said where it can be seen instead
    assert victim.read_text() == "the victim's own text\n" and _mode(victim) == 0o644


def test_a_symlink_at_the_maintain_lock_is_refused_in_one_line(home: Path, tmp_path: Path) -> None:
    assert run_cli("remember", "we deploy on fridays").returncode == 0
    victim = _victim(tmp_path)
    (home / "maintain.lock").unlink(missing_ok=True)
    _plant(home / "maintain.lock", victim)
    done = run_cli("maintain")
    assert done.returncode not in (0, 70)
    assert done.stderr.strip().splitlines()[-1].startswith("memctl: error:")
    assert "maintain.lock" in done.stderr and "Traceback" not in done.stderr
    assert victim.read_text() == "the victim's own text\n" and _mode(victim) == 0o644


@pytest.mark.fresh
def test_a_symlink_at_the_sync_lock_is_refused_in_one_line(home: Path, tmp_path: Path) -> None:
    remote = bare_repo(tmp_path)
    assert run_cli("sync", "init", str(remote)).returncode == 0
    victim = _victim(tmp_path)
    lock = home / "sync" / "lock"
    lock.unlink(missing_ok=True)
    _plant(lock, victim)
    done = run_cli("sync")
    assert done.returncode not in (0, 70)
    assert "sync/lock" in done.stderr and "Traceback" not in done.stderr
    assert victim.read_text() == "the victim's own text\n" and _mode(victim) == 0o644
