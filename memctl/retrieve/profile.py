"""`memctl profile`: who the user is and what they prefer.

First the profile ``maintain`` writes (maintain/profile.py): the global one and the
project's, static (role, stack, conventions) and dynamic (focus, open problems,
decisions) lines, each citing the memories it rests on; a line whose source was
forgotten or superseded is not shown. Then the profile and preferences memories
themselves, most important first (all there is before maintain has run).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context
from memctl.memories.projects import HIDDEN_STATES, labels
from memctl.model import Category, Memory, State
from memctl.retrieve.stages.mmr import jaccard, words
from memctl.store.memories import MemoryFilter, list_memories
from memctl.store.profile import ProfileLine, profile_lines
from memctl.store.projects import project_rows

SECTIONS = (Category.PROFILE, Category.PREFERENCES)
# Two entries sharing more than this share of their words say the same thing once.
DUPLICATE_OVERLAP = 0.85


@dataclass(frozen=True)
class Profile:
    sections: dict[str, list[Memory]]
    written: list[ProfileLine] = field(default_factory=list)
    # scope -> how a person reads it (a project's path or name), for the headings
    labels: dict[str, str] = field(default_factory=dict)
    # when the global profile shows nothing: the projects' written profiles it leaves out,
    # how a person reads each project -> its lines (a project's memories never fill the
    # global profile: it starts every project's sessions)
    elsewhere: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            name: [m.to_dict() for m in items] for name, items in self.sections.items()
        }
        written = [line.to_dict() for line in self.written]
        return {**found, "written": written, "elsewhere": self.elsewhere}

    def written_text(self) -> str:
        """The written profile, a heading per scope and section, each line with its sources."""
        lines: list[str] = []
        heading = None
        for line in self.written:
            if (line.scope, line.section) != heading:
                heading = (line.scope, line.section)
                where = self.labels.get(line.scope, line.scope)
                lines.append(f"{line.section.capitalize()} ({where})")
            sources = ", ".join(s[:8] for s in line.sources)
            lines.append(f"- {line.text} [{sources}]")
        return "\n".join(lines)

    def text(self) -> str:
        lines = [self.written_text()] if self.written else []
        for name, items in self.sections.items():
            if items:
                lines.append(name.capitalize())
                lines += [f"- {' '.join(m.content.split())}" for m in items]
        if lines:
            return "\n".join(lines)
        if not self.elsewhere:
            return "no profile or preferences memories yet"
        projects = ", ".join(f"{where} ({n})" for where, n in self.elsewhere.items())
        return (
            f"the global profile is empty: every profile line is a project's: {projects}; "
            "`memctl profile --all-scopes` shows them, and `memctl remember -s global "
            '--category profile "..."` writes what every project\'s sessions start with'
        )


def _distinct(memories: list[Memory]) -> list[Memory]:
    kept: list[tuple[Memory, frozenset[str]]] = []
    for memory in memories:
        mine = words(memory.content)
        if all(jaccard(mine, other) <= DUPLICATE_OVERLAP for _, other in kept):
            kept.append((memory, mine))
    return [memory for memory, _ in kept]


def build_profile(ctx: Context, scopes: tuple[str, ...] | None, limit: int) -> Profile:
    """Active profile and preferences memories of ``scopes``: by importance, then confidence,
    then the newest; near duplicates once; at most ``limit`` per section."""
    where = MemoryFilter(scopes=scopes, categories=SECTIONS, states=(State.ACTIVE,))
    found = list_memories(ctx.db, where, None, sort="importance")
    found.sort(key=lambda m: (-m.importance, -m.confidence))  # stable: newest first within
    written = latest_first(ctx, written_profile(ctx, scopes))
    sections = {
        str(section): _distinct([m for m in found if m.category == section])[:limit]
        for section in SECTIONS
    }
    shown = Profile(sections, written, labels(ctx, [line.scope for line in written]))
    if written or any(sections.values()) or scopes != (GLOBAL_SCOPE,):
        return shown
    return replace(shown, elsewhere=elsewhere(ctx))


def elsewhere(ctx: Context) -> dict[str, int]:
    """Each project's written profile, as a person reads the project -> its lines."""
    counts = Counter(line.scope for line in profile_lines(ctx.db, None))
    counts.pop(GLOBAL_SCOPE, None)
    named = labels(ctx, list(counts))
    return {named.get(scope, scope): n for scope, n in counts.most_common()}


def latest_first(ctx: Context, written: list[ProfileLine]) -> list[ProfileLine]:
    """The lines of several projects, the global ones first, then by project as ``memctl
    projects`` lists them (the latest work first), each project's in its sections' order:
    a person reads the project they work on now first, not the one written first."""
    if len({line.scope for line in written} - {GLOBAL_SCOPE}) < 2:
        return written
    hidden = tuple(str(s) for s in HIDDEN_STATES)
    order = {row.scope: n for n, row in enumerate(project_rows(ctx.db, hidden))}
    return sorted(written, key=lambda x: (x.scope != GLOBAL_SCOPE, order.get(x.scope, len(order))))


def written_profile(ctx: Context, scopes: tuple[str, ...] | None) -> list[ProfileLine]:
    """The written lines of the global profile and of ``scopes``' (None: every one)."""
    wanted = None if scopes is None else tuple(dict.fromkeys((GLOBAL_SCOPE, *scopes)))
    return profile_lines(ctx.db, wanted)
