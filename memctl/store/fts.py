"""Safe FTS5 queries from arbitrary user text.

User text is never passed to MATCH as syntax: it is cut into words and each
word becomes a quoted string, so quotes, ``*``, ``-``, ``:``, parentheses,
``NEAR`` and ``AND``/``OR``/``NOT`` are only ever searched for as words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memctl.lazy_re import lazy

WORD = lazy(r"\w+", re.UNICODE)


def fts_terms(text: str) -> list[str]:
    """The distinct words of ``text``, in order, lower-cased."""
    seen: dict[str, None] = {}
    for word in WORD.findall(text):
        seen.setdefault(word.lower(), None)
    return list(seen)


def fts_query(text: str, operator: str = "OR") -> str | None:
    """An FTS5 MATCH expression matching the words of ``text``; None when it has none."""
    terms = fts_terms(text)
    if not terms:
        return None
    return f" {operator} ".join('"' + term.replace('"', '""') + '"' for term in terms)


def fts_phrases(phrases: Iterable[Sequence[str]]) -> str | None:
    """An FTS5 expression matching any of ``phrases`` (each a sequence of words, searched as a
    quoted phrase); None when there is none."""
    quoted = {
        '"' + " ".join(words).replace('"', '""').replace("\x00", "") + '"': None
        for words in phrases
        if any(w.replace("\x00", "") for w in words)
    }
    return " OR ".join(quoted) if quoted else None
