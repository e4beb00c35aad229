"""The graph stage of distillation: each written memory's entities and triples, stored.

After a batch's decisions are applied, every memory they created or changed is read
by the rules of ``entities`` (plus the triples an LLM or the host model gave with the
fact); its entities are stored (an alias of a known entity is that entity), the
triples linked to the memory and to the session message it came from. A memory
read again (its text grew) first leaves the graph, so a triple only its old text
stated goes. ``maintain`` reads the memories no distillation did (remembered,
imported, synced, or older than the graph) with ``index_pending``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath

from memctl.ingest.entities import Entity, Triple, canonical, entities, key, triples
from memctl.memories.projects import repo_name
from memctl.model import now_iso
from memctl.store import graph as store
from memctl.store.database import Database

# The session message a memory came from: ``session:<id>#<seq>`` of its source.
MESSAGE = re.compile(r"^session:[^#\s]+#\d+")
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


def _entity(db: Database, entity: Entity, at: str) -> int:
    """The stored entity (created when new) and every spelling the text gave it as alias."""
    named = canonical(entity.name) or entity
    found = store.add_entity(db, named.name, key(named.name), named.kind, at)
    for spelled in {entity.name, *entity.spelled} - {named.name}:
        store.add_alias(db, found, spelled, key(spelled))
    return found


def index(db: Database, written: list[Written], at: str | None = None) -> int:
    """Store the entities and triples of ``written``; how many triples they stated."""
    at = at or now_iso()
    count = 0
    places = store.memory_places(db, [item.memory_id for item in written])
    for item in written:
        store.forget_memory(db, item.memory_id)
        message = MESSAGE.match(item.source)
        where = message.group(0) if message else ""
        ids = [_entity(db, e, at) for e in entities(item.content)]
        scope, cwd = places.get(item.memory_id, ("", ""))
        # the directory's name, else the repository's: never a directory's hash
        project = PurePath(cwd).name or repo_name(scope) or None
        stated = [*triples(item.content, project=project), *item.extra]
        for triple in stated:
            subject, obj = _entity(db, triple.subject, at), _entity(db, triple.object, at)
            ids += [subject, obj]
            if subject != obj:
                found = store.add_triple(db, subject, triple.predicate, obj, at)
                store.add_source(db, found, item.memory_id, where)
                count += 1
        store.add_mentions(db, list(dict.fromkeys(ids)), item.memory_id)
        store.mark_indexed(db, item.memory_id, item.content_hash)
    return count


def index_pending(db: Database, limit: int | None = None) -> tuple[int, int]:
    """Read every active memory the graph has not read as it is now (at most ``limit``),
    in batches, each in one transaction; (memories read, triples stated)."""
    memories = triples_found = 0
    while limit is None or memories < limit:
        size = BATCH if limit is None else min(BATCH, limit - memories)
        rows = store.unindexed(db, size)
        if not rows:
            break
        with db.atomic():
            triples_found += index(db, [Written(*row) for row in rows])
        memories += len(rows)
    return memories, triples_found


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
