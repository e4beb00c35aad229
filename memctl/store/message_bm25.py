"""The best session messages for a query's words, scored from the messages' stored lengths
(store/message_lengths.py) and each word's postings: FTS5's own ``bm25()``, to the bit, ties
in rowid order.

FTS5's ``bm25()`` reads each row it scores from ``messages_fts_docsize`` (one statement
stepped a row: at 1,000,000 messages most of its ~0.55 us a row), so a word in 3.8 % of the
messages costs ~20 ms however few rows are wanted, and its pruning (store/pruned_bm25.py)
can skip only a word whose every row scores low whatever its length. Here a word's postings
(the rowid of each of its instances, from an ``instance`` fts5vocab table, ~0.1 us each)
and the rows' lengths are scored with the very operations of FTS5's fts5Bm25Function
(sqlite's ext/fts5/fts5_aux.c) in the same order, in float64, so each score is FTS5's bit
for bit (tests/store/test_message_lengths.py checks every row).

The stored lengths are written with the words' counts, when the drift triggers start from
nothing: while no message was taken away or changed since (``message_counts_drift.removed``
is 0) each length stored is its row's. A row written since (past the blobs, or where they
hold UNKNOWN) is read from ``messages_fts_docsize``. Whatever resets the drift must write
the lengths again.

numpy is imported at module level: only recall's messages leg imports this module.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np

from memctl.store.database import MESSAGES_FTS, Database
from memctl.store.message_lengths import BLOCK, BLOCK_SHIFT, DOCSIZE, SPARSE, UNKNOWN
from memctl.store.pruned_bm25 import IDF_FLOOR, K1, B, averages, varints

# FTS5's table of the messages' postings, one row a word's instance (doc, col, offset):
# in the connection's temporary schema, the store itself not written.
INSTANCES = "temp.message_instances"

Hits = list[tuple[int, float]]


def lengths_hold(db: Database) -> bool:
    """Whether every length stored is its row's: written, and no message taken away or
    changed since."""
    return db.value("SELECT removed FROM message_counts_drift") == 0


def best_messages(db: Database, terms: Sequence[str], fetch: int) -> Hits | None:
    """(rowid, bm25) of the ``fetch`` best messages holding any of ``terms`` (each one
    indexed token; the phrases of an FTS5 expression, in its order), best first, ties in
    rowid order: the full search's answer. None when the stored lengths may not be the
    rows' (``lengths_hold``), or inside a transaction (FTS5 keeps a writer's changes to its
    totals in memory)."""
    if db.connection.in_transaction:
        return None
    with db.reading():  # one snapshot: the drift, the totals, the postings, the lengths
        return _scored(db, terms, fetch) if lengths_hold(db) else None


def _scored(db: Database, terms: Sequence[str], fetch: int) -> Hits | None:
    """``best_messages``, its lengths holding; None when the rowids are too sparse (or
    below 0) for arrays indexed by them (``SPARSE``)."""
    counts = averages(db, MESSAGES_FTS)
    if len(counts) < 2 or counts[0] <= 0:
        return []
    rows, average = counts[0], sum(counts[1:]) / counts[0]
    db.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {INSTANCES} "
        f"USING fts5vocab(main, {MESSAGES_FTS}, 'instance')"
    )
    postings = [_postings(db, term) for term in terms]
    held = [p for p in postings if len(p[0])]
    if not held:
        return []
    if min(int(d[0]) for d, _ in held) < 0 or max(int(d[-1]) for d, _ in held) > SPARSE * rows:
        return None
    packed = _packed(db, np.concatenate([docs for docs, _ in held]))
    score, found = np.zeros(len(packed)), np.zeros(len(packed), dtype=bool)
    for docs, freq in held:  # each phrase in its order, as fts5Bm25Function adds them
        length = _lengths(db, packed, docs)
        idf = math.log((rows - len(docs) + 0.5) / (len(docs) + 0.5))
        idf = idf if idf > 0.0 else IDF_FLOOR
        score[docs] += idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / average)))
        found[docs] = True
    docs = np.flatnonzero(found)
    ranked = -1.0 * score[docs]
    if len(docs) > fetch:
        # a sort, not np.partition: its selection slows tenfold on the many tied scores
        kth = np.sort(ranked)[fetch - 1]
        kept = np.flatnonzero(ranked <= kth)
        docs, ranked = docs[kept], ranked[kept]
    order = np.lexsort((docs, ranked))[:fetch]
    return list(zip(docs[order].tolist(), ranked[order].tolist(), strict=True))


def _postings(db: Database, term: str) -> tuple[np.ndarray, np.ndarray]:
    """The rowids of the messages holding ``term`` (an indexed token), ascending, and how
    many times each holds it (float64, as bm25() counts), from ``INSTANCES``."""
    # one text of every instance's rowid: a row a posting costs ~2.5 times as much
    listed = db.value(f"SELECT group_concat(doc) FROM {INSTANCES} WHERE term = ?", (term,))
    every = np.fromstring(listed or "", dtype=np.int64, sep=",")
    if len(every) > 1 and not bool(np.all(every[1:] >= every[:-1])):
        every = np.sort(every)
    if not len(every):
        return every, np.zeros(0)
    starts = np.flatnonzero(np.concatenate(([True], every[1:] != every[:-1])))
    return every[starts], np.diff(np.append(starts, len(every))).astype(np.float64)


def _packed(db: Database, docs: np.ndarray) -> np.ndarray:
    """The stored lengths of the blocks ``docs`` fall in, indexed by rowid, up to the last of
    ``docs`` (UNKNOWN where none is stored)."""
    blocks = np.flatnonzero(np.bincount(docs >> BLOCK_SHIFT)).tolist()
    packed = np.full(int(docs.max()) + 1, UNKNOWN, dtype=np.uint16)
    for block, blob in db.tuples(
        "SELECT block, lengths FROM message_lengths "
        f"WHERE block IN ({', '.join('?' * len(blocks))})",
        blocks,
    ):
        stored = np.frombuffer(blob, "<u2")[: len(packed) - block * BLOCK]
        packed[block * BLOCK : block * BLOCK + len(stored)] = stored
    return packed


def _lengths(db: Database, packed: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """The lengths in tokens of the messages ``docs`` (float64): ``packed``'s, else their
    docsize records'."""
    length = packed[docs].astype(np.float64)
    unknown = np.flatnonzero(length == UNKNOWN)
    if len(unknown):
        read = dict(
            db.tuples(
                f"SELECT id, sz FROM {DOCSIZE} WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(docs[unknown].tolist()),),
            )
        )
        exact = [(varints(read.get(int(doc), b"")) or [0])[0] for doc in docs[unknown]]
        length[unknown] = np.array(exact, dtype=np.float64)
    return length
