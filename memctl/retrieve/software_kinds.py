"""What a piece of software is: "Kafka" is distributed messaging, "RabbitMQ" a message broker.

``software_kinds.txt`` (beside this module; written by scripts/gen_software_kinds.py from
permissively licensed lists its header names) holds, for each of some 3,500 names of
software, what the lists say it is. A memory that names Kafka says nothing of messaging;
a person asks for "the event-streaming platform". ``kinds_named`` finds the names a text
mentions and what each is, for the text a memory's vector is made of
(``ingest/meaning.document_text``).

A name that is also an English word ("Celery", "Docker") counts only where it is written
as the name: in the file's spelling and not opening its sentence or what follows a colon
("Caroline: Hey Mel!", "Note: ..."), where any word is capitalised.

Pure functions over text; read once a process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from memctl.lazy_re import lazy
from memctl.retrieve.vocabulary import WORD, Phrase, phrase_of

KINDS_FILE = Path(__file__).with_name("software_kinds.txt")
AS_WRITTEN = "="  # the file's mark of a name found only as written
# Where a capitalised word says nothing: a sentence's start, and what follows a colon (a
# speaker's line, "Note: ...").
CLAUSE_END = lazy(r"[.!?]+(?:\s+|$)|\n+|:\s+")


@dataclass(frozen=True)
class SoftwareKinds:
    """Names found in any case, names found only as written (their words as spelt), and
    what each is; ``longest``: the most words of a name."""

    names: dict[Phrase, tuple[str, ...]]
    written: dict[tuple[str, ...], tuple[str, ...]]
    longest: int


def parse(text: str) -> SoftwareKinds:
    """The table written in ``text`` (the format of ``software_kinds.txt``)."""
    names: dict[Phrase, tuple[str, ...]] = {}
    written: dict[tuple[str, ...], tuple[str, ...]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        _, name, what = line.split("\t")
        labels = tuple(w.strip() for w in what.split("|") if w.strip())
        if name.startswith(AS_WRITTEN):
            if spelt := tuple(WORD.findall(name[1:])):
                written[spelt] = labels
        elif phrase := phrase_of(name):
            names[phrase] = labels
    longest = max((len(p) for p in (*names, *written)), default=1)
    return SoftwareKinds(names, written, longest)


@functools.cache
def software_kinds() -> SoftwareKinds:
    """The shipped table (read once a process)."""
    return parse(KINDS_FILE.read_text(encoding="utf-8"))


def kinds_named(text: str, table: SoftwareKinds | None = None) -> dict[str, tuple[str, ...]]:
    """Each name of software ``text`` mentions (as written there) -> what it is."""
    table = table or software_kinds()
    found: dict[str, tuple[str, ...]] = {}
    for sentence in CLAUSE_END.split(text):
        words = WORD.findall(sentence)
        index = 0
        while index < len(words):
            size = _name_at(table, words, index)
            if size:
                said = tuple(words[index : index + size])
                labels = table.names.get(tuple(w.lower() for w in said)) or table.written[said]
                found.setdefault(" ".join(said), labels)
                index += size
            else:
                index += 1
    return found


def _name_at(table: SoftwareKinds, words: list[str], start: int) -> int:
    """How many words the longest name at ``words[start]`` has (0: none)."""
    for size in range(min(table.longest, len(words) - start), 0, -1):
        said = tuple(words[start : start + size])
        if tuple(w.lower() for w in said) in table.names:
            return size
        if start > 0 and said in table.written:
            return size
    return 0
