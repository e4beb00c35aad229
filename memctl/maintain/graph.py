"""Task graph: keep the knowledge graph true to the memories.

1. Read every active memory the graph has not read as it is now (remembered,
   imported, synced, grown by a merge, or older than the graph), and every active or
   superseded one again when the entity rules changed (``RULES_VERSION``): what the
   rules no longer read in a memory is taken back (``dropped``), what an LLM, the host
   or a sync gave stays, and a superseded triple stays superseded; a memory whose
   statements changed is marked, so sync sends its file again (``restated_here``).
2. Take out memories archived or deleted without the write path noticing.
3. Merge aliases: an entity named like another but for a version ("PostgreSQL 16",
   "PostgreSQL") becomes that one; its triples and their sources move with it.
4. Supersede, never delete: a triple all of whose memories were superseded is marked
   superseded by the triple the superseding memory states with the same subject and
   predicate (if any); of two triples giving one subject two values of a predicate that
   has one value at a time (``SINGLE_VALUED``: lives in, works at, ...), stated in one
   scope (or one of them global), the older is superseded by the newer. Both stay, with
   their sources: ``memctl graph`` shows them as history.
5. Remove entities nothing mentions any more.
"""

from __future__ import annotations

from memctl.ingest.graph import index_pending
from memctl.maintain.plan import Maintenance, TaskReport
from memctl.store import graph as store

# Predicates a subject has one value of at a time: a newer value supersedes the older.
SINGLE_VALUED = (
    "lives in",
    "live in",
    "works at",
    "work at",
    "works as",
    "work as",
    "deploys to",
    "deploy to",
)


def graph(m: Maintenance) -> TaskReport:
    report = m.report("graph")
    done = index_pending(m.db)
    report.count("read", done.memories)
    report.count("triples", done.stated)
    report.count("dropped", done.dropped)
    with m.db.atomic():
        for memory_id in store.stale_memories(m.db):
            store.forget_memory(m.db, memory_id)
            report.count("forgotten")
        for kept, merged in store.alias_groups(m.db):
            if store.get_entity(m.db, kept) and store.get_entity(m.db, merged):
                store.merge_entities(m.db, kept, merged)
                report.count("merged")
        for triple, by_memory in store.superseded_by_memory(m.db):
            store.supersede(m.db, triple, store.successor(m.db, triple, by_memory))
            report.count("superseded")
        for older, newer in store.rivals(m.db, SINGLE_VALUED):
            store.supersede(m.db, older, newer)
            report.count("superseded")
        report.count("orphans", store.orphan_entities(m.db))
    report.counts = {k: n for k, n in report.counts.items() if n}
    return report
