"""How close in meaning an unrelated memory comes to this query on this store: the bar a
memory's cosine must clear for its meaning alone to show the query is about it.

A fixed floor belongs to one store size: the more memories a store holds, the closer
its nearest unrelated one comes to any question (a 1,000-memory store let 17-20 % of
unrelated questions through floors chosen on 30 memories; docs/benchmarks.md, "The
store's noise bar"). The query's cosines over the store are its noise; the largest of
``n`` draws from a normal distribution lies about ``sqrt(2 ln n)`` standard deviations
above their mean (the classic extreme-value bound), so a memory that answers the query
must stand above ``mean + sqrt(2 ln n) x std`` of the query's cosines over the ``n``
memories. The bar moves with the query (a chat question is close to every chat turn; a
developer's question to none of them) and with the store's size, with no constant tuned
to a benchmark's questions.

The cosines are those of every live row up to the exact search's size, else of at most
SAMPLE_ROWS rows spread evenly over the index, so the bar costs the same at 100,000
memories as at 4,096.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from memctl.store.vector_query import Scores

# Rows the query's mean and spread are estimated from at most (evenly spaced over the live
# rows): as retrieve/centre.py, within ~1/64 of a spread of the whole store's.
SAMPLE_ROWS = 4096
# Fewer memories than this have no spread to speak of: no bar (one memory, or two, is
# all the store there is; the fixed floors judge them).
MIN_ROWS = 3


def noise_bar(scores: Scores | None) -> float | None:
    """``mean + sqrt(2 ln n) x std`` of the query's cosines over the ``n`` live memories, or
    None without vectors or with fewer than MIN_ROWS of them."""
    if scores is None or scores.total < MIN_ROWS:
        return None
    return bar_of(store_cosines(scores), scores.total)


def bar_of(cosines: np.ndarray, rows: int) -> float | None:
    """The bar for a store of ``rows`` memories whose cosines to the query (all or a
    sample) are ``cosines``."""
    if len(cosines) < MIN_ROWS:
        return None
    return float(cosines.mean()) + math.sqrt(2.0 * math.log(rows)) * float(cosines.std())


def store_cosines(scores: Scores) -> np.ndarray:
    """The query's cosine to every live row (an exact store), else to SAMPLE_ROWS of them."""
    live = np.flatnonzero(~scores.index.dead)
    if scores.exact or len(live) <= SAMPLE_ROWS:
        return np.asarray(scores.of(live), dtype=np.float64)
    picked = live[np.unique(np.linspace(0, len(live) - 1, SAMPLE_ROWS).astype(np.int64))]
    return np.asarray(scores.of(picked), dtype=np.float64)
