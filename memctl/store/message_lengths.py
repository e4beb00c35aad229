"""The session messages' lengths in tokens, kept beside their full-text index
(``message_lengths``, m034): one blob of BLOCK two-byte lengths a block of rowids, written
with the words' counts (``count_message_terms``) from FTS5's own records of them
(``messages_fts_docsize``). store/message_bm25.py scores a word's messages from them.

Imported by a migration: it names its tables itself and needs of the store's connection only
statements (``migrations.Database``), never store/database.py (which runs the migrations).
numpy is imported at module level: only recall's messages leg and maintain import this module.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

# Rows a blob of ``message_lengths`` holds (two bytes each: 128 KiB a blob).
BLOCK = 65_536
BLOCK_SHIFT = 16
# A length the array does not hold (a row not there when it was written, or of 65,535 tokens
# or more): read from ``messages_fts_docsize``.
UNKNOWN = 0xFFFF
# The most bytes of a length's varint decoded here: three hold 2**21 - 1, past UNKNOWN.
VARINT_BYTES = 3
# Arrays indexed by rowid (these blobs; recall's scores, store/message_bm25.py) are made only
# while the rowids reach at most this many times the messages: only rowids written by hand
# could be sparser, and FTS5 then scores alone.
SPARSE = 16
# FTS5's record of each message's length in tokens (one varint a column: one column).
DOCSIZE = "messages_fts_docsize"


class Statements(Protocol):
    """What writing the lengths needs of a connection (a migration's, or the store's)."""

    def execute(self, sql: str, params: Any = ()) -> None: ...

    def tuples(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]: ...


def write_lengths(db: Statements) -> None:
    """Write every message's length afresh (inside the caller's transaction, with the
    drift's reset). A backup older than m034 has no table for them: nothing to write."""
    if not db.tuples("SELECT 1 FROM sqlite_master WHERE name = 'message_lengths'"):
        return
    db.execute("DELETE FROM message_lengths")
    count, low, top = db.tuples(f"SELECT count(*), min(id), max(id) FROM {DOCSIZE}")[0]
    if not count or low < 0 or top > SPARSE * count:
        return  # none to write, or rowids too sparse for blocks: every length is FTS5's
    first = low
    while first is not None:  # only the blocks some message is in
        block = int(first) >> BLOCK_SHIFT
        rows = db.tuples(
            f"SELECT id, sz FROM {DOCSIZE} WHERE id >= ? AND id <= ?",
            (block * BLOCK, block * BLOCK + BLOCK - 1),
        )
        lengths = np.full(BLOCK, UNKNOWN, dtype="<u2")
        ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        lengths[ids - block * BLOCK] = _first_varints([row[1] for row in rows])
        db.execute(
            "INSERT INTO message_lengths (block, lengths) VALUES (?, ?)",
            (block, lengths.tobytes()),
        )
        first = db.tuples(f"SELECT min(id) FROM {DOCSIZE} WHERE id > ?", (rows[-1][0],))[0][0]


def _first_varints(blobs: list[bytes]) -> np.ndarray:
    """Each blob's first varint (a docsize record's: the row's tokens), capped at UNKNOWN;
    UNKNOWN for one longer than VARINT_BYTES."""
    sizes = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    flat = np.frombuffer(b"".join(blobs) + bytes(VARINT_BYTES), dtype=np.uint8).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    value = np.zeros(len(blobs), dtype=np.int64)
    going = np.ones(len(blobs), dtype=bool)  # still reading this varint
    for k in range(VARINT_BYTES):
        byte = flat[starts + k]
        value = np.where(going, value << 7 | byte & 0x7F, value)
        going &= byte >= 0x80
    value[going | (sizes == 0)] = UNKNOWN
    return np.minimum(value, UNKNOWN)
