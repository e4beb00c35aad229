"""The graph stage of distillation: each written memory's entities and triples, stored.

After a batch's decisions are applied, every memory they created or changed is read
by the rules of ``entities`` (plus the triples an LLM or the host model gave with the
fact); its entities are stored (an alias of a known entity is that entity), the
triples linked to the memory and to the session message it came from, each link with
its origin. A memory read again (its text grew, or the rules changed: ``RULES_VERSION``)
takes back what the rules no longer read in it, and keeps what a model or a sync gave:
a triple only its old text stated by the rules goes, a superseded one the rules still
read stays superseded. ``maintain`` reads the memories no distillation did (remembered,
imported, synced, or older than the graph), and every memory again when the rules
changed, with ``index_pending``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath

from memctl.ingest.entities import (
    RULES_VERSION,
    Entity,
    Triple,
    canonical,
    entities,
    key,
    triples,
)
from memctl.memories.projects import repo_name
from memctl.model import now_iso
from memctl.store import graph as store
from memctl.store.database import Database

# The session message a memory came from: ``session:<id>#<seq>`` of its source.
MESSAGE = re.compile(r"^session:[^#\s]+#\d+")
# A directory a program made to throw away: Python's ``tempfile`` ("tmp" and eight of
# [a-z0-9_]) or mktemp(1)'s ("tmp." and its X's): no project's name (a test harness's
# sessions named projects "tmpqwh7888i", "tmpw6sk2trg").
TEMP_DIR = re.compile(r"tmp[a-z0-9_]{8}|tmp\.[A-Za-z0-9]{6,}")
# A directory of worktrees ("spotter-worktrees", ".claude/worktrees"): each of its folders
# is named after a branch or a task ("spotter-4te"), not the project.
WORKTREES = re.compile(r"(?:.*[-_.])?worktrees")
# Memories read per batch by ``index_pending``.
BATCH = 2000


@dataclass
class Written:
    """One memory to read into the graph."""

    memory_id: str
    content: str
    source: str = ""
    content_hash: str = ""
    extra: list[Triple] = field(default_factory=list)  # from the LLM or the host
    origin: str = store.LLM  # who gave ``extra``: store.LLM, HOST or SYNC
    restated: bool = True  # the text is new to the graph (False: only the rules changed)
    listed: bool = True  # a synced file lists all it states (False: an older file, no key)


@dataclass
class Indexed:
    """What reading memories into the graph did."""

    memories: int = 0
    stated: int = 0  # triples stated (by the rules and given)
    dropped: int = 0  # statements by the rules taken back: the rules no longer read them
    withdrawn: int = 0  # statements by a sync taken back: the synced file no longer lists them

    def add(self, other: Indexed) -> None:
        self.memories += other.memories
        self.stated += other.stated
        self.dropped += other.dropped
        self.withdrawn += other.withdrawn


@dataclass
class Reading:
    """One call's reading: its time, and on a re-read by newer rules the entities whose
    kind it has set (the first memory read names an entity's kind, as in a new store)."""

    at: str
    kinds_set: set[int] | None = None  # None: an entity keeps the kind it has
    generation: int = 0  # the graph's generation a re-read that changes a statement marks


def _entity(db: Database, entity: Entity, reading: Reading, again: bool = False) -> int:
    """The stored entity (created when new) and every spelling the text gave it as alias;
    read ``again`` by newer rules, the kind they give it (once a reading)."""
    named = canonical(entity.name) or entity
    found = store.add_entity(db, named.name, key(named.name), named.kind, reading.at)
    claimed = reading.kinds_set
    if again and claimed is not None and found not in claimed:
        store.set_kind(db, found, named.kind)
        claimed.add(found)
    for spelled in {entity.name, *entity.spelled} - {named.name}:
        store.add_alias(db, found, spelled, key(spelled))
    return found


def _triple(
    db: Database, triple: Triple, item: Written, reading: Reading, ruled: bool
) -> tuple[int, int, int | None]:
    """(subject, object, the stored triple: None when both ends are one entity). Stated by
    a text new to the graph, a superseded triple is active again; read again by newer
    rules, it keeps its state."""
    again = ruled and not item.restated
    subject = _entity(db, triple.subject, reading, again)
    obj = _entity(db, triple.object, reading, again)
    if subject == obj:
        return subject, obj, None
    found = store.find_triple(db, subject, triple.predicate, obj)
    if found is None or item.restated:
        found = store.add_triple(db, subject, triple.predicate, obj, reading.at)
    return subject, obj, found


def _index_one(
    db: Database, item: Written, place: tuple[str | None, str], reading: Reading
) -> Indexed:
    message = MESSAGE.match(item.source)
    where = message.group(0) if message else ""
    stored = store.sources_of(db, item.memory_id)
    before = {t for t, origin in stored.items() if origin == store.RULES}
    named = entities(item.content, place[1] or place[0] or "")
    ids = [_entity(db, e, reading, not item.restated) for e in named]
    done = Indexed(memories=1)
    ruled: set[int] = set()
    gave: set[int] = set()
    stated = [(t, store.RULES) for t in triples(item.content, project=place[0], folder=place[1])]
    for triple, origin in [*stated, *((t, item.origin) for t in item.extra)]:
        subject, obj, found = _triple(db, triple, item, reading, origin == store.RULES)
        ids += [subject, obj]
        if found is not None:
            store.add_source(db, found, item.memory_id, where, origin)
            (ruled if origin == store.RULES else gave).add(found)
            done.stated += 1
    gone = before - ruled
    if gone:
        store.drop_rule_sources(db, item.memory_id, gone)
    withdrawn = (
        _unsynced(db, item.memory_id, stored, ruled, gave)
        if item.origin == store.SYNC and item.listed
        else set()
    )
    given = [t for t, origin in stored.items() if origin != store.RULES and t not in withdrawn]
    if given:  # what a model or a sync gave it earlier: it still names those ends
        ids += store.triple_ends(db, given)
    store.replace_mentions(db, item.memory_id, list(dict.fromkeys(ids)))
    store.mark_indexed(db, item.memory_id, item.content_hash, RULES_VERSION)
    if not item.restated and reading.generation and (gone or ruled - set(stored)):
        store.mark_restated(db, item.memory_id, reading.generation)
    done.dropped, done.withdrawn = len(gone), len(withdrawn)
    return done


def _unsynced(
    db: Database, memory_id: str, stored: dict[int, str], ruled: set[int], gave: set[int]
) -> set[int]:
    """Take back what ``memory_id``'s synced file stated before and no longer lists (its
    sender's newer rules took it back): a triple the rules read here stays, theirs now; a
    superseded one stays as history. The triples whose statements went."""
    untold = {t for t, origin in stored.items() if origin == store.SYNC} - gave
    if untold & ruled:
        store.set_origin(db, memory_id, untold & ruled, store.RULES)
    return store.drop_sync_sources(db, memory_id, untold - ruled) if untold - ruled else set()


def index(db: Database, written: list[Written], at: str | None = None) -> int:
    """Store the entities and triples of ``written``; how many triples they stated."""
    return read(db, written, Reading(at or now_iso())).stated


def read(db: Database, written: list[Written], reading: Reading) -> Indexed:
    """Read ``written`` into the graph (``index``), with what it took back."""
    places = store.memory_places(db, [item.memory_id for item in written])
    total = Indexed()
    for item in written:
        total.add(_index_one(db, item, project_of(*places.get(item.memory_id, ("", ""))), reading))
    return total


def project_of(scope: str, cwd: str) -> tuple[str | None, str]:
    """(the project's name, the directory's) of a memory of ``scope`` from a session run in
    ``cwd``: the directory's name, else the repository's, never a directory's hash, a
    throwaway directory's (``TEMP_DIR``) or a worktree's (``WORKTREES``)."""
    where = PurePath(cwd)
    named = not TEMP_DIR.fullmatch(where.name) and not WORKTREES.fullmatch(where.parent.name)
    return (where.name if named else "") or repo_name(scope) or None, where.name


def index_pending(db: Database, limit: int | None = None) -> Indexed:
    """Read every memory the graph has not read as it is now (``store.unindexed``: new or
    changed text, or older rules), at most ``limit``, in batches, each in one transaction."""
    total, reading = Indexed(), Reading(now_iso(), set())
    while limit is None or total.memories < limit:
        size = BATCH if limit is None else min(BATCH, limit - total.memories)
        rows = store.unindexed(db, size, RULES_VERSION)
        if not rows:
            break
        with db.atomic():
            reading.generation = store.next_generation(db)
            total.add(read(db, [Written(*row[:4], restated=row[4]) for row in rows], reading))
    return total


def parse_triples(value: object) -> list[Triple]:
    """Triples an LLM or the host gave with a fact: a list of ``[subject, predicate,
    object]`` (or ``{"subject", "predicate", "object"}``); anything else is left out, and
    so is one a part of which holds private text or a secret (a graph name is shown
    whole: a part with a redaction mark in it says nothing)."""
    from memctl.memories.privacy import scrub

    found: list[Triple] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict):
            item = [item.get("subject"), item.get("predicate"), item.get("object")]
        if not isinstance(item, list | tuple) or len(item) != 3:
            continue
        parts = [" ".join(str(p).split()) for p in item if isinstance(p, str)]
        clean = len(parts) == 3 and all(scrub(p)[0] == p for p in parts)
        if clean and all(parts) and max(len(p) for p in parts) <= 120:
            subject, predicate, obj = parts
            found.append(
                Triple(
                    canonical(subject) or Entity(subject, "thing"),
                    predicate.lower(),
                    canonical(obj) or Entity(obj, "thing"),
                )
            )
    return found
