"""Limits on what a sync repository may hold, checked before anything is built from it.

``yaml_problem``: a YAML text is read as events only (nothing is built) and refused
when it uses an alias (memctl writes none, so a "billion laughs" costs one pass
over its bytes), nests deeper, holds more values or a longer text than a memory's
file can. ``path_problem``: a path git refuses to check out (``..``, ``.git``),
which a hostile member can still push with git's plumbing.
"""

from __future__ import annotations

import yaml

from memctl.memories.operations import MAX_CONTENT_CHARS

# A memory's file nests 3 deep (a relation's mapping in the list of relations); a
# memory has at most MAX_RELATIONS relations, each of 4 values.
MAX_DEPTH = 8
MAX_RELATIONS = 1000
# Knowledge-graph triples a memory's file may state, and the length of each part.
MAX_TRIPLES = 200
MAX_TRIPLE_CHARS = 200
MAX_VALUES = 20_000

_Loader = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


def yaml_problem(text: str) -> str | None:
    """Why ``text`` must not be loaded, or None (a YAML syntax error is the loader's to
    report)."""
    depth = values = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):
                return "uses a YAML alias (memctl writes none)"
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    return f"nested deeper than {MAX_DEPTH} levels"
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            elif isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_CONTENT_CHARS:
                return f"holds a text over {MAX_CONTENT_CHARS:,} characters"
            values += 1
            if values > MAX_VALUES:
                return f"holds more than {MAX_VALUES:,} values"
    except yaml.YAMLError:
        return None
    return None


def path_problem(path: bytes) -> str | None:
    """Why git would refuse to check out ``path`` (so a pull would fail), or None."""
    for part in path.split(b"/"):
        if part in (b"", b".", b".."):
            return "a path with an empty, '.' or '..' part"
        if part.lower().rstrip(b". ") in (b".git", b"git~1"):
            return "a path into .git"
    return None


def shown(path: bytes) -> str:
    """A path as a line may show it: bytes that are not UTF-8 as ``\\xff``."""
    return path.decode("utf-8", "backslashreplace")
