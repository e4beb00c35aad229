"""Rule-based extraction, for when no LLM answers: sentences of what the user said that
match a pattern of a durable fact, and what the assistant confirms it will always or
never do.

User turns are cut into sentences (``.!?`` followed by a space, ``。！？；``
and line breaks; after a word and before a lower-case letter too, "e.g." aside; a dot
inside ``config.yaml`` or ``v1.2`` does not cut), and
each sentence is kept verbatim, identifiers and paths included, when one of
the patterns (``rules_english``, ``rules_cjk``) matches it. The first matching
pattern gives the fact's category, importance and a tag naming what it is (correction, convention,
decision, preference, habit, goal, biography, project, rule, case, event,
commitment). Decisions are tried first: "we decided to use X instead of Y"
is a decision, not a taste; then corrections ("no, use X instead") and
conventions. Questions (in Chinese also without "？": ``asks``), sentences about a bare
"it" or "this" (which mean nothing out of their conversation), list bullets' markers
and the assistant's narration ("Let me check...") are left out (``rule_sentences``);
injected text never reaches this stage. A text stored as it is is filed by ``rules_stated``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from memctl.ingest.asks import asks_openly
from memctl.ingest.facts import Fact, Passage
from memctl.ingest.pasted import own_words
from memctl.ingest.regex_needs import fold, holds, source_needs
from memctl.ingest.rule_pattern import PA, Pattern, en, zh
from memctl.ingest.rule_sentences import (
    ASKED_SOURCE,
    ASSERTIVE,
    BULLET,
    DANGLING,
    INTRODUCES,
    MAX_CHARS,
    MIN_CHARS,
    NARRATION,
    QUESTION,
    TYPED_COMMAND,
    asked_to_keep,
    said_sentences,
    without_lead_in,
)
from memctl.ingest.rules_cjk import CHINESE, JAPANESE, KOREAN
from memctl.ingest.rules_english import ENGLISH
from memctl.lazy_re import lazy
from memctl.memories.one_off import one_off
from memctl.model import Category, Role

RULE_CONFIDENCE = 0.6

# What the assistant confirms it will always / never do: a rule the user set, acknowledged.
COMMITMENTS = (
    en(
        "commitment",
        PA,
        0.7,
        r"\bI(?:'ll| will)(?: now)? (?:always|never|no longer|from now on|make sure to always)\b",
    ),
    en("commitment", PA, 0.7, r"\bI won't (?:\w+ ){0,3}(?:again|anymore|any more)\b"),
    en("commitment", PA, 0.7, r"\b(?:from now on|going forward),? I(?:'ll| will)\b"),
    zh(
        "commitment",
        PA,
        0.7,
        r"我(?:以后|今后|之后)?(?:会|将)?(?:一直|总是|始终|永远不|不再|再也不)",
    ),
    zh("commitment", PA, 0.7, r"(?:以后|今后|之后)我(?:会|将|都会)"),
)

PATTERNS = ENGLISH + CHINESE + KOREAN + JAPANESE
HAN = lazy(r"[\u3400-\u4dbf\u4e00-\u9fff]")
KANA = lazy(r"[\u3040-\u30ff]")
HANGUL = lazy(r"[\uac00-\ud7af]")
# a fact the user asked to keep that no pattern knows (``rule_sentences.ASKED_SOURCE``)
KEPT_AS_ASKED = Pattern("project", Category.ENTITIES, 0.7, ASKED_SOURCE, re.I)
# The categories a rule, a convention, a decision or a taste is filed in (maintain/profile.py
# offers them as the user's conventions at every session start).
STANDING_CATEGORIES = (Category.PATTERNS, Category.PREFERENCES)
# What one of them becomes when it is a one-off instruction about the task at hand
# (``memories.one_off``): a record of its session (an event, at an event's importance), kept
# and searchable, not a convention offered at every session start.
ONE_OFF = Pattern("instruction", Category.EVENTS, 0.5, r"")


class Scripts(NamedTuple):
    """The user patterns of each script."""

    english: tuple[Pattern, ...]
    chinese: tuple[Pattern, ...]
    japanese: tuple[Pattern, ...]
    korean: tuple[Pattern, ...]


EVERY_SCRIPT = Scripts(ENGLISH, CHINESE, JAPANESE, KOREAN)


def live(patterns: tuple[Pattern, ...], text: str) -> tuple[Pattern, ...]:
    """The patterns that can match somewhere in ``text``: each needs one of a few literal
    strings (``regex_needs``), so a long message is tested once a pattern, not a sentence
    at a time (a 400-message session of 6,000-character messages: 2.4 MB)."""
    folded = fold(text)
    return tuple(p for p in patterns if holds(source_needs(p.source, p.flags), folded))


def _candidates(passage: Passage) -> list[tuple[str, tuple[Pattern, ...]]]:
    """(sentence, the patterns that may match it) for one passage: every pattern for what
    the user said, only commitments for what the assistant said; of a turn the user
    pasted, only the words they wrote above the paste (a manual's "Format JSON output
    using a Go template" is no rule of theirs)."""
    if passage.role not in (Role.USER, Role.ASSISTANT):
        return []
    text = own_words(passage.text) if passage.pasted else passage.text
    kept = []
    for raw in said_sentences(text):
        sentence = BULLET.sub("", raw).strip()
        if not MIN_CHARS <= len(sentence) <= MAX_CHARS or NARRATION.match(sentence):
            continue
        if TYPED_COMMAND.match(sentence) or INTRODUCES.search(sentence):
            continue
        asks = QUESTION.search(sentence) and not ASSERTIVE.search(sentence)
        if not (asks or asks_openly(sentence) or DANGLING.search(sentence)):
            kept.append(sentence)
    if not kept:
        return []
    if passage.role == Role.ASSISTANT:
        commitments = live(COMMITMENTS, text)
        return [(s, commitments) for s in kept] if commitments else []
    scripts = Scripts(*(live(script, text) for script in EVERY_SCRIPT))
    found = [(s, patterns_for(s, scripts)) for s in kept]
    return [(s, patterns) for s, patterns in found if patterns]


def patterns_for(sentence: str, scripts: Scripts = EVERY_SCRIPT) -> tuple[Pattern, ...]:
    """The patterns worth trying on ``sentence``: the English ones, and those of each CJK
    script it holds (an English sentence tries 55, not all 95)."""
    if sentence.isascii():
        return scripts.english
    found: tuple[Pattern, ...] = scripts.english
    if HAN.search(sentence):
        found += scripts.chinese
    if KANA.search(sentence):
        found += scripts.japanese
    if HANGUL.search(sentence):
        found += scripts.korean
    return found


def match(sentence: str, patterns: tuple[Pattern, ...] = PATTERNS) -> Pattern | None:
    """The first of ``patterns`` the sentence matches (of all the user patterns, only
    those of the scripts it is written in)."""
    if patterns is PATTERNS:
        patterns = patterns_for(sentence)
    return next((p for p in patterns if p.regex.search(sentence)), None)


def extract_rules(passages: list[Passage], max_facts: int) -> list[Fact]:
    """Facts from the user's sentences that match a pattern, and the assistant's
    commitments (what it confirms it will always or never do), at most ``max_facts``."""
    facts: list[Fact] = []
    for passage in passages:
        for sentence, patterns in _candidates(passage):
            stated = without_lead_in(sentence)
            # what is left says what it is ("the staging bucket is ...": a project fact);
            # else the instruction's own pattern ("remember that": a rule) keeps it
            pattern = (match(stated, patterns) if stated != sentence else None) or match(
                sentence, patterns
            )
            if pattern is None and asked_to_keep(sentence, stated):
                pattern = KEPT_AS_ASKED
            if pattern is None:
                continue
            if pattern.category in STANDING_CATEGORIES and one_off(sentence):
                pattern = ONE_OFF
            facts.append(
                Fact(
                    content=stated,
                    category=pattern.category,
                    tags=[pattern.kind],
                    importance=pattern.importance,
                    confidence=RULE_CONFIDENCE,
                    source=passage.source,
                    created_at=passage.created_at,
                )
            )
            if len(facts) >= max_facts:
                return facts
    return facts
