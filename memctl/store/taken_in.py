"""SQL for the memories a forgotten text was merged into without being distilled from it
(``TakenIn``): which they are (an ingest MERGE naming the forgotten session's fact, a
fact consolidated from a forgotten memory, a maintain merge folding one in), the texts,
tags and links each held before, and the facts consolidated from them since, which go
with the forget (``going``). ``maintain.forgetting`` puts them back as they were.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from memctl.store.database import Database
from memctl.store.forget import (
    MEMORY_TEXTS,
    consolidated_from,
    like_escaped,
    memory_texts,
    rewrite_events,
    spans_one_of,
)


@dataclass(frozen=True)
class TakenIn:
    """A memory that took in forgotten text without being distilled from it: its texts
    before the first merge that did (``before``), and every text it held since."""

    memory_id: str
    before: dict[str, str]
    since: list[str]
    merges: list[int]  # the update events naming a source whose text goes with the revert
    folded: list[str]  # the memories a merge since folded into it: current again
    first_event: int = 0  # the event from which it holds the text
    links: list[tuple[str, str, str]] = field(default_factory=list)  # a fold gave it: go
    tags: list[str] = field(default_factory=list)  # a merge since gave it: they go


def taken_in(
    db: Database, session_id: str | None, seqs: list[int] | None, memory_ids: list[str]
) -> list[TakenIn]:
    """The memories (other than ``memory_ids``, which go) a forgotten text was merged
    into: a fact of the session (of a message numbered in ``seqs``) an ingest MERGE added
    to a memory (its update event names the fact's ``source``), a fact maintain
    consolidated from a memory of ``memory_ids`` and merged likewise, and a memory of
    ``memory_ids`` a maintain merge folded into its survivor, whose text the same run
    rewrote. Oldest first."""
    first: dict[str, int] = {}
    if session_id is not None:
        rows = db.tuples(
            "SELECT id, memory_id, json_extract(data, '$.source') FROM events "
            "WHERE action = 'update' AND memory_id IS NOT NULL "
            "AND json_extract(data, '$.decision') IS NOT 'skip' "  # nothing taken in
            "AND (json_extract(data, '$.source') = ? "
            "OR json_extract(data, '$.source') LIKE ? ESCAPE '\\')",
            (f"session:{session_id}", like_escaped(f"session:{session_id}#") + "%"),
        )
        for event_id, memory_id, source in rows:
            if seqs is None or spans_one_of(str(source), session_id, seqs):
                first[memory_id] = min(event_id, first.get(memory_id, event_id))
    merged = db.tuples(
        "SELECT id, memory_id FROM events WHERE action = 'update' AND memory_id IS NOT NULL "
        "AND json_extract(data, '$.source') IN (SELECT 'memory:' || value FROM json_each(?))",
        (json.dumps(memory_ids),),
    )
    for event_id, memory_id in merged:  # a fact maintain consolidated from one of them
        first[memory_id] = min(event_id, first.get(memory_id, event_id))
    for event_id, memory_id in _folds(db, {memory_id: 0 for memory_id in memory_ids}):
        first[memory_id] = min(event_id, first.get(memory_id, event_id))
    while chained := [  # a memory that took it in, folded since into another: that one too
        (event_id, memory_id)
        for event_id, memory_id in _folds(db, first)
        if event_id < first.get(memory_id, event_id + 1)
    ]:
        for event_id, memory_id in chained:
            first[memory_id] = event_id
    gone = set(memory_ids)
    return [
        _taken(db, memory_id, event_id)
        for memory_id, event_id in sorted(first.items(), key=lambda item: item[1])
        if memory_id not in gone and db.value("SELECT 1 FROM memories WHERE id = ?", (memory_id,))
    ]


def _folds(db: Database, since: dict[str, int]) -> list[tuple[int, str]]:
    """The maintain merges that folded one of these memories (id -> the event from which
    it holds the text) into a survivor after that event, whose text the same run
    rewrote: (the survivor's update event, the survivor's id)."""
    return db.tuples(
        "SELECT e.id, e.memory_id FROM events f JOIN memories m ON m.id = f.memory_id "
        "JOIN json_each(?) w ON w.key = f.memory_id "
        "JOIN events e ON e.run_id = f.run_id AND e.memory_id = m.superseded_by "
        "WHERE f.action = 'state' AND f.id > w.value "
        "AND json_extract(f.data, '$.to') = 'superseded' AND e.action = 'update' "
        "AND json_extract(e.data, '$.before.content') IS NOT NULL",
        (json.dumps(since),),
    )


def _folded_into(db: Database, memory_id: str, event_id: int) -> list[str]:
    """The memories a maintain merge folded into this one from ``event_id`` on (still
    superseded by it): reverted to before that event, it no longer holds their text."""
    return [
        row[0]
        for row in db.tuples(
            "SELECT DISTINCT f.memory_id FROM events f JOIN memories m ON m.id = f.memory_id "
            "JOIN events e ON e.run_id = f.run_id AND e.memory_id = m.superseded_by "
            "WHERE m.superseded_by = ? AND m.state = 'superseded' AND f.action = 'state' "
            "AND json_extract(f.data, '$.to') = 'superseded' AND e.action = 'update' "
            "AND e.id >= ?",
            (memory_id, event_id),
        )
    ]


def _taken(db: Database, memory_id: str, event_id: int) -> TakenIn:
    data = json.loads(db.value("SELECT data FROM events WHERE id = ?", (event_id,)))
    before = {k: v for k, v in data.get("before", {}).items() if k in (*MEMORY_TEXTS, "tags")}
    afters = db.tuples(
        "SELECT json_extract(e.data, p.value) FROM events e, json_each(?) p "
        "WHERE e.memory_id = ? AND e.action = 'update' AND e.id >= ?",
        (json.dumps([f"$.after.{name}" for name in MEMORY_TEXTS]), memory_id, event_id),
    )
    since = {text for (text,) in afters if isinstance(text, str) and text}
    merges = db.tuples(
        "SELECT id FROM events WHERE memory_id = ? AND action = 'update' AND id >= ? "
        "AND json_extract(data, '$.source') IS NOT NULL",
        (memory_id, event_id),
    )
    return TakenIn(
        memory_id,
        before,
        sorted(since | set(memory_texts(db, [memory_id]))),
        [row[0] for row in merges],
        _folded_into(db, memory_id, event_id),
        event_id,
        _fold_links(db, memory_id, event_id),
        _tags_since(db, memory_id, event_id, before.get("tags")),
    )


def _tags_since(db: Database, memory_id: str, event_id: int, before: Any) -> list[str]:
    """The tags a memory got from ``event_id`` on (a merged fact's: a model's words for
    it), when that event says the tags it had ``before``."""
    if not isinstance(before, list):
        return []
    rows = db.tuples(
        "SELECT t.value FROM events e, json_each(e.data, '$.after.tags') t "
        "WHERE e.memory_id = ? AND e.action = 'update' AND e.id >= ? "
        "UNION SELECT t.value FROM memories m, json_each(m.tags) t WHERE m.id = ?",
        (memory_id, event_id, memory_id),
    )
    return sorted({str(row[0]) for row in rows} - set(before))


def drop_tags(db: Database, memory_id: str, event_id: int, tags: list[str]) -> None:
    """Take ``tags`` out of the tag lists of a memory's events from ``event_id`` on (a
    merged fact's tags, gone with its text). Runs inside the caller's transaction, as
    ``erase_quotes`` does."""
    if not tags:
        return
    changed = []
    for row_id, text in db.tuples(
        "SELECT id, data FROM events WHERE memory_id = ? AND id >= ?", (memory_id, event_id)
    ):
        data = json.loads(text)
        parts = [p for p in (data.get("before"), data.get("after")) if isinstance(p, dict)]
        listed = [p for p in parts if isinstance(p.get("tags"), list)]
        if any(set(p["tags"]) & set(tags) for p in listed):
            for part in listed:
                part["tags"] = [t for t in part["tags"] if t not in tags]
            changed.append((json.dumps(data, ensure_ascii=False), row_id))
    rewrite_events(db, changed)


def _fold_links(db: Database, memory_id: str, event_id: int) -> list[tuple[str, str, str]]:
    """(source, target, type) of the edges the maintain merges that folded memories into
    this one from ``event_id`` on gave it: its ``supersedes`` edge to each, and each edge
    a folded memory had, copied (the folded one keeps its own). Put back to before the
    first of them, it no longer says what they said."""
    rows = db.tuples(
        "SELECT DISTINCT l.src, l.dst, l.type FROM events s "
        "JOIN (SELECT run_id, json_extract(data, '$.src_id') AS src, "
        "json_extract(data, '$.dst_id') AS dst, json_extract(data, '$.type') AS type "
        "FROM events WHERE action = 'link' AND NOT json_extract(data, '$.existed')) l "
        "ON l.run_id = s.run_id "
        "WHERE s.memory_id = ?1 AND s.action = 'link' AND s.id >= ?2 "
        "AND json_extract(s.data, '$.type') = 'supersedes' "
        "AND ((l.type = 'supersedes' AND l.src = ?1 AND l.dst = json_extract(s.data, '$.dst_id')) "
        "OR EXISTS (SELECT 1 FROM relations r WHERE r.type = l.type "
        "AND ((l.src = ?1 AND r.src_id = json_extract(s.data, '$.dst_id') AND r.dst_id = l.dst) "
        "OR (l.dst = ?1 AND r.dst_id = json_extract(s.data, '$.dst_id') AND r.src_id = l.src))))",
        (memory_id, event_id),
    )
    return [(str(src), str(dst), str(kind)) for src, dst, kind in rows]


def going(
    db: Database, session_id: str | None, seqs: list[int] | None, memory_ids: list[str]
) -> tuple[list[str], list[TakenIn]]:
    """``memory_ids`` (the memories a forget deletes) with the facts ``maintain``
    consolidated from a memory after it took in the forgotten text (they may state it),
    and those consolidated from them; and the memories that took it in (``taken_in``)."""
    taken = taken_in(db, session_id, seqs, memory_ids)
    while drawn := [d for d in _drawn_since(db, taken) if d not in memory_ids]:
        memory_ids = memory_ids + drawn + consolidated_from(db, drawn)
        taken = taken_in(db, session_id, seqs, memory_ids)
    return memory_ids, taken


def _drawn_since(db: Database, taken: list[TakenIn]) -> list[str]:
    """The memories consolidated (source ``memory:<id>``) from one of ``taken`` after the
    event from which it holds the forgotten text."""
    rows = db.tuples(
        "SELECT m.id FROM memories m JOIN json_each(?) t ON m.source = 'memory:' || t.key "
        "WHERE EXISTS (SELECT 1 FROM events e WHERE e.memory_id = m.id "
        "AND e.action = 'create' AND e.id > t.value)",
        (json.dumps({t.memory_id: t.first_event for t in taken}),),
    )
    return [row[0] for row in rows]
