"""A long text's passages: the windows of it in which the relevance gate counts a long
session message's share of the query's words.

A long message (a sub-agent's 7-13 KB report) holds many of a query's
words by its length alone, scattered through it; an answer holds them in one place. So
its words show the query is about it by the best window's share, not the whole text's
(passage retrieval, Callan 1994: fixed windows, each starting half a window after the
one before, so that no answer is cut in two by every window).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate

# A window's size: the span of a long message its vectors are embedded from (two parts of
# 800 characters, ingest/message_vectors.py), so that its words and its meaning are weighed
# over the same span. Measured 400, 800 and 1,600 (docs/benchmarks.md, "A long message is
# clear by one passage"): below 1,600 answers spread over 1,000-2,000 characters (a
# closing summary) lost their clear label. Latin characters: another script's are counted by
# tokens (``widths``), as 1,600 Chinese characters hold about three times the words.
PASSAGE_CHARS = 1600


def passages(
    text: str, size: int = PASSAGE_CHARS, widths: Sequence[float] | None = None
) -> list[str]:
    """``text`` in windows of at most ``size`` characters, cut at whitespace (inside a word
    longer than half a window), each starting half a window after the one before; the
    text itself when it fits in one. ``widths``, one a character, measure the text instead
    (``pack.latin_widths``: a Chinese character as the Latin characters that make as many
    tokens), so that a window of any script holds about as many words."""
    reach = _reach(text, widths)
    if reach(0, size) >= len(text):
        return [text]
    windows = []
    start = 0
    while True:
        end = reach(start, size)
        if end >= len(text):
            windows.append(text[start:])
            return windows
        windows.append(text[start : _cut(text, end, reach(start, size - size // 2))])
        half = reach(start, size // 2)
        start = max(_cut(text, half, start), start + 1)


def measured(text: str, widths: Sequence[float] | None) -> float:
    """``text``'s length in ``passages``' measure."""
    return len(text) if widths is None else sum(widths)


def _reach(text: str, widths: Sequence[float] | None) -> Callable[[int, int], int]:
    """A function of ``start`` and ``amount``: where the longest span of ``text`` from
    ``start`` measuring at most ``amount`` ends."""
    if widths is None:
        return lambda start, amount: min(start + amount, len(text))
    ends = list(accumulate(widths, initial=0.0))
    return lambda start, amount: bisect_right(ends, ends[start] + amount) - 1


def _cut(text: str, at: int, floor: int) -> int:
    """The last whitespace at or before ``at`` and after ``floor``, else ``at``."""
    space = max(text.rfind(" ", 0, at + 1), text.rfind("\n", 0, at + 1))
    return space if space > floor else at
