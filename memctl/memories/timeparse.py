"""Times people type on the command line: ISO dates and spans like ``7d``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from memctl.errors import UsageError
from memctl.lazy_re import lazy
from memctl.model import format_time, parse_time

SPAN = lazy(r"^\s*(\d+)\s*(m|min|h|d|w|mo|y)\s*$", re.IGNORECASE)
SPAN_UNITS = {
    "m": 60,
    "min": 60,
    "h": 3600,
    "d": 86400,
    "w": 7 * 86400,
    "mo": 30 * 86400,
    "y": 365 * 86400,
}


def parse_since(text: str, now: datetime | None = None) -> str:
    """``7d`` (seven days before now) or an ISO date/time, as a stored timestamp string."""
    now = now or datetime.now(UTC)
    span = SPAN.match(text)
    try:
        if span:
            seconds = int(span.group(1)) * SPAN_UNITS[span.group(2).lower()]
            return format_time(now - timedelta(seconds=seconds))
        return format_time(parse_time(text.strip()))
    except OverflowError:  # before year 1 or after 9999 once in UTC, or a span past them
        raise UsageError(
            f"the time {text!r} is out of range: it must fall within the years 1 to 9999 (UTC)"
        ) from None
    except ValueError:
        raise UsageError(
            f"cannot read the time {text!r}: use an ISO date (2026-05-01) or a span (7d, 12h, 2w)"
        ) from None
