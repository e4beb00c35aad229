"""The best full-text matches of the memories (or the session messages, or the questions
stored with memories: any FTS5 table whose words' counts are known), without scoring every row
that holds only one of the query's words (a MaxScore-style pruning, Turtle & Flood 1995).

FTS5's ``bm25()`` scores every row its query matches before ``ORDER BY ... LIMIT`` keeps
the best: at 100,000 memories a query of four words each in 7 % of them scores some 25,000
rows. A row's BM25 is the sum of each phrase's idf x f(k1 + 1) / (f + k1 x (1 - b + b x
length / average)), and as a row is at least as long as f, each term of that sum is below
idf x (k1 + 1) / (1 + k1 x b / average): a row that holds only one phrase scores below that
phrase's bound (in stored questions of 10 words, 2.0 x idf where idf x (k1 + 1) alone pruned
almost no query: docs/benchmarks.md). So the rows are searched in parts that do not overlap:
those holding two phrases or more (phrase i and a later one, none before it: one search for
each phrase but the last), then, alone, each phrase in turn from the highest bound down while
its bound is not below the weakest of the best rows so far (a rare word's rows are few).
Every search names every phrase once, in the order of the full one: FTS5 adds each
row's phrase terms in that order and a phrase the row lacks adds exactly 0.0, so each row
scores exactly as in the full search. Once the ``fetch``-th best of the parts scores above
the bound of every phrase not searched alone, no row holding only such a phrase can be among
the best: those are the full search's answer, tied scores in rowid order as FTS5 returns
them. The parts score no row twice, so never more rows than the full search does (at
1,000,000 messages bm25() costs ~0.6 us a row it scores, stepping over a posting some 20
times less): once begun they are finished, never given up for the full search, which would
score again every row the first parts scored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from memctl.lazy_re import lazy
from memctl.store.database import MEMORIES_FTS, Database
from memctl.store.fts import fts_phrases

# FTS5's bm25() constants (sqlite's ext/fts5/fts5_aux.c): a phrase found f times in a row of
# D tokens weighs idf x f(K1 + 1) / (f + K1 x (1 - B + B x D / the average D)); as D >= f, that
# is below idf x (K1 + 1) / (1 + K1 x B / the average D) whatever f and D (``_bound``).
K1 = 1.2
B = 0.75
# idf floor in bm25(): a phrase most rows hold weighs this much
IDF_FLOOR = 1e-6
# The bound is compared with a margin far above the rounding of a sum of a few doubles.
MARGIN = 1e-9
# A word FTS5's tokenizer keeps as one token whatever it is (unicode61 splits at anything
# else): its count is the count of the one-word phrase.
ONE_TOKEN = lazy(r"[a-z0-9]+")


def search_of(table: str) -> str:
    """The full search of the FTS5 table ``table``: (rowid, bm25) of the best rows matching
    an expression, best first, at most a number of them."""
    return (
        f"SELECT rowid, bm25({table}) AS score FROM {table} "
        f"WHERE {table} MATCH ? ORDER BY score LIMIT ?"
    )


# FTS5's averages record: the rowid of the row of its %_data table holding it (fts5Int.h)
AVERAGES = 1

Phrase = tuple[str, ...]
Hits = list[tuple[int, float]]


def best_matches(
    db: Database,
    phrases: Sequence[Sequence[str]],
    fetch: int,
    counts: Mapping[str, int] | None = None,
    rows: int = 0,
    table: str = MEMORIES_FTS,
) -> Hits:
    """(rowid, bm25) of the ``fetch`` best memories matching any of ``phrases``, best first:
    FTS5's own answer. ``counts`` (a word -> how many memories hold it, or fewer) and
    ``rows`` (at least as many as the memories) let the rows holding one common phrase alone
    be pruned. ``table``: another full-text table (the session messages', MESSAGES_FTS; the
    stored questions', QUESTIONS_FTS), the counts and rows then its own."""
    match = fts_phrases(phrases)
    if match is None:
        return []
    distinct, held, search = _distinct(phrases), counts or {}, search_of(table)
    if not _countable(distinct, held, rows):
        return db.tuples(search, (match, fetch))
    average = average_length(db, table)
    bounds = [_bound(held[p[0]], rows, average) for p in distinct]
    return _pruned(db, search, distinct, bounds, fetch)


def _distinct(phrases: Sequence[Sequence[str]]) -> list[Phrase]:
    """The phrases as the FTS5 expression names them: distinct, in order."""
    return list(dict.fromkeys(tuple(p) for p in phrases if fts_phrases([p]) is not None))


def _countable(phrases: list[Phrase], counts: Mapping[str, int], rows: int) -> bool:
    """Whether every phrase's count is known (each one word of one token, counted), for two
    phrases or more."""
    return (
        len(phrases) >= 2
        and rows > 0
        and all(len(p) == 1 and ONE_TOKEN.fullmatch(p[0]) and p[0] in counts for p in phrases)
    )


def _bound(held: int, rows: int, average: float) -> float:
    """Above any BM25 of a row holding only a phrase ``held`` memories hold: its idf (with
    ``rows``, at least the memories' count, the idf is at least FTS5's) x (K1 + 1) / (1 + K1
    x B / ``average``, the rows' average length), with MARGIN."""
    idf = max(math.log((rows - held + 0.5) / (held + 0.5)), IDF_FLOOR)
    return idf * (K1 + 1.0) / (1.0 + K1 * B / average) * (1.0 + MARGIN)


def average_length(db: Database, table: str) -> float:
    """The average length in tokens of the rows of the full-text table ``table``, as its
    bm25() reads it from its averages record (varints: the rows, then each column's tokens);
    infinite (the bound is then idf x (K1 + 1)) when it has none, or inside a transaction:
    FTS5 keeps a transaction's changes to it in memory and writes them at its commit."""
    if db.connection.in_transaction:
        return math.inf
    counts = averages(db, table)
    if len(counts) < 2 or counts[0] <= 0:
        return math.inf
    return sum(counts[1:]) / counts[0]


def averages(db: Database, table: str) -> list[int]:
    """The averages record of the full-text table ``table`` as bm25() reads it: its rows, then
    each column's tokens (empty when it has none)."""
    record = db.value(f"SELECT block FROM {table}_data WHERE id = ?", (AVERAGES,))
    return varints(bytes(record or b""))


def varints(data: bytes) -> list[int]:
    """SQLite's varints (sqlite3GetVarint): big-endian, seven bits a byte while its top bit is
    set, all eight of a ninth."""
    values, at = [], 0
    while at < len(data):
        value = 0
        for size in range(1, 10):
            byte, at = data[at], at + 1
            value = (value << 8 | byte) if size == 9 else (value << 7 | byte & 0x7F)
            if byte < 0x80 or size == 9 or at == len(data):
                break
        values.append(value)
    return values


def _pruned(
    db: Database, search: str, phrases: list[Phrase], bounds: list[float], fetch: int
) -> Hits:
    """The full search's answer from its parts: the rows holding two phrases or more, then
    those holding one alone, the highest bound first, while it may reach the best."""
    quoted = [fts_phrases([p]) or "" for p in phrases]
    found: Hits = []
    for i in range(len(quoted) - 1):  # phrase i and a later one, none before it
        both = f"{quoted[i]} AND ({' OR '.join(quoted[i + 1 :])})"
        match = f"({both}) NOT ({' OR '.join(quoted[:i])})" if i else both
        found += db.tuples(search, (match, fetch))
    for i in sorted(range(len(quoted)), key=lambda i: -bounds[i]):
        if bounds[i] < _floor(found, fetch):
            break  # nor can any phrase after it: its bound is lower still
        others = " OR ".join(quoted[:i] + quoted[i + 1 :])
        found += db.tuples(search, (f"{quoted[i]} NOT ({others})", fetch))
    return sorted(found, key=lambda hit: (hit[1], hit[0]))[:fetch]


def _floor(found: Hits, fetch: int) -> float:
    """The ``fetch``-th best score of ``found`` (as a positive BM25), or -inf with fewer."""
    if len(found) < fetch:
        return -math.inf
    return -sorted(score for _, score in found)[fetch - 1]
