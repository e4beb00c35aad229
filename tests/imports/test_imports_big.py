"""A 3 MB Markdown file imports with bounded memory: it is streamed three times (survey, raw
text, distillation), never held whole."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from benchmarks.documents import markdown_notes
from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.imports.files import expand
from memctl.imports.pipeline import ImportOptions, import_files
from memctl.memories import operations as memories
from memctl.store.sessions import latest_messages
from tests.fakes import HashEmbedder

# Forty of the import's 80,000-character chunks: streamed or not shows at this size (5 MB
# showed nothing more, for twice the CPU). The peak grows with the facts (about 0.5 MiB a
# MB of this text, measured at 1, 2 and 5 MB), well below the text.
SIZE = 3 * 1024 * 1024
WARM_UP_SIZE = 20_000  # one chunk


def warm_up(home: Path, embedder: HashEmbedder) -> None:
    """A small import in a store of its own: the modules and caches an import loads on
    first use (~4 MiB: in a fresh process the 5 MB file's peak was over its size) are
    loaded before the big one is measured."""
    with Context(load_settings(home=home, overrides={"llm": "none"}), embedder=embedder) as ctx:
        path = home / "warm.md"
        home.mkdir(parents=True, exist_ok=True)
        markdown_notes(path, WARM_UP_SIZE)
        import_files(ctx, expand([str(path)]), ImportOptions())


@pytest.mark.slow  # 3 MB through the whole import: seconds of CPU
def test_a_3_mb_file_imports_with_bounded_memory(home: Path, tmp_path: Path) -> None:
    # 157 facts alike but for a number: 64 hashed dimensions would make some collide
    embedder = HashEmbedder(1024, "test:hash-1024")
    with Context(load_settings(overrides={"llm": "none"}), embedder=embedder) as ctx:
        path = tmp_path / "notes.md"
        facts = markdown_notes(path, SIZE)
        size = path.stat().st_size
        assert ctx.db.vector_model() is None  # opened (and migrated) before measuring
        warm_up(tmp_path / "warm", embedder)
        tracemalloc.start()
        try:
            report = import_files(ctx, expand([str(path)]), ImportOptions())
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        (file,) = report.files
        assert (file.strategy, file.status, file.error) == ("atomic", "imported", None)
        assert file.imported == facts
        print(f"\n3 MB import: {size:,} bytes, {facts} memories, peak {peak / 2**20:.1f} MiB")
        # less than one copy of the text: its chunks, passages and raw messages held
        # together, or the text read whole even once, would break this
        assert peak < size
        made = memories.list_memories(ctx, memories.make_filter(ctx), limit=None)
        assert len(made) == facts
        assert all(m.content.startswith("We deploy service") for m in made)
        raw = latest_messages(ctx.db, file.session_id or "", 0, 10_000)
        assert "".join(m.content for m in raw) == path.read_text(encoding="utf-8")
