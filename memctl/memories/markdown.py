"""Markdown's headings, read line by line: where an imported document is cut into
sections (``memctl.imports.sections``), and how a memory holding one reads on one line of
a context block (``memctl.retrieve.context_block``). Lines in fenced code (```` ``` ````
or ``~~~``) are never headings.
"""

from __future__ import annotations

import re

HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class Headings:
    """Reads lines in order and tells which are headings, minding fenced code."""

    def __init__(self) -> None:
        self._fence: str | None = None

    def heading(self, line: str) -> tuple[int, str] | None:
        """(level, text) when ``line`` is a heading outside fenced code."""
        fence = FENCE.match(line)
        if fence:
            mark = fence.group(1)[0]
            if self._fence is None:
                self._fence = mark
            elif self._fence == mark:
                self._fence = None
            return None
        found = None if self._fence else HEADING.match(line.rstrip("\r\n"))
        if found is None or not found.group(2).strip():
            return None
        return len(found.group(1)), found.group(2).strip()
