"""Every cache of recall's and capture's code that is keyed on what was asked or read is one
``retrieve.caches.clear`` empties (a long-lived MCP server clears them when a forget lands:
tests/integrations/test_mcp_forgets.py). A cache added later and left out of
``WORD_CACHES`` would keep a forgotten memory's words in the server until it ends."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator

import memctl.ingest
import memctl.memories
import memctl.retrieve
from memctl.retrieve import caches
from memctl.retrieve.stages import intent

# Caches keyed on memctl's own code, never on a user's words: the patterns an intent is
# made of, and a pattern's source (ingest/regex_needs.py).
CODE_KEYED = {"memctl.retrieve.stages.intent.compiled", "memctl.ingest.regex_needs.source_needs"}


def cached_functions() -> Iterator[tuple[str, object]]:
    """(qualified name, function) of each module-level function with a cache that takes an
    argument, in the packages that read a user's words (retrieve, memories, ingest)."""
    for package in (memctl.retrieve, memctl.memories, memctl.ingest):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                wrapped = getattr(value, "__wrapped__", None)
                if not (hasattr(value, "cache_clear") and inspect.isfunction(wrapped)):
                    continue
                if value.__module__ == info.name and inspect.signature(wrapped).parameters:
                    yield f"{info.name}.{name}", value


def test_every_cache_keyed_on_words_is_cleared_when_a_forget_lands() -> None:
    found = dict(cached_functions())
    assert "memctl.retrieve.stages.fuse.stem" in found  # the walk reaches the stages
    assert intent.compiled is found["memctl.retrieve.stages.intent.compiled"]
    cleared = {id(f) for f in caches.WORD_CACHES}
    missing = sorted(n for n, f in found.items() if id(f) not in cleared and n not in CODE_KEYED)
    assert missing == [], f"add them to memctl/retrieve/caches.py WORD_CACHES: {missing}"
