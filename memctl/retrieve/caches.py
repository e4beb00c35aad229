"""Recall's process-wide caches that hold words: the queries asked, and the words of the
memories and messages a recall read (``fuse.stem`` stems every word of a text it reads
for the query's). A process that lives on (the MCP server) clears them when a forget
lands (``integrations.mcp_search.purge_if_forgotten``), with the last query's vectors its
``Context`` keeps."""

from __future__ import annotations

from memctl.memories import privacy
from memctl.retrieve import answers, query
from memctl.retrieve.stages import fuse, sessions_cover

WORD_CACHES = (
    fuse.stem,
    fuse.stem_beginnings,
    fuse.beginning_pattern,
    fuse.identifier_words,
    fuse.name_pattern,
    sessions_cover.counts_over_time,
    sessions_cover.compares_events,
    query.in_unread_script,
    answers.asked_kind,
    answers.asking_words,
    privacy.kept_text,
)


def clear() -> None:
    """Empty every cache of ``WORD_CACHES``."""
    for cached in WORD_CACHES:
        cached.cache_clear()
