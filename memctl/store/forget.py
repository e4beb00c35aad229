"""SQL for forgetting text everywhere one database file holds it (``memctl sessions forget``,
``memctl redact``): messages, their full-text index, the quotes of it in the event log,
ingest runs and jobs, what was derived from it (noise vectors, the facts consolidated from
a memory, the aliases it gave an entity among them), the memories it was merged into (put
back as they were before: ``store.taken_in``), and the file's free pages.

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
from dataclasses import dataclass
from typing import Any

from memctl.model import (
    KEYED,
    Role,
    content_hash,
    derived_session_id,
    keyed_hash,
    message_digest_text,
    now_iso,
)
from memctl.store import taken_out
from memctl.store.database import FTS_TABLES, Database
from memctl.store.graph import orphan_entities
from memctl.store.message_search import count_message_terms
from memctl.store.migrations import FORGOTTEN_IN_FILE
from memctl.store.sessions import (
    KEYED_ID,
    SESSION_COLUMNS,
    key_read_marks,
    keyed_session_id,
    source_range,
)
from memctl.store.taken_out import COPY_MIN_CHARS, FORGOTTEN

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
    # who said a message, by name (m035): an import keeps a Slack or WhatsApp author here
    # as well as in its text's "Name: " (``memories.lines.said_line``)
    ("messages", "rowid", "speaker", False),
)
# Tables naming a session in their ``session_id`` (messages go with a forgotten session).
SESSION_ID_TABLES = ("messages", "transcript_reads", "runs", "jobs", "imports", "memories")
# Columns naming a session in a source (``session:<id>#3:user``).
SESSION_SOURCES = (("memories", "source"), ("triple_sources", "message"))
# A needle shorter than this is too common to take out of every text (a one-word message
# like "yes" would blank every "yes" of the store): only its own rows are forgotten.
MIN_NEEDLE = 8
# A value memctl stored cut short keeps its head right before the ellipsis: a digest's
# item, a tool call's note, a title, an excerpt ("sk-live-abcd1234…"). A head this long or
# longer goes with the value (``cut_heads``); a shorter one is an opening many cut texts
# share ("sk-…", "the…"), and would wipe them all.
CUT_HEAD_MIN = 4
# The ellipses memctl cuts with: its own "…" (``ingest.digest``, ``retrieve.fit``), and
# "..." (``retrieve.stages.status``).
CUT_MARKS = ("…", "...")
# A memory's fields that hold text.
MEMORY_TEXTS = ("content", "l0_abstract", "l1_overview", "l2_content")
# The parts of a memory's event that hold a version of it: an edit's, a sync conflict's,
# another message's wording of it (``Writer.stated_again``).
PAST_PARTS = ("before", "after", "lost", "stated")
# Text derived from memories and messages, deleted (not rewritten) when it quotes a
# forgotten text: a profile line, a question, a learned noise (its vector is of that text),
# a triple's predicate (an LLM's or the host's, lower-cased: ``ingest.graph.parse_triples``).
DERIVED_TEXTS = (
    ("profile_lines", "text"),
    ("memory_questions", "text"),
    ("noise_vectors", "content"),
    ("triples", "predicate"),
)


def quotable(needle: str) -> bool:
    """Whether ``needle`` is taken out of every text holding it: ``MIN_NEEDLE`` characters
    or more, or a value's head memctl cut short (``cut_heads``: ``CUT_HEAD_MIN`` characters
    or more, then the ellipsis)."""
    if len(needle) >= MIN_NEEDLE:
        return True
    return any(
        needle.endswith(mark) and len(needle) - len(mark) >= CUT_HEAD_MIN for mark in CUT_MARKS
    )


def cut_heads(db: Database, values: Iterable[str]) -> dict[str, str]:
    """Each head of one of ``values`` that a stored text holds cut short, with its ellipsis
    ("zorblaxq…" of "zorblaxquintessence"), -> that value: ``CUT_HEAD_MIN`` characters or
    more of the value (not all of it), starting a word, right before one of ``CUT_MARKS``.
    Read in every column that may quote a value (``QUOTING``), a memory's texts, its source
    and what was derived from it (``DERIVED_TEXTS``)."""
    columns = [(t, c) for t, _, c, _ in QUOTING]
    columns += [("memories", c) for c in (*MEMORY_TEXTS, "source")] + list(DERIVED_TEXTS)
    wanted = sorted({v for v in values if len(v) > CUT_HEAD_MIN})
    openings = json.dumps(sorted({v[:CUT_HEAD_MIN] for v in wanted}))
    cut = " OR ".join("instr({0}, ?)" for _ in CUT_MARKS)
    found: dict[str, str] = {}
    for table, column in columns if wanted else ():  # one read of each column
        for (text,) in db.tuples(
            f"SELECT {column} FROM {table} WHERE ({cut.format(column)}) AND EXISTS "
            f"(SELECT 1 FROM json_each(?) AS o WHERE instr({table}.{column}, o.value))",
            (*CUT_MARKS, openings),
        ):
            for value in wanted:
                if value[:CUT_HEAD_MIN] in text:
                    found |= dict.fromkeys(_heads_in(str(text), value), value)
    return dict(sorted(found.items()))


def _heads_in(text: str, value: str) -> list[str]:
    """The cut heads of ``value`` in ``text`` (``cut_heads``)."""
    heads = []
    start = text.find(value[:CUT_HEAD_MIN])
    while start >= 0:
        end = start + CUT_HEAD_MIN
        while end < len(text) and end - start < len(value) and text[end] == value[end - start]:
            end += 1
        # "manzorb…" is another word's cut, not the value's
        word_start = start == 0 or not (_word(text[start - 1]) and _word(value[0]))
        # each length matched ("api.internal..." of "api.internal.example" matched a dot
        # more), short of the whole value
        last = min(end, start + len(value) - 1)
        for cut in range(start + CUT_HEAD_MIN, last + 1) if word_start else ():
            heads += [text[start:cut] + m for m in CUT_MARKS if text.startswith(m, cut)]
        start = text.find(value[:CUT_HEAD_MIN], start + 1)
    return heads


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


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
        (session_id, f"session:{session_id}", like_escaped(f"session:{session_id}#") + "%"),
    )
    kept = restated(db, session_id, seqs)
    found = []
    for memory_id, source, own in rows:
        if memory_id in kept:
            continue
        if seqs is None:
            found.append(memory_id)
            continue
        if spans_one_of(str(source), session_id, seqs):
            found.append(memory_id)
        elif own == session_id and source == f"session:{session_id}":
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
        (like_escaped(f"session:{session_id}#") + "%",),
    )
    found: dict[str, Restated] = {}
    for memory_id, own, other, at, stated in rows:
        span = session_span(str(own), session_id)
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
        (like_escaped(f"session:{session_id}#") + "%",),
    )
    return [
        event_id
        for event_id, source in rows
        if seqs is None or spans_one_of(str(source), session_id, seqs)
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


def session_span(source: str, session_id: str) -> tuple[int, int] | None:
    """The first and last message numbers a ``session:ID#N[-M]`` source names in this
    session; None for another source."""
    head = f"session:{session_id}#"
    if not source.startswith(head):
        return None
    seqs = source[len(head) :].partition(":")[0]
    first, _, last = seqs.partition("-")
    if not first.isdigit() or (last and not last.isdigit()):
        return None
    return int(first), int(last or first)


def spans_one_of(source: str, session_id: str, seqs: list[int]) -> bool:
    """Whether ``source`` names a span of this session's messages holding one of ``seqs``."""
    span = session_span(source, session_id)
    return span is not None and any(span[0] <= seq <= span[1] for seq in seqs)


def like_escaped(text: str) -> str:
    """``text`` matched as itself in a LIKE pattern (``ESCAPE '\\'``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


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
    rewrite_events(db, changed)
    return len(changed)


def rewrite_events(db: Database, changed: list[tuple[str, int]]) -> None:
    """Write events' new data (``(data, id)`` pairs): the append-only trigger is lifted
    for these updates alone."""
    if changed:
        db.execute("DROP TRIGGER IF EXISTS events_append_only_update")
        db.executemany("UPDATE events SET data = ? WHERE id = ?", changed)
        db.execute(EVENTS_UPDATE_TRIGGER)


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


def forget_messages(
    db: Database, session_id: str, seqs: list[int] | None, at: str, key: bytes
) -> int:
    """Take a session's text out: every message (its row goes; the session row stays,
    marked forgotten, with its read marks, keyed with ``key`` as its messages' digests
    are, so capture never stores it again; its title,
    tags, transcript path and directory go, the digests of the secrets its captures hid
    (``followed_digests``), and an imported file's path from the import's
    record, which still knows the file by its digest), or the
    messages numbered ``seqs`` (their text becomes ``FORGOTTEN`` in place and the title is
    made again; their content hash is keyed with ``key``, so a capture still knows them
    and does not store them again: ``key_digests``). Their digests are kept keyed apart too,
    so that a capture stores a later copy of one as forgotten (``taken_out``). The messages
    forgotten."""
    if seqs is None:
        taken_out.keep_session(db, key, session_id, MIN_NEEDLE)
        count = db.value("SELECT count(*) FROM messages WHERE session_id = ?", (session_id,))
        db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
        db.execute(
            "UPDATE sessions SET forgotten_at = ?, title = '', tags = '[]', source = '', "
            "cwd = '' WHERE id = ?",
            (at, session_id),
        )
        db.execute("DELETE FROM jobs WHERE session_id = ?", (session_id,))
        db.execute("DELETE FROM followed_secrets WHERE session_id = ?", (session_id,))
        key_read_marks(db, session_id, key)
        rows = db.tuples(
            "SELECT id, sha256 FROM imports WHERE session_id = ? AND sha256 NOT LIKE ?",
            (session_id, KEYED + "%"),
        )
        db.executemany(  # the file's digest: a short file of guessable words is confirmed
            "UPDATE imports SET path = '', sha256 = ? WHERE id = ?",
            [(keyed_hash(key, digest), record) for record, digest in rows],
        )
        db.execute("UPDATE imports SET path = '' WHERE session_id = ?", (session_id,))
        db.execute(
            "UPDATE runs SET decisions = '[]', notes = '[]' WHERE session_id = ?", (session_id,)
        )
        return int(count)
    wanted = json.dumps(seqs)
    rows = db.tuples(
        "SELECT rowid FROM messages WHERE session_id = ? "
        "AND seq IN (SELECT value FROM json_each(?))",
        (session_id, wanted),
    )
    key_digests(db, key, [rowid for (rowid,) in rows])
    count = db.value(
        "SELECT count(*) FROM messages WHERE session_id = ? AND content != ? "
        "AND seq IN (SELECT value FROM json_each(?))",
        (session_id, FORGOTTEN, wanted),
    )
    db.execute(
        "UPDATE messages SET content = ?, speaker = '' WHERE session_id = ? AND seq IN "
        "(SELECT value FROM json_each(?))",
        (FORGOTTEN, session_id, wanted),
    )
    # The title is condensed from the first requests, so it may quote a forgotten one
    # without being a verbatim copy; it is made again from what remains when shown.
    db.execute("UPDATE sessions SET title = '' WHERE id = ?", (session_id,))
    return int(count)


def unkeyed_forgotten(db: Database) -> list[str]:
    """The forgotten sessions still under the id they had (``key_session_ids``)."""
    rows = db.tuples(
        "SELECT id FROM sessions WHERE forgotten_at IS NOT NULL AND id NOT LIKE ?",
        (KEYED_ID + "%",),
    )
    return [session_id for (session_id,) in rows]


def named_by_opening(db: Database, session_ids: Iterable[str]) -> list[str]:
    """Of these sessions, those named by a digest of their first message (read from
    standard input without an id of their own: ``model.derived_session_id``)."""
    rows = db.tuples(
        "SELECT s.id, s.client, m.content FROM sessions s JOIN messages m "
        "ON m.session_id = s.id AND m.seq = 1 WHERE s.id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(set(session_ids))),),
    )
    return [sid for sid, client, text in rows if sid == derived_session_id(client, text)]


def openings_holding(db: Database, values: list[str]) -> list[str]:
    """The sessions whose first message holds one of ``values``."""
    rows = db.tuples(
        "SELECT DISTINCT m.session_id FROM messages m, json_each(?) AS v "
        "WHERE m.seq = 1 AND instr(m.content, v.value)",
        (json.dumps(values),),
    )
    return [session_id for (session_id,) in rows]


def key_session_ids(db: Database, key: bytes, opened: Iterable[str] = ()) -> dict[str, str]:
    """Every forgotten session still under the id it had (this forget's, or one an older
    memctl forgot), and the ``opened`` ones (named by their first message, which a forget
    or a redact takes out: ``named_by_opening``, asked before), moved under that id keyed
    (``keyed_session_id``), with every row and quote naming it; old id -> new. A message
    of another session quoting the id is the user's text and stays. Runs inside the
    caller's transaction."""
    olds = sorted({*unkeyed_forgotten(db), *opened})
    renamed = {old: keyed_session_id(key, old) for old in olds}
    rest = ", ".join(c for c in SESSION_COLUMNS if c != "id")
    for old, new in renamed.items():
        db.execute(
            f"INSERT INTO sessions (id, {rest}) SELECT ?, {rest} FROM sessions WHERE id = ?",
            (new, old),
        )
        for table in SESSION_ID_TABLES:
            db.execute(f"UPDATE {table} SET session_id = ? WHERE session_id = ?", (new, old))
        for table, column in SESSION_SOURCES:
            db.execute(
                f"UPDATE {table} SET {column} = replace({column}, ?, ?) WHERE instr({column}, ?)",
                (old, new, old),
            )
        db.execute("DELETE FROM sessions WHERE id = ?", (old,))
        erase_quotes(db, [old], new, ("messages.content",))
        _rename_refs(db, old, new)
    return renamed


def _rename_refs(db: Database, old: str, new: str) -> None:
    """Every JSON value of the records (``QUOTING``'s JSON columns) that names session
    ``old`` (the id itself, ``session:old#…``, ``old#N``) under ``new``. ``erase_quotes``
    takes no needle shorter than ``MIN_NEEDLE`` out of free text, so a short id a person
    chose (``memctl ingest --session-id layoffs``) stayed in the forget's own event, the
    events of the memories it distilled and the runs that read it; as a whole value, a
    reference's head (a value's first word or a later one: a run's note "sessions forget
    d39173fc layoffs#2"), or after "session " in memctl's own notes ("jobs: session
    layoffs: 3 messages embedded", ``maintain``'s run), it names nothing else."""
    names = re.compile(
        rf"(?:^|(?<=\s))(session:)?{re.escape(old)}(?=$|#)"
        rf"|(?<=session ){re.escape(old)}(?=$|[\s:,;)\]]|\.(?:\s|$))"
    )
    db.execute("DROP TRIGGER IF EXISTS events_append_only_update")
    for table, row_key, column, is_json in QUOTING:
        if not is_json:
            continue
        rows = db.tuples(
            f"SELECT {row_key}, {column} FROM {table} WHERE instr({column}, ?)", (old,)
        )
        changed = []
        for row_id, text in rows:
            try:
                value = json.loads(text)
            except ValueError:
                continue
            renamed = json.dumps(_refs_walk(value, names, new), ensure_ascii=False)
            if renamed != json.dumps(value, ensure_ascii=False):
                changed.append((renamed, row_id))
        db.executemany(f"UPDATE {table} SET {column} = ? WHERE {row_key} = ?", changed)
    db.execute(EVENTS_UPDATE_TRIGGER)


def _refs_walk(value: Any, names: re.Pattern[str], new: str) -> Any:
    if isinstance(value, str):
        return names.sub(lambda m: (m.group(1) or "") + new, value)
    if isinstance(value, list):
        return [_refs_walk(v, names, new) for v in value]
    if isinstance(value, dict):
        return {_refs_walk(k, names, new): _refs_walk(v, names, new) for k, v in value.items()}
    return value


def erase_quotes(
    db: Database,
    needles: Iterable[str],
    mark: str,
    exclude: tuple[str, ...] = (),
    key: bytes | None = None,
) -> dict[str, int]:
    """Replace every quote of ``needles`` (each at least ``MIN_NEEDLE`` characters) in
    the columns that may hold one (``QUOTING``, less the ``table.column`` names in
    ``exclude``) by ``mark``; the rows rewritten per column. A needle's content hash is a
    quote of it too (an event's: it would confirm a guess of the text), and so is the hash
    beside a ``content`` rewritten in an event. A message rewritten has its digest keyed
    with ``key`` (``key_digests``). Runs inside the caller's transaction."""
    return replace_quotes(db, {n: mark for n in needles}, mark, exclude, key)


def replace_quotes(
    db: Database,
    replacements: dict[str, str],
    mark: str,
    exclude: tuple[str, ...] = (),
    key: bytes | None = None,
) -> dict[str, int]:
    """``erase_quotes`` with each needle replaced by its own text (maintain's rescrub: a
    memory's old text by its scrubbed one, each value by its kind's mark); a needle's
    content hash, and the hash beside a ``content`` rewritten in an event, by ``mark``."""
    texts = {n: r for n, r in replacements.items() if quotable(n)}
    texts |= {content_hash(n): mark for n in texts}
    wanted = {n: texts[n] for n in sorted(texts, key=len, reverse=True)}
    done: dict[str, int] = {}
    if not wanted:
        return done
    db.execute("DROP TRIGGER IF EXISTS events_append_only_update")
    for table, row_key, column, is_json in QUOTING:
        if f"{table}.{column}" in exclude:
            continue
        forms = list(wanted) + ([_escaped(n) for n in wanted] if is_json else [])
        rows = db.tuples(
            f"SELECT {row_key}, {column} FROM {table} WHERE {column} IS NOT NULL AND EXISTS "
            f"(SELECT 1 FROM json_each(?) AS n WHERE instr({table}.{column}, n.value))",
            (json.dumps(sorted(set(forms))),),
        )
        cleaned = [(_cleaned(str(text), wanted, is_json, mark), row_id) for row_id, text in rows]
        changed = [
            (new, row_id)
            for (new, row_id), (_, old) in zip(cleaned, rows, strict=True)
            if new != old
        ]
        if table == "messages" and key is not None:
            key_digests(db, key, [row_id for _, row_id in changed])
        db.executemany(f"UPDATE {table} SET {column} = ? WHERE {row_key} = ?", changed)
        if changed:
            done[f"{table}.{column}"] = len(changed)
    db.execute(EVENTS_UPDATE_TRIGGER)
    return done


def _escaped(needle: str) -> str:
    return json.dumps(needle, ensure_ascii=False)[1:-1]


def _cleaned(text: str, needles: dict[str, str], is_json: bool, mark: str) -> str:
    if is_json:
        try:
            value = json.loads(text)
        except ValueError:
            pass
        else:
            return json.dumps(_walk(value, needles, mark), ensure_ascii=False)
    for needle, replacement in needles.items():
        text = text.replace(needle, replacement)
    return text


def _walk(value: Any, needles: dict[str, str], mark: str) -> Any:
    if isinstance(value, str):
        return _cleaned(value, needles, False, mark)
    if isinstance(value, list):
        return [_walk(v, needles, mark) for v in value]
    if isinstance(value, dict):
        walked = {_walk(k, needles, mark): _walk(v, needles, mark) for k, v in value.items()}
        if "content_hash" in walked and walked.get("content") != value.get("content"):
            walked["content_hash"] = mark  # the hash of the text before: it confirms a guess
        return walked
    return value


def key_digests(db: Database, key: bytes, rowids: list[int]) -> None:
    """Key the content hash of each of these messages whose text is still the one hashed
    (before a forget or a redact changes it): an HMAC under the home's key in place of a
    plain SHA-256, which anyone holding the database could test guesses against. One
    already keyed, or changed before memctl keyed digests, is left as it is. The keyed
    ones are kept with their rows (``taken_out``): a client's later copy of one is stored
    as what the forget or redact leaves of it."""
    rows = db.tuples(
        "SELECT rowid, role, content, content_hash FROM messages "
        "WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(rowids),),
    )
    db.executemany(
        "UPDATE messages SET content_hash = ? WHERE rowid = ?",
        [
            (keyed_hash(key, message_digest_text(role, text)), rowid)
            for rowid, role, text, digest in rows
            if not digest.startswith(KEYED)
            and digest == content_hash(message_digest_text(role, text))
        ],
    )
    taken_out.keep_rows(db, rowids)


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


def mark_forgotten_in_file(db: Database) -> None:
    """Say in ``meta`` that the file may hold forgotten text in its free pages or its WAL
    until ``compact`` succeeds: a forget, before it takes anything out (a forget killed
    half-way leaves the mark), and a migration that rewrites text (m022)."""
    with db.atomic():
        db.set_meta(FORGOTTEN_IN_FILE, now_iso())


def forgotten_in_file(db: Database) -> str | None:
    """When text was forgotten that the file may hold still (``compact`` has not emptied
    the WAL since); None when it holds none."""
    return db.meta(FORGOTTEN_IN_FILE)


def compact(db: Database) -> bool:
    """Rewrite the file without free pages (``VACUUM``), then empty the WAL into it and cut
    it to nothing; the mark of forgotten text in the file removed. False, the mark kept,
    when a reader (another process in a read transaction) kept the WAL from being emptied:
    SQLite's checkpoint waits for readers up to the store's busy timeout
    (``store.busy_timeout_ms``), then gives up; the file and its WAL may hold old pages
    until a later compaction (``maintain``'s upkeep runs one while the mark is there)."""
    db.execute("VACUUM")
    if not _wal_emptied(db):
        return False
    if forgotten_in_file(db) is not None:
        with db.atomic():
            db.execute("DELETE FROM meta WHERE key = ?", (FORGOTTEN_IN_FILE,))
        _wal_emptied(db)  # the mark's removal alone: nothing forgotten is in it
    return True


def _wal_emptied(db: Database) -> bool:
    """Copy the WAL into the file and truncate it; False when a reader kept it."""
    busy, log, done = db.tuples("PRAGMA wal_checkpoint(TRUNCATE)")[0]
    return not busy and (log in (0, -1) or log == done)


def erase_derived(db: Database, needles: list[str], memory_ids: list[str]) -> int:
    """What memctl derived from a forgotten text, which no quote search finds whole:
    entities named (or aliased) with it, with their triples, and triples whose predicate
    holds it; the questions stored with a
    memory that quote it; the written profile's lines quoting it or resting on a
    forgotten memory; the learned noise (text and vector) of a forgotten memory or
    quoting it; and entities nothing mentions any more. A needle shorter than
    ``MIN_NEEDLE`` is no quote (``quotable``): a forgotten "ok" must not take "Tokyo" with
    it. How many rows went."""
    gone = 0
    quoted = sorted({n for n in needles if quotable(n)})
    for needle in quoted:
        like = f"%{like_escaped(needle)}%"
        gone += _deleted(
            db,
            "DELETE FROM entities WHERE name LIKE ? ESCAPE '\\' OR id IN "
            "(SELECT entity_id FROM entity_aliases WHERE alias LIKE ? ESCAPE '\\')",
            (like, like),
        )
    gone += _derived_quoting(db, quoted)
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


def stating(db: Database, needles: list[str]) -> list[str]:
    """The memories stating a triple whose predicate quotes one of ``needles`` (as
    ``erase_derived`` reads it: its case folded, its spaces collapsed), which it deletes:
    what their sync files say changes (``store.graph.restate``)."""
    folded = [" ".join(n.casefold().split()) for n in needles if quotable(n)]
    rows = (
        db.tuples(
            "SELECT t.predicate, s.memory_id FROM triples t "
            "JOIN triple_sources s ON s.triple_id = t.id"
        )
        if folded
        else []
    )
    return sorted(
        {m for text, m in rows if any(f in " ".join(str(text).casefold().split()) for f in folded)}
    )


def _derived_quoting(db: Database, needles: list[str]) -> int:
    """Delete the derived rows (``DERIVED_TEXTS``) quoting one of ``needles``, read with
    their case folded and their spaces collapsed: memctl wrote them in its own case and
    spacing (a question "what does émile Zola own?" of "Émile Zola owns…", which SQL's
    LIKE, folding ASCII letters only, does not find). How many rows went."""
    folded = [" ".join(n.casefold().split()) for n in needles]
    gone = 0
    for table, column in DERIVED_TEXTS if folded else ():
        rowids = [
            rowid
            for rowid, text in db.tuples(f"SELECT rowid, {column} FROM {table}")
            if any(f in " ".join(str(text).casefold().split()) for f in folded)
        ]
        gone += _deleted(
            db,
            f"DELETE FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(rowids),),
        )
    return gone


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
