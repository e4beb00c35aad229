"""`memctl profile`: who the user is and what they prefer.

First the profile ``maintain`` writes (maintain/profile.py): the global one and the
project's, static (role, stack, conventions) and dynamic (focus, open problems,
decisions) lines, each citing the memories it rests on; a line whose source was
forgotten or superseded is not shown. Then the profile and preferences memories
themselves, most important first (all there is before maintain has run).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context
from memctl.memories.projects import labels
from memctl.model import Category, Memory, State
from memctl.retrieve.stages.mmr import jaccard, words
from memctl.store.memories import MemoryFilter, list_memories
from memctl.store.profile import ProfileLine, profile_lines

SECTIONS = (Category.PROFILE, Category.PREFERENCES)
# Two entries sharing more than this share of their words say the same thing once.
DUPLICATE_OVERLAP = 0.85


@dataclass(frozen=True)
class Profile:
    sections: dict[str, list[Memory]]
    written: list[ProfileLine] = field(default_factory=list)
    # scope -> how a person reads it (a project's path or name), for the headings
    labels: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            name: [m.to_dict() for m in items] for name, items in self.sections.items()
        }
        return {**found, "written": [line.to_dict() for line in self.written]}

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
        return "\n".join(lines) if lines else "no profile or preferences memories yet"


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
    written = written_profile(ctx, scopes)
    return Profile(
        {
            str(section): _distinct([m for m in found if m.category == section])[:limit]
            for section in SECTIONS
        },
        written,
        labels(ctx, [line.scope for line in written]),
    )


def written_profile(ctx: Context, scopes: tuple[str, ...] | None) -> list[ProfileLine]:
    """The written lines of the global profile and of ``scopes``' (None: every one)."""
    wanted = None if scopes is None else tuple(dict.fromkeys((GLOBAL_SCOPE, *scopes)))
    return profile_lines(ctx.db, wanted)
