"""The best full-text matches of the memories, without scoring those that hold only one
common phrase (a MaxScore-style pruning, Turtle & Flood 1995).

FTS5's ``bm25()`` scores every row its query matches before ``ORDER BY ... LIMIT`` keeps
the best: at 100,000 memories a query holding "service" (in a quarter of them) scores
40,000 rows. A row's BM25 is the sum of each phrase's idf x f(k1 + 1) / (f + k1 x (1 - b
+ b x length / average)), and each term of that sum is below idf x (k1 + 1): a row that
holds only the common phrase scores below that bound. So the rows holding another phrase
are ranked first, in two searches: those holding the common phrase too (``A AND B``), and
those that do not (``A NOT B``). Both searches name every phrase once, in the order of the
full one, so FTS5 computes each row's score exactly as the full search does (the common
phrase adds 0.0 to a row without it). When the ``fetch``-th best of them scores above the
bound, no row holding only the common phrase can be among the best: those are the full
search's answer, tied scores in rowid order as FTS5 returns them. Otherwise (or when the
common phrase is neither the first nor the last, and the scores' sums would be added in
another order) the full search runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from memctl.lazy_re import lazy
from memctl.store.database import Database
from memctl.store.fts import fts_phrases

# FTS5's bm25() constants (sqlite's ext/fts5/fts5_aux.c): a phrase's weight in a row is
# below idf x (K1 + 1) whatever its frequency and the row's length.
K1 = 1.2
# idf floor in bm25(): a phrase most rows hold weighs this much
IDF_FLOOR = 1e-6
# The bound is compared with a margin far above the rounding of a sum of a few doubles.
MARGIN = 1e-9
# A phrase is left out of the first searches when at least COMMON_SHARE of the memories
# hold it (enough rows to spare), and COMMON_RATIO times as many as hold any other phrase:
# its idf is then lower than theirs by log 2 or more, so the best rows, which hold the
# others, tend to score above its bound. Measured on 100,000 synthetic memories
# (docs/benchmarks.md, ninth stop): "service" (27 %) beside phrases of 8 and 6 %, 26 -> 18
# ms; "replace" (7 %) beside one of 1.4 %, 5.3 -> 3.2 ms; "owns" beside "payments", as many,
# 8.5 -> 14.4 ms (the bound did not hold: three searches for one).
COMMON_SHARE = 0.05
COMMON_RATIO = 2

# A word FTS5's tokenizer keeps as one token whatever it is (unicode61 splits at anything
# else): its count is the count of the one-word phrase.
ONE_TOKEN = lazy(r"[a-z0-9]+")

SEARCH = (
    "SELECT rowid, bm25(memories_fts) AS score FROM memories_fts "
    "WHERE memories_fts MATCH ? ORDER BY score LIMIT ?"
)

Phrase = tuple[str, ...]


def best_matches(
    db: Database,
    phrases: Sequence[Sequence[str]],
    fetch: int,
    counts: Mapping[str, int] | None = None,
    rows: int = 0,
) -> list[tuple[int, float]]:
    """(rowid, bm25) of the ``fetch`` best memories matching any of ``phrases``, best first:
    FTS5's own answer. ``counts`` (a word -> how many memories hold it) and ``rows`` (at
    least as many as the memories) let a common one-word phrase be pruned."""
    match = fts_phrases(phrases)
    if match is None:
        return []
    distinct, held = _distinct(phrases), counts or {}
    common = _common(distinct, held, rows)
    if common is not None:
        pruned = _pruned(db, distinct, common, fetch, _bound(held, common, rows))
        if pruned is not None:
            return pruned
    return db.tuples(SEARCH, (match, fetch))


def _distinct(phrases: Sequence[Sequence[str]]) -> list[Phrase]:
    """The phrases as the FTS5 expression names them: distinct, in order."""
    return list(dict.fromkeys(tuple(p) for p in phrases if fts_phrases([p]) is not None))


def _common(phrases: list[Phrase], counts: Mapping[str, int], rows: int) -> Phrase | None:
    """The phrase to prune: the first or the last, held by at least COMMON_SHARE of the rows
    and COMMON_RATIO times as many as any other; None if none, or when a phrase's count is
    not known (each must be one word of one token, counted)."""
    if len(phrases) < 2 or rows <= 0:
        return None
    if not all(len(p) == 1 and ONE_TOKEN.fullmatch(p[0]) and p[0] in counts for p in phrases):
        return None
    known = [counts[p[0]] for p in phrases]
    for end in (0, len(phrases) - 1):
        others = known[:end] + known[end + 1 :]
        if known[end] >= max(COMMON_SHARE * rows, COMMON_RATIO * max(others)) and any(others):
            return phrases[end]
    return None


def _bound(counts: Mapping[str, int], common: Phrase, rows: int) -> float:
    """Above any BM25 of a row holding only ``common``: its idf (with ``rows``, at least the
    memories' count, the idf is at least FTS5's) x (K1 + 1), with MARGIN."""
    held = counts[common[0]]
    idf = max(math.log((rows - held + 0.5) / (held + 0.5)), IDF_FLOOR)
    return idf * (K1 + 1.0) * (1.0 + MARGIN)


def _pruned(
    db: Database, phrases: list[Phrase], common: Phrase, fetch: int, bound: float
) -> list[tuple[int, float]] | None:
    """The full search's answer from the two searches, or None when it cannot be shown to be."""
    others = fts_phrases([p for p in phrases if p != common])
    pruned = fts_phrases([common])
    both = f"{pruned} AND ({others})" if phrases[0] == common else f"({others}) AND {pruned}"
    without = f"({others}) NOT {pruned}"
    found = db.tuples(SEARCH, (both, fetch)) + db.tuples(SEARCH, (without, fetch))
    best = sorted(found, key=lambda hit: (hit[1], hit[0]))[:fetch]
    if len(best) < fetch or -best[-1][1] < bound:
        return None
    return best
