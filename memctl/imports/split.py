"""The smart split: a text too long for one pass cut into overlapping chunks.

Chunks hold at most ``limit`` characters, and each after the first starts
``overlap`` characters before the previous one ended, so a fact on a
boundary is whole in one of them. A chunk ends where the text breaks best,
looking back from ``limit``: right before a Markdown heading, else after a
blank line, else after a line break, else at ``limit`` itself (a hard cut).
Only places past ``overlap`` count, so every chunk moves the text on.

``Splitter`` works on a stream: it keeps at most a chunk and a piece.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from memctl.errors import ConfigError

HEADING_START = re.compile(r"\n(?=#{1,6}[ \t])")
BLANK_LINE = re.compile(r"\n[ \t]*\n")


def cut_point(text: str, limit: int, overlap: int) -> int:
    """Where the first chunk of ``text`` (longer than ``limit``) should end."""
    window = text[:limit]
    for pattern in (HEADING_START, BLANK_LINE):
        found = list(pattern.finditer(window, overlap))
        if found:
            last = found[-1]
            # before a heading: after its line break; after a blank line: after it
            end = last.start() + 1 if pattern is HEADING_START else last.end()
            if end > overlap:
                return end
    newline = window.rfind("\n", overlap)
    return newline + 1 if newline >= overlap else limit


class Splitter:
    """Feed text in pieces; get back chunks of at most ``limit`` characters."""

    def __init__(self, limit: int, overlap: int) -> None:
        if not 0 <= overlap < limit // 2:
            raise ConfigError(
                f"import.split_overlap ({overlap}) must be less than half of "
                f"import.split_chars ({limit})"
            )
        self.limit, self.overlap = limit, overlap
        self._buffer = ""

    def feed(self, text: str) -> Iterator[str]:
        """The chunks completed by this text."""
        self._buffer += text
        while len(self._buffer) > self.limit:
            end = cut_point(self._buffer, self.limit, self.overlap)
            yield self._buffer[:end]
            self._buffer = self._buffer[end - self.overlap :]

    def finish(self) -> Iterator[str]:
        """The last chunk, if the text left one with anything in it."""
        if self._buffer.strip():
            yield self._buffer
        self._buffer = ""


def split(pieces: Iterable[str], limit: int, overlap: int) -> Iterator[str]:
    """A text given in pieces as chunks; a text within ``limit`` is one chunk."""
    splitter = Splitter(limit, overlap)
    for piece in pieces:
        yield from splitter.feed(piece)
    yield from splitter.finish()
