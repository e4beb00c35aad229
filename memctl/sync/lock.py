"""One sync at a time per data directory: an advisory lock the kernel drops when its
holder dies, so a killed sync never leaves a stale lock behind."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memctl.config.files import open_private
from memctl.errors import SyncError

POLL_SECONDS = 0.1
# What git writes into the clone while a sync holds the lock (its checkout, objects,
# index): private to the owner, as everything under the data directory (`memctl doctor`)
PRIVATE_UMASK = 0o077
_OUTSIDE: list[int] = []  # the umask before each lock now held (umask is the process's too)


@contextmanager
def sync_lock(path: Path, wait_seconds: float) -> Iterator[None]:
    """Hold the lock file ``path``, waiting up to ``wait_seconds`` for another holder;
    meanwhile, the files this process and its git children create are private."""
    fd = open_private(path, os.O_RDWR | os.O_CREAT)
    _OUTSIDE.append(os.umask(PRIVATE_UMASK))
    try:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                    raise SyncError(
                        f"another memctl sync is running (pid {holder}); try again later"
                    ) from None
                time.sleep(POLL_SECONDS)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.umask(_OUTSIDE.pop())
        os.close(fd)


@contextmanager
def outside_umask() -> Iterator[None]:
    """The umask from before the lock, for what git writes outside the clone: a push to a
    repository on a disk others share leaves its files as readable as its users expect."""
    if not _OUTSIDE:
        yield
        return
    private = os.umask(_OUTSIDE[-1])
    try:
        yield
    finally:
        os.umask(private)
