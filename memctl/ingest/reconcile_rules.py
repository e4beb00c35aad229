"""Reconcile without an LLM: similarity thresholds and subject/slot matching.

For a fact and its most similar stored memory (cosine similarity ``sim``):

- nothing stored, or ``sim < reconcile.related_similarity``: CREATE;
- ``sim >= reconcile.duplicate_similarity``, or the same text: SKIP;
- events and cases: CREATE (they are records, never rewritten);
- about the same thing (``sim >= reconcile.match_similarity``, or the same
  slot, e.g. "my editor is vim" / "my editor is helix", "we deploy with make" /
  "we deploy with fly"):
  a profile fact MERGEs; opposite polarity ("I like X" / "I don't like X") or
  the same slot with another value CONTRADICTs (for temporal categories the
  caller turns that into SUPERSEDE); a fact holding every word of the memory
  and more MERGEs (it adds detail); at ``reconcile.support_similarity`` it
  SUPPORTs;
- a related fact with a qualifier (when, unless, except, only, but, ...)
  CONTEXTUALIZEs;
- anything else is CREATEd.

The preference slot guard runs before any of this, and before the LLM: two
preferences for the same brand and different items ("likes Starbucks latte",
"likes Starbucks americano") are different memories, so the fact is CREATEd.
"""

from __future__ import annotations

import re

from memctl.config import Settings
from memctl.ingest.facts import Decision, Fact, Verdict
from memctl.lazy_re import lazy
from memctl.model import Category, Memory

NEGATION = lazy(
    r"\b(?:not|never|no longer|nobody|none|stop(?:ped)?|hate|dislike|avoid|without)\b|n't\b"
    r"|不|没|别|讨厌",
    re.I,
)
QUALIFIER = lazy(
    r"\b(?:when|whenever|unless|except|only|but|if|while|during|because|although)\b"
    r"|但是|除了|如果|只有|只在|因为|不过",
    re.I,
)
# Workflow verbs whose means is one choice at a time; "also", "too" add one beside it.
TOOL_VERBS = (
    r"(deploy|release|ship|build|test|lint|format|host|package|publish|bundle|compile|"
    r"migrate|monitor|provision|back up)(?:s|ed)? (?:\w+ )?(with|using|via|through) "
    r"(?!.*\b(?:also|too|as well)\b)(.+)"
)
SLOTS = (
    (lazy(r"\bmy name is\s+(.+)", re.I), "name"),
    (lazy(r"\b(?:I|we)(?: currently)? (?:live|am based|are based) in\s+(.+)", re.I), "home"),
    (lazy(r"\b(?:I|we) work (?:at|for)\s+(.+)", re.I), "employer"),
    # how the team does a piece of its work, by what means: "we deploy with make release",
    # then "we deploy with fly deploy" is another value; where (to, on) may be several
    (lazy(r"\b(?:I|we)(?: (?:now|currently|usually|always|normally))? " + TOOL_VERBS, re.I), ""),
    (lazy(r"我(?:住在|来自)(.+)"), "home"),
    (lazy(r"我叫(.+)|我的名字(?:是|叫)(.+)"), "name"),
)
ATTRIBUTE = lazy(
    r"\b(?:my|our|the user's|his|her|their) ([a-z][\w-]*(?: [a-z][\w-]*){0,2}) "
    r"(?:is|are|was|=|:) (.+)",
    re.I,
)
ATTRIBUTE_ZH = lazy(r"我的(.{1,10}?)是(.+)")
PREFERENCE = lazy(
    r"\b(?:like|likes|love|loves|prefer|prefers|enjoy|enjoys|favou?rite \w+ is)\s+(.+?)"
    r"(?:\s+(?:over|than|because|when|for|instead)\b|[.,;!]|$)",
    re.I,
)
PREFERENCE_ZH = lazy(r"(?:喜欢|爱喝|爱吃|偏爱|偏好)(.+?)(?:[，。,.!！]|$)")
CJK = lazy(r"[\u3400-\u9fff]")


def normalised(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def words(text: str) -> set[str]:
    """Lower-cased words; each CJK character counts as a word."""
    found = set(re.findall(r"[^\W\u3400-\u9fff]+", text.lower()))
    return found | set(CJK.findall(text))


def negated(text: str) -> bool:
    return bool(NEGATION.search(text))


def slot(text: str) -> tuple[str, str] | None:
    """(slot, value) a text sets, e.g. ("editor", "vim") for "My editor is vim"."""
    for pattern, name in SLOTS:
        found = pattern.search(text)
        if found and not name:  # the slot is named by the text: its verb, by what means
            verb, _means, value = found.groups()
            return f"{verb.lower()} with", normalised(value)
        if found:
            value = next(g for g in found.groups() if g)
            return name, normalised(value)
    for pattern in (ATTRIBUTE, ATTRIBUTE_ZH):
        found = pattern.search(text)
        if found:
            return normalised(found.group(1)), normalised(found.group(2))
    return None


def preference_object(text: str) -> list[str] | None:
    """What a preference is for, as words (CJK: characters): ["starbucks", "latte"]."""
    found = PREFERENCE.search(text) or PREFERENCE_ZH.search(text)
    if not found:
        return None
    item = found.group(1).strip()
    if CJK.search(item):
        return [c for c in item if not c.isspace()]
    return re.findall(r"\w+", item.lower())


def slot_guard(fact: str, memory: str) -> bool:
    """Same brand, different item: both objects start alike and then differ."""
    a, b = preference_object(fact), preference_object(memory)
    if not a or not b or a == b:
        return False
    shared = 0
    while shared < min(len(a), len(b)) and a[shared] == b[shared]:
        shared += 1
    brand = shared >= (2 if CJK.search("".join(a)) else 1)
    return brand and shared < len(a) and shared < len(b)


def decide(fact: Fact, memory: Memory | None, similarity: float, s: Settings) -> Decision:
    """The verdict on a fact given its most similar memory (None when nothing is stored)."""

    def verdict(kind: Verdict, reason: str) -> Decision:
        target = memory.id if memory is not None and kind != Verdict.CREATE else None
        return Decision(kind, fact, target, reason=reason)

    if memory is None or similarity < s.reconcile_related_similarity:
        return verdict(Verdict.CREATE, "nothing similar stored")
    if similarity >= s.reconcile_duplicate_similarity or normalised(fact.content) == normalised(
        memory.content
    ):
        return verdict(Verdict.SKIP, f"already stored (similarity {similarity:.2f})")
    if fact.category in (Category.EVENTS, Category.CASES):
        return verdict(Verdict.CREATE, f"{fact.category} are only created or skipped")
    fact_slot, memory_slot = slot(fact.content), slot(memory.content)
    slot_name = (
        fact_slot[0] if fact_slot and memory_slot and fact_slot[0] == memory_slot[0] else None
    )
    if similarity >= s.reconcile_match_similarity or slot_name:
        if fact.category == Category.PROFILE and memory.category == Category.PROFILE:
            return verdict(Verdict.MERGE, "profile facts about the same thing merge")
        if negated(fact.content) != negated(memory.content):
            return verdict(Verdict.CONTRADICT, "same subject, opposite polarity")
        if slot_name and fact_slot != memory_slot:
            return verdict(Verdict.CONTRADICT, f"another value for '{slot_name}'")
        if words(memory.content) < words(fact.content):
            return verdict(Verdict.MERGE, "adds detail to the memory")
        if similarity >= s.reconcile_support_similarity:
            return verdict(Verdict.SUPPORT, f"confirms the memory (similarity {similarity:.2f})")
    if QUALIFIER.search(fact.content):
        return verdict(Verdict.CONTEXTUALIZE, "qualifies a related memory")
    return verdict(Verdict.CREATE, f"related but distinct (similarity {similarity:.2f})")
