"""``memctl sync``: pull -> import -> export -> push, under a lock, as one run.

The stages are modules of their own: ``incoming`` (read the changed files),
``apply`` (resolve and import them), ``outgoing`` (this machine's files),
and ``repo`` (git). A sync killed at any point is recovered by the next:
the clone's leftovers are reset (its unpushed commits are kept), the index
of files read and the export mark move only in the transaction that
follows the work they describe, so nothing is imported or written twice.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memctl.config import Settings
from memctl.context import Context
from memctl.errors import SyncError, UsageError
from memctl.model import new_id, now_iso
from memctl.store.graph import generation
from memctl.store.runs import RunRecord, save_run
from memctl.store.sync import (
    SYNC_KIND,
    SyncFile,
    changed_since,
    clear_index,
    drop_files,
    files_at,
    host_id,
    indexed_files,
    last_event_id,
    own_files_under,
    paths_here,
    put_files,
    read_commit,
    restated_here,
    session_ids_here,
    set_read_commit,
    unsigned_here,
)
from memctl.store.writes import Writer
from memctl.sync.apply import apply_import, plan_import
from memctl.sync.incoming import Incoming, Progress, quiet, read_incoming
from memctl.sync.layout import (
    FLAT_MAJOR,
    FOLDER_SCOPES,
    FORMAT_FILE,
    FORMAT_MAJOR,
    README_FILE,
    README_TEXT,
    format_text,
    parse_path,
    read_format,
)
from memctl.sync.lock import sync_lock
from memctl.sync.memfile import BadFile, parse
from memctl.sync.migrate import (
    META_INDEX_FORMAT,
    index_in,
    index_major,
    migration_commit,
    move_index,
)
from memctl.sync.outgoing import Outgoing, plan_export
from memctl.sync.repo import Clone, git_errors, require_git, shown_url

META_REMOTE, META_MARK, META_LAST = "sync_remote", "sync_exported_event", "sync_last"
META_GRAPH_MARK = "sync_exported_graph"  # the graph's generation at the last export
META_SOURCES = "sync_sources_shared"  # set once this host's files name no path in a source
# set once no file of this host's names a folder, nor a plain digest of one
META_SCOPES = "sync_local_scopes_keyed"
META_SESSIONS = "sync_session_ids_keyed"  # set once no file of this host's names a derived id
# set once no file of this host's names a folder in a triple (outgoing._without_folder_names)
META_TRIPLES = "sync_folder_triples_hidden"
META_SIGNED = "sync_files_signed"  # set once every winning file of this host's has a MAC
EVERY_GENERATION = -1  # restated_here's generation before any: every memory the graph read
# Before retrying a refused push, wait a random time up to this doubled per retry, at most
# PUSH_BACKOFF_CAP ("full jitter", Brooker, AWS Architecture Blog 2015): syncs that raced
# stop racing in step. benchmarks/team_sync.py (50 hosts, 4 syncs at once): 145 refused
# pushes instead of 226.
PUSH_BACKOFF_SECONDS, PUSH_BACKOFF_CAP = 0.25, 2.0


@dataclass(frozen=True)
class SyncRequest:
    dry_run: bool = False  # show what would come in and go out; write and push nothing


@dataclass
class SyncResult:
    remote: str
    host: str
    dry_run: bool = False
    readonly: bool = False
    run_id: str | None = None
    came_in: dict[str, int] = field(default_factory=dict)
    went_out: dict[str, int] = field(default_factory=dict)
    bad_files: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (memory id, why)
    withheld: list[str] = field(default_factory=list)
    incoming: list[tuple[str, str]] = field(default_factory=list)  # (what, memory id)
    outgoing: list[tuple[str, str]] = field(default_factory=list)  # (what, path)
    commit: str | None = None
    pushed: bool = False
    push_retries: int = 0  # pushes refused because the remote moved (fetched and redone)
    migrated: bool = False  # moved the repository from format 1.0 to 2.0 (dry run: would)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def clone_path(settings: Settings) -> Path:
    return settings.home / "sync" / "repo"


def lock_path(settings: Settings) -> Path:
    return settings.home / "sync" / "lock"


def configured_remote(settings: Settings) -> str:
    if not settings.sync_remote:
        raise UsageError("no sync repository: run `memctl sync init REMOTE` first")
    return str(settings.sync_remote)


def sync_now(
    ctx: Context, request: SyncRequest | None = None, progress: Progress = quiet
) -> SyncResult:
    """One sync: pull, import, export, push (retried when the remote moved meanwhile);
    ``progress`` is told what each long step has done."""
    request = request or SyncRequest()
    settings = ctx.settings
    remote = configured_remote(settings)
    require_git()
    with sync_lock(lock_path(settings), settings.sync_lock_wait):
        clone = _open_clone(ctx, remote)
        try:
            with git_errors(clone.root):
                return _sync_in(ctx, clone, remote, request.dry_run, progress)
        finally:
            clone.close()


def _sync_in(
    ctx: Context, clone: Clone, remote: str, dry_run: bool, progress: Progress
) -> SyncResult:
    clone.recover()
    result = SyncResult(shown_url(remote), host_id(ctx.db), dry_run, ctx.settings.sync_readonly)
    if dry_run:
        return _preview(ctx, clone, result, progress)
    run = RunRecord(id=new_id(), kind=SYNC_KIND)
    try:
        _rounds(ctx, clone, result, run, progress)
    finally:
        _finish(ctx, run, result)
    return result


def _rounds(
    ctx: Context, clone: Clone, result: SyncResult, run: RunRecord, progress: Progress
) -> None:
    settings = ctx.settings
    wanted: set[str] = set()
    arrived: set[str] = set()  # memories whose files came in: this host's may be stale
    for _ in range(settings.sync_push_retries + 1):
        progress("fetching", 0, 0)
        offline = _fetch(clone)
        major = _meet_format(ctx, clone, result, offline is None, progress)
        if major is None:
            _back_off(result)
            continue
        clone.integrate()
        wanted |= _import(ctx, clone, result, run, progress, major, arrived)
        if not settings.sync_readonly and major == FORMAT_MAJOR:
            _export(ctx, clone, result, wanted, progress, arrived)
        if offline is not None:
            waiting = clone.ahead_behind()[0]
            raise SyncError(
                f"{offline}; {waiting} commit(s) wait in the clone and the next sync pushes them"
                if waiting
                else str(offline)
            )
        if settings.sync_readonly or clone.ahead_behind()[0] == 0:
            return
        _scan_outgoing(clone, settings.sync_max_file_bytes, progress)
        progress("pushing", 0, 0)
        if clone.push():
            result.pushed = True
            return
        _back_off(result)
    raise SyncError(
        f"{result.remote} kept moving: nothing pushed after "
        f"{settings.sync_push_retries + 1} tries; run `memctl sync` again"
    )


def _back_off(result: SyncResult) -> None:
    """Wait before the fetch that follows a refused push."""
    longest = min(PUSH_BACKOFF_CAP, PUSH_BACKOFF_SECONDS * 2**result.push_retries)
    time.sleep(random.uniform(0, longest))
    result.push_retries += 1


def _fetch(clone: Clone) -> SyncError | None:
    """Fetch; the error when the remote is unreachable."""
    try:
        clone.fetch()
    except SyncError as exc:
        return exc
    return None


def _meet_format(
    ctx: Context, clone: Clone, result: SyncResult, online: bool, progress: Progress
) -> int | None:
    """The format of the fetched repository, migrated to 2.0 first when it is 1.0 and this
    machine may push (the migration pushed on its own: None when that push lost a race,
    to fetch again); the index of files read moved into the same format."""
    ref = clone.upstream if clone.has(clone.upstream) else "HEAD"
    text = clone.read_file(ref, FORMAT_FILE, ctx.settings.sync_max_file_bytes)
    major = read_format(text, result.remote) or FORMAT_MAJOR
    if major == FLAT_MAJOR and online and not ctx.settings.sync_readonly and ref != "HEAD":
        progress("moving files into sync format 2.0", 0, 0)
        clone.drop_unpushed()  # written by memctl 1: the export writes them again
        clone.move_to(migration_commit(clone, clone.checkable(ref), result.host))
        if not clone.push():
            clone.drop_unpushed()
            return None
        result.migrated = True
        major = FORMAT_MAJOR
    if index_major(ctx.db) != major:
        if major == FORMAT_MAJOR:
            clone.drop_unpushed()  # written by memctl 1, in format 1: written again
        with ctx.db.atomic():
            move_index(ctx.db, major)
    return major


def _open_clone(ctx: Context, remote: str) -> Clone:
    path = clone_path(ctx.settings)
    timeout = ctx.settings.sync_git_timeout
    if (path / ".git").exists():
        clone = Clone.open(path, timeout)
        if clone.origin_url != remote:
            raise SyncError(
                f"the clone at {path} tracks {shown_url(clone.origin_url)}, not "
                f"sync.remote {shown_url(remote)}; run `memctl sync init` with sync.remote"
            )
    else:
        clone = Clone.clone(remote, path, timeout)
    adopt(ctx, remote)
    return clone


def adopt(ctx: Context, remote: str) -> None:
    """A new repository: forget the old one's index, so that everything is read and
    everything shareable is written again. The remote is recorded as shown (a token in
    its URL as ***: the database holds no credentials); one recorded whole is the same."""
    recorded = shown_url(remote)
    with ctx.db.atomic():
        was = ctx.db.meta(META_REMOTE)
        if was not in (recorded, remote):
            clear_index(ctx.db)
            ctx.db.set_meta(META_MARK, "0")
            ctx.db.set_meta(META_INDEX_FORMAT, str(FORMAT_MAJOR))
        if was != recorded:
            ctx.db.set_meta(META_REMOTE, recorded)


def _import(
    ctx: Context,
    clone: Clone,
    result: SyncResult,
    run: RunRecord,
    progress: Progress,
    major: int,
    arrived: set[str],
) -> set[str]:
    """Import what changed (adding the memories whose files came in to ``arrived``); the
    memories whose local version must go out."""
    incoming = _read(ctx, clone, "HEAD", result.host, progress, major)
    arrived.update(f.memory_id for f in incoming.files)
    plan = plan_import(ctx, incoming, result.host)
    apply_import(ctx, plan, incoming, run, progress)
    if any(plan.counts().values()):
        result.run_id = run.id
    result.bad_files = clone.dropped + incoming.bad
    for name, count in plan.counts().items():
        result.came_in[name] = result.came_in.get(name, 0) + count
    return plan.local_won | set(incoming.gone_own)


def _read(
    ctx: Context, clone: Clone, ref: str, host: str, progress: Progress, major: int
) -> Incoming:
    """The files of a format-``major`` tree that changed since they were last read."""
    index_format = index_major(ctx.db)

    def index_of(paths: list[str] | None) -> dict[str, SyncFile]:
        if paths is None:
            return index_in(indexed_files(ctx.db), index_format, major)
        return files_at(ctx.db, paths)  # a read since a commit: the index is in its format

    since = read_commit(ctx.db) if index_format == major else None
    max_bytes = ctx.settings.sync_max_file_bytes
    return read_incoming(clone, ref, index_of, host, max_bytes, progress, major, since)


def candidates(ctx: Context) -> set[str]:
    """The memories to export: changed here since the last export, and those whose triples
    newer entity rules changed since then, when this host wrote their winning file (once:
    those whose source names a path, or whose project's folder names their directory,
    which an older memctl sent whole, every one the graph read, whose triples an older
    memctl sent with a folder's name in them, and every one an older memctl sent unsigned)."""
    db = ctx.db
    changed = changed_since(db, int(db.meta(META_MARK) or 0))
    changed |= set() if db.meta(META_SOURCES) else paths_here(db, host_id(db))
    if not db.meta(META_SCOPES):
        changed.update(*(own_files_under(db, host_id(db), at) for at in FOLDER_SCOPES))
    changed |= set() if db.meta(META_SESSIONS) else session_ids_here(db, host_id(db))
    changed |= set() if db.meta(META_SIGNED) else unsigned_here(db, host_id(db))
    since = int(db.meta(META_GRAPH_MARK) or 0) if db.meta(META_TRIPLES) else EVERY_GENERATION
    return changed | restated_here(db, host_id(db), since)


def _export(
    ctx: Context,
    clone: Clone,
    result: SyncResult,
    wanted: set[str],
    progress: Progress,
    arrived: set[str],
) -> None:
    mark, graph_mark = last_event_id(ctx.db), generation(ctx.db)
    include_all = ctx.settings.sync_include == "all"
    ids = candidates(ctx) | wanted
    out = plan_export(ctx, result.host, ids, include_all, progress, arrived)
    if out.withheld:
        with ctx.db.atomic():
            Writer(ctx.db).withhold(out.withheld)
    result.withheld += out.withheld
    result.refused += out.refused
    written = _write(clone, out, result, progress)
    if clone.read_file("HEAD", FORMAT_FILE, ctx.settings.sync_max_file_bytes) is None:
        clone.write(FORMAT_FILE, format_text())
        clone.write(README_FILE, README_TEXT)
    commit = clone.commit(_message(result.host, len(written), len(out.removes)), result.host)
    result.commit = commit or result.commit
    read = read_commit(ctx.db)  # what the import read: this commit is it plus the export
    touched = {f.path for f in written} | {f.path for f in out.removes}
    bad = [(path, why) for path, why in (read[1] if read else []) if path not in touched]
    with ctx.db.atomic():
        Writer(ctx.db).stamp(out.bumps)
        drop_files(ctx.db, [f.path for f in out.removes])
        put_files(ctx.db, written)
        set_read_commit(ctx.db, clone.resolve("HEAD") if read else None, bad)
        ctx.db.set_meta(META_MARK, str(mark))
        ctx.db.set_meta(META_GRAPH_MARK, str(graph_mark))
        ctx.db.set_meta(META_SOURCES, "1")
        ctx.db.set_meta(META_SCOPES, "1")
        ctx.db.set_meta(META_SESSIONS, "1")
        ctx.db.set_meta(META_TRIPLES, "1")
        ctx.db.set_meta(META_SIGNED, "1")
    result.went_out["written"] = result.went_out.get("written", 0) + len(written)
    result.went_out["removed"] = result.went_out.get("removed", 0) + len(out.removes)


def _write(clone: Clone, out: Outgoing, result: SyncResult, progress: Progress) -> list[Any]:
    written = []
    for done, (row, text) in enumerate(out.writes):
        progress("writing files", done, len(out.writes))
        try:
            clone.write(row.path, text)
        except SyncError as exc:
            result.refused.append((row.memory_id, str(exc)))
            continue
        written.append(row)
    for file in out.removes:
        try:
            clone.remove(file.path)
        except SyncError as exc:
            result.refused.append((file.memory_id, str(exc)))
    return written


def _message(host: str, written: int, removed: int) -> str:
    return f"memctl sync from host {host}: {written} written, {removed} removed"


def _scan_outgoing(clone: Clone, max_bytes: int, progress: Progress) -> None:
    """Scan every file the unpushed commits add or change, right before the push; a file
    that fails drops those commits (the next sync writes them again, refusing it)."""
    paths = clone.outgoing_paths()
    entries = {e.path: e for e in clone.tree("HEAD", paths)}
    for done, path in enumerate(paths):
        progress("checking files", done, len(paths))
        entry = entries.get(path)
        if entry is None or entry.symlink or entry.size > max_bytes:
            continue
        try:
            scope, memory_id, host = parse_path(path)
            parse(clone.read_blob(entry.blob).decode("utf-8"), memory_id, host, scope)
        except (BadFile, ValueError, UnicodeDecodeError) as why:
            clone.drop_unpushed()
            raise SyncError(f"refusing to push {path}: {why}") from None


# Bad files a sync names one by one, in its run and at the terminal; the rest are counted
# (10,000 bad files added 1.5 MB of warnings and 1.3 MB of database on every sync).
LISTED_BAD_FILES = 20


def bad_file_lines(bad_files: list[tuple[str, str]]) -> list[str]:
    """The first LISTED_BAD_FILES bad files, one line each, and how many more there are."""
    lines = [f"skipped {path}: {why}" for path, why in bad_files[:LISTED_BAD_FILES]]
    if len(bad_files) > LISTED_BAD_FILES:
        more = len(bad_files) - LISTED_BAD_FILES
        lines.append(f"skipped {more:,} more bad files (`memctl sync --json` lists them all)")
    return lines


def _finish(ctx: Context, run: RunRecord, result: SyncResult) -> None:
    run.notes = bad_file_lines(result.bad_files)
    run.notes += [f"refused memory {memory_id}: {why}" for memory_id, why in result.refused]
    run.counts.update({f"files_{k}": v for k, v in result.went_out.items() if v})
    run.counts["bad_files"] = len(result.bad_files)
    run.counts = {name: count for name, count in run.counts.items() if count}
    run.status, run.finished_at = "done", now_iso()
    summary = {"at": run.finished_at, "pushed": result.pushed, "run": result.run_id}
    with ctx.db.atomic():
        if result.run_id or result.bad_files or result.refused or any(result.went_out.values()):
            save_run(ctx.db, run)
            result.run_id = run.id
        ctx.db.set_meta(META_LAST, json.dumps({**summary, "run": result.run_id}))


def _preview(ctx: Context, clone: Clone, result: SyncResult, progress: Progress) -> SyncResult:
    """What a sync would bring in and send out, from a fresh fetch; nothing written."""
    progress("fetching", 0, 0)
    try:
        clone.fetch()
    except SyncError as exc:
        result.refused.append(("-", str(exc)))
    ref = clone.upstream if clone.has(clone.upstream) else "HEAD"
    text = clone.read_file(ref, FORMAT_FILE, ctx.settings.sync_max_file_bytes)
    major = read_format(text, result.remote) or FORMAT_MAJOR
    incoming = _read(ctx, clone, ref, result.host, progress, major)
    plan = plan_import(ctx, incoming, result.host)
    result.bad_files = incoming.bad
    result.came_in = plan.counts()
    result.incoming = [("new", v.id) for v in plan.creates]
    result.incoming += [("update", v.id) for _, v, _ in plan.updates]
    result.incoming += [("conflict", v.id) for v in plan.conflicts]
    result.incoming += [("unshare", m.id) for m, _ in plan.unshares]
    result.migrated = major == FLAT_MAJOR and not ctx.settings.sync_readonly
    if not ctx.settings.sync_readonly and not result.migrated:
        wanted = candidates(ctx) | plan.local_won | set(incoming.gone_own)
        out = plan_export(ctx, result.host, wanted, ctx.settings.sync_include == "all", progress)
        result.refused += out.refused
        result.went_out = {"written": len(out.writes), "removed": len(out.removes)}
        result.outgoing = [("write", row.path) for row, _ in out.writes]
        result.outgoing += [("remove", f.path) for f in out.removes]
    return result
