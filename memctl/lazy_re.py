"""Regular expressions compiled when first used.

A module-level ``re.compile`` runs in every process that imports the module, and the
rule modules hold hundreds of patterns most commands never try: ``memctl runs`` compiled
about 190 of them for nothing. ``lazy(pattern, flags)`` stands for ``re.compile(pattern,
flags)``: the first time one of its attributes is read (``search``, ``sub``, ``flags``,
...) it compiles the pattern and keeps that attribute of the compiled pattern on itself, so
a later call costs what the compiled pattern's own call costs. ``pattern`` is its source,
read without compiling: a union of many is made of their sources (the clients' wrappers',
``memories.injected``: compiling the 37 to read them cost a recall ~7 ms). Read its
attributes only: ``re.sub(lazy(...), ...)`` and ``isinstance(..., re.Pattern)`` need the
compiled pattern.
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

    @property
    def pattern(self) -> str:
        return self._source[0]

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r}, {self._source[1]})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done when the pattern is first used."""
    return cast(re.Pattern[str], _Lazy(pattern, flags))


def compile_loaded(prefix: str = "memctl.") -> int:
    """Compile now every lazy pattern of the loaded modules named ``prefix...``: a process
    that forks a child per command (the resident process) pays each once, not once a
    child. How many were compiled."""
    import sys

    count = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith(prefix):
            continue
        for value in _held(list(vars(module).values())):
            if "_compiled" not in value.__dict__:
                value.__getattr__("search")
                count += 1
    return count


def _held(values: list[Any]) -> list[_Lazy]:
    """The lazy patterns among ``values`` and in their lists and tuples (a table of rules:
    when.RULES is a list of (pattern, rule) pairs), two levels deep."""
    found: list[_Lazy] = []
    for value in values:
        inner = value if isinstance(value, list | tuple) else (value,)
        for item in inner:
            parts = item if isinstance(item, tuple) else (item,)
            found.extend(part for part in parts if isinstance(part, _Lazy))
    return found


def source_of(value: Any) -> tuple[str, int] | None:
    """A pattern's source and flags, a lazy one's uncompiled; None for anything else."""
    if isinstance(value, _Lazy):
        return value._source
    if isinstance(value, re.Pattern):
        return value.pattern, value.flags
    return None
