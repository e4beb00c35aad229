"""Time expressions in a query ("yesterday", "last week", "in May", "9 November, 2022", "in
2023", "two years ago", ISO dates, "between August 11 and August 15 2023") as the window of
time they name; and the words that ask for the latest work ("what did we do last time?",
"where did I leave off?"), whose window the store's latest session gives (``since_latest``).

The window boosts memories created inside it; it never filters. Everything is
in UTC, like the timestamps memctl stores. Relative expressions are read
against ``now``, which ``--as-of`` moves.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memctl.lazy_re import lazy

MONTHS = (
    "january february march april may june july august september october november december"
).split()
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a few": 3,
    "several": 3,
}
UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
DAY = timedelta(days=1)

Maker = Callable[[re.Match[str], datetime], "tuple[datetime, datetime] | None"]

_MONTH = r"(?P<month>" + "|".join(MONTHS) + r"|" + "|".join(m[:3] for m in MONTHS) + r")"
_NUMBER = r"(?P<n>\d{1,3}|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + r")"


@dataclass(frozen=True)
class Window:
    """[start, end) in UTC, and the words of the query that named it."""

    start: datetime
    end: datetime
    phrase: str

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


def _day_start(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_window(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def _month_index(name: str) -> int:
    return next(i for i, m in enumerate(MONTHS, start=1) if m.startswith(name.lower()[:3]))


def _iso(match: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    year, month, day = match.group("y"), match.group("m"), match.group("d")
    try:
        if day:
            start = datetime(int(year), int(month), int(day), tzinfo=UTC)
            return start, start + DAY
        return _month_window(int(year), int(month))
    except ValueError:
        return None


def _named_month(match: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    month = _month_index(match.group("month"))
    year_text = match.group("year") or match.groupdict().get("year2")
    year = int(year_text) if year_text else None
    day = int(match.group("day")) if match.group("day") else None
    if year is None:  # "in May": the latest May that has begun
        year = now.year if month <= now.month else now.year - 1
    try:
        if day:
            start = datetime(year, month, day, tzinfo=UTC)
            return start, start + DAY
    except ValueError:
        return None
    return _month_window(year, month)


def _year(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    year = int(match.group("year"))
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


def _ago(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    word = match.group("n").lower()
    count = int(word) if word.isdigit() else NUMBERS[word]
    days = UNIT_DAYS[match.group("unit").lower()]
    if days == 1:
        start = _day_start(now) - count * DAY
        return start, start + DAY
    center = now - timedelta(days=count * days)
    return center - timedelta(days=days), center + timedelta(days=days)  # "about": +- one unit


def _calendar(which: str, unit: str, now: datetime) -> tuple[datetime, datetime]:
    """ "this/last week|month|year" as calendar periods (weeks start on Monday)."""
    today = _day_start(now)
    if unit == "week":
        start = today - timedelta(days=now.weekday())
        return (start - 7 * DAY, start) if which == "last" else (start, start + 7 * DAY)
    if unit == "month":
        this_month = _month_window(now.year, now.month)
        if which == "this":
            return this_month
        previous = this_month[0] - DAY
        return _month_window(previous.year, previous.month)
    year = now.year - (which == "last")
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


def _relative(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    which = "this" if match.group("which").lower() == "this" else "last"
    return _calendar(which, match.group("unit").lower(), now)


def _period(which: str, unit: str) -> Maker:
    return lambda match, now: _calendar(which, unit, now)


def _weekday(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    """ "on Monday", "last Friday": the latest such day before today."""
    wanted = WEEKDAYS.index(match.group("weekday").lower())
    back = (now.weekday() - wanted) % 7 or 7
    start = _day_start(now) - back * DAY
    return start, start + DAY


def _days_back(days: int) -> Maker:
    def window(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
        start = _day_start(now) - days * DAY
        return start, start + DAY

    return window


def _recently(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    return now - 14 * DAY, now + DAY


def _last_night(match: re.Match[str], now: datetime) -> tuple[datetime, datetime]:
    """Yesterday's evening and the small hours after it: from yesterday's start to now
    (stored times are UTC, and the user's evening may fall on either UTC day)."""
    return _day_start(now) - DAY, now + timedelta(seconds=1)


_DAY_YEAR = r"(?:\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\b)?(?:,?\s+(?P<year>(?:19|20)\d\d))?"
# (pattern, window maker); the first rule that matches wins. A bare month name needs
# a preposition, a day or a year ("in May", "May 3", "May 2024"): "may" is also a verb.
# The dates first: they alone can bound a range ("between May 3 and May 9").
DATES: list[tuple[re.Pattern[str], Maker]] = [
    (lazy(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)(?:-(?P<d>[0-3]\d))?\b"), _iso),
    (
        lazy(
            r"\b(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b\.?"
            r"(?:,?\s+(?P<year>(?:19|20)\d\d)\b)?",
            re.I,
        ),
        _named_month,
    ),
    (
        lazy(r"\b(?:in|on|during|since|of)\s+" + _MONTH + r"\b\.?" + _DAY_YEAR, re.I),
        _named_month,
    ),
    (
        lazy(
            r"\b" + _MONTH + r"\.?(?:\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\b(?:,?\s+"
            r"(?P<year>(?:19|20)\d\d))?|,?\s+(?P<year2>(?:19|20)\d\d))",
            re.I,
        ),
        _named_month,
    ),
]
RULES: list[tuple[re.Pattern[str], Maker]] = [
    *DATES,
    (lazy(r"\b(?:in|during|of)\s+(?P<year>(?:19|20)\d\d)\b", re.I), _year),
    (lazy(r"\b" + _NUMBER + r"\s+(?P<unit>day|week|month|year)s?\s+ago\b", re.I), _ago),
    (lazy(r"\b(?P<which>last|this|past)\s+(?P<unit>week|month|year)\b", re.I), _relative),
    (
        lazy(r"\b(?:last|on|this)\s+(?P<weekday>" + "|".join(WEEKDAYS) + r")\b", re.I),
        _weekday,
    ),
    (lazy(r"\bday before yesterday\b|前天", re.I), _days_back(2)),
    (lazy(r"\blast night\b|昨晚|昨天晚上", re.I), _last_night),
    (lazy(r"\byesterday\b|昨天", re.I), _days_back(1)),
    (lazy(r"\b(?:today|tonight|this morning)\b|今天", re.I), _days_back(0)),
    (lazy(r"\b(?:recently|lately)\b|最近", re.I), _recently),
    (lazy(r"上周|上星期"), _period("last", "week")),
    (lazy(r"本周|这周"), _period("this", "week")),
    (lazy(r"上个月"), _period("last", "month")),
    (lazy(r"这个月|本月"), _period("this", "month")),
    (lazy(r"去年"), _period("last", "year")),
    (lazy(r"今年"), _period("this", "year")),
]


# What may stand between the two dates of a range.
RANGE = lazy(r"\s*(?:and|to|until|till|through|-|–)\s*", re.I)
OPENING = lazy(r"\b(?:between|from)\s+$", re.I)  # part of the range's phrase


# What every rule needs one of in an ASCII text, lower-cased, besides a digit: a month's
# first three letters, the "day" of a weekday, yesterday and today, and the other rules'
# own words. A text without any names no time: its rules are neither compiled nor tried.
NEEDED = (
    *(month[:3] for month in MONTHS),
    *("day", "week", "month", "year", "ago", "tonight", "morning", "recent", "lately", "night"),
)

# Words that ask for the latest work of the user (or the project asked from): its latest
# session. "last time" as an adverb ("what did we do last time?"), not "the last time X
# happened" (the latest time of an event, which the event's words find); "where did I leave
# off"; "what was I working on?" with nothing after it. Not "our previous conversation about
# X": LongMemEval's users say so of any earlier chat, named by its subject.
LATEST = lazy(
    r"(?<!\bthe )\blast time\b"
    r"|\b(?:leave|left) off\b"
    r"|\b(?:was|were|am|are) (?:i|we) (?:working on|doing|up to)(?=\s*(?:[?.!]|$))"
    r"|上次|上一次",
    re.I,
)


def may_name_time(text: str) -> bool:
    """Whether a rule could match ``text`` (any text not in ASCII may)."""
    if not text.isascii() or any(c.isdigit() for c in text):
        return True
    lowered = text.lower()
    return any(word in lowered for word in NEEDED)


def time_window(text: str, now: datetime) -> Window | None:
    """The window of time ``text`` names, if it names one: the first rule that matches wins,
    except that two dates joined as a range ("between May 3 and May 9 2024", "from
    2024-05-03 to 2024-05-09") name the whole range."""
    if not may_name_time(text):
        return None
    return _range(text, now) or next(
        (
            Window(span[0], span[1], match.group(0))
            for pattern, make in RULES
            for match in pattern.finditer(text)
            if (span := make(match, now)) is not None
        ),
        None,
    )


def latest_phrase(text: str) -> str | None:
    """The words of ``text`` that ask for the latest work, if it has them."""
    match = LATEST.search(text)
    return match.group(0) if match else None


def since_latest(started: datetime, end: datetime, phrase: str) -> Window:
    """The window "last time" names: from the start of the day the latest session began
    (``started``) to ``end`` (now, or when the session asking began): that session, and
    anything later the same day."""
    return Window(_day_start(started), end, phrase)


def _range(text: str, now: datetime) -> Window | None:
    """Two dates in a row with only "and", "to", "until" or a dash between them, as one
    window; the first takes the second's year when it names none ("August 11 and August 15
    2023")."""
    found = sorted(
        (
            (match.start(), match.end(), match, make)
            for pattern, make in DATES
            for match in pattern.finditer(text)
        ),
        key=lambda hit: hit[:2],
    )
    for (_, first_end, first, make_first), (second_start, _, second, make_second) in zip(
        found, found[1:], strict=False
    ):
        if not RANGE.fullmatch(text[first_end:second_start]):
            continue
        last = make_second(second, now)
        if last is None:
            continue
        named_year = first.groupdict().get("year") or first.groupdict().get("y")
        start = make_first(first, now if named_year else last[1] - DAY)
        if start is not None and start[0] < last[1]:
            opening = OPENING.search(text, 0, first.start())
            begin = opening.start() if opening else first.start()
            return Window(start[0], last[1], text[begin : second.end()])
    return None
