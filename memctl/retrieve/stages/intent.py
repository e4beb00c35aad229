"""Intent: what a question asks for leans to the categories that answer it. A boost, never
a filter.

- "what broke", "why did the deploy fail", "what went wrong": cases and events;
- "how do we release", "how to rotate the keys", "where is the config": patterns and
  entities;
- "do I prefer tabs", "what do I like", "my preference for reviews": preferences.

A memory of a category the question asks for x ``INTENT_BOOST``; the others, and
session messages (which have no category of their own), x 1.0.

The kind of answer, read from the memory's text (retrieve/answers.py): "who" asks for a
person named, "when" for a time stated, "where" for a place, "how do I" for a command. A
memory stating one x ``INTENT_BOOST`` too (the two multiply). A session message stating a
time x ``INTENT_BOOST`` too ("yesterday", "last week" in a chat turn say when); for the
other kinds a message x 1.0, as for categories (docs/benchmarks.md, s22-locomo).

Runs beside the time boost, before the cap, and on possible matches too.
"""

from __future__ import annotations

import functools
import re

from memctl.model import Category
from memctl.retrieve.answers import TIME, asked_kind, states
from memctl.retrieve.run import Candidate, Run, rescore

STAGE = "intent"
# Reasoned: a nudge between near ties, well under the time boost; measured on the
# paraphrase benchmark's two halves (docs/benchmarks.md, "What a question asks for").
INTENT_BOOST = 1.15

FAILURE = (
    r"\bwhat (?:broke|went wrong|happened|failed)\b",
    r"\bwhy (?:did|does|do|was|is|were) \w[\w\s'-]{0,40}?\b"
    r"(?:fail|failing|break|broke|crash|crashed|go down|went down|time out|timed out|hang)\b",
    r"\b(?:outage|incident|post-?mortem|root cause|regression)s?\b",
)
HOW_WHERE = (
    r"\bhow (?:do|does|did|should|can|could|would) (?:we|i|you|they|one)\b",
    r"\bhow to\b",
    r"\bwhere (?:is|are|do|does|did|can|should)\b",
    r"\bwhat(?:'s| is) the (?:command|process|procedure|convention|way|path|url|setup)\b",
)
PREFERENCE = (
    r"\bdo(?:es)? (?:i|we|he|she|they|\w+) (?:prefer|like|want|favou?r|hate|dislike|avoid)\b",
    r"\bwhat do (?:i|we) (?:prefer|like|want|use)\b",
    r"\b(?:my|our) (?:preference|preferences|taste|favou?rite)s?\b",
    r"\bwould (?:i|we) rather\b",
)
INTENTS: tuple[tuple[str, tuple[str, ...], frozenset[Category]], ...] = (
    ("what went wrong", FAILURE, frozenset({Category.CASES, Category.EVENTS})),
    ("how or where", HOW_WHERE, frozenset({Category.PATTERNS, Category.ENTITIES})),
    ("a preference", PREFERENCE, frozenset({Category.PREFERENCES})),
)


@functools.lru_cache(maxsize=8)
def compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def asks_for(text: str) -> tuple[str, frozenset[Category]] | None:
    """(what the question asks for, the categories that answer it), or None: the first
    intent whose patterns match."""
    for name, patterns, categories in INTENTS:
        if compiled(patterns).search(text):
            return name, categories
    return None


def weighs(candidate: Candidate, kind: str) -> bool:
    """Whether the kind of answer asked for weighs ``candidate``: a memory for any kind, a
    session message for a time only."""
    return not candidate.is_message or kind == TIME


def intent(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    asked = asks_for(run.query.text)
    kind = asked_kind(run.query.text)
    if asked is None and kind is None:
        return candidates
    name, wanted = asked or ("", frozenset())
    listed = ", ".join(sorted(str(c) for c in wanted))

    def factor(candidate: Candidate) -> tuple[float, str]:
        boost, why = 1.0, [f"the question asks {name}"] if name else []
        if not candidate.is_message and candidate.memory.category in wanted:
            boost, why = INTENT_BOOST, [f"the question asks {name}: {listed}"]
        if kind is not None:
            if weighs(candidate, kind) and states(kind, candidate.memory.content):
                boost *= INTENT_BOOST
                why.append(f"it asks for {kind}, which this states")
            else:
                why.append(f"it asks for {kind}")
        return boost, "; ".join(why)

    return rescore(run, STAGE, candidates, factor)
