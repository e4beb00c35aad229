"""SQL for maintain's rescrub (``maintain.rescrub``): the stored texts it reads again
through the privacy filter, and the rewrite of those it changed."""

from __future__ import annotations

import json
from collections.abc import Iterator

from memctl.model import content_hash, message_digest_text
from memctl.store.database import Database

# ``meta``: the privacy filter's digest the last rescrub ran with (``maintain.rescrub``).
RESCRUBBED_WITH = "privacy.rescrubbed_with"
# The session fields a privacy filter scrubs as one text each (capture's ``kept_path`` and
# title): a forget or redact rewrites the same ones (``maintain.everywhere.EVERY_SESSION``).
SESSION_TEXTS = ("title", "cwd", "source")

MessageRow = tuple[int, str, str]  # rowid, role, content


def sessions_messages(db: Database) -> Iterator[tuple[str, list[MessageRow]]]:
    """Each session with messages, and its messages in order."""
    for (session_id,) in db.tuples("SELECT DISTINCT session_id FROM messages ORDER BY 1"):
        rows = db.tuples(
            "SELECT rowid, role, content FROM messages WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
        yield session_id, [(int(r), str(role), str(text)) for r, role, text in rows]


def rewrite_messages(db: Database, rows: list[tuple[int, str, str, str]]) -> None:
    """Set each message's new text (rowid, role, old text, new text), where it still holds
    the old one, and its digest to the new text's: a capture reading the transcript again
    scrubs it the same way, and finds it stored."""
    db.executemany(
        "UPDATE messages SET content = ?, content_hash = ? WHERE rowid = ? AND content = ?",
        [
            (new, content_hash(message_digest_text(role, new)), rowid, old)
            for rowid, role, old, new in rows
        ],
    )


def message_speakers(db: Database) -> list[str]:
    """Every name a message is said by (``messages.speaker``), once each."""
    rows = db.tuples("SELECT DISTINCT speaker FROM messages WHERE speaker != '' ORDER BY 1")
    return [str(row[0]) for row in rows]


def rename_speakers(db: Database, names: dict[str, str]) -> None:
    """The messages said by each old name said by its new one (old -> new)."""
    db.executemany(
        "UPDATE messages SET speaker = ? WHERE speaker = ?", [(n, o) for o, n in names.items()]
    )


def session_texts(db: Database) -> list[tuple[str, dict[str, str]]]:
    """Every session's id and its ``SESSION_TEXTS`` that are set."""
    columns = ", ".join(SESSION_TEXTS)
    return [
        (str(row[0]), {n: v for n, v in zip(SESSION_TEXTS, row[1:], strict=True) if v})
        for row in db.tuples(f"SELECT id, {columns} FROM sessions ORDER BY id")
    ]


def set_session_texts(db: Database, session_id: str, texts: dict[str, str]) -> None:
    """Set some of a session's ``SESSION_TEXTS``."""
    names = [n for n in texts if n in SESSION_TEXTS]
    assignments = ", ".join(f"{n} = ?" for n in names)
    db.execute(
        f"UPDATE sessions SET {assignments} WHERE id = ?", [*(texts[n] for n in names), session_id]
    )


def memory_ids(db: Database) -> list[str]:
    """Every memory's id, whatever its state."""
    return [str(r[0]) for r in db.tuples("SELECT id FROM memories ORDER BY id")]


# The graph's texts an LLM, the host or the rules wrote: an entity's name and aliases (the
# entity's id), a triple's predicate (the triple's).
GRAPH_TEXTS = (("entities", "id", "name"), ("entity_aliases", "entity_id", "alias"))
GRAPH_TABLES = ("entities", "triples")


def graph_texts(db: Database) -> list[tuple[str, int, str]]:
    """Every text of the graph, as (the table of the row it belongs to, its id, the text)."""
    selects = [f"SELECT 'entities', {key}, {text} FROM {table}" for table, key, text in GRAPH_TEXTS]
    rows = db.tuples(" UNION ALL ".join([*selects, "SELECT 'triples', id, predicate FROM triples"]))
    return [(str(table), int(row_id), str(text)) for table, row_id, text in rows]


def stating_rows(db: Database, rows: dict[str, set[int]]) -> list[str]:
    """The memories stating one of these triples, or a triple naming one of these entities
    (``GRAPH_TABLES`` -> ids): dropping the rows changes what their sync files say."""
    entities, triples = (json.dumps(sorted(rows.get(table, ()))) for table in GRAPH_TABLES)
    named = (
        "SELECT id FROM triples WHERE id IN (SELECT value FROM json_each(?)) "
        "OR subject IN (SELECT value FROM json_each(?)) "
        "OR object IN (SELECT value FROM json_each(?))"
    )
    found = db.tuples(
        f"SELECT DISTINCT memory_id FROM triple_sources WHERE triple_id IN ({named}) "
        "ORDER BY memory_id",
        (triples, entities, entities),
    )
    return [str(memory_id) for (memory_id,) in found]


def drop_graph_rows(db: Database, rows: dict[str, set[int]]) -> int:
    """Delete these entities (their aliases, mentions and triples with them) and triples
    (``GRAPH_TABLES`` -> ids); how many rows went."""
    gone = 0
    for table in GRAPH_TABLES:
        db.execute(
            f"DELETE FROM {table} WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(rows.get(table, ()))),),
        )
        gone += int(db.value("SELECT changes()"))
    return gone


def drop_quoting(db: Database, memory_ids: list[str], values: list[str]) -> int:
    """Of these memories, the stored questions, the entities they mention or their triples
    name, and their triples' predicates, that hold one of ``values`` (any length:
    ``store.forget.erase_derived`` takes those of 8 characters or more from every row,
    these rows alone hold a shorter one), read with their case folded: memctl writes a
    question's first word and a model's predicate lower-cased; how many rows went."""
    ids, folded = json.dumps(memory_ids), [v.casefold() for v in values]
    sourced = (
        "SELECT triple_id FROM triple_sources WHERE memory_id IN (SELECT value FROM json_each(?))"
    )
    quoting = (
        (
            "memory_questions",
            "rowid",
            "text",
            "memory_rowid IN (SELECT rowid FROM memories "
            "WHERE id IN (SELECT value FROM json_each(?1)))",
        ),
        ("triples", "id", "predicate", "id IN (" + sourced.replace("?", "?1") + ")"),
        (
            "entities",
            "id",
            "name",
            "id IN (SELECT entity_id FROM entity_mentions WHERE "
            "memory_id IN (SELECT value FROM json_each(?1)) UNION SELECT subject FROM triples "
            "WHERE id IN (" + sourced.replace("?", "?1") + ") UNION SELECT object FROM triples "
            "WHERE id IN (" + sourced.replace("?", "?1") + "))",
        ),
    )
    gone = 0
    for table, key, column, mine in quoting:
        rows = db.tuples(f"SELECT {key}, {column} FROM {table} WHERE {mine}", (ids,))
        held = [k for k, text in rows if any(v in str(text).casefold() for v in folded)]
        db.execute(
            f"DELETE FROM {table} WHERE {key} IN (SELECT value FROM json_each(?))",
            (json.dumps(held),),
        )
        gone += int(db.value("SELECT changes()"))
    return gone
