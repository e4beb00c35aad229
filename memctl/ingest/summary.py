"""What a client's compaction summary says, by section: the request, the errors met and
how each was fixed, and what was left to do.

A compaction summary (``[session summary]``, see ``parse.common.session_summary``) is the
assistant's own account of the conversation so far, written in headed sections (Claude
Code's: "Primary Request and Intent", "Errors and fixes", "Pending Tasks", "Current
Work", ...). A section is known by its heading's words, in any numbering or markdown;
its items are its list items (markdown emphasis dropped), or for a request its first
sentences. Sections of other names (files, concepts, the user's messages) are left to
the rest of the session, which said them first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memctl.ingest.rule_sentences import sentences
from memctl.lazy_re import lazy

# a heading line, unindented: "4. Errors and fixes:", "## Pending Tasks", "**Current Work**"
HEADING_WIDTH = 70
NUMBERING = lazy(r"^\d{1,2}[.)]\s+")
ITEM = lazy(r"^(\s*)(?:[-*•]|\d{1,2}[.)])\s+(\S.*)$")
EMPHASIS = lazy(r"\*\*|__")
# the sections a digest keeps, by their heading's words (the first kind that matches)
KINDS = (
    ("fixed", lazy(r"\berrors?\b|\bfix(?:es|ed)?\b|\bbugs?\b", re.I)),
    ("pending", lazy(r"\bpending\b|\bremaining\b|\bto ?do\b|\bunfinished\b", re.I)),
    ("asked", lazy(r"\brequests?\b|\bintent\b", re.I)),
)
ASKED_SENTENCES = 2


@dataclass
class Summary:
    asked: str = ""
    fixed: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)


def read_summary(text: str) -> Summary:
    """The request, the errors and their fixes, and the pending work a summary states."""
    found = Summary()
    for kind, lines in _sections(text):
        if kind == "asked" and not found.asked:
            prose = " ".join(line.strip() for line in lines if line.strip())
            found.asked = " ".join(sentences(EMPHASIS.sub("", prose))[:ASKED_SENTENCES])
        elif kind in ("fixed", "pending"):
            getattr(found, kind).extend(_items(lines))
    return found


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """(kind, body lines) of each known section, in order."""
    found: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        heading = _heading(line)
        if heading is not None:
            kind = next((k for k, words in KINDS if words.search(heading)), None)
            current = None
            if kind:
                current = []
                found.append((kind, current))
        elif current is not None:
            current.append(line)
    return found


def _heading(line: str) -> str | None:
    """The name a heading line gives its section; None for any other line."""
    text = line.strip()
    if not text or len(text) > HEADING_WIDTH or line[:1].isspace():
        return None
    bold = text.startswith("**") and text.rstrip(":").endswith("**")
    if not (text.startswith("#") or bold or text.endswith((":", ":**"))):
        return None
    if text[:1] in "-*•" and not bold:
        return None
    return NUMBERING.sub("", EMPHASIS.sub("", text.lstrip("#").strip())).rstrip(":").strip()


def _items(lines: list[str]) -> list[str]:
    """A section's top-level list items, each on one line."""
    items = [(len(m.group(1)), m.group(2)) for m in map(ITEM.match, lines) if m]
    top = min((indent for indent, _ in items), default=0)
    return [" ".join(EMPHASIS.sub("", text).split()) for indent, text in items if indent == top]
