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


def negated(text: str) -> bool:
    return bool(NEGATION.search(text))


def replaced(text: str) -> str | None:
    """The old value a statement says it replaces ("make" of "switched from make to fly")."""
    found = REPLACED.search(text)
    if not found:
        return None
    return normalised(next(g for g in found.groups() if g)) or None
