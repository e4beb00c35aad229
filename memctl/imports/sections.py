"""Markdown sections: a document cut at its ``#`` and ``##`` headings.

A section runs from its heading to the next ``#`` or ``##`` heading (deeper
headings stay inside it); text before the first heading is a section with
no heading. Lines in fenced code (```` ``` ```` or ``~~~``) are never
headings. A section longer than the split limit is smart-split into parts
(``memctl.imports.split``); a section that is only its heading is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memctl.imports.split import Splitter
from memctl.memories.markdown import HEADING, Headings

SECTION_LEVEL = 2


@dataclass(frozen=True)
class Section:
    heading: str  # '' for the text before the first heading
    text: str
    part: int = 0  # 1, 2, ... for the parts of a section that was split; 0 when whole

    @property
    def anchor(self) -> str:
        return f"{self.heading} (part {self.part})" if self.part else self.heading


def _has_body(text: str) -> bool:
    """True when a section holds more than its heading line."""
    first, _, rest = text.lstrip().partition("\n")
    return bool(rest.strip()) or not HEADING.match(first)


def sections(lines: Iterable[str], limit: int, overlap: int) -> Iterator[Section]:
    headings = Headings()
    heading, splitter, parts = "", Splitter(limit, overlap), 0
    for line in lines:
        found = headings.heading(line)
        if found is not None and found[0] <= SECTION_LEVEL:
            for text in splitter.finish():
                if _has_body(text):
                    yield Section(heading, text, parts + 1 if parts else 0)
            heading, splitter, parts = found[1], Splitter(limit, overlap), 0
        for text in splitter.feed(line):
            parts += 1
            yield Section(heading, text, parts)
    for text in splitter.finish():
        if _has_body(text):
            yield Section(heading, text, parts + 1 if parts else 0)
