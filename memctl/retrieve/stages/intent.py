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

A memory that only forbids what a "how do we" question asks how to do ("We never deploy
on Fridays." for "how do we deploy?": every word of the question it holds is denied,
``only_forbids``) states no way to do it: the mirror of a memory of its category stating a
command, x 1 / (its category's boost x ``INTENT_BOOST``). It keeps its label (a rule on the
asked work is worth seeing beside the answer) and leaves the first places to the ways.

Runs beside the time boost, before the cap, and on possible matches too.
"""

from __future__ import annotations

import functools
import re

from memctl.lazy_re import lazy
from memctl.memories.statements import prose
from memctl.model import Category
from memctl.retrieve.answers import COMMAND, TIME, asked_kind, states
from memctl.retrieve.query import STOPWORDS
from memctl.retrieve.run import Candidate, Run, rescore
from memctl.retrieve.stages.fuse import stem

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


# A word denying what follows it in its clause ("never deploy", "don't push", "no deploys"),
# read as NegEx reads a clinical note (Chapman et al., "A Simple Algorithm for Identifying
# Negated Findings and Diseases in Discharge Summaries", 2001): a trigger, then at most
# ``DENIED_WINDOW`` words after it, up to a clause's end or a word turning it ("but").
# Narrower than ``memories.statements.NEGATION``: "deploy without downtime" is a way to
# deploy, "stop the server" one to stop it, and "I hate deploying" forbids nothing.
DENIES = lazy(r"never|not|no|avoid|\w+n['’]t", re.IGNORECASE)
TOKEN = lazy(r"[^\W_]+(?:['’][^\W_]+)?")  # a word, "don't" one word
CLAUSE_END = lazy(r"[,;:.!?()\n]|\b(?:but|instead|rather|unless|except)\b", re.IGNORECASE)
# NegEx's window: a trigger denies the five words after it
DENIED_WINDOW = 5


def only_forbids(text: str, words: frozenset[str]) -> bool:
    """Whether ``text`` forbids what ``words`` (a question's, stems: ``fuse.stem``) name in a
    case they do not name: it holds some of them, denies each where it holds it
    (``DENIES``), and says more ("We never deploy on Fridays." for "how do we deploy?").
    Holding nothing more, it answers the question ("We never deploy on Fridays." for "how
    do we deploy on Fridays?"). Its code does not count (``memories.statements.prose``):
    `pytest -m "not slow"` denies nothing."""
    held = more = False
    for clause in CLAUSE_END.split(prose(text)):
        tokens = TOKEN.findall(clause)
        denied = -1 - DENIED_WINDOW  # where the clause's last trigger so far stands
        for at, token in enumerate(tokens):
            lower = token.lower()
            if lower in words or stem(lower) in words:  # the question's word, whatever it is
                held = True
                if at - denied > DENIED_WINDOW:
                    return False
            elif DENIES.fullmatch(lower):
                denied = at
            elif lower not in STOPWORDS:
                more = True
    return held and more


def intent(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    asked = asks_for(run.query.text)
    kind = asked_kind(run.query.text)
    if asked is None and kind is None:
        return candidates
    name, wanted = asked or ("", frozenset())
    listed = ", ".join(sorted(str(c) for c in wanted))
    words = frozenset(stem(w.lower()) for w in run.word_weights) if kind == COMMAND else None

    def factor(candidate: Candidate) -> tuple[float, str]:
        boost, why = 1.0, [f"the question asks {name}"] if name else []
        if not candidate.is_message and candidate.memory.category in wanted:
            boost, why = INTENT_BOOST, [f"the question asks {name}: {listed}"]
        if kind is not None:
            if words and not candidate.is_message and only_forbids(candidate.memory.content, words):
                # the mirror of a memory of its category stating the kind asked for
                why.append(f"it asks for {kind}; this only says not to do what it asks how to")
                return 1 / (boost * INTENT_BOOST), "; ".join(why)
            if weighs(candidate, kind) and states(kind, candidate.memory.content):
                boost *= INTENT_BOOST
                why.append(f"it asks for {kind}, which this states")
            else:
                why.append(f"it asks for {kind}")
        return boost, "; ".join(why)

    return rescore(run, STAGE, candidates, factor)
