"""SQL for forgetting text everywhere one database file holds it (``memctl sessions forget``,
``memctl redact``): messages, their full-text index, the quotes of it in the event log,
ingest runs and jobs, what was derived from it (noise vectors, the facts consolidated from
a memory, the aliases it gave an entity among them), the memories it was merged into (put
back as they were before: ``taken_in``), and the file's free pages.

The event log is append-only (m001's triggers refuse UPDATE and DELETE). Forgetting is
the one exception: inside the forgetting transaction the UPDATE trigger is dropped, the
quoting events' text is replaced by ``FORGOTTEN`` in place, and the trigger is created
again, so a forget that fails half-way leaves the log as it was. What was forgotten is
itself logged as a new event (by the caller, without the text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memctl.model import Role
from memctl.store.database import FTS_TABLES, Database
from memctl.store.graph import orphan_entities
from memctl.store.message_search import count_message_terms
from memctl.store.sessions import source_range

FORGOTTEN = "[forgotten]"
# m001_initial's trigger, created again after the forgetting transaction's own UPDATEs.
EVENTS_UPDATE_TRIGGER = (
    "CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events BEGIN "
    "SELECT RAISE(ABORT, 'events are append-only'); END"
)
# Columns that may quote a message or a memory (JSON: replaced inside its strings).
QUOTING: tuple[tuple[str, str, str, bool], ...] = (
    ("events", "id", "data", True),
    ("runs", "id", "decisions", True),
    ("runs", "id", "notes", True),
    ("runs", "id", "counts", True),
    ("jobs", "id", "payload", True),
    ("jobs", "id", "error", False),
    ("sessions", "id", "title", False),
    ("sessions", "id", "tags", True),
    ("sessions", "id", "source", False),
    ("sessions", "id", "cwd", False),
    ("imports", "id", "path", False),
    ("messages", "rowid", "content", False),
)
# A needle shorter than this is too common to take out of every text (a one-word message
# like "yes" would blank every "yes" of the store): only its own rows are forgotten.
MIN_NEEDLE = 8
# A message shorter than this is no copy of one in another session: "ok, go ahead" or
# "please continue" is typed in many; a resumed conversation repeats whole requests and
# answers.
COPY_MIN_CHARS = 40
# A memory's fields that hold text.
MEMORY_TEXTS = ("content", "l0_abstract", "l1_overview", "l2_content")
# The parts of a memory's event that hold a version of it: an edit's, a sync conflict's,
# another message's wording of it (``Writer.stated_again``).
PAST_PARTS = ("before", "after", "lost", "stated")
# Text derived from memories and messages, deleted (not rewritten) when it quotes a
# forgotten text: a profile line, a question, a learned noise (its vector is of that text).
DERIVED_TEXTS = (
    ("profile_lines", "text"),
    ("memory_questions", "text"),
    ("noise_vectors", "content"),
)


def message_texts(db: Database, session_id: str, seqs: list[int] | None) -> list[str]:
    """The text of a session's messages (all, or those numbered ``seqs``)."""
    if seqs is None:
        rows = db.tuples("SELECT content FROM messages WHERE session_id = ?", (session_id,))
    else:
        rows = db.tuples(
            "SELECT content FROM messages WHERE session_id = ? AND seq IN "
            "(SELECT value FROM json_each(?))",
            (session_id, json.dumps(seqs)),
        )
    return [r[0] for r in rows if r[0] != FORGOTTEN]


def copies_of(db: Database, session_id: str, seqs: list[int] | None) -> dict[str, list[int]]:
    """The other stored sessions holding one of a session's messages (all, or those
    numbered ``seqs``) verbatim, by content hash: a client's resume or fork writes a new
    session repeating the earlier conversation. Session id -> the numbers of its copied
    messages. A message shorter than ``COPY_MIN_CHARS`` is no copy. A whole session's
    copies are in sessions repeating one of its user's or assistant's messages: unrelated
    sessions share a client's stock tool results ("Todos have been modified
    successfully..."), and are no resume of each other."""
    rows = db.tuples(
        "SELECT session_id, seq, role FROM messages WHERE content_hash IN (SELECT content_hash "
        "FROM messages WHERE session_id = ? AND length(content) >= ? AND content != ? "
        "AND (? IS NULL OR seq IN (SELECT value FROM json_each(?)))) "
        "AND session_id != ? AND length(content) >= ? AND content != ? "
        "ORDER BY session_id, seq",
        (
            session_id,
            COPY_MIN_CHARS,
            FORGOTTEN,
            None if seqs is None else 1,
            json.dumps(seqs or []),
            session_id,
            COPY_MIN_CHARS,
            FORGOTTEN,
        ),
    )
    copies: dict[str, list[int]] = {}
    said = set()  # the sessions repeating one of its user's or assistant's messages
    for copy, seq, role in rows:
        copies.setdefault(copy, []).append(seq)
        if role != Role.TOOL:
            said.add(copy)
    return copies if seqs is not None else {k: v for k, v in copies.items() if k in said}


def ids_containing(db: Database, needle: str) -> list[str]:
    """Ids of the memories one of whose texts, its source or one of its tags holds
    ``needle``."""
    where = " OR ".join(f"instr({c}, ?)" for c in (*MEMORY_TEXTS, "source"))
    tags = "EXISTS (SELECT 1 FROM json_each(memories.tags) t WHERE instr(t.value, ?))"
    return [
        r[0]
        for r in db.tuples(
            f"SELECT id FROM memories WHERE {where} OR {tags}", (needle,) * (len(MEMORY_TEXTS) + 2)
        )
    ]


def memories_from(db: Database, session_id: str, seqs: list[int] | None) -> list[str]:
    """Ids of the memories distilled from a session (all of it, or from a message numbered
    in ``seqs``: a fact of that message, or a digest spanning it), and those ``maintain``
    consolidated from them; not those another session states too (``restated``)."""
    rows = db.tuples(
        "SELECT id, source, session_id FROM memories WHERE session_id = ? "
        "OR source = ? OR source LIKE ? ESCAPE '\\'",
        (session_id, f"session:{session_id}", _like(f"session:{session_id}#") + "%"),
    )
    kept = restated(db, session_id, seqs)
    found = []
    for memory_id, source, own in rows:
        if memory_id in kept:
            continue
        if seqs is None:
            found.append(memory_id)
            continue
        span = _span(str(source), session_id)
        if span is not None and any(span[0] <= seq <= span[1] for seq in seqs):
            found.append(memory_id)
        elif span is None and own == session_id and source == f"session:{session_id}":
            found.append(memory_id)  # a fact of the session's tool calls, no message named
    return found + consolidated_from(db, found)


@dataclass(frozen=True)
class Restated:
    """Another session's message stating a memory too: the memory a forget keeps, as
    that message has it."""

    session_id: str
    source: str
    at: str | None  # when it was said
    stated: dict[str, str]  # its wording and scope where they differ from the memory's


def restated(db: Database, session_id: str, seqs: list[int] | None) -> dict[str, Restated]:
    """The facts of one message of the session (one numbered in ``seqs``) that a message
    of another session, not forgotten, states too (its fact was skipped as their duplicate,
    or merged into them; a run undone no longer counts): memory id -> the first such
    message. A forget keeps them, as that message states them."""
    rows = db.tuples(
        "SELECT m.id, m.source, json_extract(e.data, '$.source'), "
        "json_extract(e.data, '$.source_at'), json_extract(e.data, '$.stated') FROM memories m "
        "JOIN events e ON e.memory_id = m.id AND e.action = 'update' "
        "AND json_extract(e.data, '$.source') LIKE 'session:%' "
        "AND (e.run_id IS NULL OR e.run_id NOT IN "
        "(SELECT id FROM runs WHERE undone_by IS NOT NULL)) "
        "WHERE m.source LIKE ? ESCAPE '\\' ORDER BY e.id",
        (_like(f"session:{session_id}#") + "%",),
    )
    found: dict[str, Restated] = {}
    for memory_id, own, other, at, stated in rows:
        span = _span(str(own), session_id)
        if span is None or span[0] != span[1] or (seqs is not None and span[0] not in seqs):
            continue  # a digest holds the session's own words: it goes
        elsewhere = (source_range(str(other)) or (session_id,))[0]
        if elsewhere != session_id and memory_id not in found and _live(db, elsewhere):
            found[memory_id] = Restated(elsewhere, str(other), at, json.loads(stated or "{}"))
    return found


def _live(db: Database, session_id: str) -> bool:
    """Whether the session is stored and not forgotten."""
    return bool(
        db.value("SELECT 1 FROM sessions WHERE id = ? AND forgotten_at IS NULL", (session_id,))
    )


def skips_naming(db: Database, session_id: str, seqs: list[int] | None) -> list[int]:
    """The events naming a message of the session (one numbered in ``seqs``) as one more
    source of a memory its fact was skipped as a duplicate of (``Writer.stated_again``):
    a forget takes that source out of them."""
    rows = db.tuples(
        "SELECT id, json_extract(data, '$.source') FROM events WHERE action = 'update' "
        "AND json_extract(data, '$.decision') = 'skip' "
        "AND json_extract(data, '$.source') LIKE ? ESCAPE '\\'",
        (_like(f"session:{session_id}#") + "%",),
    )
    return [
        event_id
        for event_id, source in rows
        if seqs is None
        or ((span := _span(str(source), session_id)) and any(span[0] <= s <= span[1] for s in seqs))
    ]


def consolidated_from(db: Database, memory_ids: list[str]) -> list[str]:
    """Ids of the memories ``maintain`` consolidated from these (source ``memory:<id>``: a
    fact an episode stated), and from those in turn."""
    found: list[str] = []
    wanted = memory_ids
    while wanted:
        wanted = [
            row[0]
            for row in db.tuples(
                "SELECT id FROM memories WHERE source IN "
                "(SELECT 'memory:' || value FROM json_each(?))",
                (json.dumps(wanted),),
            )
            if row[0] not in found and row[0] not in memory_ids
        ]
        found += wanted
    return found


def _span(source: str, session_id: str) -> tuple[int, int] | None:
    head = f"session:{session_id}#"
    if not source.startswith(head):
        return None
    seqs = source[len(head) :].partition(":")[0]
    first, _, last = seqs.partition("-")
    if not first.isdigit() or (last and not last.isdigit()):
        return None
    return int(first), int(last or first)


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


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
            (f"session:{session_id}", _like(f"session:{session_id}#") + "%"),
        )
        for event_id, memory_id, source in rows:
            span = _span(str(source), session_id)
            if seqs is None or (span is not None and any(span[0] <= s <= span[1] for s in seqs)):
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
    _rewrite_events(db, changed)


def drop_all_tags(db: Database, memory_ids: list[str]) -> int:
    """Empty the tag lists in the events of memories deleted for good (an edit's
    ``before`` and ``after``, a sync conflict's ``lost`` version): a tag names what the
    memory was about. Runs inside the caller's transaction; the events rewritten."""
    changed = []
    for row_id, text in db.tuples(
        "SELECT id, data FROM events WHERE memory_id IN (SELECT value FROM json_each(?)) "
        "AND instr(data, '\"tags\"')",
        (json.dumps(memory_ids),),
    ):
        data = json.loads(text)
        parts = [data.get(part) for part in PAST_PARTS]
        listed = [p for p in parts if isinstance(p, dict) and p.get("tags")]
        for part in listed:
            part["tags"] = []
        if listed:
            changed.append((json.dumps(data, ensure_ascii=False), row_id))
    _rewrite_events(db, changed)
    return len(changed)


def _rewrite_events(db: Database, changed: list[tuple[str, int]]) -> None:
    """Write events' new data (``(data, id)`` pairs): the append-only trigger is lifted
    for these updates alone."""
    if changed:
        db.execute("DROP TRIGGER IF EXISTS events_append_only_update")
        db.executemany("UPDATE events SET data = ? WHERE id = ?", changed)
        db.execute(EVENTS_UPDATE_TRIGGER)


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


def corrected_by(db: Database, memory_ids: list[str]) -> dict[str, float]:
    """The memories (an earlier session's digest) one of these corrected and no other
    memory contradicts, whose confidence is still what the correction made it
    (``ingest.corrections``): id -> its confidence before."""
    ids = json.dumps(memory_ids)
    rows = db.tuples(
        "SELECT u.memory_id, json_extract(u.data, '$.before.confidence') FROM events u "
        "JOIN memories m ON m.id = u.memory_id "
        "AND m.confidence = json_extract(u.data, '$.after.confidence') "
        "JOIN events l ON l.run_id = u.run_id AND l.action = 'link' "
        "AND json_extract(l.data, '$.dst_id') = u.memory_id "
        "AND json_extract(l.data, '$.type') = 'contradicts' "
        "AND l.memory_id IN (SELECT value FROM json_each(?)) "
        "WHERE u.action = 'update' AND json_extract(u.data, '$.decision') = 'corrected' "
        "AND u.memory_id NOT IN (SELECT value FROM json_each(?)) "
        "AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.dst_id = u.memory_id "
        "AND r.type = 'contradicts' AND r.src_id NOT IN (SELECT value FROM json_each(?)))",
        (ids, ids, ids),
    )
    return {str(memory_id): float(before) for memory_id, before in rows if before is not None}


def superseded_by(db: Database, memory_ids: list[str]) -> list[str]:
    """Ids of the memories (other than ``memory_ids``) one of these superseded, still
    superseded."""
    return [
        row[0]
        for row in db.tuples(
            "SELECT id FROM memories WHERE state = 'superseded' AND superseded_by IN "
            "(SELECT value FROM json_each(?)) AND id NOT IN (SELECT value FROM json_each(?))",
            (json.dumps(memory_ids), json.dumps(memory_ids)),
        )
    ]


def drop_merge_sources(db: Database, event_ids: list[int]) -> None:
    """Take the ``source`` (when it was said, and how: a skip's ``stated``) out of these
    merge events: the memory no longer holds the text they merged, so it no longer came
    from there (``memctl get`` lists a merge's source among a memory's origins). Runs
    inside the caller's transaction, as ``erase_quotes`` does."""
    if not event_ids:
        return
    db.execute("DROP TRIGGER IF EXISTS events_append_only_update")
    db.execute(
        "UPDATE events SET data = json_remove(data, '$.source', '$.source_at', '$.stated') "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(event_ids),),
    )
    db.execute(EVENTS_UPDATE_TRIGGER)


def memory_texts(db: Database, memory_ids: list[str]) -> list[str]:
    """Every text field (``MEMORY_TEXTS``) of these memories."""
    rows = db.tuples(
        f"SELECT {', '.join(MEMORY_TEXTS)} FROM memories "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(memory_ids),),
    )
    return [text for row in rows for text in row if text]


def past_texts(db: Database, memory_ids: list[str]) -> list[str]:
    """The texts these memories held before (their update events' ``before`` and
    ``after``, a sync conflict's ``lost`` version)."""
    paths = [f"$.{part}.{name}" for part in PAST_PARTS for name in MEMORY_TEXTS]
    rows = db.tuples(
        "SELECT p.value, json_extract(e.data, p.value) FROM events e, json_each(?) p "
        "WHERE e.memory_id IN (SELECT value FROM json_each(?))",
        (json.dumps(paths), json.dumps(memory_ids)),
    )
    return sorted({str(text) for _, text in rows if isinstance(text, str) and text})


def read_from(db: Database, session_id: str) -> list[str]:
    """The path a session was read from (a transcript's, an imported file's: ``file:``
    sources and an import's events quote it), unless another session not forgotten was
    read from it too; none when too short to be a quote (``MIN_NEEDLE``)."""
    source = str(db.value("SELECT source FROM sessions WHERE id = ?", (session_id,)) or "")
    shared = db.value(
        "SELECT 1 FROM sessions WHERE source = ? AND id != ? AND forgotten_at IS NULL",
        (source, session_id),
    )
    return [source] if len(source) >= MIN_NEEDLE and not shared else []


def forget_messages(db: Database, session_id: str, seqs: list[int] | None, at: str) -> int:
    """Take a session's text out: every message (its row goes; the session row stays,
    marked forgotten, with its read marks, so capture never stores it again; its title,
    tags, transcript path and directory go, and an imported file's path from the import's
    record, which still knows the file by its digest), or the
    messages numbered ``seqs`` (their text becomes ``FORGOTTEN`` in place and the title is
    made again; their content hash stays, so a capture knows them and does not store them
    again). The messages forgotten."""
    if seqs is None:
        count = db.value("SELECT count(*) FROM messages WHERE session_id = ?", (session_id,))
        db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
        db.execute(
            "UPDATE sessions SET forgotten_at = ?, title = '', tags = '[]', source = '', "
            "cwd = '' WHERE id = ?",
            (at, session_id),
        )
        db.execute("DELETE FROM jobs WHERE session_id = ?", (session_id,))
        db.execute("UPDATE imports SET path = '' WHERE session_id = ?", (session_id,))
        db.execute(
            "UPDATE runs SET decisions = '[]', notes = '[]' WHERE session_id = ?", (session_id,)
        )
        return int(count)
    wanted = json.dumps(seqs)
    count = db.value(
        "SELECT count(*) FROM messages WHERE session_id = ? AND content != ? "
        "AND seq IN (SELECT value FROM json_each(?))",
        (session_id, FORGOTTEN, wanted),
    )
    db.execute(
        "UPDATE messages SET content = ? WHERE session_id = ? AND seq IN "
        "(SELECT value FROM json_each(?))",
        (FORGOTTEN, session_id, wanted),
    )
    # The title is condensed from the first requests, so it may quote a forgotten one
    # without being a verbatim copy; it is made again from what remains when shown.
    db.execute("UPDATE sessions SET title = '' WHERE id = ?", (session_id,))
    return int(count)


def erase_quotes(
    db: Database, needles: Iterable[str], mark: str, exclude: tuple[str, ...] = ()
) -> dict[str, int]:
    """Replace every quote of ``needles`` (each at least ``MIN_NEEDLE`` characters) in
    the columns that may hold one (``QUOTING``, less the ``table.column`` names in
    ``exclude``) by ``mark``; the rows rewritten per column. Runs inside the caller's
    transaction."""
    wanted = sorted({n for n in needles if len(n) >= MIN_NEEDLE}, key=len, reverse=True)
    done: dict[str, int] = {}
    if not wanted:
        return done
    db.execute("DROP TRIGGER IF EXISTS events_append_only_update")
    for table, key, column, is_json in QUOTING:
        if f"{table}.{column}" in exclude:
            continue
        forms = wanted + ([_escaped(n) for n in wanted] if is_json else [])
        rows = db.tuples(
            f"SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL AND EXISTS "
            f"(SELECT 1 FROM json_each(?) AS n WHERE instr({table}.{column}, n.value))",
            (json.dumps(sorted(set(forms))),),
        )
        cleaned = [(_cleaned(str(text), wanted, is_json, mark), row_id) for row_id, text in rows]
        changed = [
            (new, row_id)
            for (new, row_id), (_, old) in zip(cleaned, rows, strict=True)
            if new != old
        ]
        db.executemany(f"UPDATE {table} SET {column} = ? WHERE {key} = ?", changed)
        if changed:
            done[f"{table}.{column}"] = len(changed)
    db.execute(EVENTS_UPDATE_TRIGGER)
    return done


def _escaped(needle: str) -> str:
    return json.dumps(needle, ensure_ascii=False)[1:-1]


def _cleaned(text: str, needles: list[str], is_json: bool, mark: str) -> str:
    if is_json:
        try:
            value = json.loads(text)
        except ValueError:
            pass
        else:
            return json.dumps(_walk(value, needles, mark), ensure_ascii=False)
    for needle in needles:
        text = text.replace(needle, mark)
    return text


def _walk(value: Any, needles: list[str], mark: str) -> Any:
    if isinstance(value, str):
        return _cleaned(value, needles, False, mark)
    if isinstance(value, list):
        return [_walk(v, needles, mark) for v in value]
    if isinstance(value, dict):
        return {_walk(k, needles, mark): _walk(v, needles, mark) for k, v in value.items()}
    return value


def merge_indexes(db: Database) -> None:
    """Merge each full-text index into one segment: the terms of deleted rows, kept in
    older segments until a merge, go."""
    with db.atomic():
        for table in FTS_TABLES:
            db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


def recount_message_terms(db: Database) -> None:
    """The words' message counts taken afresh, after the indexes merged: a forgotten or
    redacted word is no key of ``message_term_counts`` any more (a backup made before
    m023_counts has no such table)."""
    if db.value("SELECT 1 FROM sqlite_master WHERE name = 'message_term_counts'"):
        count_message_terms(db)


def secure_delete(db: Database, on: bool) -> None:
    """SQLite overwrites deleted content with zeros (``PRAGMA secure_delete``) while on."""
    db.execute(f"PRAGMA secure_delete = {'ON' if on else 'OFF'}")


def compact(db: Database) -> bool:
    """Rewrite the file without free pages (``VACUUM``), then empty the WAL into it; False
    when a reader kept the WAL from being emptied (it still holds old pages)."""
    db.execute("VACUUM")
    busy, log, done = db.tuples("PRAGMA wal_checkpoint(TRUNCATE)")[0]
    return not busy and (log in (0, -1) or log == done)


def erase_derived(db: Database, needles: list[str], memory_ids: list[str]) -> int:
    """What memctl derived from a forgotten text, which no quote search finds whole:
    entities named (or aliased) with it, with their triples; the questions stored with a
    memory that quote it; the written profile's lines quoting it or resting on a
    forgotten memory; the learned noise (text and vector) of a forgotten memory or
    quoting it; and entities nothing mentions any more. A needle shorter than
    ``MIN_NEEDLE`` is no quote: a forgotten "ok" must not take "Tokyo" with it. How
    many rows went."""
    gone = 0
    for needle in sorted({n for n in needles if len(n) >= MIN_NEEDLE}):
        like = f"%{_like(needle)}%"
        gone += _deleted(
            db,
            "DELETE FROM entities WHERE name LIKE ? ESCAPE '\\' OR id IN "
            "(SELECT entity_id FROM entity_aliases WHERE alias LIKE ? ESCAPE '\\')",
            (like, like),
        )
        for table, column in DERIVED_TEXTS:
            gone += _deleted(db, f"DELETE FROM {table} WHERE {column} LIKE ? ESCAPE '\\'", (like,))
    ids = json.dumps(memory_ids)
    gone += _deleted(
        db,
        "DELETE FROM profile_lines WHERE EXISTS (SELECT 1 FROM json_each(profile_lines.sources) s "
        "WHERE s.value IN (SELECT value FROM json_each(?)))",
        (ids,),
    )
    gone += _deleted(
        db, "DELETE FROM noise_vectors WHERE memory_id IN (SELECT value FROM json_each(?))", (ids,)
    )
    return gone + unsaid_aliases(db, needles) + orphan_entities(db)


def unsaid_aliases(db: Database, needles: list[str]) -> int:
    """Remove the aliases a forgotten text gave an entity ("PostgreSQL 16.9" of PostgreSQL,
    which other memories name) that no memory left says, never the entity's own name; how
    many went. An alias is whole words of the text (``entity_aliases.key``: case folded,
    spaces collapsed)."""
    folded = sorted({" ".join(n.casefold().split()) for n in needles if len(n) >= MIN_NEEDLE})
    said: dict[str, str] = {}
    for text in folded:
        for alias_key, alias, name in db.tuples(
            "SELECT a.key, a.alias, e.name FROM entity_aliases a JOIN entities e "
            "ON e.id = a.entity_id WHERE instr(?, a.key)",
            (text,),
        ):
            own = alias_key == " ".join(name.casefold().split())  # the entity's name: kept
            if not own and re.search(rf"(?<!\w){re.escape(alias_key)}(?!\w)", text):
                said[alias_key] = alias
    gone = [
        alias_key
        for alias_key, alias in said.items()
        if not db.value(
            "SELECT 1 FROM memories WHERE instr(lower(content), ?) OR instr(content, ?) LIMIT 1",
            (alias_key, alias),
        )
    ]
    if gone:
        db.execute(
            "DELETE FROM entity_aliases WHERE key IN (SELECT value FROM json_each(?))",
            (json.dumps(gone),),
        )
    return len(gone)


def _deleted(db: Database, sql: str, params: tuple[str, ...]) -> int:
    """Run a DELETE; how many rows it took."""
    db.execute(sql, params)
    return int(db.value("SELECT changes()"))
