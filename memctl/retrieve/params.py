"""Every constant of one recall: the config keys, with the chosen mode's preset applied.

A mode is a preset of `recall.*` keys. It changes only keys still at their
default, so a value a person set (config file, environment, ``-c``) always
wins over the preset.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from memctl.config import KEYS, Settings
from memctl.errors import UsageError

PREFIX = "recall."

# Documented in README ("Recall modes"); keep the two in step.
MODES: dict[str, dict[str, Any]] = {
    "smart": {},
    "focused": {"weight_vector": 0.8, "weight_bm25": 0.2, "spread_hops": 1},
    "deep": {
        "candidates": 5,
        "cap": 3,
        "relevance_floor": 0.25,
        "importance_base": 0.5,
        "spread_hops": 3,
        "spread_seeds": 10,
    },
    "working": {
        "half_life_days": 7.0,
        "weight_recency": 0.7,
        "weight_frequency": 0.15,
        "weight_intrinsic": 0.15,
        "floor_core": 0.6,
        "floor_working": 0.4,
        "floor_peripheral": 0.2,
        "decay_base": 0.1,
        "spread_hops": 0,
    },
}


@dataclass(frozen=True)
class Params:
    """The `recall.*` keys without their prefix, e.g. ``params.cap``."""

    mode: str
    limit: int
    candidates: int
    weight_vector: float
    weight_bm25: float
    pinned_boost: float
    relevance_floor: float
    words_weight: float
    words_floor: float
    support_floor: float
    context_share: float
    context_max_chars: int
    session_vectors: int
    cap: int
    rerank: bool
    llm_model: str
    rerank_weight: float
    translate: bool
    bm25_floor: float
    bm25_floor_keep: float
    half_life_days: float
    half_life_importance: float
    beta_core: float
    beta_working: float
    beta_peripheral: float
    frequency_scale: float
    weight_recency: float
    weight_frequency: float
    weight_intrinsic: float
    floor_core: float
    floor_working: float
    floor_peripheral: float
    decay_base: float
    importance_base: float
    length_norm: int
    scope_global: float
    scope_other: float
    time_boost: float
    spread_hops: int
    spread_decay: float
    spread_seeds: int
    superseded_factor: float
    contradicted_factor: float
    conflict_factor: float
    cutoff: float
    mmr_threshold: float
    mmr_factor: float
    chars_per_token: float
    cjk_chars_per_token: float
    context_budget: int
    strength_step: float

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def recall_params(settings: Settings, mode: str | None = None) -> Params:
    """The constants for ``mode`` (default: the `recall.mode` key)."""
    chosen = mode or settings.values["recall.mode"]
    if chosen not in MODES:
        raise UsageError(f"unknown recall mode {chosen!r}: expected one of {', '.join(MODES)}")
    values = {
        key.name.removeprefix(PREFIX): settings.values[key.name]
        for key in KEYS
        if key.name.startswith(PREFIX)
    }
    for name, value in MODES[chosen].items():
        if settings.sources.get(PREFIX + name, "default") == "default":
            values[name] = value
    values["mode"] = chosen
    return Params(**values)
