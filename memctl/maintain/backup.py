"""Backups of the store (``VACUUM INTO`` under ``$MEMCTL_HOME/backups/``) and restoring one.

A backup is one SQLite file, 0600, named by its UTC time, written under a
temporary name and renamed once its integrity check passes (a backup killed
midway never becomes the newest one); one is made when the
store changed and the newest is ``maintain.backup_every_hours`` old, and the
newest ``maintain.backups`` are kept. ``restore`` checks the file is a sound memctl
store, backs up the current one first, then puts the backup in its place
(the vector index beside it is rebuilt on next use).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from memctl.config import Settings
from memctl.config.files import FILE_MODE, private_dir
from memctl.errors import InputError, NotFoundError, StoreError
from memctl.store.database import Database
from memctl.store.events import forgotten_since, last_event
from memctl.store.maintenance import (
    backup_problems,
    checkpoint,
    schema_now,
    schema_of,
    vacuum_into,
)

BACKUP_DIR = "backups"
PREFIX, SUFFIX, PARTIAL = "memctl-", ".db", ".partial"
RESTORING = ".restoring"  # a backup being copied beside the store, to take its place
REWRITING = ".forgetting"  # a backup being written anew (a forget's, an older one's)


def backup_dir(settings: Settings) -> Path:
    return settings.home / BACKUP_DIR


def backups(settings: Settings) -> list[Path]:
    """The backups, oldest first."""
    return sorted(backup_dir(settings).glob(f"{PREFIX}*{SUFFIX}"))


def restoring(settings: Settings) -> Path:
    """Where ``restore`` copies a backup before it takes the store's place."""
    return settings.db_path.with_name(settings.db_path.name + RESTORING)


def leftovers(settings: Settings, *suffixes: str) -> list[Path]:
    """Copies a killed run left beside the backups (a backup's ``PARTIAL``, and the names
    ``suffixes`` add) and a killed restore's beside the store: no backup, but they hold
    the store's text (forgotten text too)."""
    folder = backup_dir(settings)
    found = [p for s in (PARTIAL, *suffixes) for p in folder.glob(f"{PREFIX}*{SUFFIX}{s}")]
    return sorted([*found, *filter(Path.exists, [restoring(settings)])])


def backup_due(settings: Settings) -> bool:
    """Whether the newest backup is ``maintain.backup_every_hours`` old (or there is none)."""
    if settings.maintain_backups <= 0:
        return False
    found = backups(settings)
    if not found:
        return True
    age = time.time() - found[-1].stat().st_mtime
    return age >= settings.maintain_backup_every_hours * 3600


def make_backup(settings: Settings, db: Database) -> Path:
    """A consistent copy of the store, 0600; older ones beyond ``maintain.backups`` go."""
    folder = private_dir(backup_dir(settings))
    for left in leftovers(settings):  # of a backup killed midway
        left.unlink(missing_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"{PREFIX}{stamp}{SUFFIX}"
    partial = path.with_name(path.name + PARTIAL)
    try:
        _copied(db, partial)
        problems = backup_problems(partial)
        if problems:
            raise StoreError(f"the new backup is not a sound store: {problems[0]}")
        with open(partial, "rb") as handle:
            os.fsync(handle.fileno())
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    prune(settings)
    return path


# Copies begun again when a forget keeps overtaking them (each is a few seconds at most).
COPY_TRIES = 3


def _copied(db: Database, partial: Path) -> None:
    """The store copied into ``partial``, from a snapshot no forget overtook: a forget,
    redact or permanent delete that commits while the copy is made does not see it among
    the backups (it is no backup yet), so that copy is made again, or refused."""
    for _ in range(COPY_TRIES):
        since = last_event(db)
        os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE))
        vacuum_into(db, partial)
        if not forgotten_since(db, since):
            return
        partial.unlink(missing_ok=True)  # that forget may have removed it
    raise StoreError("no backup: forgets kept landing while it was copied; the next maintain")


def prune(settings: Settings) -> list[Path]:
    """Remove all but the newest ``maintain.backups`` backups; the removed ones."""
    found = backups(settings)
    keep = max(settings.maintain_backups, 1)
    gone = found[:-keep]
    for path in gone:
        path.unlink(missing_ok=True)
    return gone


def rewritten(settings: Settings, path: Path, change: Callable[[Database], None]) -> Path:
    """A copy of the backup at ``path`` with ``change`` applied, beside it (0600), to take
    its place: opened as a store of the home, an older backup is first brought to this
    memctl's schema, with the store's key (m032 names its folders' projects by it)."""
    partial = path.with_name(path.name + REWRITING)
    partial.unlink(missing_ok=True)
    db = Database.open(path, home=settings.home)
    try:
        change(db)
        vacuum_into(db, partial)
    finally:
        db.close()
    os.chmod(partial, FILE_MODE)
    for extra in ("-wal", "-shm"):
        Path(str(path) + extra).unlink(missing_ok=True)
    return partial


def older_backups(settings: Settings) -> list[Path]:
    """The backups an older memctl made, whose schema is behind the store's."""
    return [path for path in backups(settings) if schema_of(path) < schema_now()]


def bring_up_to_date(settings: Settings, db: Database) -> list[Path]:
    """Each backup an older memctl made, rewritten at this one's schema: a migration that
    takes text or a name out of the store (m026's hashes of forgotten texts, m032's plain
    digests of folders, which anyone holding the file could confirm a guessed folder by)
    takes it out of the backups too, not only when a forget next rewrites them. A copy a
    forget overtook (``db``, the store, says one landed) is dropped: the forget rewrites
    the backups itself. The backups rewritten."""
    done = []
    for path in older_backups(settings):
        since = last_event(db)
        partial = rewritten(settings, path, lambda _: None)
        if forgotten_since(db, since):
            partial.unlink(missing_ok=True)
            continue
        partial.replace(path)
        done.append(path)
    return done


def restore(settings: Settings, db: Database, source: Path) -> Path:
    """Replace the store with ``source`` after backing the current one up; that backup.

    The caller holds the maintain lock and closes ``db`` afterwards (it is
    checkpointed here so its WAL holds nothing the new file would lose).
    """
    if source.is_dir():
        raise InputError(_a_directory(settings, source))
    if not source.is_file():
        raise NotFoundError(f"no backup file {source}")
    problems = backup_problems(source)
    if problems:
        raise InputError(f"{source} is not a sound memctl store: {problems[0]}")
    saved = make_backup(settings, db)
    checkpoint(db)
    target, partial = settings.db_path, restoring(settings)  # a killed one's went above
    os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE))
    shutil.copyfile(source, partial)
    with open(partial, "rb") as handle:
        os.fsync(handle.fileno())
    db.close()
    partial.replace(target)
    for extra in ("-wal", "-shm"):
        target.with_name(target.name + extra).unlink(missing_ok=True)
    shutil.rmtree(target.with_name(target.name + ".vectors"), ignore_errors=True)
    return saved


def _a_directory(settings: Settings, folder: Path) -> str:
    """What to pass instead of ``folder``: the newest backup file in it, else where
    memctl keeps them."""
    said = f"{folder} is a directory, not a backup file"
    held = sorted(folder.glob(f"{PREFIX}*{SUFFIX}"))
    if held:
        return f"{said}: pass one of its files, the newest {held[-1]}"
    kept = backups(settings)
    if kept:
        return f"{said}: pass a backup file (the newest is {kept[-1]})"
    where = backup_dir(settings)
    return f"{said}: pass a backup file (none made yet: `memctl maintain` makes them in {where})"
