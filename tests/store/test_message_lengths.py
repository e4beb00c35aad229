"""The messages' best matches scored from their stored lengths and each word's postings are
FTS5's own: every score to the bit, ties in its order (store/message_lengths.py,
store/message_bm25.py)."""

from __future__ import annotations

import random

import numpy as np

from memctl.context import Context
from memctl.model import Message, Role
from memctl.store import message_lengths, sessions
from memctl.store.database import MESSAGES_FTS
from memctl.store.fts import fts_phrases
from memctl.store.message_bm25 import best_messages, lengths_hold
from memctl.store.message_search import count_message_terms
from memctl.store.pruned_bm25 import search_of, varints
from tests.conftest import said_in_session

FILLER = ["the", "queue", "worker", "nightly", "config", "owner", "alerts", "retries", "api"]
# (the words searched, as the index holds them; as the FTS5 expression names them)
ASKED = [
    (["priya"], [("priya",)]),
    (["priya", "prefer", "tool"], [("priya",), ("prefers",), ("tools",)]),
    (["tool", "priya"], [("tools",), ("priya",)]),
    (["api", "prefer", "api"], [("api",), ("prefers",), ("APIs",)]),  # one token twice
    (["kubernet", "priya"], [("kubernetes",), ("priya",)]),  # a word no message holds
]


def _texts(rng: random.Random, count: int) -> list[str]:
    """``count`` texts of 1 to ~60 words, some repeated (tied scores), some saying a word
    several times: "priya" in every 3rd, "prefers" in every 4th, "tools" in every 7th."""
    texts = []
    for n in range(count):
        words = rng.choices(FILLER, k=rng.choice([1, 2, 3, 6, 12, 40]))
        words += ["priya"] * (n % 3 == 0) * rng.randint(1, 3) + ["prefers"] * (n % 4 == 0)
        words += ["tools"] * (n % 7 == 0)
        texts.append(" ".join(words) if n % 9 else "priya prefers tools")
    return texts


def _said(ctx: Context, texts: list[str], session: str) -> None:
    with ctx.db.atomic():
        sessions.insert_messages(
            ctx.db,
            [Message(Role.USER, t, session_id=session, seq=n) for n, t in enumerate(texts, 1)],
        )


def _same_as_fts5(ctx: Context) -> None:
    """Every asked set's best, at several depths and at every row, is FTS5's full search's."""
    for terms, phrases in ASKED:
        for fetch in (1, 5, 40, 10_000):
            expected = ctx.db.tuples(search_of(MESSAGES_FTS), (fts_phrases(phrases), fetch))
            # equal to the bit, not close: a rank among tied or near scores depends on it
            assert best_messages(ctx.db, terms, fetch) == expected, (phrases, fetch)


def test_scores_from_stored_lengths_are_fts5s_own_through_later_writes(ctx: Context) -> None:
    rng = random.Random(5)
    said_in_session(ctx, _texts(rng, 300))
    count_message_terms(ctx.db)
    assert lengths_hold(ctx.db)
    _same_as_fts5(ctx)
    # written after the lengths: past the array, read from FTS5's own records
    said_in_session(ctx, _texts(rng, 60), "s2")
    assert lengths_hold(ctx.db)
    _same_as_fts5(ctx)


def test_a_message_taken_away_or_changed_leaves_the_lengths_unused_till_counted(
    ctx: Context,
) -> None:
    said_in_session(ctx, _texts(random.Random(6), 50))
    assert not lengths_hold(ctx.db), "never counted"
    count_message_terms(ctx.db)
    assert lengths_hold(ctx.db)
    with ctx.db.atomic():
        ctx.db.execute("UPDATE messages SET content = 'priya' WHERE seq = 2")
    assert not lengths_hold(ctx.db)
    count_message_terms(ctx.db)
    assert lengths_hold(ctx.db)
    _same_as_fts5(ctx)
    with ctx.db.atomic():  # a writer's totals, FTS5's to read
        assert best_messages(ctx.db, ["priya"], 5) is None


def test_stored_lengths_decode_every_varint_size(ctx: Context) -> None:
    """Lengths of one, two and three varint bytes as FTS5 writes them, the longest capped."""
    lengths = [0, 1, 127, 128, 300, 16_383, 16_384, 65_534, 65_535, 70_000, 2**21, 2**28]
    blobs = [_varint(n) for n in lengths]
    assert [varints(b)[0] for b in blobs] == lengths
    decoded = message_lengths._first_varints(blobs).tolist()
    unknown = message_lengths.UNKNOWN
    assert decoded == [min(n, unknown) for n in lengths]


def test_the_lengths_written_are_fts5s_docsize_records(ctx: Context) -> None:
    said_in_session(ctx, _texts(random.Random(8), 120))
    count_message_terms(ctx.db)
    records = ctx.db.tuples(f"SELECT id, sz FROM {MESSAGES_FTS}_docsize")
    blob = ctx.db.value("SELECT lengths FROM message_lengths WHERE block = 0")
    stored = np.frombuffer(blob, "<u2")
    assert [int(stored[rowid]) for rowid, _ in records] == [varints(sz)[0] for _, sz in records]
    assert int(stored[0]) == message_lengths.UNKNOWN  # no message 0


def _varint(value: int) -> bytes:
    """SQLite's varint of ``value`` (below 2**56)."""
    groups = [value & 0x7F]
    while value := value >> 7:
        groups.append(value & 0x7F | 0x80)
    return bytes(reversed(groups))


def test_rowids_too_sparse_for_arrays_leave_every_score_to_fts5(ctx: Context) -> None:
    """A rowid written by hand far past the others: no blob is written, the search is FTS5's."""
    said_in_session(ctx, _texts(random.Random(9), 40))
    with ctx.db.atomic():
        ctx.db.execute(
            "INSERT INTO messages (rowid, session_id, seq, role, content, created_at, "
            "content_hash) VALUES (?, 's1', 999, 'user', 'priya prefers tools', '', '')",
            (10**12,),
        )
    count_message_terms(ctx.db)
    assert ctx.db.value("SELECT count(*) FROM message_lengths") == 0
    assert best_messages(ctx.db, ["priya"], 5) is None
