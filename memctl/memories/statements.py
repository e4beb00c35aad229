"""What a statement says of another: the value it says it replaces, and whether it denies.

Reconcile reads them to decide that a fact replaces or contradicts a stored one
(ingest/reconcile_rules.py); recall reads them to tell a reply that repeats a replaced
value from one that states the new (retrieve/stages/stale.py). Both sit above this layer.
"""

from __future__ import annotations

import re

from memctl.lazy_re import lazy

NEGATION = lazy(
    r"\b(?:not|never|no longer|nobody|none|stop(?:ped)?|hate|dislike|avoid|without)\b|n't\b"
    r"|不|没|别|讨厌",
    re.I,
)
# Code, not prose: a fenced block (to its closing fence, or the end when left open), a span
# in backticks, a shell line ("$ pytest"), and a command-line option's quoted value written
# bare (pytest -m "not slow", -k 'not flaky', --filter="not e2e"). Its words are a
# command's arguments (`pytest -m "not (tui or browser)"`), never the speaker denying
# anything.
CODE = lazy(
    r"^[ \t]{0,3}(`{3,}|~{3,}).*?(?:^[ \t]{0,3}\1[ \t]*$|\Z)|`[^`\n]+`|^[ \t]*\$ [^\n]*"
    r"|(?<![^\s(])--?[A-Za-z][\w-]*(?:=|[ \t]+)(?:\"[^\"\n]*\"|'[^'\n]*')",
    re.M | re.S,
)
# Statements that name the value they replace: "switched from make to fly", "fly now, not
# make", "instead of make", "no longer make" (group 1: the old value).
REPLACED = lazy(
    r"\b(?:switched|moved|migrated|changed|went) (?:over )?from (.+?) to\b"
    r"|\bnow,? not (.+?)(?:\s*[,.;!]|$)"
    r"|\b(?:instead of|rather than) (.+?)(?:\s*[,.;!]|$)"
    r"|\bno longer (?:use |uses |using )?(.+?)(?:\s*[,.;!]|$)",
    re.I,
)


def normalised(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def prose(text: str) -> str:
    """The text without its code (``CODE``)."""
    return CODE.sub(" ", text)


def negated(text: str) -> bool:
    """Whether the text denies something in its own words (its code does not count)."""
    return bool(NEGATION.search(prose(text)))


def replaced(text: str) -> str | None:
    """The old value a statement says it replaces ("make" of "switched from make to fly")."""
    found = REPLACED.search(text)
    if not found:
        return None
    return normalised(next(g for g in found.groups() if g)) or None
