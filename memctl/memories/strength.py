"""The one decay model of memctl: how a memory's strength fades, and when it was last set.

strength(now) = stored strength x e^(-rate x days since the clock last restarted), the
clock restarting at the latest of ``created_at``, ``stored_at`` (when it entered the
store: a backfilled memory dated by an old message is not old to the store),
``last_accessed_at`` and ``decayed_at``. The rate is by kind: episodic
``maintain.decay_episodic`` per day, semantic ``maintain.decay_semantic``, pinned 0 (never fades).

``memctl maintain`` (task decay) writes this value back, with ``decayed_at``; recall
reads it through ``current_strength`` (its status stage weighs contradictions by it),
so both agree at any moment whenever maintain last ran. An access (recall) adds
``recall.strength_step`` to the stored strength and restarts the clock: that is the
reinforcement. Recall's separate *recency* factor (retrieve/stages/decay.py) ranks by
how long ago a memory was used; it does not change what is stored.
"""

from __future__ import annotations

import math
from datetime import datetime

from memctl.config import Settings
from memctl.model import Kind, Memory, parse_time

DAY_SECONDS = 86400.0


def decay_rate(kind: Kind | str, settings: Settings) -> float:
    """Strength lost per day, as the exponent's rate: 0 for pinned memories."""
    rates = {
        Kind.EPISODIC: settings.maintain_decay_episodic,
        Kind.SEMANTIC: settings.maintain_decay_semantic,
    }
    return float(rates.get(Kind(kind), 0.0))


def clock_start(memory: Memory) -> str:
    """When the memory's strength was last set: created, stored, accessed or decayed (the
    latest)."""
    times = (memory.created_at, memory.stored_at, memory.last_accessed_at, memory.decayed_at)
    return max(t for t in times if t)


def strength_at(stored: float, rate: float, since: str, now: datetime) -> float:
    days = max(0.0, (now - parse_time(since)).total_seconds() / DAY_SECONDS)
    return stored * math.exp(-rate * days)


def current_strength(memory: Memory, now: datetime, settings: Settings) -> float:
    """The memory's strength as of ``now`` under the one decay model."""
    return strength_at(memory.strength, decay_rate(memory.kind, settings), clock_start(memory), now)
