"""The knowledge graph as `memctl graph` shows it: an entity, its relations and their sources.

What a scope's memories name and state (by default the current project's and the global
ones): another project's entities, relations and sources stay out unless every scope is
asked for."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.ingest.entities import canonical, key
from memctl.memories.operations import recall_scopes
from memctl.store.graph import (
    GraphEntity,
    GraphTriple,
    entities_by_keys,
    entities_like,
    entities_named,
    entity_in_scopes,
    get_entity,
    graph_counts,
    mentioned_in,
    naming_scopes,
    shared_floor,
    triples_touching,
)
from memctl.store.pruned_bm25 import IDF_FLOOR

# Entities listed when a name matches several, or when none is given.
LISTED = 20
# Relations shown at most for one entity, a page (a hub's thousands: the next pages).
RELATIONS = 500
# The memories that mention an entity named at most (an entity with no relation, the most
# mentioned ones included, was shown as "no relations yet" and nothing more).
MENTIONS = 50


@dataclass(frozen=True)
class EntityGraph:
    entity: GraphEntity
    relations: list[GraphTriple]  # live ones: active, stated by an active memory
    history: list[GraphTriple]  # superseded, or stated only by superseded memories
    page: int = 1  # of RELATIONS relations each: live ones first, then history
    more: bool = False  # a next page holds more of them
    mentioned: list[str] = field(default_factory=list)  # memory ids, at most MENTIONS
    mentioned_more: bool = False  # more memories mention it

    def to_dict(self) -> dict[str, object]:
        return {
            "entity": self.entity.__dict__,
            "relations": [t.to_dict() for t in self.relations],
            "history": [t.to_dict() for t in self.history],
            "page": self.page,
            "more": self.more,
            "mentioned": self.mentioned,
            "mentioned_more": self.mentioned_more,
        }


@dataclass(frozen=True)
class GraphSummary:
    counts: dict[str, int]
    # of a project: those that set it apart first (its mentions x their idf over the
    # projects), then the names most projects name (``shared``); of every scope: the most
    # mentioned
    entities: list[GraphEntity]
    shared: list[str] = field(default_factory=list)  # the listed names most projects name
    # of a project: the live relations of its own listed entities, its memories' first
    relations: list[GraphTriple] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "counts": self.counts,
            "entities": [e.__dict__ for e in self.entities],
            "shared": self.shared,
            "relations": [t.to_dict() for t in self.relations],
        }


@dataclass(frozen=True)
class GraphRequest:
    entity: str | None = None  # None: the most mentioned entities
    scope: str | None = None  # None: the current project and global
    all_scopes: bool = False
    page: int = 1  # an entity's relations, RELATIONS a page


def find_entity(ctx: Context, name: str, scopes: tuple[str, ...] | None = None) -> GraphEntity:
    """The entity ``name`` names: an alias, the vocabulary's name for it, else the one
    entity whose aliases contain it; one the memories of ``scopes`` name (None: any)."""
    wanted = key(name)
    if not wanted:
        raise UsageError("give an entity's name, e.g. memctl graph PostgreSQL")
    named = canonical(name)
    keys = [wanted, *([key(named.name)] if named else [])]
    found = entities_by_keys(ctx.db, keys)
    exact = next((found[k] for k in keys if k in found), None)
    if exact is not None and scopes is not None and not entity_in_scopes(ctx.db, exact.id, scopes):
        exact = None
    if exact is None:
        like = entities_like(ctx.db, wanted, LISTED, scopes)
        if not like:
            raise NotFoundError(f"no entity named {name!r} (memctl graph lists the known ones)")
        if len(like) > 1:
            names = ", ".join(e.name for e in like)
            raise UsageError(f"{name!r} names several entities: {names}; give one of them")
        exact = like[0]
    entity = get_entity(ctx.db, exact.id)
    assert entity is not None  # found by its alias in this read
    return entity


def entity_graph(ctx: Context, request: GraphRequest) -> EntityGraph:
    scopes = recall_scopes(ctx, request.scope, request.all_scopes)
    entity = find_entity(ctx, request.entity or "", scopes)
    if request.page < 1:
        raise UsageError(f"page takes a number from 1, not {request.page}")
    offset = (request.page - 1) * RELATIONS
    # one row past the page tells whether a next one holds more
    first = scopes[0] if scopes else None  # the project's own relations before the global ones
    every = triples_touching(
        ctx.db, [entity.id], False, RELATIONS + 1, scopes, offset=offset, first=first
    )
    shown = every[:RELATIONS]
    if not shown and request.page > 1:
        raise NotFoundError(
            f"{entity.name} has no relations on page {request.page} ({RELATIONS} a page)"
        )
    live = [t for t in shown if t.live]
    more = len(every) > RELATIONS
    mentioned = mentioned_in(ctx.db, entity.id, MENTIONS + 1, scopes)  # one past: more
    history = [t for t in shown if not t.live]
    return EntityGraph(
        entity,
        live,
        history,
        request.page,
        more,
        mentioned[:MENTIONS],
        len(mentioned) > MENTIONS,
    )


def summary(ctx: Context, request: GraphRequest) -> GraphSummary:
    """The counts and the entities to start from: of every scope, the most mentioned; of a
    project (the first of its scopes), its own entities and their relations before the
    names most projects name (Git, uv, the assistant: the most mentioned everywhere, they
    led every project's list, and its own relations needed `memctl graph NAME`)."""
    scopes = recall_scopes(ctx, request.scope, request.all_scopes)
    counts = graph_counts(ctx.db, scopes)
    if scopes is None:
        return GraphSummary(counts, entities_like(ctx.db, "", LISTED))
    own = scopes[0]
    naming = naming_scopes(ctx.db)
    # the global memories are every project's: no name of theirs is set apart
    floor = shared_floor(naming) if own != GLOBAL_SCOPE else float("inf")
    ranked = sorted(
        entities_named(ctx.db, own, scopes),
        key=lambda n: (
            n.scopes >= floor,
            -n.here * idf(n.scopes, naming),
            -n.mentions,
            n.entity.name,
        ),
    )[:LISTED]
    theirs = [n.entity.id for n in ranked if n.scopes < floor]
    relations = triples_touching(ctx.db, theirs, True, LISTED, scopes, first=own)
    shared = [n.entity.name for n in ranked if n.scopes >= floor]
    return GraphSummary(counts, [n.entity for n in ranked], shared, relations)


def idf(named_by: int, naming: int) -> float:
    """How much naming an entity sets a scope apart: BM25's idf over the ``naming`` scopes
    that name any, ``named_by`` of them naming it (a name three projects of ten use weighs
    0.4 of one only this one uses), floored as FTS5's BM25 floors it, so that the most
    mentioned of the names most scopes use still come first among them."""
    return max(math.log((naming - named_by + 0.5) / (named_by + 0.5)), IDF_FLOOR)
