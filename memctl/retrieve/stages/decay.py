"""Stage 8, decay: recent, often used, important memories keep their score; others fade.

- recency: Weibull exp(-lambda t^beta), t in days since the memory was last used
  (or created), lambda = ln 2 / (half_life_days x e^(half_life_importance x
  importance)); beta by tier: core 0.8 (fades slowly), working 1.0, peripheral 1.3.
- frequency: 1 - e^(-access_count / frequency_scale).
- intrinsic: importance x confidence.
- composite: weighted 0.4 / 0.3 / 0.3, at least the tier's floor (core 0.9,
  working 0.7, peripheral 0.5); score x (decay_base + (1 - decay_base) x composite).

Inside a time window the query names ("what did we decide in March?") recency
is 1: the question asks for that time, so being old is no fault.
"""

from __future__ import annotations

import math
from datetime import datetime

from memctl.model import Memory, Tier, parse_time
from memctl.retrieve.params import Params
from memctl.retrieve.run import Candidate, Run, rescore

STAGE = "decay"
DAY_SECONDS = 86400.0


def age_days(memory: Memory, now: datetime) -> float:
    """Days since the memory was last used (or created), as of ``now``; never negative."""
    created = parse_time(memory.created_at)
    used = parse_time(memory.last_accessed_at) if memory.last_accessed_at else created
    if used > now:  # recalled after the as-of date: only its creation counts then
        used = created
    return max(0.0, (now - used).total_seconds() / DAY_SECONDS)


def recency(memory: Memory, now: datetime, p: Params) -> float:
    beta = {Tier.CORE: p.beta_core, Tier.WORKING: p.beta_working}.get(
        memory.tier, p.beta_peripheral
    )
    half_life = p.half_life_days * math.exp(p.half_life_importance * memory.importance)
    return math.exp(-(math.log(2) / half_life) * age_days(memory, now) ** beta)


def composite(
    memory: Memory, now: datetime, p: Params, asked_for: bool = False
) -> tuple[float, str]:
    fresh = 1.0 if asked_for else recency(memory, now, p)
    frequency = 1.0 - math.exp(-memory.access_count / p.frequency_scale)
    intrinsic = memory.importance * memory.confidence
    value = (
        p.weight_recency * fresh + p.weight_frequency * frequency + p.weight_intrinsic * intrinsic
    )
    floor = {Tier.CORE: p.floor_core, Tier.WORKING: p.floor_working}.get(
        memory.tier, p.floor_peripheral
    )
    why = f"recency {fresh:.2f}, frequency {frequency:.2f}, intrinsic {intrinsic:.2f}"
    if value < floor:
        return floor, why + f", {memory.tier} floor {floor:g}"
    return value, why


def decay(run: Run, candidates: list[Candidate]) -> list[Candidate]:
    p = run.params

    window = run.query.window

    def factor(candidate: Candidate) -> tuple[float, str]:
        inside = window is not None and window.contains(parse_time(candidate.memory.created_at))
        value, why = composite(candidate.memory, run.now, p, inside)
        return p.decay_base + (1 - p.decay_base) * value, why

    return rescore(run, STAGE, candidates, factor)
