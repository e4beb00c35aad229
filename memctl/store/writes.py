"""The one write path: every change to a memory, its append-only event, and the revert.

Every caller (the everyday operations, ingest, import, maintain, sync, recall's access
count) changes a memory through a ``Writer``: it writes the row (and vector, edge or
visibility) and logs the event in the same call, with the payload ``revert`` needs to put
it back. The payloads, one shape per action:

- create / import: ``kind``, ``source`` and what the caller adds; reverted by setting
  the memory deleted (the row and its history stay).
- update: ``before`` and ``after`` of every field written; reverted by writing
  ``before`` back (re-embedded when the text changes).
- state: ``from``, ``to``, ``reason`` and the ``before`` of any other field the change
  set (``invalidated_at``, ``superseded_by``); reverted to ``from`` and ``before``.
- link: ``src_id``, ``dst_id``, ``type``, ``weight``, whether the edge ``existed`` and
  the weight it had (``weight_before``); reverted by removing an edge the write added,
  or by giving a re-weighted one its old weight back.
- unlink: the edge removed (with its ``created_at``); reverted by adding it back.
- delete (permanent): the content hash; access, conflict, reembed: what happened. None
  of these is reverted.
- a memory archived or deleted leaves the knowledge graph (a triple only it stated goes;
  ``maintain`` reads it again when a revert makes it active).
- a state change of ``forget --noise`` also made the memory a learned noise vector;
  its revert takes that back too.

Only this module logs events or writes memory rows (the store's scope aliasing too goes
through it); tests/test_architecture.py holds every other module, in store/ or above, to
that.

The caller owns the transaction: a ``Writer`` writes inside whatever ``atomic()`` the
caller holds, so a change and its event land together or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memctl.model import (
    BOOKKEEPING,
    Action,
    Event,
    Memory,
    Relation,
    RelationType,
    State,
    Visibility,
    content_hash,
    now_iso,
)
from memctl.store import memories as store
from memctl.store.database import Database
from memctl.store.events import log_event, log_events, log_run_events
from memctl.store.graph import forget_memory, mark_unread
from memctl.store.maintenance import set_strengths, supersede_many
from memctl.store.noise import remove_noise_vector
from memctl.store.questions import add_questions, delete_questions
from memctl.store.relations import (
    add_relation,
    add_relations,
    relation_weight,
    relations_touching,
    remove_relation,
    remove_relations,
)
from memctl.store.sync import set_visibility, set_withheld

Vectors = dict[str, bytes]  # text -> its vector as a sqlite-vec blob


@dataclass(frozen=True)
class Writer:
    """Where one caller's writes go: its database, its run (None for a direct edit, which
    no run holds) and the time it stamps on what it changes (None: the time of each write)."""

    db: Database
    run_id: str | None = None
    at: str | None = None

    def now(self) -> str:
        return self.at or now_iso()

    def _log(self, action: Action, memory_id: str | None, data: dict[str, Any]) -> None:
        log_event(self.db, action, memory_id, data, self.run_id)

    def create(
        self,
        memory: Memory,
        vector: bytes | None,
        action: Action = Action.CREATE,
        **data: Any,
    ) -> Memory:
        """Insert a new memory (with its vector, when given)."""
        store.insert_memory(self.db, memory, vector)
        self._log(action, memory.id, {"kind": str(memory.kind), "source": memory.source, **data})
        return memory

    def add_questions(self, memory_id: str, questions: list[tuple[str, bytes]], model: str) -> int:
        """Questions (text, vector) the memory answers, searched by recall and never shown;
        the memory's create event counts them. Returns how many were new."""
        return add_questions(self.db, memory_id, questions, model)

    def update(
        self,
        memory: Memory,
        changes: dict[str, Any],
        vector: bytes | None = None,
        **data: Any,
    ) -> None:
        """Write ``changes`` (new ``content`` brings its hash; ``vector`` its embedding),
        at a new ``updated_at`` unless they are ``BOOKKEEPING`` alone."""
        changes = dict(changes)
        if "content" in changes:
            changes["content_hash"] = content_hash(changes["content"])
            mark_unread(self.db, memory.id)
        before = {k: getattr(memory, k) for k in changes}
        stamp = {} if changes.keys() <= BOOKKEEPING else {"updated_at": self.now()}
        store.update_memory(self.db, memory.id, {**stamp, **changes})
        if vector is not None:
            store.put_vector(self.db, memory.id, vector)
        self._log(Action.UPDATE, memory.id, {"before": before, "after": changes, **data})

    def stated_again(
        self, memory: Memory, source: str, at: str, stated: dict[str, str], **data: Any
    ) -> None:
        """Another message states ``memory`` too (reconcile skipped its fact as a
        duplicate): an update event changing nothing that names the message as one more
        source of it (``memctl get`` lists it among its origins; a forget of the memory's
        own session keeps it while that message's session stays, in the message's wording
        and scope, ``stated`` where they differ: ``store.forget.restated``)."""
        data = {"before": {}, "after": {}, "source": source, "source_at": at, **data}
        if stated:
            data["stated"] = stated
        self._log(Action.UPDATE, memory.id, data)

    def set_state(
        self,
        memory: Memory,
        state: State,
        reason: str,
        fields: dict[str, Any] | None = None,
        **data: Any,
    ) -> None:
        """Move a memory to ``state`` (and set ``fields`` with it); the row stays."""
        fields = fields or {}
        at = self.now()
        store.update_memory(self.db, memory.id, {"state": state, **fields, "updated_at": at})
        if state in (State.ARCHIVED, State.DELETED):  # what it alone stated leaves the graph
            forget_memory(self.db, memory.id)
        if state == State.DELETED:  # a deleted memory's questions go with it
            delete_questions(self.db, [memory.id])
        self._log(Action.STATE, memory.id, _state_event(memory, state, reason, fields, **data))

    def supersede(self, old: Memory, by: str, reason: str, **data: Any) -> None:
        """``old`` is superseded by the memory ``by`` (invalidated now; the row stays)."""
        fields = {"invalidated_at": self.now(), "superseded_by": by}
        self.set_state(old, State.SUPERSEDED, reason, fields, **data)

    def supersede_many(self, pairs: list[tuple[Memory, str]], reason: str) -> None:
        """``supersede`` for many (old, survivor id) pairs, in a few statements."""
        at = self.now()
        supersede_many(self.db, [(old.id, survivor, at) for old, survivor in pairs])
        fields = {"invalidated_at": at}
        changes = [
            (old.id, _state_event(old, State.SUPERSEDED, reason, {**fields, "superseded_by": s}))
            for old, s in pairs
        ]
        log_run_events(self.db, Action.STATE, self.run_id, changes)

    def link(self, edge: Relation, reweight: bool = True, **data: Any) -> bool:
        """Add an edge; an existing one takes its weight only when ``reweight``.
        Returns whether it existed."""
        weight_before = relation_weight(self.db, edge.src_id, edge.dst_id, edge.type)
        existed = weight_before is not None
        if reweight or not existed:
            add_relation(self.db, edge)
        self._log(
            Action.LINK,
            edge.src_id,
            {**_edge(edge), "existed": existed, "weight_before": weight_before, **data},
        )
        return existed

    def link_many(self, edges: list[tuple[str, str]], kind: RelationType) -> None:
        """``link`` (weight 1, never re-weighting) for many (src, dst) edges of one kind."""
        touching = relations_touching(self.db, list({dst for _, dst in edges}), (kind,))
        existed = {(r.src_id, r.dst_id) for r in touching}
        add_relations(self.db, [Relation(s, d, kind) for s, d in edges if (s, d) not in existed])
        changes = [
            (s, {**_edge(Relation(s, d, kind)), "existed": (s, d) in existed}) for s, d in edges
        ]
        log_run_events(self.db, Action.LINK, self.run_id, changes)

    def unlink(self, a: str, b: str, kind: RelationType | None, **data: Any) -> list[Relation]:
        """Remove the edges between two memories (either direction; one type or all)."""
        removed = remove_relations(self.db, a, b, kind)
        for edge in removed:
            self._log(
                Action.UNLINK, edge.src_id, {**_edge(edge), "created_at": edge.created_at, **data}
            )
        return removed

    def delete(self, memory: Memory, **data: Any) -> None:
        """Remove a memory's row, vector and edges for good; its events stay."""
        store.delete_memory_row(self.db, memory.id)
        self._log(
            Action.DELETE,
            memory.id,
            {"permanent": True, "content_hash": memory.content_hash, **data},
        )

    def forgotten(self, what: str, **counts: int) -> None:
        """Log that ``what`` (a session, a message, a redacted value: never its text) was
        forgotten everywhere, and how much of it."""
        self._log(Action.DELETE, None, {"permanent": True, "forgotten": what, **counts})

    def set_strengths(self, rows: list[tuple[str, float, float, str | None]], reason: str) -> None:
        """(id, old strength, new strength, old decayed_at) for many memories: the new
        strengths, decayed now."""
        at = self.now()
        set_strengths(self.db, [(i, new, at) for i, _, new, _ in rows])
        changes = [
            (
                i,
                {
                    "reason": reason,
                    "before": {"strength": old, "decayed_at": old_at},
                    "after": {"strength": new, "decayed_at": at},
                },
            )
            for i, old, new, old_at in rows
        ]
        log_run_events(self.db, Action.UPDATE, self.run_id, changes)

    def rescope(self, old: str, new: str) -> list[str]:
        """Move every memory of scope ``old`` to ``new`` (a project whose scope became an
        alias, store/scopes.py); the ids moved, one update event each."""
        moved = store.move_scope(self.db, old, new)
        change = {"before": {"scope": old}, "after": {"scope": new}, "why": "scope alias"}
        log_run_events(self.db, Action.UPDATE, self.run_id, [(i, change) for i in moved])
        return moved

    def set_shared(self, memories: list[Memory], shared: bool, reason: str) -> None:
        """Make memories shared (released to sync) or private (and withheld from it)."""
        target = Visibility.SHARED if shared else Visibility.PRIVATE
        ids = [m.id for m in memories]
        set_visibility(self.db, ids, target)
        set_withheld(self.db, ids, not shared)
        for memory in memories:
            change = {"visibility": str(memory.visibility)}, {"visibility": str(target)}
            self._log(
                Action.UPDATE,
                memory.id,
                {"before": change[0], "after": change[1], "reason": reason},
            )

    def accessed(self, ids: list[str], strength_step: float, **data: Any) -> int:
        """Recall returned these memories (at ``now``): the access count and strength of
        those that stand go up (``store.record_access``), each with its event; how many."""
        at = self.now()
        touched = store.record_access(self.db, ids, at, strength_step)
        log_events(self.db, Action.ACCESS, touched, data, at=at)
        return len(touched)

    def stamp(self, updated_at: dict[str, str]) -> None:
        """Set ``updated_at`` of memories to the times their sync files carry. Sync's own
        bookkeeping, like ``withhold``: no event (an event would make the memory changed
        again for the next sync)."""
        for memory_id, at in updated_at.items():
            store.update_memory(self.db, memory_id, {"updated_at": at})

    def withhold(self, ids: list[str]) -> None:
        """Keep memories whose sync import was undone here private and out of sync."""
        set_withheld(self.db, ids, True)
        set_visibility(self.db, ids, Visibility.PRIVATE)

    def put_vectors(self, vectors: list[tuple[str, bytes]], named: bool = False) -> None:
        """Vectors of memories whose text did not change (a new model, a vector missing;
        ``named``: the names the vocabulary gives what they mention, ingest/meaning.py);
        ``reembedded`` logs the event once the batch, or the whole store, is done."""
        for memory_id, vector in vectors:
            store.put_vector(self.db, memory_id, vector, same_text=named)

    def reembedded(self, count: int, **data: Any) -> None:
        self._log(Action.REEMBED, None, {"count": count, **data})

    def conflict(self, memory_id: str, **data: Any) -> None:
        """Sync kept another version of a memory: the event holds the one that lost."""
        self._log(Action.CONFLICT, memory_id, data)

    def revert(self, event: Event, vectors: Vectors) -> bool:
        """Put back what ``event`` (one of the ``REVERTED`` actions) changed, as this
        writer's change; nothing when the memory is gone or already as it was. Whether
        something changed (a memory a forget took for good comes back as nothing)."""
        memory = store.get_memory(self.db, event.memory_id) if event.memory_id else None
        data, undo = event.data, {"reason": "undo", "undo_of": event.run_id}
        if event.action == Action.LINK:
            kind = RelationType(data["type"])
            if not data.get("existed"):
                remove_relation(self.db, data["src_id"], data["dst_id"], kind)
                self._log(Action.UNLINK, event.memory_id, {**data, "reason": "undo"})
            elif data.get("weight_before") not in (None, data["weight"]):
                old = Relation(data["src_id"], data["dst_id"], kind, data["weight_before"])
                self.link(old, True, **undo)
            else:
                return False
        elif event.action == Action.UNLINK:
            edge = Relation(
                data["src_id"],
                data["dst_id"],
                RelationType(data["type"]),
                data["weight"],
                data.get("created_at") or self.now(),
            )
            self.link(edge, True, **undo)
        elif memory is None:
            return False
        elif event.action in (Action.CREATE, Action.IMPORT):
            if memory.state == State.DELETED:
                return False
            self.set_state(memory, State.DELETED, "undo", undo_of=event.run_id)
        elif event.action == Action.UPDATE and set(data.get("before") or ()) == {"visibility"}:
            shared = data["before"]["visibility"] == Visibility.SHARED  # a promote's
            self.set_shared([memory], shared, "undo")
        elif event.action == Action.UPDATE and data.get("before"):
            before = {k: v for k, v in data["before"].items() if k != "updated_at"}  # now
            vector = vectors[before["content"]] if "content" in before else None
            self.update(memory, before, vector, **undo)
        elif event.action == Action.STATE:
            fields = data.get("before") or {}
            self.set_state(memory, State(data["from"]), "undo", fields, undo_of=event.run_id)
            if data.get("noise"):
                remove_noise_vector(self.db, memory.id)
        else:
            return False
        return True


# The actions ``Writer.revert`` puts back; the others (access, a permanent delete, conflict,
# reembed) change nothing undo could restore.
REVERTED = frozenset(
    {Action.CREATE, Action.IMPORT, Action.UPDATE, Action.STATE, Action.LINK, Action.UNLINK}
)


def restored_texts(events: list[Event]) -> list[str]:
    """The texts reverting ``events`` puts back, to embed before the write transaction."""
    return sorted(
        {
            str(e.data["before"]["content"])
            for e in events
            if e.action == Action.UPDATE and "content" in (e.data.get("before") or {})
        }
    )


def _state_event(
    memory: Memory, state: State, reason: str, fields: dict[str, Any], **data: Any
) -> dict[str, Any]:
    return {
        "from": str(memory.state),
        "to": str(state),
        "reason": reason,
        "before": {k: getattr(memory, k) for k in fields},
        **data,
    }


def _edge(edge: Relation) -> dict[str, Any]:
    return {
        "src_id": edge.src_id,
        "dst_id": edge.dst_id,
        "type": str(edge.type),
        "weight": edge.weight,
    }
