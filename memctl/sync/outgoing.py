"""Stage 3 of a sync, export: this machine's files for the memories that changed here.

Candidates are the memories changed (or linked) since the last export by
anything but a sync, those whose local version won a conflict, and those
whose own file vanished from the repository. A memory that may not be
shared (not promoted, withheld, its sync import undone) loses this host's
file; one that may is rendered, scanned for secrets and private text right
before it is written (refused and named when it holds any), and written when
it differs from the version the repository holds. A version no newer than
the repository's winner gets a newer ``updated_at``, so that every machine
takes it. This host's files that another host's newer version superseded are
removed, so a memory is usually one file.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import timedelta

from memctl.config.files import forget_key, sync_key
from memctl.config.scope import keyed_scope
from memctl.context import Context
from memctl.model import Memory, Relation, State, format_time, now_iso, parse_time
from memctl.store import memories as store
from memctl.store.graph import memory_origins, stated_by
from memctl.store.relations import relations_touching
from memctl.store.sync import (
    SyncFile,
    files_of,
    indexed_files,
    shareable_ids,
    undone_sync_imports,
    withdrawn_at,
)
from memctl.sync import folders
from memctl.sync.incoming import Progress, quiet
from memctl.sync.layout import FLAT_MAJOR, memory_path, parse_path, shared_scope
from memctl.sync.memfile import (
    FORGOTTEN,
    blob_id,
    normal_time,
    privacy_problem,
    render,
    signature,
    signed,
    synced_values,
    triples_problem,
)

TICK = timedelta(milliseconds=1)


@dataclass
class Outgoing:
    """What the export writes and removes in the clone, and what it refused."""

    writes: list[tuple[SyncFile, str]] = field(default_factory=list)  # (index row, text)
    removes: list[SyncFile] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (memory id, why)
    withheld: list[str] = field(default_factory=list)  # sync imports undone here
    bumps: dict[str, str] = field(default_factory=dict)  # memory id -> new updated_at

    @property
    def empty(self) -> bool:
        return not (self.writes or self.removes)


def plan_export(
    ctx: Context,
    own_host: str,
    candidates: set[str],
    include_all: bool,
    progress: Progress = quiet,
    arrived: set[str] | None = None,
) -> Outgoing:
    """What to write and remove for the ``candidates``; ``arrived``: the memories whose
    files came in since the last export (only their other files can supersede this
    host's; None: look at every memory of the index)."""
    out = Outgoing()
    home_key = forget_key(ctx.settings.home)  # a session id in a source goes keyed
    keys = (home_key, sync_key(ctx.settings.home))  # and each file is signed
    ids = sorted(candidates)
    out.withheld = sorted(undone_sync_imports(ctx.db, ids))
    eligible = shareable_ids(ctx.db, include_all, ids) - set(out.withheld)
    files = files_of(ctx.db, ids)
    memories = store.get_memories(ctx.db, ids)
    relations: dict[str, list[Relation]] = {}
    for relation in relations_touching(ctx.db, ids):
        relations.setdefault(relation.src_id, []).append(relation)
    origins = memory_origins(ctx.db, ids)
    triples = folders.without_folder_names(stated_by(ctx.db, ids), origins)
    withdrawn = withdrawn_at(ctx.db, ids)
    for done, memory_id in enumerate(ids):
        progress("preparing memories", done, len(ids))
        mine = [f for f in files.get(memory_id, []) if f.host_id == own_host]
        winner = max(files[memory_id], key=lambda f: f.key) if files.get(memory_id) else None
        memory = memories.get(memory_id)
        forgotten = memory is None
        if memory is None:
            memory = _tombstone(memory_id, winner)
            if memory is None:
                continue
        elif memory_id not in eligible:
            out.removes += mine
            continue
        elif memory.state == State.DELETED and winner is None:
            continue  # deleted before it was ever shared
        edges = (relations.get(memory_id, []), triples.get(memory_id, []))
        redacted = _redacted_since(withdrawn.get(memory_id), winner)
        flags = (forgotten, redacted)
        memory = folders.relative_to_folder(memory, origins.get(memory_id, ("", "", ""))[2])
        _export_one(out, memory, edges, mine, winner, own_host, flags, keys)
    _stale(out, ctx, own_host, arrived)
    return out


def _shared_name(memory: Memory, winner: SyncFile | None, own_host: str, home_key: bytes) -> str:
    """The repository's name of the memory's scope: ``layout.shared_scope``'s, unless
    another machine's winning file names the scope as it is (a ``path:`` scope an older
    memctl sent, which this machine took in under its keyed name: the other machine's
    folder, whose name there is not this home's to change)."""
    if winner is not None and winner.host_id != own_host:
        try:
            named = parse_path(winner.path)[0]
        except ValueError:
            named = ""
        if named and keyed_scope(named, home_key) == memory.scope:
            return named
    return shared_scope(memory.scope, home_key)


def _tombstone(memory_id: str, winner: SyncFile | None) -> Memory | None:
    """A memory removed from this store for good that the repository holds alive or only
    deleted (restorable: a soft delete's tombstone, written before the permanent one)."""
    if winner is None or winner.state == FORGOTTEN:
        return None
    try:
        scope = parse_path(winner.path)[0]
    except ValueError:  # a format-1 path, in the index of a machine yet to meet format 2
        scope = parse_path(winner.path, FLAT_MAJOR)[0]
    return Memory(content="-", id=memory_id, state=State.DELETED, scope=scope)


def _redacted_since(withdrawn: str | None, winner: SyncFile | None) -> bool:
    """Whether text was taken out of a memory here (at ``withdrawn``) since the version the
    repository holds: its file says so (``redacted: true``), so the other machines take
    the old text out too. At the winner's own time too: the redaction that wrote it (its
    event is logged after the memory's time is set), so its file keeps saying so."""
    return (
        withdrawn is not None and winner is not None and normal_time(withdrawn) >= winner.updated_at
    )


def _export_one(
    out: Outgoing,
    memory: Memory,
    edges: tuple[list[Relation], list[tuple[str, str, str]]],
    mine: list[SyncFile],
    winner: SyncFile | None,
    own_host: str,
    flags: tuple[bool, bool],  # (forgotten, redacted): ``render``'s
    keys: tuple[bytes, bytes],  # (``render``'s home key, the key that signs the file)
) -> None:
    home_key, sign_key = keys
    try:
        path = memory_path(_shared_name(memory, winner, own_host, home_key), memory.id, own_host)
    except ValueError as why:
        out.refused.append((memory.id, str(why)))
        return
    relations, triples = edges
    problem = None
    if memory.state != State.DELETED:
        problem = privacy_problem(synced_values(memory, home_key)) or triples_problem(triples)
    if problem:
        out.refused.append((memory.id, problem))
        return
    forgotten = flags[0]
    text = signed(render(memory, relations, triples, *flags, home_key=home_key), path, sign_key)
    moved = winner is not None and winner.host_id == own_host and winner.path != path
    if winner is not None and winner.blob == blob_id(text) and not moved:
        out.removes += [f for f in mine if f.path != winner.path]
        return
    if winner is not None and (normal_time(memory.updated_at), own_host) <= winner.key:
        later = format_time(parse_time(winner.updated_at) + TICK)
        memory = replace(memory, updated_at=max(now_iso(), later))
        out.bumps[memory.id] = memory.updated_at
        text = render(memory, relations, triples, *flags, home_key=home_key)
        text = signed(text, path, sign_key)
    row = SyncFile(
        path,
        memory.id,
        own_host,
        normal_time(memory.updated_at),
        FORGOTTEN if forgotten else str(memory.state),
        blob_id(text),
        *signature(text, path),
    )
    out.writes.append((row, text))
    out.removes += [f for f in mine if f.path != path]


def _stale(out: Outgoing, ctx: Context, own_host: str, among: set[str] | None) -> None:
    """This host's files that a newer version of another host's superseded."""
    by_memory: dict[str, list[SyncFile]] = {}
    if among is not None:
        by_memory = files_of(ctx.db, among)
    else:
        for file in indexed_files(ctx.db).values():
            by_memory.setdefault(file.memory_id, []).append(file)
    written = {row.memory_id for row, _ in out.writes}
    removing = {f.path for f in out.removes}
    for memory_id, files in by_memory.items():
        if memory_id in written:
            continue
        best = max(files, key=lambda f: f.key)
        if best.host_id == own_host:
            continue
        out.removes += [f for f in files if f.host_id == own_host and f.path not in removing]
