"""Setting sync up and looking at it: ``memctl sync init`` and ``memctl sync status``."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from memctl.config import write_config_value
from memctl.context import Context
from memctl.errors import SyncError
from memctl.model import format_time
from memctl.store.sync import host_id, indexed_files
from memctl.sync.layout import (
    FORMAT_FILE,
    FORMAT_MAJOR,
    FORMAT_VERSION,
    README_FILE,
    README_TEXT,
    format_text,
    read_format,
)
from memctl.sync.lock import sync_lock
from memctl.sync.migrate import index_in, index_major
from memctl.sync.outgoing import plan_export
from memctl.sync.pipeline import (
    META_LAST,
    adopt,
    candidates,
    clone_path,
    configured_remote,
    lock_path,
)
from memctl.sync.repo import Clone, normal_remote, require_git, shown_url


@dataclass(frozen=True)
class InitResult:
    remote: str
    clone: str
    created: bool  # the layout was written into an empty repository


def init(ctx: Context, remote: str) -> InitResult:
    """Clone ``remote`` into the data directory (creating the layout in an empty
    repository) and record it as ``sync.remote`` in the home config."""
    if not remote.strip():  # not the current directory, as git would take it
        raise SyncError("give the repository to sync with: a URL or a path")
    remote = normal_remote(remote)
    require_git()
    settings = ctx.settings
    path = clone_path(settings)
    with sync_lock(lock_path(settings), settings.sync_lock_wait):
        if (path / ".git").exists() and Clone.open(
            path, settings.sync_git_timeout
        ).origin_url != remote:
            shutil.rmtree(path)
        clone = (
            Clone.open(path, settings.sync_git_timeout)
            if (path / ".git").exists()
            else Clone.clone(remote, path, settings.sync_git_timeout)
        )
        try:
            clone.recover()
            created = _layout(
                clone, remote, host_id(ctx.db), settings.sync_readonly, settings.sync_max_file_bytes
            )
        finally:
            clone.close()
        adopt(ctx, remote)
    write_config_value(settings.home_config, "sync.remote", remote)
    return InitResult(shown_url(remote), str(path), created)


def _layout(clone: Clone, remote: str, host: str, readonly: bool, max_bytes: int) -> bool:
    text = clone.read_file("HEAD", FORMAT_FILE, max_bytes)
    if text is not None:
        read_format(text, shown_url(remote))
        return False
    if clone.has("HEAD"):
        shutil.rmtree(clone.root, ignore_errors=True)
        raise SyncError(
            f"{shown_url(remote)} is neither empty nor a memctl sync repository (it has no "
            f"{FORMAT_FILE})"
        )
    if readonly:
        raise SyncError(f"{shown_url(remote)} is empty, and sync.readonly is on: nothing to read")
    clone.write(FORMAT_FILE, format_text())
    clone.write(README_FILE, README_TEXT)
    clone.commit(f"memctl: a sync repository (format {FORMAT_VERSION})", host)
    clone.push()
    return True


@dataclass
class SyncStatus:
    remote: str
    clone: str
    host: str
    readonly: bool
    include: str
    last_sync: str | None
    last_pushed: bool | None
    last_fetch: str | None
    waiting_out: int  # files the next sync would write or remove
    waiting_in: int  # files changed in the repository as of the last fetch
    ahead: int
    behind: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def status(ctx: Context) -> SyncStatus:
    """Where sync stands, from the clone and the last fetch (no network)."""
    settings = ctx.settings
    remote = configured_remote(settings)
    path = clone_path(settings)
    last = json.loads(ctx.db.meta(META_LAST) or "{}")
    host = host_id(ctx.db)
    waiting_in = ahead = behind = 0
    fetched = None
    if (path / ".git").exists():
        clone = Clone.open(path, settings.sync_git_timeout)
        try:
            ahead, behind = clone.ahead_behind()
            ref = clone.upstream if clone.has(clone.upstream) else "HEAD"
            text = clone.read_file(ref, FORMAT_FILE, settings.sync_max_file_bytes)
            major = read_format(text, shown_url(remote)) or FORMAT_MAJOR
            waiting_in = _changed_files(ctx, clone, ref, major)
            moment = clone.last_fetch()
        finally:
            clone.close()
        fetched = format_time(datetime.fromtimestamp(moment, UTC)) if moment else None
    out = plan_export(ctx, host, candidates(ctx), settings.sync_include == "all")
    return SyncStatus(
        remote=shown_url(remote),
        clone=str(path),
        host=host,
        readonly=settings.sync_readonly,
        include=settings.sync_include,
        last_sync=last.get("at"),
        last_pushed=last.get("pushed"),
        last_fetch=fetched,
        waiting_out=0 if settings.sync_readonly else len(out.writes) + len(out.removes),
        waiting_in=waiting_in,
        ahead=ahead,
        behind=behind,
    )


def _changed_files(ctx: Context, clone: Clone, ref: str, major: int) -> int:
    index = index_in(indexed_files(ctx.db), index_major(ctx.db), major)
    entries = clone.tree(ref)
    changed = sum(1 for e in entries if index.get(e.path) is None or index[e.path].blob != e.blob)
    return changed + len(set(index) - {e.path for e in entries})
