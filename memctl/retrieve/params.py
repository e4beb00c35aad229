"""Every constant of one recall: the config keys, with the chosen mode's preset applied.

A mode is a preset of `recall.*` keys. It changes only keys still at their
default, so a value a person set (config file, environment, ``-c``) always
wins over the preset.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from memctl.config import KEYS, Settings
from memctl.config.values import RecallValues
from memctl.errors import UsageError

PREFIX = "recall."

# Documented in docs/recall.md ("Recall modes"); keep the two in step.
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


class Params(RecallValues):
    """The `recall.*` keys without their prefix, e.g. ``params.cap``: their fields are
    generated from the keys (``memctl.config.values``), so each is declared once. The
    dataclass's methods are RecallValues' (not made again for this subclass: 80 fields'
    methods, compiled at every import, cost ~2 ms of a recall process)."""

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
