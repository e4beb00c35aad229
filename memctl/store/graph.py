"""SQL for the knowledge graph: entities, their aliases, triples and where each came from.

An entity is found by any of its aliases' keys (case folded, spaces collapsed). A
triple links to the memories (and the session message) that state it, each link with its
origin (the rules, an LLM, the host model, a sync); when its last source goes (a memory
forgotten, deleted, or re-read without it), a trigger removes it. Superseded triples
stay, with the triple that superseded them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from memctl.config.scope import GLOBAL_SCOPE
from memctl.store.database import Database

ACTIVE, SUPERSEDED = "active", "superseded"
# Where a memory's statement of a triple came from (migrations.TRIPLE_ORIGINS): the rules
# read it in the text; the others gave it (an LLM's or the host's fact, a synced file, or
# unknown: stored before the origin was kept, by a memory a model or a sync wrote).
RULES, LLM, HOST, SYNC, UNKNOWN = "rules", "llm", "host", "sync", "unknown"
# Memory states whose triples are live (recall walks them; the profile cites them).
LIVE_STATES = ("active",)
# A name half the store's projects or more name (Git, the assistant itself) sets none of
# them apart: BM25's idf, log((N - n + 0.5) / (n + 0.5)), is at or below zero from n = N / 2.
# One that fewer than ``SPREAD_MIN`` projects name is theirs however few the store holds
# (two related projects may share their tools). A project's profile (its stack) and its
# `memctl graph` list such a name after the project's own.
SPREAD_SHARE = 0.5
SPREAD_MIN = 3


def shared_floor(scopes: int) -> float:
    """How many scopes name an entity every project shares, of ``scopes`` naming any."""
    return max(SPREAD_MIN, SPREAD_SHARE * scopes)


@dataclass(frozen=True)
class GraphEntity:
    """A person, place, project or thing the knowledge graph names, and its other names."""

    id: int
    name: str
    kind: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Source:
    """Where a triple was stated: a memory, its message and who stated it."""

    memory_id: str
    message: str
    state: str  # the memory's state
    origin: str = RULES  # who stated it: RULES, LLM, HOST, SYNC or UNKNOWN


@dataclass
class GraphTriple:
    """A (subject, predicate, object) fact of the graph, with the memories that state it."""

    id: int
    subject: GraphEntity
    predicate: str
    object: GraphEntity
    state: str
    superseded_by: int | None
    created_at: str
    sources: list[Source] = field(default_factory=list)

    @property
    def text(self) -> str:
        return f"{self.subject.name} → {self.predicate} → {self.object.name}"

    @property
    def live(self) -> bool:
        return self.state == ACTIVE and any(s.state in LIVE_STATES for s in self.sources)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subject": self.subject.name,
            "predicate": self.predicate,
            "object": self.object.name,
            "state": self.state,
            "superseded_by": self.superseded_by,
            "created_at": self.created_at,
            "sources": [s.__dict__ for s in self.sources],
        }


def entity_id(db: Database, alias_key: str) -> int | None:
    found = db.value("SELECT entity_id FROM entity_aliases WHERE key = ?", (alias_key,))
    return None if found is None else int(found)


def add_entity(db: Database, name: str, alias_key: str, kind: str, at: str) -> int:
    """The entity an alias names, created (with that alias) when none does."""
    found = entity_id(db, alias_key)
    if found is not None:
        return found
    db.execute("INSERT INTO entities(name, kind, created_at) VALUES (?, ?, ?)", (name, kind, at))
    new = db.last_rowid()
    add_alias(db, new, name, alias_key)
    return new


def set_kind(db: Database, entity: int, kind: str) -> None:
    db.execute("UPDATE entities SET kind = ? WHERE id = ?", (kind, entity))


def add_alias(db: Database, entity: int, alias: str, alias_key: str) -> None:
    db.execute(
        "INSERT INTO entity_aliases(key, alias, entity_id) VALUES (?, ?, ?) "
        "ON CONFLICT(key) DO NOTHING",
        (alias_key, alias, entity),
    )


def find_triple(db: Database, subject: int, predicate: str, obj: int) -> int | None:
    found = db.value(
        "SELECT id FROM triples WHERE subject = ? AND predicate = ? AND object = ?",
        (subject, predicate, obj),
    )
    return None if found is None else int(found)


def add_triple(db: Database, subject: int, predicate: str, obj: int, at: str) -> int:
    """A triple's id, inserted when new; a superseded triple stated again is active again."""
    db.execute(
        "INSERT INTO triples(subject, predicate, object, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(subject, predicate, object) DO UPDATE SET state = 'active', "
        "superseded_by = NULL",
        (subject, predicate, obj, at),
    )
    return int(
        db.value(
            "SELECT id FROM triples WHERE subject = ? AND predicate = ? AND object = ?",
            (subject, predicate, obj),
        )
    )


def add_source(
    db: Database, triple: int, memory_id: str, message: str, origin: str = RULES
) -> None:
    """``memory_id`` states ``triple``; one a model or a sync gave is theirs even when the
    rules read it too (so a re-read by other rules keeps it)."""
    db.execute(
        "INSERT INTO triple_sources(triple_id, memory_id, message, origin) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(triple_id, memory_id) DO UPDATE SET origin = excluded.origin "
        f"WHERE triple_sources.origin = '{RULES}'",
        (triple, memory_id, message, origin),
    )


def sources_of(db: Database, memory_id: str) -> dict[int, str]:
    """The triples ``memory_id`` states, with the origin of each statement."""
    rows = db.tuples(
        "SELECT triple_id, origin FROM triple_sources WHERE memory_id = ?", (memory_id,)
    )
    return {int(t): str(origin) for t, origin in rows}


def triple_ends(db: Database, triples: list[int]) -> list[int]:
    """The subjects and objects of ``triples``."""
    rows = db.tuples(
        "SELECT subject, object FROM triples WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(triples),),
    )
    return [int(end) for row in rows for end in row]


def drop_rule_sources(db: Database, memory_id: str, triples: set[int]) -> None:
    """``memory_id`` no longer states ``triples`` by the rules (one nothing else states goes)."""
    db.execute(
        "DELETE FROM triple_sources WHERE memory_id = ? AND origin = ? "
        "AND triple_id IN (SELECT value FROM json_each(?))",
        (memory_id, RULES, json.dumps(sorted(triples))),
    )


def drop_sync_sources(db: Database, memory_id: str, triples: set[int]) -> set[int]:
    """``memory_id``'s synced file no longer states ``triples``: its sync statements of the
    active ones go (a triple nothing else states goes with them); a superseded one stays,
    history (a file lists only the active triples its sender holds). The ones that went."""
    ids = json.dumps(sorted(triples))
    rows = db.tuples(
        "SELECT x.triple_id FROM triple_sources x JOIN triples t ON t.id = x.triple_id "
        "WHERE x.memory_id = ? AND x.origin = ? AND t.state = 'active' "
        "AND x.triple_id IN (SELECT value FROM json_each(?))",
        (memory_id, SYNC, ids),
    )
    going = {int(r[0]) for r in rows}
    db.execute(
        "DELETE FROM triple_sources WHERE memory_id = ? "
        "AND triple_id IN (SELECT value FROM json_each(?))",
        (memory_id, json.dumps(sorted(going))),
    )
    return going


def set_origin(db: Database, memory_id: str, triples: set[int], origin: str) -> None:
    """``memory_id`` states ``triples`` now by ``origin`` (the rules keep what a sync no
    longer gives but they read)."""
    db.execute(
        "UPDATE triple_sources SET origin = ? WHERE memory_id = ? "
        "AND triple_id IN (SELECT value FROM json_each(?))",
        (origin, memory_id, json.dumps(sorted(triples))),
    )


def replace_mentions(db: Database, memory_id: str, entities: list[int]) -> None:
    """The entities ``memory_id`` mentions are ``entities``, and only they."""
    db.execute("DELETE FROM entity_mentions WHERE memory_id = ?", (memory_id,))
    add_mentions(db, entities, memory_id)


def add_mentions(db: Database, entities: list[int], memory_id: str) -> None:
    db.executemany(
        "INSERT INTO entity_mentions(entity_id, memory_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
        [(e, memory_id) for e in entities],
    )


def forget_memory(db: Database, memory_id: str) -> None:
    """Take a memory out of the graph: its mentions, its sources (a triple it alone stated
    goes with it) and its indexed mark."""
    db.execute("DELETE FROM triple_sources WHERE memory_id = ?", (memory_id,))
    db.execute("DELETE FROM entity_mentions WHERE memory_id = ?", (memory_id,))
    db.execute("DELETE FROM graph_indexed WHERE memory_id = ?", (memory_id,))


def mark_unread(db: Database, memory_id: str) -> None:
    """``memory_id``'s text changed: the graph reads it again at the next ``maintain`` (as
    it would by the hash), and keeps no hash of the text before, which may have been
    forgotten or redacted (a short secret's hash is found by trying values)."""
    db.execute("UPDATE graph_indexed SET content_hash = '' WHERE memory_id = ?", (memory_id,))


def mark_indexed(db: Database, memory_id: str, digest: str, rules: int) -> None:
    """``memory_id`` was read as its text ``digest`` is, by the rules of version ``rules``."""
    db.execute(
        "INSERT INTO graph_indexed(memory_id, content_hash, rules) VALUES (?, ?, ?) "
        "ON CONFLICT(memory_id) DO UPDATE SET content_hash = excluded.content_hash, "
        "rules = excluded.rules",
        (memory_id, digest, rules),
    )


# The graph's generation (a meta key), moved on by each batch maintain reads: a memory
# whose statements a re-read by newer rules changed keeps the generation that changed them
# (``graph_indexed.restated``), so that sync sends its file again (with those triples).
GENERATION = "graph_generation"


def next_generation(db: Database) -> int:
    """Move the graph's generation on; the new one."""
    db.execute(
        f"INSERT INTO meta(key, value) VALUES ('{GENERATION}', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )
    return generation(db)


def generation(db: Database) -> int:
    return int(db.meta(GENERATION) or 0)


def mark_restated(db: Database, memory_id: str, at_generation: int) -> None:
    """A re-read of ``memory_id`` (read already) changed what it states, in that generation."""
    db.execute(
        "UPDATE graph_indexed SET restated = ? WHERE memory_id = ?", (at_generation, memory_id)
    )


def restate(db: Database, memory_ids: list[str]) -> None:
    """These memories state other triples now (a redact took one out): marked restated in
    a new generation, so sync sends their files again."""
    at = next_generation(db) if memory_ids else 0
    for memory_id in memory_ids:
        mark_restated(db, memory_id, at)


# An active memory whose text the graph has not read as it is now (new, or changed).
_TEXT_UNREAD = "m.state = 'active' AND (g.content_hash IS NULL OR g.content_hash != m.content_hash)"


def unindexed(db: Database, limit: int, rules: int) -> list[tuple[str, str, str, str, bool]]:
    """Memories the graph has not read as they are now: active ones whose text is new to
    it, and active or superseded ones read by rules older than version ``rules`` (their
    history is read again too); (id, content, source, hash, whether the text is new)."""
    rows = db.tuples(
        f"SELECT m.id, m.content, m.source, m.content_hash, {_TEXT_UNREAD} FROM memories m "
        "LEFT JOIN graph_indexed g ON g.memory_id = m.id "
        f"WHERE ({_TEXT_UNREAD}) OR (g.rules < ? AND m.state IN ('active', 'superseded')) "
        "ORDER BY m.rowid LIMIT ?",
        (rules, limit),
    )
    return [(str(a), str(b), str(c), str(d), bool(e)) for a, b, c, d, e in rows]


def stale_memories(db: Database) -> list[str]:
    """Memories in the graph that are no longer active and not superseded: forgotten,
    deleted or archived since they were read."""
    rows = db.tuples(
        "SELECT g.memory_id FROM graph_indexed g JOIN memories m ON m.id = g.memory_id "
        "WHERE m.state IN ('archived', 'deleted')"
    )
    return [str(r[0]) for r in rows]


def memory_places(db: Database, memory_ids: list[str]) -> dict[str, tuple[str, str]]:
    """Each memory's scope and the directory its session ran in ('' when none)."""
    rows = db.tuples(
        "SELECT m.id, m.scope, coalesce(s.cwd, '') FROM memories m "
        "LEFT JOIN sessions s ON s.id = m.session_id "
        "WHERE m.id IN (SELECT value FROM json_each(?))",
        (json.dumps(memory_ids),),
    )
    return {str(i): (str(scope), str(cwd)) for i, scope, cwd in rows}


def memory_origins(db: Database, memory_ids: list[str]) -> dict[str, tuple[str, str, str]]:
    """Each memory's scope, its session's scope and the directory its session ran in
    ('' when it has none)."""
    rows = db.tuples(
        "SELECT m.id, m.scope, coalesce(s.scope, ''), coalesce(s.cwd, '') FROM memories m "
        "LEFT JOIN sessions s ON s.id = m.session_id "
        "WHERE m.id IN (SELECT value FROM json_each(?))",
        (json.dumps(memory_ids),),
    )
    return {str(i): (str(scope), str(session), str(cwd)) for i, scope, session, cwd in rows}


def entities_by_keys(db: Database, keys: list[str]) -> dict[str, GraphEntity]:
    """The entities these alias keys name, by key, in one query."""
    if not keys:
        return {}
    rows = db.tuples(
        "SELECT a.key, e.id, e.name, e.kind FROM entity_aliases a "
        "JOIN entities e ON e.id = a.entity_id WHERE a.key IN (SELECT value FROM json_each(?))",
        (json.dumps(keys),),
    )
    return {str(k): GraphEntity(int(i), str(n), str(kind)) for k, i, n, kind in rows}


def get_entity(db: Database, entity: int) -> GraphEntity | None:
    row = db.tuples("SELECT id, name, kind FROM entities WHERE id = ?", (entity,))
    if not row:
        return None
    aliases = db.tuples(
        "SELECT alias FROM entity_aliases WHERE entity_id = ? ORDER BY alias", (entity,)
    )
    i, name, kind = row[0]
    return GraphEntity(int(i), str(name), str(kind), tuple(str(a[0]) for a in aliases))


# A memory of the scopes asked for (a JSON list of scope names is the parameter).
IN_SCOPES = "m.scope IN (SELECT value FROM json_each(?))"
# The ids of the memories of the scopes, and of the triples they state (one parameter
# each): computed once per query, not per entity or triple.
_SCOPED_MEMORIES = "SELECT id FROM memories WHERE scope IN (SELECT value FROM json_each(?))"
_SCOPED_TRIPLES = f"SELECT triple_id FROM triple_sources WHERE memory_id IN ({_SCOPED_MEMORIES})"
# A triple a memory of the scopes states (one parameter).
TRIPLE_IN_SCOPES = f"t.id IN ({_SCOPED_TRIPLES})"
# An entity a memory of the scopes mentions, or a triple of theirs uses (three parameters).
ENTITY_IN_SCOPES = (
    f"e.id IN (SELECT entity_id FROM entity_mentions WHERE memory_id IN ({_SCOPED_MEMORIES}) "
    f"UNION SELECT subject FROM triples WHERE id IN ({_SCOPED_TRIPLES}) "
    f"UNION SELECT object FROM triples WHERE id IN ({_SCOPED_TRIPLES}))"
)


def _scoped(condition: str, scopes: tuple[str, ...] | None, times: int) -> tuple[str, list[str]]:
    """``AND condition`` with its parameters for ``scopes``; nothing for None (every one)."""
    if scopes is None:
        return "", []
    return f"AND {condition}", [json.dumps(scopes)] * times


def entities_like(
    db: Database, text: str, limit: int, scopes: tuple[str, ...] | None = None
) -> list[GraphEntity]:
    """Entities an alias of which contains ``text`` (case folded), most mentioned first;
    only those the memories of ``scopes`` name (None: every scope's)."""
    where, params = _scoped(ENTITY_IN_SCOPES, scopes, 3)
    rows = db.tuples(
        "SELECT DISTINCT e.id, e.name, e.kind FROM entity_aliases a "
        f"JOIN entities e ON e.id = a.entity_id WHERE instr(a.key, ?) > 0 {where} "
        "ORDER BY (SELECT count(*) FROM entity_mentions m WHERE m.entity_id = e.id) DESC "
        "LIMIT ?",
        (text, *params, limit),
    )
    return [GraphEntity(int(i), str(n), str(k)) for i, n, k in rows]


def naming_scopes(db: Database) -> int:
    """How many scopes' active memories name an entity (each scope asked whether one of
    its memories does: a count over every memory took 95 ms at 20,000)."""
    return int(
        db.value(
            "SELECT count(*) FROM (SELECT DISTINCT scope FROM memories) s WHERE EXISTS "
            "(SELECT 1 FROM memories m JOIN entity_mentions x ON x.memory_id = m.id "
            "WHERE m.scope = s.scope AND m.state = 'active')"
        )
        or 0
    )


@dataclass(frozen=True)
class Named:
    """An entity the memories of some scopes name, and how much they name it."""

    entity: GraphEntity
    here: int  # mentions by the active memories of the scope asked about
    scopes: int  # scopes whose active memories name it (0: not counted, ``here`` is 0)
    mentions: int  # mentions by any memory


def entities_named(db: Database, own: str, scopes: tuple[str, ...]) -> list[Named]:
    """The entities the memories of ``scopes`` name (as ``entities_like`` reads them),
    each with its mentions by ``own``'s active memories, by any memory, and, for those
    ``own`` mentions, how many scopes name it: grouped reads, not a count per entity (each
    of a 20-project store's 641 entities of one project counted its scopes in 2.8 s)."""
    where, params = _scoped(ENTITY_IN_SCOPES, scopes, 3)
    found = {
        int(i): GraphEntity(int(i), str(n), str(k))
        for i, n, k in db.tuples(
            f"SELECT e.id, e.name, e.kind FROM entities e WHERE 1 {where}", params
        )
    }
    if not found:
        return []
    here = dict(
        db.tuples(
            "SELECT x.entity_id, count(*) FROM entity_mentions x JOIN memories m "
            "ON m.id = x.memory_id WHERE m.scope = ? AND m.state = 'active' GROUP BY x.entity_id",
            (own,),
        )
    )
    mentioned = json.dumps([i for i in found if here.get(i)])
    spread = dict(
        db.tuples(
            # CROSS JOIN: from the entities' mentions (SQLite began from every active memory)
            "SELECT x.entity_id, count(DISTINCT m.scope) FROM entity_mentions x CROSS JOIN "
            "memories m ON m.id = x.memory_id WHERE m.state = 'active' "
            "AND x.entity_id IN (SELECT value FROM json_each(?)) GROUP BY x.entity_id",
            (mentioned,),
        )
    )
    mentions = dict(
        db.tuples(
            "SELECT entity_id, count(*) FROM entity_mentions "
            "WHERE entity_id IN (SELECT value FROM json_each(?)) GROUP BY entity_id",
            (json.dumps(list(found)),),
        )
    )
    return [
        Named(e, int(here.get(i, 0)), int(spread.get(i, 0)), int(mentions.get(i, 0)))
        for i, e in found.items()
    ]


def entity_in_scopes(db: Database, entity: int, scopes: tuple[str, ...]) -> bool:
    """Whether a memory of ``scopes`` names the entity (or states a triple using it)."""
    where, params = _scoped(ENTITY_IN_SCOPES, scopes, 3)
    return bool(db.tuples(f"SELECT 1 FROM entities e WHERE e.id = ? {where}", (entity, *params)))


def mentioned_in(
    db: Database, entity: int, limit: int, scopes: tuple[str, ...] | None = None
) -> list[str]:
    """The memories that mention ``entity`` (of ``scopes``; None: every scope's), active
    ones first, each newest first, at most ``limit``; archived and deleted ones left out."""
    where, params = _scoped(IN_SCOPES, scopes, 1)
    rows = db.tuples(
        "SELECT m.id FROM entity_mentions x JOIN memories m ON m.id = x.memory_id "
        f"WHERE x.entity_id = ? AND m.state NOT IN ('archived', 'deleted') {where} "
        "ORDER BY m.state != 'active', m.created_at DESC, m.id LIMIT ?",
        (entity, *params, limit),
    )
    return [str(row[0]) for row in rows]


TRIPLE_COLUMNS = (
    "t.id, t.predicate, t.state, t.superseded_by, t.created_at, "
    "s.id, s.name, s.kind, o.id, o.name, o.kind"
)


def triples_touching(
    db: Database,
    entities: list[int],
    live_only: bool = True,
    limit: int = 500,
    scopes: tuple[str, ...] | None = None,
    sources: bool = True,
    offset: int = 0,
    first: str | None = None,
) -> list[GraphTriple]:
    """Triples with either end among ``entities`` (only live ones: active, stated by an
    active memory, when ``live_only``), with their sources (unless ``sources`` is False:
    ``attach_sources`` reads them for the few that need them); with ``scopes``, only the
    triples their memories state (live: their active memories), each with those sources
    alone. The scopes select before ``limit`` counts: a name other projects use often
    ("Alice") leaves these scopes' edges of it their share. ``offset``: the first rows
    skipped (a page of them: live ones first, each oldest first; with ``first``, the
    triples a memory of that scope states before the others of their state)."""
    if not entities:
        return []
    ids = json.dumps(entities)
    stated = ["m.state = 'active'"] if live_only else []
    params = [] if scopes is None else [json.dumps(scopes)]
    stated += [IN_SCOPES] if params else []
    by = (
        "AND EXISTS (SELECT 1 FROM triple_sources x JOIN memories m ON m.id = x.memory_id "
        f"WHERE x.triple_id = t.id AND {' AND '.join(stated)})"
        if stated
        else ""
    )
    live = "AND t.state = 'active'" if live_only else ""
    theirs = (
        "NOT EXISTS (SELECT 1 FROM triple_sources y JOIN memories n ON n.id = y.memory_id "
        "WHERE y.triple_id = t.id AND n.scope = ?), "
        if first
        else ""
    )
    rows = db.tuples(
        f"SELECT {TRIPLE_COLUMNS} FROM triples t JOIN entities s ON s.id = t.subject "
        "JOIN entities o ON o.id = t.object "
        "WHERE (t.subject IN (SELECT value FROM json_each(?)) "
        f"OR t.object IN (SELECT value FROM json_each(?))) {live} {by} "
        f"ORDER BY t.state, {theirs}t.created_at, t.id LIMIT ? OFFSET ?",
        (ids, ids, *params, *([first] if first else []), limit, offset),
    )
    found = [
        GraphTriple(
            int(r[0]),
            GraphEntity(int(r[5]), str(r[6]), str(r[7])),
            str(r[1]),
            GraphEntity(int(r[8]), str(r[9]), str(r[10])),
            str(r[2]),
            None if r[3] is None else int(r[3]),
            str(r[4]),
        )
        for r in rows
    ]
    if sources:
        attach_sources(db, found, scopes)
    return found


def attach_sources(
    db: Database, found: list[GraphTriple], scopes: tuple[str, ...] | None = None
) -> None:
    """Read the sources of ``found`` (oldest memory first; with ``scopes``, only those of
    the memories of those scopes) into each triple (into each copy of one read twice)."""
    if not found:
        return
    by_id: dict[int, list[GraphTriple]] = {}
    for triple in found:
        by_id.setdefault(triple.id, []).append(triple)
    scoped, params = _scoped(IN_SCOPES, scopes, 1)
    rows = db.tuples(
        "SELECT x.triple_id, x.memory_id, x.message, m.state, x.origin FROM triple_sources x "
        "JOIN memories m ON m.id = x.memory_id "
        f"WHERE x.triple_id IN (SELECT value FROM json_each(?)) {scoped} ORDER BY m.created_at",
        (json.dumps(list(by_id)), *params),
    )
    for triple_id, memory_id, message, state, origin in rows:
        for triple in by_id[int(triple_id)]:
            triple.sources.append(Source(str(memory_id), str(message), str(state), str(origin)))


def stated_by(db: Database, memory_ids: list[str]) -> dict[str, list[tuple[str, str, str]]]:
    """The active triples each memory states, as (subject, predicate, object) names."""
    rows = db.tuples(
        "SELECT x.memory_id, s.name, t.predicate, o.name FROM triple_sources x "
        "JOIN triples t ON t.id = x.triple_id JOIN entities s ON s.id = t.subject "
        "JOIN entities o ON o.id = t.object WHERE t.state = 'active' "
        "AND x.memory_id IN (SELECT value FROM json_each(?)) ORDER BY t.id",
        (json.dumps(memory_ids),),
    )
    found: dict[str, list[tuple[str, str, str]]] = {}
    for memory_id, subject, predicate, obj in rows:
        found.setdefault(str(memory_id), []).append((str(subject), str(predicate), str(obj)))
    return found


def superseded_by_memory(db: Database) -> list[tuple[int, str]]:
    """Active triples every source of which is a superseded memory: (triple, the memory
    that superseded its newest source)."""
    rows = db.tuples(
        "SELECT t.id, (SELECT m.superseded_by FROM triple_sources x JOIN memories m "
        "ON m.id = x.memory_id WHERE x.triple_id = t.id ORDER BY m.created_at DESC LIMIT 1) "
        "FROM triples t WHERE t.state = 'active' AND NOT EXISTS (SELECT 1 FROM "
        "triple_sources x JOIN memories m ON m.id = x.memory_id WHERE x.triple_id = t.id "
        "AND m.state != 'superseded')"
    )
    return [(int(t), str(by or "")) for t, by in rows]


def successor(db: Database, triple: int, memory_id: str) -> int | None:
    """A triple ``memory_id`` states with the same subject and predicate as ``triple``."""
    found = db.value(
        "SELECT n.id FROM triples t JOIN triples n ON n.subject = t.subject "
        "AND n.predicate = t.predicate AND n.id != t.id "
        "JOIN triple_sources x ON x.triple_id = n.id AND x.memory_id = ? WHERE t.id = ?",
        (memory_id, triple),
    )
    return None if found is None else int(found)


def supersede(db: Database, triple: int, by: int | None) -> None:
    db.execute(
        "UPDATE triples SET state = 'superseded', superseded_by = ? WHERE id = ?", (by, triple)
    )


# Memories ``ma`` and ``mb`` speak of one world: one scope, or one of them global (the
# scope every project's recall reads too).
_ONE_WORLD = f"(ma.scope = mb.scope OR '{GLOBAL_SCOPE}' IN (ma.scope, mb.scope))"


def rivals(db: Database, predicates: tuple[str, ...]) -> list[tuple[int, int]]:
    """(older, newer) pairs of active triples with one subject and one of ``predicates``
    (a thing that has one value at a time) but different objects, stated by memories of
    one scope (or global): an "Alice" of one project moving does not move another's."""
    rows = db.tuples(
        "SELECT a.id, b.id FROM triples a JOIN triples b ON b.subject = a.subject "
        "AND b.predicate = a.predicate AND b.object != a.object AND b.id > a.id "
        "WHERE a.state = 'active' AND b.state = 'active' "
        "AND a.predicate IN (SELECT value FROM json_each(?)) "
        "AND EXISTS (SELECT 1 FROM triple_sources xa JOIN memories ma ON ma.id = xa.memory_id "
        "JOIN triple_sources xb ON xb.triple_id = b.id JOIN memories mb "
        f"ON mb.id = xb.memory_id WHERE xa.triple_id = a.id AND {_ONE_WORLD})",
        (json.dumps(list(predicates)),),
    )
    return [(int(a), int(b)) for a, b in rows]


# A memory of the scope of memory ``my`` names the entity of alias ``a`` (a condition of
# ``alias_groups``' query, on the mention ``y`` of the other entity and its memory ``my``).
_NAMED_IN_ITS_SCOPE = (
    "EXISTS (SELECT 1 FROM entity_mentions x JOIN memories mx ON mx.id = x.memory_id "
    "WHERE x.entity_id = a.entity_id AND mx.scope = my.scope)"
)


def alias_groups(db: Database) -> list[tuple[int, int]]:
    """(kept, merged) entity pairs whose names differ by a version only: "Phoenix 2" is
    merged into "Phoenix" when every scope whose memories name "Phoenix 2" names
    "Phoenix" too (a merge made for one project renames nothing another project alone
    calls so)."""
    rows = db.tuples(
        "SELECT DISTINCT a.entity_id, b.entity_id FROM entity_aliases a JOIN entity_aliases b "
        "ON b.key GLOB a.key || ' [0-9]*' AND b.entity_id != a.entity_id "
        "WHERE EXISTS (SELECT 1 FROM entity_mentions y WHERE y.entity_id = b.entity_id) "
        "AND NOT EXISTS (SELECT 1 FROM entity_mentions y JOIN memories my "
        f"ON my.id = y.memory_id WHERE y.entity_id = b.entity_id AND NOT {_NAMED_IN_ITS_SCOPE}) "
        "ORDER BY 1, 2"
    )
    return [(int(a), int(b)) for a, b in rows]


def merge_entities(db: Database, kept: int, merged: int) -> None:
    """Fold entity ``merged`` into ``kept``: its aliases, mentions and triples (a triple
    both state keeps the sources of both); ``merged`` is removed."""
    db.execute("UPDATE entity_aliases SET entity_id = ? WHERE entity_id = ?", (kept, merged))
    db.execute(
        "INSERT INTO entity_mentions(entity_id, memory_id) SELECT ?, memory_id "
        "FROM entity_mentions WHERE entity_id = ? ON CONFLICT DO NOTHING",
        (kept, merged),
    )
    for end in ("subject", "object"):
        other = "object" if end == "subject" else "subject"
        rows = db.tuples(
            f"SELECT id, predicate, {other}, created_at FROM triples WHERE {end} = ?", (merged,)
        )
        for triple, predicate, far, at in rows:
            far = kept if int(far) == merged else int(far)
            pair = (kept, far) if end == "subject" else (far, kept)
            twin = add_triple(db, pair[0], str(predicate), pair[1], str(at))
            db.execute(
                "INSERT INTO triple_sources(triple_id, memory_id, message, origin) "
                "SELECT ?, memory_id, message, origin FROM triple_sources WHERE triple_id = ? "
                "ON CONFLICT(triple_id, memory_id) DO UPDATE SET origin = "
                f"excluded.origin WHERE triple_sources.origin = '{RULES}'",
                (twin, triple),
            )
            db.execute("DELETE FROM triples WHERE id = ?", (triple,))
    db.execute("DELETE FROM entities WHERE id = ?", (merged,))


def orphan_entities(db: Database) -> int:
    """Remove entities nothing mentions and no triple uses; how many went."""
    before = int(db.value("SELECT count(*) FROM entities"))
    db.execute(
        "DELETE FROM entities WHERE id NOT IN (SELECT entity_id FROM entity_mentions) "
        "AND id NOT IN (SELECT subject FROM triples) AND id NOT IN (SELECT object FROM triples)"
    )
    return before - int(db.value("SELECT count(*) FROM entities"))


def graph_counts(db: Database, scopes: tuple[str, ...] | None = None) -> dict[str, int]:
    """Entities, active and superseded triples (of the memories of ``scopes``, if given)."""
    named, named_params = _scoped(ENTITY_IN_SCOPES, scopes, 3)
    stated, stated_params = _scoped(TRIPLE_IN_SCOPES, scopes, 1)
    triples = f"SELECT count(*) FROM triples t WHERE t.state = ? {stated}"
    return {
        "entities": int(db.value(f"SELECT count(*) FROM entities e WHERE 1 {named}", named_params)),
        "triples": int(db.value(triples, ("active", *stated_params))),
        "superseded": int(db.value(triples, ("superseded", *stated_params))),
    }
