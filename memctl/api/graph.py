"""The knowledge graph as `memctl graph` shows it: an entity, its relations and their sources."""

from __future__ import annotations

from dataclasses import dataclass

from memctl.context import Context
from memctl.errors import NotFoundError, UsageError
from memctl.ingest.entities import canonical, key
from memctl.store.graph import (
    GraphEntity,
    GraphTriple,
    entities_by_keys,
    entities_like,
    get_entity,
    graph_counts,
    triples_touching,
)

# Entities listed when a name matches several, or when none is given.
LISTED = 20
# Relations shown at most for one entity.
RELATIONS = 500


@dataclass(frozen=True)
class EntityGraph:
    entity: GraphEntity
    relations: list[GraphTriple]  # live ones: active, stated by an active memory
    history: list[GraphTriple]  # superseded, or stated only by superseded memories

    def to_dict(self) -> dict[str, object]:
        return {
            "entity": self.entity.__dict__,
            "relations": [t.to_dict() for t in self.relations],
            "history": [t.to_dict() for t in self.history],
        }


@dataclass(frozen=True)
class GraphSummary:
    counts: dict[str, int]
    entities: list[GraphEntity]  # the most mentioned

    def to_dict(self) -> dict[str, object]:
        return {"counts": self.counts, "entities": [e.__dict__ for e in self.entities]}


def find_entity(ctx: Context, name: str) -> GraphEntity:
    """The entity ``name`` names: an alias, the vocabulary's name for it, else the one
    entity whose aliases contain it."""
    wanted = key(name)
    if not wanted:
        raise UsageError("give an entity's name, e.g. memctl graph PostgreSQL")
    named = canonical(name)
    keys = [wanted, *([key(named.name)] if named else [])]
    found = entities_by_keys(ctx.db, keys)
    exact = next((found[k] for k in keys if k in found), None)
    if exact is None:
        like = entities_like(ctx.db, wanted, LISTED)
        if not like:
            raise NotFoundError(f"no entity named {name!r} (memctl graph lists the known ones)")
        if len(like) > 1:
            names = ", ".join(e.name for e in like)
            raise UsageError(f"{name!r} names several entities: {names}; give one of them")
        exact = like[0]
    entity = get_entity(ctx.db, exact.id)
    assert entity is not None  # found by its alias in this read
    return entity


def entity_graph(ctx: Context, name: str) -> EntityGraph:
    entity = find_entity(ctx, name)
    every = triples_touching(ctx.db, [entity.id], live_only=False, limit=RELATIONS)
    live = [t for t in every if t.live]
    return EntityGraph(entity, live, [t for t in every if not t.live])


def summary(ctx: Context) -> GraphSummary:
    return GraphSummary(graph_counts(ctx.db), entities_like(ctx.db, "", LISTED))
