"""Recall's access counts, spooled: a recall that touched its clear matches appends one line
(the time, the strength step, the ids) to a file beside the store, and the next capture of
new messages, ``maintain``, forget, or a recall that finds the spool past ``APPLY_BYTES``
applies every line in one transaction.

Why: a write from a recall made it the store's writer and, as the last connection to close,
its checkpointer; every recall paid four fdatasyncs (the new WAL's header, its folder, the
WAL, the file) for counts whose loss nobody would notice. An append with no fsync costs none.
A power cut may lose the lines the disk had not written yet: a few accesses.

Exactly once across a crash: the applier (holding the write lock) renames the spool to
``<spool>.<token>`` and, in the transaction that applies it, records the token in ``meta``;
a file whose token is recorded was applied (the crash came before its removal), any other
was not (the transaction rolled back). Appenders lock the file and write only into the one
the spool's name still names, so no line goes into a file already read.

A line touches a memory only while it stands (not archived, deleted or gone) and was stored
by the line's time: a forget wins over a touch still waiting, and a memory stored again
under the same id after it is not credited with the old one's accesses.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from memctl.store.database import Database

# The spool beside the store: ``memctl.db.touches``.
SUFFIX = ".touches"
# A spool this large is applied by the recall that grew it: ~150 recalls of three matches,
# so a store nobody maintains pays the syncs once in that many recalls.
APPLY_BYTES = 16 * 1024
# meta: the tokens of the spool files the last apply took (so a crash before their removal
# does not apply them twice).
APPLIED = "touches_applied"
OPEN_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW


def spool_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + SUFFIX)


def spool(db: Database, ids: list[str], at: str, strength_step: float) -> int:
    """Append one recall's touches to the spool (no fsync); the spool's size after it."""
    line = (json.dumps([at, strength_step, ids]) + "\n").encode()
    path = spool_path(db.path)
    while True:
        fd = os.open(path, OPEN_FLAGS, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _inode(path) == os.fstat(fd).st_ino:  # not taken by an apply meanwhile
                os.write(fd, line)
                return os.fstat(fd).st_size
        finally:
            os.close(fd)


def apply_unsynced(db: Database) -> int:
    """``apply_spooled`` with a commit that skips the fsync (the close's checkpoint syncs
    it), for a caller that writes no more: a recall, a capture."""
    if db.connection.in_transaction:
        return 0
    with db.without_fsync():
        return apply_spooled(db)


def apply_spooled(db: Database) -> int:
    """Apply every spooled touch in a transaction of its own; how many memories' counts went
    up. Inside another transaction (a capture replayed by ``maintain``'s jobs) nothing: its
    files would go before that one commits."""
    path = spool_path(db.path)
    if db.connection.in_transaction or not (path.exists() or _left(path)):
        return 0
    with db.atomic():
        done = set(json.loads(db.meta(APPLIED) or "[]"))
        left = _left(path)
        for file in [f for f in left if _token(f) in done]:
            file.unlink(missing_ok=True)
        files = [f for f in left if _token(f) not in done]
        taken = _take(path)
        files += [taken] if taken else []
        counted = sum(_apply_line(db, line) for file in files for line in _lines(file))
        db.set_meta(APPLIED, json.dumps(sorted(_token(f) for f in files)))
    for file in files:
        file.unlink(missing_ok=True)
    return counted


def _apply_line(db: Database, line: bytes) -> int:
    from memctl.store.writes import Writer  # here: a recall that only spools never loads it

    try:
        at, step, ids = json.loads(line)
    except ValueError:  # a line a power cut left half-written
        return 0
    return Writer(db, at=at).accessed(ids, step, by="recall")


def _take(path: Path) -> Path | None:
    """Rename the spool to a token of its own (under its lock, so an appender that opened
    it before writes into the next one); None when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        taken = path.with_name(f"{path.name}.{os.urandom(8).hex()}")
        os.rename(path, taken)
    finally:
        os.close(fd)
    return taken


def _left(path: Path) -> list[Path]:
    """The spool files earlier applies took (``<spool>.<token>``)."""
    return sorted(path.parent.glob(path.name + ".*"))


def _lines(file: Path) -> list[bytes]:
    try:
        return file.read_bytes().splitlines()
    except FileNotFoundError:
        return []


def _token(file: Path) -> str:
    return file.name.rsplit(".", 1)[1]


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None
