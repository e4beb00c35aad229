"""Task profile: write one global profile and one per project, each line citing its sources.

By rules, from what the store holds (no model):

- static: ``role`` (profile memories), ``stack`` (the tools and services the memories
  mention most, from the knowledge graph), ``conventions`` (preferences and patterns);
- dynamic: ``focus`` (what the latest sessions asked), ``open problems`` (what their
  digests left open), ``decisions`` (what they decided, newest first).

The global profile reads every scope; a project's reads its own. Each line keeps the
ids of the memories it rests on; a line whose source is forgotten, deleted or
superseded is no longer shown (store/profile.py) and is gone at the next run. At most
``PER_SECTION`` lines a section, each cut to ``LINE_CHARS``: the whole profile stays
within the session start's L1 budget.
"""

from __future__ import annotations

from memctl.config.scope import GLOBAL_SCOPE
from memctl.ingest.facts import abstract
from memctl.maintain.plan import Maintenance, TaskReport
from memctl.model import Category, Memory, State, now_iso
from memctl.store.database import Database
from memctl.store.memories import MemoryFilter, list_memories
from memctl.store.profile import ProfileLine, profile_scopes, replace_profile, stack_mentions

STATIC = ("role", "stack", "conventions")
DYNAMIC = ("focus", "open problems", "decisions")
SECTIONS = (*STATIC, *DYNAMIC)
PER_SECTION = 5
LINE_CHARS = 160
DIGESTS = 3  # the latest session digests the dynamic sections read
STACK_KINDS = ("tool", "service")
STACK_SOURCES = 3  # memories cited for a stack line
DIGEST_TAG = "digest"
# Digest lines (ingest/digest.py render) and the section each feeds.
DIGEST_LINES = {"Asked: ": "focus", "Left open: ": "open problems", "Decided: ": "decisions"}
WRITER = "rules"


def _memories(
    db: Database, scopes: tuple[str, ...] | None, categories: tuple[Category, ...]
) -> list[Memory]:
    found = MemoryFilter(scopes=scopes, categories=categories, states=(State.ACTIVE,))
    return list_memories(db, found, PER_SECTION * 2, "importance")


def _line(section: str, text: str, sources: list[str], at: str, scope: str) -> ProfileLine:
    return ProfileLine(scope, section, abstract(text, LINE_CHARS), tuple(sources), WRITER, at)


def written(db: Database, scope: str, at: str) -> list[ProfileLine]:
    """The profile of ``scope`` (``GLOBAL_SCOPE``: of every scope), section by section."""
    scopes = None if scope == GLOBAL_SCOPE else (scope,)
    lines: dict[str, list[ProfileLine]] = {s: [] for s in SECTIONS}
    for memory in _memories(db, scopes, (Category.PROFILE,)):
        lines["role"].append(_line("role", memory.content, [memory.id], at, scope))
    kinds = (Category.PREFERENCES, Category.PATTERNS)
    for memory in _memories(db, scopes, kinds):
        if DIGEST_TAG not in memory.tags:
            lines["conventions"].append(
                _line("conventions", memory.content, [memory.id], at, scope)
            )
    for name, ids in stack_mentions(db, scopes, STACK_KINDS, PER_SECTION):
        lines["stack"].append(_line("stack", name, ids[:STACK_SOURCES], at, scope))
    digests = MemoryFilter(scopes=scopes, tag=DIGEST_TAG, states=(State.ACTIVE,))
    for memory in list_memories(db, digests, DIGESTS, "created"):
        for text in memory.content.splitlines():
            for prefix, section in DIGEST_LINES.items():
                if text.startswith(prefix):
                    for part in text.removeprefix(prefix).split("; "):
                        lines[section].append(_line(section, part, [memory.id], at, scope))
    seen: set[str] = set()
    kept: list[ProfileLine] = []
    for section in SECTIONS:
        fresh = [x for x in lines[section] if x.text.casefold() not in seen]
        seen |= {x.text.casefold() for x in fresh}
        kept += fresh[:PER_SECTION]
    return kept


def profile(m: Maintenance) -> TaskReport:
    report = m.report("profile")
    at = now_iso()
    with m.db.atomic():
        for scope in [GLOBAL_SCOPE, *(s for s in profile_scopes(m.db) if s != GLOBAL_SCOPE)]:
            lines = written(m.db, scope, at)
            replace_profile(m.db, scope, lines)
            report.count("lines", len(lines))
            report.count("profiles")
    return report
