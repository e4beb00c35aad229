"""The literal strings a regular expression's every match holds one of: a cheap test that
rules a pattern out of a whole text before it is searched sentence by sentence.

``needs(regex)`` reads the pattern's parse tree (``re._parser``, the parser ``re.compile``
itself uses) and returns a set of lower-case strings such that any text the pattern
matches in holds at least one of them (once ``fold``-ed), or None when it finds no such
set. Runs of literals, small character classes and alternations of them are joined into
whole words ("i tend to", "we use" | "we deploy" | ...); of the sets a sequence gives,
the one whose shortest string is longest is kept. Anything it does not know (``\\w``,
``.``, back references, ...) gives no strings, so an unknown construct can only make the
test pass more texts, never fewer.

Case: every literal is lower-cased and texts are compared ``fold``-ed (lower-cased, and
the two non-ASCII letters ``re.IGNORECASE`` matches to an ASCII letter that ``str.lower``
keeps: U+0131 dotless i and U+017F long s; U+0130 and the Kelvin sign lower to text that
holds the ASCII letter). A non-ASCII literal of a case-blind pattern gives no strings.
"""

from __future__ import annotations

import re
from functools import cache
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

# at most this many strings in a set built by joining literals and alternatives
MAX_STRINGS = 64
# at most this many characters of a class spelled out as strings ("[,;]" is two)
MAX_CLASS = 8
# re.IGNORECASE matches these to ASCII letters; str.lower() keeps them as they are
_FOLD = str.maketrans({"\u0131": "i", "\u017f": "s"})

Strings = frozenset[str]
EMPTY: Strings = frozenset({""})


def fold(text: str) -> str:
    """The text as ``needs`` strings are compared with: lower case, two letters mapped."""
    lowered = text.lower()
    return lowered if lowered.isascii() else lowered.translate(_FOLD)


def needs(regex: re.Pattern[str]) -> Strings | None:
    """Strings one of which every match of ``regex`` holds (lower case), or None."""
    return source_needs(regex.pattern, regex.flags)


@cache
def source_needs(source: str, flags: int = 0) -> Strings | None:
    """``needs`` of ``re.compile(source, flags)``, read from the parse tree alone: a pattern
    the test rules out is never compiled."""
    tree = _parser.parse(source, flags)
    case_blind = bool(tree.state.flags & re.IGNORECASE)  # the flags the pattern sets too
    exact, found = _sequence(tree, case_blind)
    if exact is not None and "" not in exact:
        found = _best([exact, found])
    return found


def holds(strings: Strings | None, folded: str) -> bool:
    """Whether a ``fold``-ed text holds one of ``strings`` (always, for None)."""
    return strings is None or any(s in folded for s in strings)


def _best(sets: list[Strings | None]) -> Strings | None:
    usable = [s for s in sets if s and "" not in s]
    return max(usable, key=lambda s: (min(map(len, s)), -len(s)), default=None)


def _join(left: Strings, right: Strings) -> Strings | None:
    if len(left) * len(right) > MAX_STRINGS:
        return None
    return frozenset(a + b for a in left for b in right)


def _sequence(items: Any, case_blind: bool) -> tuple[Strings | None, Strings | None]:
    """(every string the sequence matches, when few; strings every match holds one of)."""
    run: Strings = EMPTY
    whole = True
    found: list[Strings | None] = []
    for op, av in items:
        exact, inner = _item(op, av, case_blind)
        joined = _join(run, exact) if exact is not None else None
        if joined is not None:
            run = joined
            continue
        whole = False
        found += [run, inner]
        run = exact if exact is not None else EMPTY
    found.append(run)
    return (run if whole else None), _best(found)


def _item(op: Any, av: Any, case_blind: bool) -> tuple[Strings | None, Strings | None]:
    if op is sre.LITERAL:
        char = chr(av)
        if case_blind and not char.isascii():
            return None, None
        return frozenset({char.lower()}), None
    if op is sre.IN:
        return _class(av, case_blind), None
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
        return EMPTY, None
    if op is sre.SUBPATTERN:
        return _sequence(av[-1], case_blind)
    if op is sre.ATOMIC_GROUP:
        return _sequence(av, case_blind)
    if op is sre.BRANCH:
        return _branch(av[1], case_blind)
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        return _repeat(av, case_blind)
    return None, None


def _class(av: Any, case_blind: bool) -> Strings | None:
    chars = [chr(code) for kind, code in av if kind is sre.LITERAL]
    if len(chars) != len(av) or len(chars) > MAX_CLASS:
        return None
    if case_blind and not all(c.isascii() for c in chars):
        return None
    return frozenset(c.lower() for c in chars)


def _branch(branches: Any, case_blind: bool) -> tuple[Strings | None, Strings | None]:
    shapes = [_sequence(b, case_blind) for b in branches]
    exacts = [e for e, _ in shapes if e is not None]
    exact = frozenset().union(*exacts) if len(exacts) == len(shapes) else None
    if exact is not None and len(exact) > MAX_STRINGS:
        exact = None
    each = [_best([e, n]) for e, n in shapes]
    found = None if any(s is None for s in each) else frozenset().union(*each)  # type: ignore[arg-type]
    return exact, found


def _repeat(av: Any, case_blind: bool) -> tuple[Strings | None, Strings | None]:
    low, high, inner = av
    exact, found = _sequence(inner, case_blind)
    if low == 0:
        return (exact | EMPTY if exact is not None and high == 1 else None), None
    if low == high == 1:
        return exact, found
    return None, _best([exact, found])
