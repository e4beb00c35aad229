"""Regular expressions compiled when first used.

A module-level ``re.compile`` runs in every process that imports the module, and the
rule modules hold hundreds of patterns most commands never try: ``memctl runs`` compiled
about 190 of them for nothing. ``lazy(pattern, flags)`` stands for ``re.compile(pattern,
flags)``: the first time one of its attributes is read (``search``, ``sub``, ``pattern``,
...) it compiles the pattern and keeps that attribute of the compiled pattern on itself, so
a later call costs what the compiled pattern's own call costs. Read its attributes only:
``re.sub(lazy(...), ...)`` and ``isinstance(..., re.Pattern)`` need the compiled pattern.
"""

from __future__ import annotations

import re
from typing import Any, cast


class _Lazy:
    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_source", "_compiled"):
            raise AttributeError(name)
        compiled = self.__dict__.get("_compiled") or re.compile(*self._source)
        self._compiled = compiled
        found = getattr(compiled, name)
        setattr(self, name, found)
        return found

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r}, {self._source[1]})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done when the pattern is first used."""
    return cast(re.Pattern[str], _Lazy(pattern, flags))
