"""SQL for searching raw session messages (``recall --sessions``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memctl.errors import AmbiguousIdError, NotFoundError
from memctl.model import Category, Kind, Memory, Tier
from memctl.store.database import MESSAGES_FTS, Database
from memctl.store.fts import fts_phrases
from memctl.store.memories import MIN_PREFIX, MemoryFilter, indexed_tokens
from memctl.store.pruned_bm25 import ONE_TOKEN, best_matches

# A session message's id: <session id>#<message number>.
MESSAGE_SEPARATOR = "#"


@dataclass(frozen=True)
class MessageHit:
    """One message of a stored session, and its BM25."""

    session_id: str
    seq: int
    role: str
    content: str
    created_at: str
    scope: str
    score: float
    speaker: str = ""  # who said it, by name, where the import or capture knew (else '')

    @property
    def key(self) -> str:
        return f"{self.session_id}{MESSAGE_SEPARATOR}{self.seq}"

    def as_memory(self) -> Memory:
        """The message as a memory record (episodic, peripheral, importance 0.5) whose id is
        its key, so that recall, ``get`` and ``--why-not`` show and take it like a memory."""
        return Memory(
            content=self.content,
            id=self.key,
            kind=Kind.EPISODIC,
            category=Category.EVENTS,
            tier=Tier.PERIPHERAL,
            importance=0.5,
            created_at=self.created_at,
            scope=self.scope,
            source=f"session {self.session_id} message {self.seq}{said_by(self.speaker)} "
            f"({self.role})",
            session_id=self.session_id,
        )


def message_role(memory: Memory) -> str:
    """The role of a session message made a memory record (``as_memory`` writes it last in
    its source, in brackets): "user", "assistant"; "" for any other memory."""
    head, _, role = memory.source.rpartition(" (")
    return role.removesuffix(")") if head.startswith("session ") and role.endswith(")") else ""


SPEAKER_MARK = " by "  # how ``as_memory``'s source names who said the message


def said_by(speaker: str) -> str:
    return f"{SPEAKER_MARK}{speaker}" if speaker else ""


def message_speaker(memory: Memory) -> str:
    """Who said a session message made a memory record, by name (``as_memory`` writes it
    before the role: "session s1 message 4 by Tim (user)"); "" when nobody was named or
    for any other memory."""
    head = memory.source.rpartition(" (")[0]
    if not head.startswith("session ") or SPEAKER_MARK not in head:
        return ""
    where, _, name = head.partition(SPEAKER_MARK)
    return name if where.rpartition(" message ")[2].isdigit() else ""


def is_message_id(text: str) -> bool:
    return MESSAGE_SEPARATOR in text


# How much of a session id an error quotes (a 50,000-character one was echoed whole).
QUOTED_CHARS = 60


def _quoted(session_id: str) -> str:
    flat = " ".join(session_id.split())
    return repr(flat if len(flat) <= QUOTED_CHARS else flat[: QUOTED_CHARS - 1] + "…")


def get_message(db: Database, key: str) -> MessageHit:
    """The message named ``<session id>#<number>`` (a unique prefix of the session id, as
    tables show it, will do); NotFoundError if there is none."""
    session_id, _, number = key.strip().rpartition(MESSAGE_SEPARATOR)
    if not session_id or not number.isdigit():
        raise NotFoundError(f"no session message {key}: expected <session id>#<message number>")
    query = (
        "SELECT msg.session_id AS session_id, msg.seq AS seq, msg.role AS role, "
        "msg.content AS content, msg.created_at AS created_at, s.scope AS scope, 0.0 AS score, "
        "msg.speaker AS speaker "
        "FROM messages msg JOIN sessions s ON s.id = msg.session_id "
        "WHERE msg.session_id = ? AND msg.seq = ?"
    )
    rows = db.rows(query, (session_id, int(number)))
    if not rows and len(session_id) >= MIN_PREFIX:
        # imported here: a recall, which searches messages, never needs the transcripts'
        # module (its dataclasses cost ~1.5 ms of a recall process)
        from memctl.store.transcripts import session_ids_like

        matches = session_ids_like(db, session_id)
        if len(matches) > 1:
            raise AmbiguousIdError(f"session prefix {_quoted(session_id)} matches several sessions")
        rows = db.rows(query, (matches[0], int(number))) if matches else []
    if not rows:
        raise NotFoundError(f"no message {number} in session {_quoted(session_id)}")
    return MessageHit(**rows[0])


def phrases_said(db: Database, phrases: list[tuple[str, ...]]) -> set[str]:
    """The phrases (each keyed by its words joined with spaces) some stored message holds."""
    said = set()
    for phrase in phrases:
        match = fts_phrases([phrase])
        if match is not None and db.value(
            "SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT 1", [match]
        ):
            said.add(" ".join(phrase))
    return said


def message_clauses(where: MemoryFilter) -> tuple[str, list[object]]:
    """The filter's scopes (of the session, alias ``s``) and ``before`` (of the message, alias
    ``msg``) as a SQL condition and its parameters."""
    clauses: list[str] = ["1"]
    params: list[object] = []
    if where.scopes is not None:
        clauses.append(f"s.scope IN ({', '.join('?' * len(where.scopes))})")
        params.extend(where.scopes)
    if where.before is not None:
        clauses.append("msg.created_at < ?")
        params.append(where.before)
    return " AND ".join(clauses), params


# A phrase this many messages hold is common: FTS5's bm25() counts every message that
# holds each phrase of its query before it scores a match, so one common phrase costs a
# pass over its whole postings list (85-244 ms at 1,000,000 messages). Common phrases are
# left out of the messages' BM25. The bound is COMMON_SHARE of the messages, at least
# COMMON_POSTINGS (a store of fewer than 400,000 never leaves out a phrase fewer than
# 20,000 hold). Measured (docs/benchmarks.md "Provenance picks the better statement"):
# LongMemEval's check half by words, with the bound at 2 / 5 / 10 % of each haystack's
# messages, R_all@5 0.621 / 0.759 / 0.759 (0.759 unbounded); at 1,000,000 synthetic
# messages the search takes 10 / 18 ms of CPU at a bound of 20,000 / 50,000.
COMMON_POSTINGS = 20_000
COMMON_SHARE = 0.05


def common_bound(db: Database, rows: int | None = None) -> int:
    """How many messages a phrase must hold to be left out of the messages' BM25 (``rows``:
    ``_rows``, when known)."""
    messages = _rows(db) if rows is None else rows
    return max(COMMON_POSTINGS, int(COMMON_SHARE * messages))


def _rows(db: Database) -> int:
    """At least as many as the messages (their largest rowid)."""
    return int(db.value("SELECT coalesce(max(rowid), 0) FROM messages"))


def search_messages(
    db: Database, phrases: Iterable[Sequence[str]], limit: int, where: MemoryFilter
) -> list[MessageHit]:
    """The best messages matching any of ``phrases`` in the filter's scopes (and before its
    ``before``), by the BM25 of the phrases fewer than ``common_bound`` messages hold;
    when every phrase is that common, the newest messages holding all of them (else any
    of them), scored 0."""
    unique = list(dict.fromkeys(tuple(p) for p in phrases))
    tokens = _tokens(db, unique)
    known = stored_bounds(db, unique, tokens)
    rows = _rows(db)
    kinds = phrase_kinds(db, unique, common_bound(db, rows), known)
    selective = [p for p, kind in kinds.items() if kind == RARE]
    if selective:
        return _ranked(db, _best(db, selective, limit * 4, known, tokens, rows), limit, where)
    common = [p for p, kind in kinds.items() if kind == COMMON]
    if not common:
        return []
    every = " AND ".join(fts_phrases([p]) or "" for p in common)
    return _newest(db, every, limit, where) or _newest(db, fts_phrases(common), limit, where)


def _tokens(db: Database, phrases: list[tuple[str, ...]]) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Each phrase's tokens as the index holds them."""
    texts = [" ".join(p).replace("\x00", "") for p in phrases]
    return dict(zip(phrases, indexed_tokens(db, texts) if phrases else [], strict=True))


def _best(
    db: Database,
    phrases: list[tuple[str, ...]],
    fetch: int,
    known: dict[tuple[str, ...], tuple[int, int]],
    tokens: dict[tuple[str, ...], tuple[str, ...]],
    rows: int,
) -> list[tuple[int, float]]:
    """(rowid, bm25) of the ``fetch`` best messages matching any of ``phrases`` (distinct),
    best first: scored from the messages' lengths when each phrase is one word of one token
    and the lengths hold, else by FTS5 (pruned by the words' counts ``known``)."""
    if all(len(p) == 1 and ONE_TOKEN.fullmatch(p[0]) and len(tokens[p]) == 1 for p in phrases):
        # imported here: numpy, which only this search and maintain need of this module
        from memctl.store.message_bm25 import best_messages

        best = best_messages(db, [tokens[p][0] for p in phrases], fetch)
        if best is not None:
            return best
    # at least how many messages hold each one-word phrase, for the pruned search
    held = {p[0]: low for p, (low, _) in known.items() if len(p) == 1}
    return best_matches(db, phrases, fetch, held, rows, MESSAGES_FTS)


# What phrase_kinds says of a phrase: no message holds it, fewer than the bound, or more.
ABSENT, RARE, COMMON = "absent", "rare", "common"


def phrase_kinds(
    db: Database,
    phrases: Iterable[Sequence[str]],
    bound: int,
    known: dict[tuple[str, ...], tuple[int, int]] | None = None,
) -> dict[tuple[str, ...], str]:
    """Whether no message holds each phrase (ABSENT), fewer than ``bound`` do (RARE) or at
    least ``bound`` (COMMON): decided by the counts maintain keeps (``stored_bounds``) when
    they settle it, else by stepping over at most ``bound`` of its postings (an OFFSET,
    which costs a third less than counting them: 1.9 against 2.8 ms for 50,000), scoring
    none. ``known``: ``stored_bounds`` of the phrases, when read already."""
    unique = list(dict.fromkeys(tuple(p) for p in phrases))
    if known is None:
        known = stored_bounds(db, unique)
    kinds = {}
    for phrase in unique:
        match = fts_phrases([phrase])
        if match is None:
            continue
        low, high = known.get(phrase, (0, None))
        if low >= bound or ((high is None or high >= bound) and _holds_at_least(db, match, bound)):
            kinds[phrase] = COMMON
        elif low >= 1 or (high != 0 and _holds_at_least(db, match, 1)):
            kinds[phrase] = RARE
        else:
            kinds[phrase] = ABSENT
    return kinds


def stored_bounds(
    db: Database,
    phrases: list[tuple[str, ...]],
    tokens: dict[tuple[str, ...], tuple[str, ...]] | None = None,
) -> dict[tuple[str, ...], tuple[int, int]]:
    """At least and at most how many messages hold each phrase, by the counts maintain
    keeps (``count_message_terms``) and the messages written and taken away since: a
    phrase of one token is held by its count less those taken away, at least, and by no
    more than the count plus those written; one of several tokens, by at most its rarest
    token's. Empty when the counts were never taken. ``tokens``: each phrase's tokens
    (``_tokens``), when read already."""
    if not phrases:
        return {}
    found_tokens = [(tokens or _tokens(db, phrases))[p] for p in phrases]
    wanted = sorted({t for found in found_tokens for t in found})
    # one statement: the counts and the drift since them as of one moment
    drift = db.tuples(
        "SELECT added, removed, (SELECT json_group_object(term, messages) "
        f"FROM message_term_counts WHERE term IN ({', '.join('?' * len(wanted))})) "
        "FROM message_counts_drift",
        wanted,
    )
    if not drift:
        return {}
    added, removed, found_counts = drift[0]
    counts: dict[str, int] = json.loads(found_counts)
    bounds = {}
    for phrase, found in zip(phrases, found_tokens, strict=True):
        if found:
            held = [counts.get(t, 0) for t in found]
            low = held[0] - removed if len(found) == 1 else 0
            bounds[phrase] = (max(low, 0), min(held) + added)
    return bounds


def count_message_terms(db: Database) -> int:
    """Count each indexed word's messages afresh (``message_term_counts``) and start the
    drift since from nothing; how many words."""
    with db.atomic():
        db.execute("DELETE FROM message_term_counts")
        db.execute("INSERT INTO message_term_counts SELECT term, doc FROM messages_vocab")
        db.execute("INSERT OR REPLACE INTO message_counts_drift VALUES (1, 0, 0)")
        # imported here: numpy, which a capture or a forget of one session does not need
        from memctl.store.message_lengths import write_lengths

        write_lengths(db)
        return int(db.value("SELECT count(*) FROM message_term_counts"))


def counts_stale(db: Database) -> bool:
    """Whether any message was written or taken away since the words' messages were counted
    (or they never were)."""
    return db.value("SELECT added + removed FROM message_counts_drift") != 0


def _holds_at_least(db: Database, match: str, count: int) -> bool:
    """Whether ``count`` messages or more match the FTS5 expression ``match``."""
    return (
        db.value(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? LIMIT 1 OFFSET ?",
            (match, count - 1),
        )
        is not None
    )


# The columns of a MessageHit, of a message (alias ``msg``) and its session (``s``).
HIT_COLUMNS = (
    "msg.session_id AS session_id, msg.seq AS seq, msg.role AS role, "
    "msg.content AS content, msg.created_at AS created_at, s.scope AS scope, "
    "msg.speaker AS speaker"
)


def _ranked(
    db: Database, best: list[tuple[int, float]], limit: int, where: MemoryFilter
) -> list[MessageHit]:
    """The first ``limit`` of the ``best`` (rowid, bm25) matches, in their order, that pass
    ``where``."""
    if not best:
        return []
    clauses, params = message_clauses(where)
    rows = db.rows(
        f"SELECT msg.rowid AS id, {HIT_COLUMNS} FROM messages msg "
        "JOIN sessions s ON s.id = msg.session_id "
        f"WHERE msg.rowid IN (SELECT value FROM json_each(?)) AND {clauses}",
        [json.dumps([rowid for rowid, _ in best]), *params],
    )
    passing = {row.pop("id"): row for row in rows}
    kept = [(passing[rowid], score) for rowid, score in best if rowid in passing]
    return [MessageHit(**row, score=score) for row, score in kept[:limit]]


def _newest(db: Database, match: str | None, limit: int, where: MemoryFilter) -> list[MessageHit]:
    """The newest ``limit`` messages matching ``match`` that pass ``where``, among its newest
    ``limit`` x 4 matches (the index walked backwards, stopping early), scored 0."""
    if match is None:
        return []
    clauses, params = message_clauses(where)
    rows = db.rows(
        f"SELECT {HIT_COLUMNS}, 0.0 AS score FROM (SELECT rowid FROM messages_fts "
        "WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?) f "
        "JOIN messages msg ON msg.rowid = f.rowid JOIN sessions s ON s.id = msg.session_id "
        f"WHERE {clauses} ORDER BY f.rowid DESC LIMIT ?",
        [match, limit * 4, *params, limit],
    )
    return [MessageHit(**row) for row in rows]
