"""Sync format 1.0 -> 2.0: one commit that moves every memory file into its shard
directory, and each machine's index of files read moved the same way.

The first memctl 2 that syncs a format-1 repository (and may push) drops its own
unpushed commits (format 1: the export writes them again from the database), makes
the migration commit right on top of the fetched one, and pushes it alone, before
anything else. Pushes only fast-forward, so of several machines migrating at once
one push wins; the others' are refused, they drop their migration, fetch, find
format 2 and carry on: one migration commit, whatever the race. A memctl 1 that
pushed meanwhile makes the migration's push fail the same way, and the retry moves
its files too. A memctl 1 that fetches format 2 refuses the repository in one line
(``read_format``) before it writes anything.

The files' texts do not change (the scope is in the path, not the text), so their
blobs stay the same: a machine moves its index's paths with the same rule and
reads nothing again.
"""

from __future__ import annotations

from dataclasses import replace

from memctl.store.database import Database
from memctl.store.sync import SyncFile, indexed_files, move_files
from memctl.sync.layout import (
    FLAT_MAJOR,
    FORMAT_FILE,
    FORMAT_MAJOR,
    FORMAT_VERSION,
    MEMORIES,
    README_FILE,
    README_TEXT,
    format_text,
    moved,
)
from memctl.sync.repo import Clone

# The format of the paths in this machine's index; a database a memctl 1 wrote has none.
META_INDEX_FORMAT = "sync_index_format"
MESSAGE = f"memctl: migrate the repository to sync format {FORMAT_VERSION}"


def index_major(db: Database) -> int:
    return int(db.meta(META_INDEX_FORMAT) or FLAT_MAJOR)


def new_path(path: str, major: int, to_major: int) -> str | None:
    """A path in the other format; None when it is no valid path of its own."""
    try:
        return moved(path, major, to_major)
    except ValueError:
        return None


def index_in(index: dict[str, SyncFile], major: int, to_major: int) -> dict[str, SyncFile]:
    """The index as it reads in another format (for a look that writes nothing)."""
    if major == to_major:
        return index
    found = {}
    for path, file in index.items():
        path_there = new_path(path, major, to_major)
        if path_there is not None:
            found[path_there] = replace(file, path=path_there)
    return found


def move_index(db: Database, to_major: int) -> None:
    """Move the index's paths into format ``to_major`` (in the caller's transaction)."""
    major = index_major(db)
    if major != to_major:
        move_files(db, {path: new_path(path, major, to_major) for path in indexed_files(db)})
    db.set_meta(META_INDEX_FORMAT, str(to_major))


def migration_commit(clone: Clone, base: str, host: str) -> str:
    """The commit on top of ``base`` (a format-1 tree) with every memory file in its
    format-2 place, ``memctl.yaml`` and ``README.md`` rewritten. Files that are no valid
    format-1 path stay where they are (each sync goes on skipping and naming them)."""
    files: dict[bytes, bytes] = {}
    for raw, meta in clone.raw_tree(base).items():
        path = raw.decode("utf-8", errors="surrogateescape")
        there = new_path(path, FLAT_MAJOR, FORMAT_MAJOR) if path.startswith(MEMORIES) else None
        files[there.encode() if there else raw] = meta
    files[FORMAT_FILE.encode()] = clone.put_blob(format_text())
    files[README_FILE.encode()] = clone.put_blob(README_TEXT)
    return clone.commit_tree(files, base, MESSAGE, host)
