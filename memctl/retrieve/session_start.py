"""What a session starts with before anyone has asked anything.

A session-start hook has no question to recall for, and a made-up query
("conventions and decisions in this project") is exactly the kind recall now
answers with nothing. So the block is chosen, not searched: the user's profile
and preferences, the project's pinned and most important facts, and the digests
of its latest sessions, each section's best first, until the token budget is
spent. Nothing is touched: being shown at start is not being recalled.
"""

from __future__ import annotations

from datetime import UTC, datetime

from memctl.config.scope import GLOBAL_SCOPE
from memctl.context import Context
from memctl.model import Category, Kind, Memory, State
from memctl.retrieve.context_block import render_context
from memctl.retrieve.pipeline import Recalled
from memctl.store.memories import MemoryFilter, list_memories

ACTIVE = (State.ACTIVE,)
PERSONAL = (Category.PROFILE, Category.PREFERENCES)
DIGEST_TAG = "digest"
CHARS_PER_TOKEN = 4
ITEM_TOKENS = 6  # the bullet, the age and the line break


def _sections(ctx: Context, scope: str, per_section: int) -> list[list[Memory]]:
    personal = MemoryFilter(scopes=(scope, GLOBAL_SCOPE), categories=PERSONAL, states=ACTIVE)
    facts = MemoryFilter(scopes=(scope,), kinds=(Kind.PINNED, Kind.SEMANTIC), states=ACTIVE)
    digests = MemoryFilter(scopes=(scope,), kinds=(Kind.EPISODIC,), tag=DIGEST_TAG, states=ACTIVE)
    project = list_memories(ctx.db, facts, 2 * per_section, "importance")
    return [
        list_memories(ctx.db, personal, per_section, "importance"),
        [m for m in project if m.category not in PERSONAL][:per_section],
        list_memories(ctx.db, digests, max(1, per_section // 3), "created"),
    ]


def _cost(memory: Memory) -> int:
    return ITEM_TOKENS + len(memory.content) // CHARS_PER_TOKEN


def chosen(ctx: Context, scope: str, budget: int, per_section: int = 12) -> list[Memory]:
    """The memories of the block, in section order, within ``budget`` tokens."""
    picked: list[Memory] = []
    seen: set[str] = set()
    used = 0
    for section in _sections(ctx, scope, per_section):
        for memory in section:
            if memory.id in seen or used + _cost(memory) > budget:
                continue
            seen.add(memory.id)
            picked.append(memory)
            used += _cost(memory)
    return picked


def session_start_block(
    ctx: Context, scope: str, title: str, budget: int, now: datetime | None = None
) -> str:
    """The ``<memctl-context>`` block for a new session in ``scope``; '' when there is nothing."""
    memories = chosen(ctx, scope, budget)
    if not memories:
        return ""
    items = [Recalled(m, 0.0, {}, {}, {}) for m in memories]
    return render_context(title, items, now or datetime.now(UTC), heading="Context for")
