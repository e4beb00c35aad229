"""A long text's passages: the windows of it that recall scores a long session message by.

A long message (an 885-2,400-character closing summary, a sub-agent's 3-8 KB report) holds
the answer in one of its parts, and many of the query's words by its length alone: its
share of the query's words is a window's, the best one's, not the whole text's (passage
retrieval, Callan 1994: fixed windows, each starting half a window after the one before,
so that no answer is cut in two by every window).
"""

from __future__ import annotations

# A window's size: MemPalace's exchange chunks, the size a message's vectors are embedded in
# (ingest/message_vectors.py), under MiniLM's 256-token window; so words and meaning score
# the same span of a long message.
PASSAGE_CHARS = 800


def passages(text: str, size: int = PASSAGE_CHARS) -> list[str]:
    """``text`` in windows of at most ``size`` characters, cut at whitespace (inside a word
    longer than a window), each starting half a window after the one before; the text
    itself when it fits in one."""
    if len(text) <= size:
        return [text]
    windows = []
    start = 0
    while start < len(text):
        end = _cut(text, start + size, size) if start + size < len(text) else len(text)
        windows.append(text[start:end])
        if end >= len(text):
            break
        start = max(_cut(text, start + size // 2, size), start + 1)
    return windows


def _cut(text: str, at: int, size: int) -> int:
    """The last whitespace at or before ``at`` and after ``at - size // 2``, else ``at``."""
    space = max(text.rfind(" ", 0, at + 1), text.rfind("\n", 0, at + 1))
    return space if space > at - size // 2 else at
