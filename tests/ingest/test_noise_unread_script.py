"""A fact in a script the embedding model does not read is not noise for being close to a
noise prototype: to all-MiniLM-L6-v2 any two short Chinese texts lie close (a real
destyler session, Copilot Chat through SpecStory: benchmarks/sessions/fresh4/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from memctl.context import Context
from memctl.store.memories import MemoryFilter, list_memories
from tests.ingest.test_compaction import ingest_file

LIT = (
    Path(__file__).resolve().parents[2]
    / "benchmarks/sessions/fresh4/copilot-destyler-litdecorator.md"
)


def test_a_chinese_preference_is_kept_with_the_real_model(real_ctx: Context) -> None:
    """ "我想要使用 lit 的写法，不是这种" (I want Lit's way of writing it, not this one) scored
    0.86 against the prototype "抱歉，我无法帮助你" (sorry, I can't help) and was dropped."""
    ingest_file(real_ctx, LIT)
    where = MemoryFilter(scopes=None, states=None)
    kept = [m.content for m in list_memories(real_ctx.db, where, None) if "digest" not in m.tags]
    assert kept == ["我想要使用 lit 的写法，不是这种"]
