"""SQL for memories: insert, read, filter, update, delete, and both search legs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from memctl.errors import AmbiguousIdError, NotFoundError, UsageError
from memctl.model import HIDDEN_STATES, Category, Kind, Memory, State, Tier, Visibility
from memctl.store.database import Database
from memctl.store.fts import fts_phrases, fts_terms
from memctl.store.migrations import STEMMED
from memctl.store.pruned_bm25 import best_matches

COLUMNS = [f.name for f in fields(Memory)]
ENUMS = {"kind": Kind, "category": Category, "tier": Tier, "state": State, "visibility": Visibility}
# Memories are read as tuples in the order of Memory's fields, which build one
# positionally; enum members come from a dict (calling the enum costs ~1 us each).
ENUM_MEMBERS = [(COLUMNS.index(n), {str(m): m for m in e}) for n, e in ENUMS.items()]
TAGS = COLUMNS.index("tags")
SORTS = {
    "created": "created_at DESC",
    "updated": "updated_at DESC",
    "importance": "importance DESC, created_at DESC",
    "accessed": "last_accessed_at DESC NULLS LAST",
    "oldest": "created_at ASC",
}
TIME_SORTS = ("created", "oldest")  # the sorts the creation-time index serves
MIN_PREFIX = 4
# Rows named by a JSON list of ids (or rowids): CROSS JOIN makes SQLite look each one up
# by its key instead of scanning an index of a filter column (state, scope) for them.
BY_ID_LIST = "json_each(?) AS wanted CROSS JOIN memories"
# (at least as many as the memories, how many memories hold each word): word_document_counts
WordCounts = tuple[int, dict[str, int]]
MEMORIES = "memories"  # the table word_document_counts counts in, unless told another


@dataclass(frozen=True)
class MemoryFilter:
    """Which memories a listing, search or purge covers; None means any."""

    scopes: tuple[str, ...] | None = None
    kinds: tuple[str, ...] | None = None
    categories: tuple[str, ...] | None = None
    states: tuple[str, ...] | None = (State.ACTIVE, State.SUPERSEDED, State.CONTRADICTED)
    tag: str | None = None
    since: str | None = None
    before: str | None = None
    stored: bool = False  # since/before count from when it entered this store, not its date
    after: tuple[str, str] | None = None  # keyset, newest first: after this (created_at, id)
    session_id: str | None = None  # those distilled from this session (their session_id)

    def where(self, alias: str = "m", by_time: bool = False) -> tuple[str, list[Any]]:
        """A SQL condition over table alias ``alias`` and its parameters.

        With a start time (a time window), or ``by_time`` (rows wanted in creation order,
        a page at a time), the other columns are written ``+column``, so that SQLite walks
        the creation-time index: without statistics it would take the state or scope
        index, whose values cover most memories (a week of 100,000 memories: 37 ms instead
        of 7; the newest 50 of 100,000: every row sorted, ~300 ms, instead of 50 read)."""
        clauses: list[str] = ["1"]
        params: list[Any] = []
        column_of = f"+{alias}" if self.since is not None or by_time else alias
        for column, values in (
            ("scope", self.scopes),
            ("kind", self.kinds),
            ("category", self.categories),
            ("state", self.states),
        ):
            if values is not None:
                clauses.append(f"{column_of}.{column} IN ({', '.join('?' * len(values))})")
                params.extend(str(v) for v in values)
        if self.session_id is not None:  # never "+": its (session_id, created_at) index reads it
            clauses.append(f"{alias}.session_id = ?")
            params.append(self.session_id)
        if self.tag is not None:
            clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)")
            params.append(self.tag)
        if self.after is not None:
            clauses.append(
                f"({alias}.created_at < ? OR ({alias}.created_at = ? AND {alias}.id > ?))"
            )
            params.extend([self.after[0], self.after[0], self.after[1]])
        clock = "stored_at" if self.stored else "created_at"
        if self.since is not None:
            clauses.append(f"{alias}.{clock} >= ?")
            params.append(self.since)
        if self.before is not None:
            clauses.append(f"{alias}.{clock} < ?")
            params.append(self.before)
        return " AND ".join(clauses), params


def memory_columns(alias: str = "m") -> str:
    """The select list reading a memory for ``memory_from_values``."""
    return ", ".join(f"{alias}.{name}" for name in COLUMNS)


def memory_from_values(row: Sequence[Any]) -> Memory:
    """A Memory from the values ``memory_columns`` selects."""
    values = list(row)
    for position, members in ENUM_MEMBERS:
        value = values[position]
        values[position] = members.get(value) or ENUMS[COLUMNS[position]](value)
    tags = values[TAGS]
    values[TAGS] = [] if tags == "[]" else json.loads(tags)
    return Memory(*values)


def read_memories(db: Database, sql: str, params: Any = ()) -> list[Memory]:
    """The memories of a query selecting ``memory_columns()`` (of alias m)."""
    return [memory_from_values(row) for row in db.tuples(sql, params)]


def _to_row(memory: Memory) -> list[Any]:
    row = memory.to_dict()
    row["tags"] = json.dumps(memory.tags, ensure_ascii=False)
    return [row[name] for name in COLUMNS]


def insert_memory(db: Database, memory: Memory, vector: bytes | None) -> None:
    """Insert a memory (indexed for full text by trigger) and its vector, if given."""
    with db.atomic():
        db.execute(
            f"INSERT INTO memories({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
            _to_row(memory),
        )
        if vector is not None:
            db.execute(
                "INSERT INTO memories_vec(rowid, embedding) VALUES (?, ?)",
                (db.last_rowid(), vector),
            )
            db.note_vector_write()


def put_vector(db: Database, memory_id: str, vector: bytes, same_text: bool = False) -> None:
    """Set (or replace) the vector of a memory; ``same_text``: its text and content-alone
    vector are unchanged (only the names its searched vector holds: store/meaning.py), so
    maintain's comparisons of it stand."""
    rowid = db.value("SELECT rowid FROM memories WHERE id = ?", (memory_id,))
    with db.atomic():
        db.execute("DELETE FROM memories_vec WHERE rowid = ?", (rowid,))
        db.execute("INSERT INTO memories_vec(rowid, embedding) VALUES (?, ?)", (rowid, vector))
        if not same_text:  # its content-alone vector was of the old vector's text
            db.execute("DELETE FROM memory_plain_vectors WHERE memory_rowid = ?", (rowid,))
            db.execute("DELETE FROM maintain_compared WHERE rowid = ?", (rowid,))
        db.note_vector_write(changed=rowid)


def get_memory(db: Database, memory_id: str) -> Memory | None:
    found = read_memories(
        db, f"SELECT {memory_columns()} FROM memories m WHERE id = ?", (memory_id,)
    )
    return found[0] if found else None


def get_memories(
    db: Database, ids: list[str], where: MemoryFilter | None = None
) -> dict[str, Memory]:
    """Memories by id (those passing ``where``, if given), in one query."""
    if not ids:
        return {}
    condition, params = where.where() if where else ("1", [])
    found = read_memories(
        db,
        f"SELECT {memory_columns()} FROM {BY_ID_LIST} m ON m.id = wanted.value WHERE {condition}",
        [json.dumps(ids), *params],
    )
    return {memory.id: memory for memory in found}


def of_sessions_in(db: Database, session_ids: list[str], states: tuple[State, ...]) -> list[Memory]:
    """The memories in ``states`` distilled from these sessions (their ``session_id``), in
    one query over the (session_id, created_at) index."""
    if not session_ids or not states:
        return []
    marks = ", ".join("?" * len(states))
    sql = (
        f"SELECT {memory_columns()} FROM json_each(?) AS wanted CROSS JOIN memories m "
        f"ON m.session_id = wanted.value WHERE m.state IN ({marks})"
    )
    return read_memories(db, sql, [json.dumps(session_ids), *map(str, states)])


def resolve_prefix(db: Database, table: str, prefix: str, noun: str) -> str:
    """The full id of the ``table`` row a unique id prefix names; never a guess."""
    prefix = prefix.strip().lower()
    if not prefix or any(c not in "0123456789abcdef" for c in prefix):
        raise UsageError(f"not a {noun} id: {prefix!r} (ids are hexadecimal)")
    if len(prefix) < MIN_PREFIX:
        raise UsageError(f"id prefix {prefix!r} is too short: give at least {MIN_PREFIX} digits")
    matches = [
        r["id"]
        for r in db.rows(
            f"SELECT id FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT 11",
            (prefix, prefix + "g"),
        )
    ]
    if not matches:
        raise NotFoundError(f"no {noun} with id {prefix}")
    if len(matches) > 1:
        shown = ", ".join(m[:12] for m in matches[:10]) + (", ..." if len(matches) > 10 else "")
        raise AmbiguousIdError(f"id prefix {prefix} matches several {noun}s: {shown}")
    return matches[0]


def resolve_id(db: Database, prefix: str) -> str:
    """The memory a (unique) id prefix names."""
    return resolve_prefix(db, "memories", prefix, "memory")


def list_memories(
    db: Database, where: MemoryFilter, limit: int | None, sort: str = "created", offset: int = 0
) -> list[Memory]:
    if sort not in SORTS:
        raise UsageError(f"unknown sort {sort!r}: expected one of {', '.join(SORTS)}")
    condition, params = where.where(by_time=sort in TIME_SORTS and limit is not None)
    sql = f"SELECT {memory_columns()} FROM memories m WHERE {condition} ORDER BY {SORTS[sort]}, id"
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params += [limit, offset]
    return read_memories(db, sql, params)


def of_session(db: Database, session_id: str, limit: int) -> list[Memory]:
    """The memories a session was distilled into (its facts, its digest, and what maintain
    consolidated from them: their ``session_id``), oldest first, at most ``limit``;
    archived and deleted ones left out. The (session_id, created_at) index reads them."""
    hidden = ", ".join("?" * len(HIDDEN_STATES))
    sql = (
        f"SELECT {memory_columns()} FROM memories m WHERE m.session_id = ? "
        f"AND m.state NOT IN ({hidden}) ORDER BY m.created_at, m.id LIMIT ?"
    )
    return read_memories(db, sql, [session_id, *map(str, HIDDEN_STATES), limit])


def count_memories(db: Database, where: MemoryFilter, cap: int) -> int:
    """How many memories ``where`` covers, counted up to ``cap`` (a list page's total)."""
    condition, params = where.where()
    return int(
        db.value(
            f"SELECT count(*) FROM (SELECT 1 FROM memories m WHERE {condition} LIMIT ?)",
            [*params, cap],
        )
    )


def count_stored_earlier(db: Database, where: MemoryFilter, cap: int) -> int:
    """How many memories ``where`` leaves out by its ``since`` alone that entered this store
    since then (their own date is earlier), counted up to ``cap``."""
    if where.since is None:
        return 0
    condition, params = replace(where, since=None).where()
    return int(
        db.value(
            f"SELECT count(*) FROM (SELECT 1 FROM memories m WHERE {condition} "
            "AND m.stored_at >= ? AND m.created_at < ? LIMIT ?)",
            [*params, where.since, where.since, cap],
        )
    )


def record_access(db: Database, ids: list[str], at: str, strength_step: float) -> list[str]:
    """access_count + 1, last_accessed_at (the later one), strength + step (at most 1) for
    every id of a memory that stands (not archived nor deleted) and was stored by ``at``, in
    one statement (the caller's transaction); those ids. A touch recorded before a forget,
    or before the id was stored again, changes nothing."""
    return [
        row[0]
        for row in db.tuples(
            "UPDATE memories SET access_count = access_count + 1, "
            "last_accessed_at = max(coalesce(last_accessed_at, ''), ?), "
            "strength = min(1.0, strength + ?) WHERE id IN (SELECT value FROM json_each(?)) "
            "AND state NOT IN (SELECT value FROM json_each(?)) AND stored_at <= ? RETURNING id",
            (at, strength_step, json.dumps(ids), json.dumps([str(s) for s in HIDDEN_STATES]), at),
        )
    ]


def update_memory(db: Database, memory_id: str, changes: dict[str, Any]) -> None:
    """Set the given columns of one memory (tags as a list, enums as themselves)."""
    unknown = set(changes) - set(COLUMNS) - {"id"}
    if unknown or "id" in changes:
        raise ValueError(f"cannot update {sorted(unknown | ({'id'} & set(changes)))}")
    values = {
        k: json.dumps(v, ensure_ascii=False) if k == "tags" else (str(v) if k in ENUMS else v)
        for k, v in changes.items()
    }
    assignments = ", ".join(f"{name} = ?" for name in values)
    db.execute(f"UPDATE memories SET {assignments} WHERE id = ?", [*values.values(), memory_id])


def move_scope(db: Database, old: str, new: str) -> list[str]:
    """Move every memory of scope ``old`` to ``new``; their ids."""
    moved = [r[0] for r in db.tuples("SELECT id FROM memories WHERE scope = ?", (old,))]
    db.execute("UPDATE memories SET scope = ? WHERE scope = ?", (new, old))
    return moved


def delete_memory_row(db: Database, memory_id: str) -> None:
    """Remove a memory, its vector, full-text entry and relations; events stay."""
    with db.atomic():
        rowid = db.value("SELECT rowid FROM memories WHERE id = ?", (memory_id,))
        if db.vector_model() is not None:
            db.execute("DELETE FROM memories_vec WHERE rowid = ?", (rowid,))
            db.note_vector_write(changed=rowid)
        db.execute("DELETE FROM memories WHERE id = ?", (memory_id,))


def fts_search(db: Database, text: str, limit: int, where: MemoryFilter) -> list[tuple[str, float]]:
    """(id, bm25) of the best full-text matches of any word of ``text``; bm25 is negative,
    lower is better."""
    return fts_rank(db, [(term,) for term in fts_terms(text)], limit, where)


def fts_rank(
    db: Database,
    phrases: Iterable[Sequence[str]],
    limit: int,
    where: MemoryFilter,
    counts: WordCounts | None = None,
) -> list[tuple[str, float]]:
    """(id, bm25) of the best memories matching any of ``phrases`` and passing ``where``.

    FTS5 ranks first and the filter applies after, over a ranked prefix that
    grows until enough pass (joining every match first costs far more). ``counts``
    (``word_document_counts`` of the phrases' words) spares scoring the memories that
    hold only a common word (store/pruned_bm25.py): the same answer.
    """
    wanted = [tuple(p) for p in phrases]
    if fts_phrases(wanted) is None or limit <= 0:
        return []
    condition, params = where.where()
    rows, held = counts if counts is not None else (0, {})
    fetch = limit * 4 + 32
    while True:
        hits = best_matches(db, wanted, fetch, held, rows)
        passing = dict(
            db.tuples(
                f"SELECT m.rowid, m.id FROM {BY_ID_LIST} m ON m.rowid = wanted.value "
                f"WHERE {condition}",
                [json.dumps([rowid for rowid, _ in hits]), *params],
            )
        )
        found = [(passing[rowid], score) for rowid, score in hits if rowid in passing]
        if len(found) >= limit or len(hits) < fetch:
            return found[:limit]
        fetch *= 8


def word_document_counts(db: Database, words: list[str], words_of: str = MEMORIES) -> WordCounts:
    """(about how many memories there are: at least as many, how many contain each of
    ``words``) from the full-text index's vocabulary (every state counts: it is only a
    word's rarity). ``words_of``: another table whose full-text index has a vocabulary
    table (``<table>_vocab``, an fts5vocab 'row' one): the stored questions'."""
    total = db.value(f"SELECT max(rowid) FROM {words_of}") or 0
    if not words or not total:  # an empty table (no question stored): nothing to look up
        return 0, {}
    terms = indexed_terms(db, words)
    wanted = sorted(set(terms.values()))
    rows = db.tuples(
        f"SELECT term, doc FROM {words_of}_vocab WHERE term IN ({', '.join('?' * len(wanted))})",
        wanted,
    )
    counts = {term: int(doc) for term, doc in rows}
    return int(total), {w: counts[t] for w, t in terms.items() if t in counts}


def indexed_terms(db: Database, words: list[str]) -> dict[str, str]:
    """Each word as the full-text index holds it (lower-cased, stemmed: "Recipes" ->
    "recip"): its first token."""
    tokens = indexed_tokens(db, words)
    return {word: found[0] for word, found in zip(words, tokens, strict=True) if found}


def indexed_tokens(db: Database, texts: list[str]) -> list[tuple[str, ...]]:
    """Each text's tokens as the full-text indexes hold them, in order, by the indexes' own
    tokenizer, through a scratch table in the connection's temporary schema (the store
    itself is not written)."""
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_words "
        f"USING fts5(word, tokenize='{STEMMED}')"
    )
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_terms "
        "USING fts5vocab(temp, query_words, 'instance')"
    )
    db.execute("DELETE FROM temp.query_words")
    db.executemany(
        "INSERT INTO temp.query_words(rowid, word) VALUES (?, ?)", list(enumerate(texts))
    )
    tokens: list[list[tuple[int, str]]] = [[] for _ in texts]
    for doc, offset, term in db.tuples("SELECT doc, offset, term FROM temp.query_terms"):
        tokens[doc].append((offset, term))
    return [tuple(term for _, term in sorted(found)) for found in tokens]


def phrase_document_counts(db: Database, phrases: list[tuple[str, ...]]) -> dict[str, int]:
    """How many memories contain each phrase (its words in a row, any case), keyed by the
    phrase's words joined with spaces."""
    counts = {}
    for phrase in phrases:
        match = fts_phrases([phrase])
        if match is not None:
            counts[" ".join(phrase)] = int(
                db.value("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", [match])
                or 0
            )
    return counts


def holds_any(db: Database, phrases: Iterable[tuple[str, ...]]) -> bool:
    """Whether some memory (any state) holds one of ``phrases`` (its words in a row)."""
    for phrase in phrases:
        match = fts_phrases([phrase])
        if match is not None and db.value(
            "SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT 1", [match]
        ):
            return True
    return False


def session_neighbours(
    db: Database, memories: list[Memory], where: MemoryFilter
) -> dict[str, tuple[str | None, str | None]]:
    """memory id -> (the id of the memory created just before it in its session, the one
    just after it), each passing ``where`` (no entry for a memory without a session)."""
    condition, params = where.where("n")
    found: dict[str, tuple[str | None, str | None]] = {}
    for memory in memories:
        if memory.session_id is None:
            continue
        before, after = (
            db.value(
                f"SELECT n.id FROM memories n WHERE n.session_id = ? AND n.created_at {op} ? "
                f"AND {condition} ORDER BY n.created_at {order} LIMIT 1",
                [memory.session_id, memory.created_at, *params],
            )
            for op, order in (("<", "DESC"), (">", "ASC"))
        )
        found[memory.id] = (before, after)
    return found


def fts_rank_of(
    db: Database, phrases: Iterable[Sequence[str]], memory_id: str
) -> tuple[int, float] | None:
    """(rank among all matches, bm25) of one memory, None when it does not match: for
    --why-not."""
    match = fts_phrases(phrases)
    if match is None:
        return None
    mine = db.value(
        "SELECT bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ? AND rowid = "
        "(SELECT rowid FROM memories WHERE id = ?)",
        (match, memory_id),
    )
    if mine is None:
        return None
    better = db.rows(
        "SELECT bm25(memories_fts) AS score FROM memories_fts WHERE memories_fts MATCH ?", (match,)
    )
    return sum(r["score"] < mine for r in better) + 1, mine


def vector_search(
    db: Database, vector: bytes, limit: int, where: MemoryFilter
) -> list[tuple[str, float]]:
    """(id, cosine distance) of the nearest memories that pass the filter.

    vec0 finds the k nearest over all vectors; the filter is applied after,
    so k grows until enough pass or every vector has been seen.
    """
    if db.vector_model() is None:
        return []
    total = db.value("SELECT count(*) FROM memories_vec")
    condition, params = where.where()
    k = min(total, max(limit * 4, 64))
    while True:
        rows = db.rows(
            f"SELECT m.id AS id, v.distance AS distance FROM ("
            f"SELECT rowid, distance FROM memories_vec WHERE embedding MATCH ? AND k = ?"
            f") v JOIN memories m ON m.rowid = v.rowid WHERE {condition} "
            f"ORDER BY v.distance LIMIT ?",
            [vector, k, *params, limit],
        )
        if len(rows) >= limit or k >= total:
            return [(r["id"], r["distance"]) for r in rows]
        k = min(total, k * 4)


def ids_without_vectors(db: Database) -> list[str]:
    return [
        r["id"]
        for r in db.rows(
            "SELECT id FROM memories WHERE rowid NOT IN (SELECT rowid FROM memories_vec)"
        )
    ]


def same_content(db: Database, digest: str, scope: str) -> Memory | None:
    """A recallable memory of ``scope`` whose content has this hash (the oldest), or None."""
    found = read_memories(
        db,
        f"SELECT {memory_columns()} FROM memories m WHERE content_hash = ? AND scope = ? "
        "AND state IN (?, ?, ?) ORDER BY created_at LIMIT 1",
        (digest, scope, State.ACTIVE, State.SUPERSEDED, State.CONTRADICTED),
    )
    return found[0] if found else None


def vectors_for_hashes(db: Database, digests: set[str]) -> dict[str, bytes]:
    """The vector of the text of a memory with each of these content hashes (those any
    memory with a vector has: its content-alone one when its searched vector also names what
    it mentions, store/meaning.py), so that text the store holds is not embedded again."""
    return _content_vectors(db, "content_hash", sorted(digests))


def content_vectors_for(db: Database, ids: list[str]) -> dict[str, bytes]:
    """The vector of each of these memories' text alone (those that have a vector): the
    content-alone one when its searched vector also names what it mentions (store/meaning.py),
    so that two memories of the same words compare as the same."""
    return _content_vectors(db, "id", ids)


def _content_vectors(db: Database, column: str, keys: list[str]) -> dict[str, bytes]:
    """Each memory's ``column`` (id or content_hash, among ``keys``) -> its text's vector."""
    if not keys or db.vector_model() is None:
        return {}
    rows = db.tuples(
        f"SELECT m.{column}, coalesce(p.embedding, v.embedding) FROM memories m "
        "JOIN memories_vec v ON v.rowid = m.rowid "
        "LEFT JOIN memory_plain_vectors p ON p.memory_rowid = m.rowid "
        f"WHERE m.{column} IN (SELECT value FROM json_each(?))",
        (json.dumps(keys),),
    )
    return {key: vector for key, vector in rows}


def vectors_for(db: Database, ids: list[str]) -> dict[str, bytes]:
    """The stored vectors of these memories (those that have one)."""
    if not ids or db.vector_model() is None:
        return {}
    rows = db.rows(
        f"SELECT m.id AS id, v.embedding AS embedding FROM memories m "
        f"JOIN memories_vec v ON v.rowid = m.rowid WHERE m.id IN ({', '.join('?' * len(ids))})",
        ids,
    )
    return {r["id"]: r["embedding"] for r in rows}


def all_contents(db: Database) -> list[tuple[str, str]]:
    """(id, content) of every memory, for re-embedding."""
    return [
        (r["id"], r["content"]) for r in db.rows("SELECT id, content FROM memories ORDER BY rowid")
    ]


def counts_by(db: Database, column: str) -> dict[str, int]:
    if column not in ("kind", "category", "state", "tier", "scope"):
        raise ValueError(column)
    rows = db.rows(
        f"SELECT {column} AS k, count(*) AS n FROM memories GROUP BY {column} ORDER BY n DESC"
    )
    return {r["k"]: r["n"] for r in rows}


def session_memory(db: Database, session_id: str, tag: str) -> Memory | None:
    """The active memory of a session carrying ``tag`` (a session's digest), if any."""
    found = read_memories(
        db,
        f"SELECT {memory_columns()} FROM memories m WHERE session_id = ? AND state = 'active' "
        "AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?) ORDER BY created_at LIMIT 1",
        (session_id, tag),
    )
    return found[0] if found else None


def session_memories(db: Database, session_id: str) -> list[Memory]:
    """The active memories distilled from a session, oldest first."""
    return read_memories(
        db,
        f"SELECT {memory_columns()} FROM memories m WHERE session_id = ? AND state = 'active' "
        "ORDER BY created_at, id",
        (session_id,),
    )


def session_memories_tagged(
    db: Database, session_ids: list[str], tag: str, where: MemoryFilter
) -> dict[str, Memory]:
    """session id -> its oldest active memory carrying ``tag`` (a session's digest) that
    passes ``where``, for each of ``session_ids`` that has one, in one query."""
    if not session_ids:
        return {}
    condition, params = where.where()
    found = read_memories(
        db,
        f"SELECT {memory_columns()} FROM json_each(?) AS wanted CROSS JOIN memories m "
        "ON m.session_id = wanted.value WHERE m.state = 'active' AND EXISTS (SELECT 1 FROM "
        f"json_each(m.tags) WHERE value = ?) AND {condition} ORDER BY m.created_at, m.id",
        [json.dumps(session_ids), tag, *params],
    )
    first: dict[str, Memory] = {}
    for memory in found:
        if memory.session_id is not None:
            first.setdefault(memory.session_id, memory)
    return first
