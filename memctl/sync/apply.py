"""Stage 2 of a sync, import: resolve each changed memory's versions and apply the
winner to the store, as one run.

The newest ``updated_at`` wins, ties broken by the greater host id; the local
memory takes part as this host's version. The losing version is never
dropped: a remote one is kept as a ``conflict`` event, a local one in the
``before`` of the ``update`` event that replaced it. A memory whose winning
file another host removed, unchanged here since, is no longer shared: it
stays, private and withheld from sync. Vectors are made only for new text.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from memctl.config.files import forget_key, known_sync_key
from memctl.config.scope import GLOBAL_SCOPE, LOCAL_REMOTE, keyed_scope
from memctl.context import Context
from memctl.embed import BATCH_TEXTS
from memctl.ingest.graph import Indexed, Reading, Written, parse_triples, read
from memctl.memories.provenance import signs
from memctl.model import Memory, State, Visibility, now_iso
from memctl.store import memories as store
from memctl.store.graph import SYNC as SYNC_ORIGIN
from memctl.store.projects import scope_dirs
from memctl.store.relations import has_relation
from memctl.store.runs import RunRecord, save_run
from memctl.store.sync import (
    FORGOTTEN_BY,
    REDACTED_BY,
    SYNC_SOURCE,
    SyncFile,
    drop_files,
    existing_ids,
    files_of,
    put_files,
    set_read_commit,
)
from memctl.store.writes import Writer
from memctl.sync.incoming import Incoming, Progress, quiet
from memctl.sync.layout import plain_shared_scope, shared_scope
from memctl.sync.memfile import Version, normal_time, synced_values


@dataclass
class ImportPlan:
    """What the import will do, decided before anything is written."""

    creates: list[Version] = field(default_factory=list)
    updates: list[tuple[Memory, Version, dict[str, Any]]] = field(default_factory=list)
    conflicts: list[Version] = field(default_factory=list)
    unshares: list[tuple[Memory, str]] = field(default_factory=list)
    local_won: set[str] = field(default_factory=set)  # exported even if unchanged since

    def counts(self) -> dict[str, int]:
        return {
            "created": len(self.creates),
            "updated": len(self.updates),
            "conflicts": len(self.conflicts),
            "unshared": len(self.unshares),
        }


def plan_import(ctx: Context, incoming: Incoming, own_host: str) -> ImportPlan:
    plan = ImportPlan()
    home_key = forget_key(ctx.settings.home)  # how this machine's sources went out
    changed: dict[str, list[Version]] = {}
    here = _local_scopes(ctx, home_key)
    for version in incoming.versions:
        scope = here.get(version.scope) or keyed_scope(version.scope, home_key)
        version = replace(version, scope=scope)
        changed.setdefault(version.id, []).append(version)
    ids = set(changed) | {f.memory_id for f in incoming.removed}
    before = files_of(ctx.db, ids)
    gone = {f.path for f in incoming.removed} | {f.path for f in incoming.files}
    after = {i: [f for f in before.get(i, []) if f.path not in gone] for i in ids}
    for row in incoming.files:
        after[row.memory_id].append(row)
    local = store.get_memories(ctx.db, sorted(ids))
    own_key = known_sync_key(ctx.settings.home) or b""
    for memory_id in sorted(ids):
        versions = changed.get(memory_id)
        if memory_id not in local and _removed_here(after[memory_id], own_host, own_key):
            continue  # nothing of a memory removed here comes back
        if versions:
            mine = (local.get(memory_id), versions, after[memory_id])
            _resolve(plan, *mine, own_host, home_key)
        else:
            _check_unshared(
                plan,
                local.get(memory_id),
                before.get(memory_id, []),
                after[memory_id],
                gone,
                own_host,
            )
    return plan


def _local_scopes(ctx: Context, home_key: bytes) -> dict[str, str]:
    """The repository's names (``layout.shared_scope``'s, and the plain digest an older
    memctl gave a remote that is a directory) of each project of this store named by a
    folder -> its scope here: a file of it comes back into that project."""
    here: dict[str, str] = {}
    for scope in scope_dirs(ctx.db, GLOBAL_SCOPE):
        if scope.startswith(LOCAL_REMOTE):
            here[plain_shared_scope(scope)] = scope
        here[shared_scope(scope, home_key)] = scope
    return here


def _resolve(
    plan: ImportPlan,
    memory: Memory | None,
    versions: list[Version],
    files: list[SyncFile],
    own_host: str,
    home_key: bytes,
) -> None:
    best = max(files, key=lambda f: f.key)
    winner = next((v for v in versions if v.key == best.key), None)
    final: dict[str, Any] | None = None
    if winner is not None and memory is None:
        if not winner.tombstone:
            plan.creates.append(winner)
            final = winner.values
    elif winner is not None and memory is not None:
        mine = synced_values(memory, home_key, tuple(winner.values))
        changes = {k: v for k, v in winner.values.items() if mine.get(k) != v}
        if not changes:
            final = winner.values
        elif winner.key > (normal_time(memory.updated_at), own_host):
            plan.updates.append((memory, winner, changes))
            final = winner.values
        else:
            plan.conflicts.append(winner)
            plan.local_won.add(memory.id)
    if final is None and memory is not None:
        final = synced_values(memory, home_key)
    for version in versions:
        if version is not winner and final is not None and _differs(version.values, final):
            plan.conflicts.append(version)


def _removed_here(files: list[SyncFile], own_host: str, own_key: bytes) -> bool:
    """Whether this machine shared the memory (a file of its own, signed by its key: a
    file naming its host id is not enough) that its store no longer holds: forgotten
    (``sessions forget``) or deleted for good since. Another machine's version, edited
    before it learnt so, does not bring the text back; this machine's export writes the
    tombstone that takes it out there too."""
    return any(f.host_id == own_host and signs(own_key, f) for f in files)


def _differs(values: dict[str, Any], final: dict[str, Any]) -> bool:
    return any(final.get(k) != v for k, v in values.items() if k != "updated_at")


def _check_unshared(
    plan: ImportPlan,
    memory: Memory | None,
    before: list[SyncFile],
    after: list[SyncFile],
    gone: set[str],
    own_host: str,
) -> None:
    if memory is None or memory.visibility != Visibility.SHARED or not before:
        return
    previous = max(before, key=lambda f: f.key)
    if previous.path not in gone or previous.host_id == own_host:
        return
    if normal_time(memory.updated_at) != previous.updated_at:
        return  # changed here since: this machine's version goes out instead
    if any(f.updated_at >= previous.updated_at for f in after):
        return
    plan.unshares.append((memory, previous.host_id))


def apply_import(
    ctx: Context, plan: ImportPlan, incoming: Incoming, run: RunRecord, progress: Progress = quiet
) -> None:
    """Write the plan, the index and the run in one transaction."""
    vectors = _vectors(ctx, plan, progress)
    writer = Writer(ctx.db, run.id)
    with ctx.db.atomic():
        for version in plan.creates:
            _create(writer, version, vectors.get(version.id))
        for memory, version, changes in plan.updates:
            _update(writer, memory, version, changes, vectors.get(version.id))
        for version in plan.conflicts:
            writer.conflict(version.id, reason="sync", host=version.host, lost=version.values)
        for memory, host in plan.unshares:
            writer.set_shared([memory], False, f"sync: no longer shared by host {host}")
        run.counts["relations"] = _relations(ctx, writer, plan)
        graph = _graph(ctx, plan)
        run.counts["triples"], run.counts["triples_withdrawn"] = graph.stated, graph.withdrawn
        drop_files(ctx.db, [f.path for f in incoming.removed])
        put_files(ctx.db, incoming.files)
        set_read_commit(ctx.db, incoming.commit, incoming.bad)
        for name, count in plan.counts().items():
            run.counts[name] = run.counts.get(name, 0) + count
        if plan.creates or plan.updates or plan.conflicts or plan.unshares:
            save_run(ctx.db, run)


def _vectors(ctx: Context, plan: ImportPlan, progress: Progress) -> dict[str, bytes]:
    """Vectors of the created and rewritten memories, ``BATCH_TEXTS`` at a time, longest
    first (a batch pads to its longest text); text the store holds already is not
    embedded again (``Context.vectors``)."""
    texts = [(v.id, v.values["content"]) for v in plan.creates]
    texts += [(v.id, c["content"]) for _, v, c in plan.updates if "content" in c]
    texts.sort(key=lambda item: len(item[1]), reverse=True)
    found: dict[str, bytes] = {}
    for start in range(0, len(texts), BATCH_TEXTS):
        progress("embedding memories", start, len(texts))
        batch = texts[start : start + BATCH_TEXTS]
        made = ctx.vectors([text for _, text in batch])
        found.update(zip([memory_id for memory_id, _ in batch], made, strict=True))
    return found


def _create(writer: Writer, version: Version, vector: bytes | None) -> None:
    values = dict(version.values)
    memory = Memory(
        content=values.pop("content"),
        id=version.id,
        scope=version.scope,
        visibility=Visibility.SHARED,
        **values,
    )
    writer.create(memory, vector, source=SYNC_SOURCE, host=version.host)


def _update(
    writer: Writer,
    memory: Memory,
    version: Version,
    changes: dict[str, Any],
    vector: bytes | None,
) -> None:
    written = {"updated_at": memory.updated_at, **changes}  # the winner's time, not now
    if version.scope != memory.scope:
        written["scope"] = version.scope
    marks = {FORGOTTEN_BY: version.host} if version.forgotten else {}
    marks |= {REDACTED_BY: version.host} if version.redacted else {}
    writer.update(memory, written, vector, reason=SYNC_SOURCE, host=version.host, **marks)


def _graph(ctx: Context, plan: ImportPlan) -> Indexed:
    """Read the applied memories into the knowledge graph, with the triples their files
    state (the rules find the rest in their text); what an earlier file of a memory stated
    and its new one no longer lists is taken back (``withdrawn``), but for what the rules
    read here or a model or the host gave, and superseded history."""
    applied = [*plan.creates, *(v for _, v, _ in plan.updates)]
    found = store.get_memories(ctx.db, [v.id for v in applied if not v.tombstone])
    written = [
        Written(
            m.id,
            m.content,
            m.source,
            m.content_hash,
            parse_triples(list(map(list, v.triples or []))),
            SYNC_ORIGIN,
            listed=v.triples is not None,
        )
        for v in applied
        if (m := found.get(v.id)) is not None and m.state == State.ACTIVE
    ]
    return read(ctx.db, written, Reading(now_iso()))


def _relations(ctx: Context, writer: Writer, plan: ImportPlan) -> int:
    """Add the applied versions' relations whose other end is here; relations are only
    added (a removed relation does not travel)."""
    applied = [*plan.creates, *(v for _, v, _ in plan.updates)]
    wanted = [r for v in applied if not v.tombstone for r in v.relations]
    present = existing_ids(ctx.db, {r.dst_id for r in wanted})
    added = 0
    for relation in wanted:
        if relation.dst_id not in present or has_relation(
            ctx.db, relation.src_id, relation.dst_id, relation.type
        ):
            continue
        writer.link(relation)
        added += 1
    return added
