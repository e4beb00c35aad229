"""What a text stored as it is (``remember``, ``memory_store``) is filed as: the
extraction's rules first, then a few rules of its own (``STATED``) that the distillation
does not use."""

from __future__ import annotations

from memctl.ingest.extract_rules import PATTERNS, match
from memctl.ingest.rule_pattern import EV, PA, PR, en
from memctl.ingest.rule_sentences import BULLET, sentences
from memctl.model import Category

MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# What a text stored as it is says in words a conversation's sentence does not pin down
# well enough to be kept on its own (the extraction never tries these: a chat is full of
# "we went with" and dates told in passing), tried when no pattern above knows the text
# (s30-remember: "we chose Postgres over MySQL because of JSONB" and "on March 3 the DB
# went down" were filed as project facts)
STATED = (
    # a choice made: "we chose X over Y because", "we went with SQLite", "Decided: use Redis"
    en(
        "decision",
        PA,
        0.7,
        r"\b(?:I|we) (?:have |had )?(?:chose|picked(?! up\b)|selected|opted for|went with|"
        r"settled on|ended up (?:using|with))\b|^\W*(?:decided|decision)\s*[:-]",
    ),
    # how a task is done, said as an instruction: "To deploy, run make release from main"
    en("procedure", PA, 0.7, r"^\W*to \w+(?: [\w-]+){0,3},\s*(?:run|use|call|type)\b"),
    # an imperative taste: "prefer small PRs"
    en("preference", PR, 0.7, r"^\W*(?:always\s+)?prefer\b"),
    # a dated happening, told in the past: "on March 3 the DB went down", "the outage on
    # 2026-03-03 was caused by a full disk" (a date ahead, "the cert expires on May 1", is a
    # fact of the project)
    en(
        "event",
        EV,
        0.5,
        rf"^(?=.*\b(?:{MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?\b|\d{{1,2}}(?:st|nd|rd|th)? {MONTH}\b|"
        rf"\d{{4}}-\d{{2}}-\d{{2}}\b|yesterday\b|last (?:night|week|month|year|{WEEKDAY})\b|"
        rf"on {WEEKDAY}\b))"
        r"(?=.*\b(?:was|were|went|had|got|did|lost|broke|ran|hit|took|\w{3,}ed)\b)",
    ),
)


def classify(text: str) -> Category:
    """The category the rules give a text stored as it is (``remember``, ``memory_store``):
    its first sentence a pattern matches decides, then its first a ``STATED`` pattern
    matches; a text none knows is a fact about the project (entities), not a preference."""
    said = [BULLET.sub("", raw).strip() for raw in sentences(text)]
    for patterns in (PATTERNS, STATED):
        for sentence in said:
            pattern = match(sentence, patterns)
            if pattern is not None:
                return pattern.category
    return Category.ENTITIES
