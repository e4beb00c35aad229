"""Detect: what a file is (its format) and, for a document, how to distil it (its strategy).

``survey`` reads a file once, to the end: its format from the name and the
first 64 KiB, its SHA-256 (what makes a re-import a no-op), and for a
document the counts the strategy is chosen by. With ``--strategy auto``:

1. ``import.conversation_lines`` (3) or more lines start with a role
   (``user:``, ``assistant:``, ``human:``, ``ai:``): a conversation, **atomic**
   (facts extracted from what the user said);
2. more than ``import.split_chars`` (80,000) characters: **atomic**, over a
   smart split into chunks;
3. a ``#`` or ``##`` heading and ``import.section_words`` (500) words or more:
   **section**, one memory per section;
4. otherwise **document**, one memory for the whole text.

Chat exports are always atomic, and other tools' memories are imported a
record at a time (``records``); memctl's own formats keep their ids (``native``);
an assistant's session transcript is taken in as ``memctl ingest`` takes it (``ingest``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import ModuleType

from memctl.config import Settings
from memctl.errors import InputError
from memctl.imports import STRATEGIES, formats
from memctl.imports.files import WHAT, Progress, Target
from memctl.imports.formats.base import Kind, lines
from memctl.imports.report import INGEST
from memctl.imports.sections import SECTION_LEVEL
from memctl.memories.markdown import Headings
from memctl.memories.privacy import safe_line

AUTO, ATOMIC, SECTION, DOCUMENT = STRATEGIES
RECORDS, NATIVE = "records", "native"
ROLE_LINE = re.compile(r"^\s*(?:user|assistant|human|ai)\s*:", re.I)
WORD = re.compile(r"[\u3400-\u9fff]|[^\s\u3400-\u9fff]+")
# Replacement characters in a head this share or more of it: not text, whatever its bytes.
BINARY_SHARE = 0.1


@dataclass
class Counts:
    """What the strategy is chosen by, counted over a document's body."""

    chars: int = 0
    words: int = 0
    role_lines: int = 0
    headings: int = 0  # '#' and '##' headings outside fenced code
    title: str = ""  # the first '#' heading

    def count(self, line: str, headings: Headings) -> None:
        self.chars += len(line)
        self.words += len(WORD.findall(line))
        self.role_lines += bool(ROLE_LINE.match(line))
        found = headings.heading(line)
        if found is not None and found[0] <= SECTION_LEVEL:
            self.headings += 1
            if found[0] == 1 and not self.title:
                self.title = found[1]


@dataclass
class Survey:
    """A file as the first read found it."""

    format: ModuleType
    label: str
    sha256: str
    bytes: int
    counts: Counts = field(default_factory=Counts)
    title: str = ""

    @property
    def kind(self) -> Kind:
        return Kind(self.format.KIND)


def survey(target: Target, progress: Progress | None = None) -> Survey:
    """Read ``target`` once: format, hash, size and (for a document) its counts."""
    with target.open(progress) as reading:
        head = reading.head_text
        if head.count("\ufffd") >= BINARY_SHARE * len(head):
            raise InputError(f"{target.name} holds binary data, not {WHAT}")
        module = formats.detect(target.name, head)
        found = Survey(module, formats.label(module, target.name), "", 0)
        if module.KIND == Kind.TEXT:
            doc = module.read(reading)
            headings = Headings()
            for line in lines(doc.pieces):
                found.counts.count(line, headings)
            found.title = safe_line(doc.title or found.counts.title, 200)
        found.sha256, found.bytes = reading.digest(), reading.tap.bytes
    return found


def strategy(found: Survey, asked: str, settings: Settings) -> tuple[str, str]:
    """(strategy, why) for a surveyed file."""
    if found.kind == Kind.CHAT:
        return ATOMIC, "a chat export"
    if found.kind == Kind.RECORDS:
        return RECORDS, "memories of another tool"
    if found.kind == Kind.NATIVE:
        return NATIVE, "memctl's own memories, ids kept"
    if found.kind == Kind.SESSION:
        return INGEST, "an assistant's session, taken in as `memctl ingest` takes it"
    counts = found.counts
    if asked != AUTO:
        return asked, "asked for"
    if counts.role_lines >= settings.import_conversation_lines:
        return ATOMIC, f"a conversation ({counts.role_lines} lines start with a role)"
    if counts.chars > settings.import_split_chars:
        return ATOMIC, f"{counts.chars:,} characters, split into chunks"
    if counts.headings and counts.words >= settings.import_section_words:
        return SECTION, f"{counts.headings} headings, {counts.words:,} words"
    if counts.headings:
        return DOCUMENT, f"{counts.words} words (fewer than {settings.import_section_words})"
    return DOCUMENT, "no headings"
