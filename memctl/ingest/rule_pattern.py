"""One rule of the rule-based extraction: a regular expression that, when it matches a
sentence, gives the fact its kind, category and importance (``extract_rules``), and the
short names the rule tables use."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from memctl.model import Category


@dataclass(frozen=True)
class Pattern:
    kind: str
    category: Category
    importance: float
    source: str
    flags: int = 0

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Compiled on first use: a command that never tries the pattern (most of them
        import this module) does not pay for its compiling."""
        return re.compile(self.source, self.flags)


def en(kind: str, category: Category, importance: float, regex: str) -> Pattern:
    """An English rule: case does not matter."""
    return Pattern(kind, category, importance, regex, re.I)


def zh(kind: str, category: Category, importance: float, regex: str) -> Pattern:
    """A rule of a script without case (Chinese, Korean, Japanese)."""
    return Pattern(kind, category, importance, regex)


P, PR, E, EV, C, PA = (
    Category.PROFILE,
    Category.PREFERENCES,
    Category.ENTITIES,
    Category.EVENTS,
    Category.CASES,
    Category.PATTERNS,
)
