"""Another process holding a lock while a test runs memctl against it: the database's
write lock (a hook meeting a busy database), or a file lock (a sync running)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Each takes the lock on argv[1], says so, and holds it until a line arrives on stdin.
WRITE_LOCK = (
    "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
    "db.execute('BEGIN IMMEDIATE'); print('held', flush=True); sys.stdin.readline()"
)
FILE_LOCK = (
    "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
    "print('held', flush=True); sys.stdin.readline()"
)


@contextmanager
def held(path: Path, lock: str = WRITE_LOCK) -> Iterator[None]:
    """``lock`` (WRITE_LOCK on a database, FILE_LOCK on a lock file) held on ``path`` by
    another process for the block's length."""
    holder = subprocess.Popen(
        [sys.executable, "-c", lock, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.stdin.write("done\n")
        holder.stdin.close()
        holder.wait()
