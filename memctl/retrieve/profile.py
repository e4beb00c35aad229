"""`memctl profile`: who the user is and what they prefer, from profile and preferences
memories, most important first."""

from __future__ import annotations

from dataclasses import dataclass

from memctl.context import Context
from memctl.model import Category, Memory, State
from memctl.retrieve.stages.mmr import jaccard, words
from memctl.store.memories import MemoryFilter, list_memories

SECTIONS = (Category.PROFILE, Category.PREFERENCES)
# Two entries sharing more than this share of their words say the same thing once.
DUPLICATE_OVERLAP = 0.85


@dataclass(frozen=True)
class Profile:
    sections: dict[str, list[Memory]]

    def to_dict(self) -> dict[str, list[dict[str, object]]]:
        return {name: [m.to_dict() for m in items] for name, items in self.sections.items()}

    def text(self) -> str:
        lines = []
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
    return Profile(
        {
            str(section): _distinct([m for m in found if m.category == section])[:limit]
            for section in SECTIONS
        }
    )
