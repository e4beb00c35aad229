"""A long text's passages: the windows of it in which the relevance gate counts a long
session message's share of the query's words.

A long message (a sub-agent's 7-13 KB report) holds many of a query's
words by its length alone, scattered through it; an answer holds them in one place. So
its words show the query is about it by the best window's share, not the whole text's
(passage retrieval, Callan 1994: fixed windows, each starting half a window after the
one before, so that no answer is cut in two by every window).
"""

from __future__ import annotations

# A window's size: the span of a long message its vectors are embedded from (two parts of
# 800 characters, ingest/message_vectors.py), so that its words and its meaning are weighed
# over the same span. Measured 400, 800 and 1,600 (docs/benchmarks.md, "A long message is
# clear by one passage"): below 1,600 answers spread over 1,000-2,000 characters (a
# closing summary) lost their clear label.
PASSAGE_CHARS = 1600


def passages(text: str, size: int = PASSAGE_CHARS) -> list[str]:
    """``text`` in windows of at most ``size`` characters, cut at whitespace (inside a word
    longer than half a window), each starting half a window after the one before; the
    text itself when it fits in one."""
    if len(text) <= size:
        return [text]
    windows = []
    start = 0
    while True:
        if start + size >= len(text):
            windows.append(text[start:])
            return windows
        windows.append(text[start : _cut(text, start + size, size)])
        start = max(_cut(text, start + size // 2, size), start + 1)


def _cut(text: str, at: int, size: int) -> int:
    """The last whitespace at or before ``at`` and after ``at - size // 2``, else ``at``."""
    space = max(text.rfind(" ", 0, at + 1), text.rfind("\n", 0, at + 1))
    return space if space > at - size // 2 else at
