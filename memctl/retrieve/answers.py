"""What kind of answer a question asks for, and whether a memory states one: a person for
"who", a time for "when", a place for "where", a command for "how do I".

A question in other words than its note shares no word with it and meets the note's
neighbours first: a team's notes on its people, places, schedules and commands sit close
together in meaning, so "who runs the nightly backups?" is about as close to the backup
schedule as to the note naming the person who runs them. The kind of answer tells them
apart, as question answering has long done (the expected answer type: Li and Roth,
"Learning Question Classifiers", COLING 2002): of the two, one names a person. The intent
stage weighs it (a boost, never a filter).

Pure functions over the texts. A memory's text is read as written, but for the date
stamp a stored chat turn opens with (``[8 May 2023] Caroline: ...``): that is when it was
said, as every turn of its session was, not a time it states. A time said relative to
when it was said ("yesterday", "last week", "two weeks ago", "tomorrow") is one.
"""

from __future__ import annotations

import functools
import re

from memctl.lazy_re import lazy
from memctl.retrieve.vocabulary import is_term
from memctl.retrieve.when import MONTHS, WEEKDAYS

PERSON, TIME, PLACE, COMMAND = "a person", "a time", "a place", "a command"

# The question's words that ask for each kind, tried in this order.
ASKS = (
    (PERSON, lazy(r"\bwho(?:m|se|'s)?\b", re.I)),
    (TIME, lazy(r"\bwhen\b|\bhow (?:often|frequently)\b|\bwhat (?:time|days?|date)\b", re.I)),
    (PLACE, lazy(r"\bwhere\b", re.I)),
    (COMMAND, lazy(r"\bhow (?:do|can|should|would) (?:i|we)\b|\bhow to\b|\bcommands?\b", re.I)),
)

# A person: two capitalised words in a row ("Marcus Lindqvist", "Mei Chen"), neither of them
# a software term of the vocabulary ("Apache Kafka"); a name written with a capital inside
# ("GitHub Actions") is none. It cannot tell "Confluent Cloud" from a person: a nudge, as
# the intent stage weighs it, never a label.
CAPITALISED_PAIR = lazy(r"\b([A-Z][^\W\d_A-Z]+)\s([A-Z][^\W\d_A-Z]+)\b")
_DAYS = "|".join(f"{day.title()}s?" for day in WEEKDAYS)
_MONTHS = "|".join(month.title() for month in MONTHS)
_OFTEN = "every|daily|weekly|fortnightly|monthly|quarterly|yearly|annually|nightly"
# What a time is said against: an event ("after the smoke tests pass", "before pushing").
_AGAINST = "after|before|until|whenever|during|within"
# A time: a weekday or a month as written, a clock time, a date, how often, a part of a
# day, or a time said against an event.
TIME_WORDS = lazy(
    rf"\b(?:{_DAYS}|{_MONTHS})\b|\b\d{{1,2}}:\d{{2}}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b"
    rf"|\b(?:{_OFTEN}|mornings?|afternoons?|evenings?|{_AGAINST})\b"
)
# A time said against the day it was said, in lower case: the query's relative times (when.py)
# and those to come. Apart from TIME_WORDS: a pattern that ignores case is twice as slow.
RELATIVE_TIME = lazy(
    r"\b(?:yesterday|today|tonight|tomorrow|last night|recently|lately|weekends?"
    r"|(?:last|this|past|next|coming)\s+(?:week|month|year)|(?:day|week|month|year)s?\s+ago)\b"
)
# A date stamp opening the text: a bracket holding a digit ("[8 May 2023]").
STAMP = lazy(r"^\s*\[(?=[^\]\n]*\d)[^\]\n]{1,40}\]")
# A place: a host name (``staging.acme.example``), a path (``tests/``, ``/ecs/api``), or a
# name after "in", "at" or "under" ("in Notion", "at 41 Harbour Street").
PLACE_WORDS = lazy(r"\b[\w-]+\.[\w-]+\.[a-z]{2,}\b|\w/|/\w|\b(?:in|at|under)\s+(?:\d+\s+)?[A-Z]")
# A command: code in backticks, or a shell line.
COMMAND_WORDS = lazy(r"`[^`\n]+`|^\s*\$ \S", re.M)


@functools.lru_cache(maxsize=256)
def asked_kind(question: str) -> str | None:
    """The kind of answer ``question`` asks for (PERSON, TIME, PLACE, COMMAND), or None: the
    one whose words come first ("where's the spec for detecting when a session starts?"
    asks for a place, not a time)."""
    found = [(match.start(), kind) for kind, words in ASKS if (match := words.search(question))]
    return min(found)[1] if found else None


@functools.lru_cache(maxsize=256)
def asking_words(question: str) -> frozenset[str]:
    """The words by which ``question`` asks for a kind of answer, lower-cased ("command" in
    "command for the unit tests?"): they name what the answer is, which a memory states
    without naming it (`pytest -x` never says it is a command)."""
    found = [match.group() for _, words in ASKS for match in words.finditer(question)]
    return frozenset(word for text in found for word in text.lower().split())


def states(kind: str, text: str) -> bool:
    """Whether ``text`` states an answer of ``kind``."""
    if kind == PERSON:
        return any(_named(pair) for pair in CAPITALISED_PAIR.findall(text))
    if kind == TIME:
        text = STAMP.sub("", text, count=1)
        return TIME_WORDS.search(text) is not None or RELATIVE_TIME.search(text.lower()) is not None
    pattern = {TIME: TIME_WORDS, PLACE: PLACE_WORDS, COMMAND: COMMAND_WORDS}[kind]
    return pattern.search(text) is not None


def _named(pair: tuple[str, str]) -> bool:
    """Whether two capitalised words may be a person's names: neither is a software term."""
    return not any(is_term(word) for word in pair)
