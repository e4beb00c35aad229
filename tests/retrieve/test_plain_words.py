"""A question's plain words count where a session writes them as words, not inside a path
or a JSON key: there they are the word in another sense ("time" in a tool call's
``"yield_time_ms":``, "config" in a folder's name). A question that writes the path keeps
finding it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memctl.api.recall import RecallRequest, recall
from memctl.context import Context
from memctl.retrieve.stages.fuse import plain_words
from tests.ingest.test_compaction import ingest_file
from tests.ingesting import REAL_SESSIONS

CODEX = REAL_SESSIONS / "codex-codemie-019e1625.jsonl"  # a real Codex session


@pytest.fixture
def codex(make_ctx: Callable[..., Context]) -> Context:
    ctx = make_ctx()
    ingest_file(ctx, CODEX)
    return ctx


def shown(ctx: Context, query: str) -> list[tuple[bool, str]]:
    found = recall(ctx, RecallRequest(query, limit=5, all_scopes=True))
    return [(r.clear, r.memory.content) for r in found.result.results]


def test_a_word_inside_a_tool_calls_arguments_does_not_answer(codex: Context) -> None:
    """ "what went wrong last time?" offered only ``[tool write_stdin: {... "yield_time_ms"
    ...}]`` rows; what the session says comes first now."""
    results = shown(codex, "what went wrong last time?")
    assert results and not results[0][1].startswith("[tool "), results
    assert not any(clear for clear, _ in results), results


def test_words_inside_paths_lend_no_clear_label(codex: Context) -> None:
    """The session's AGENTS.md message holds "config" and "file" in its paths only: it is
    offered as possible at most; a message that says "config" stays clear."""
    results = shown(codex, "where is the config file?")
    clear = [text for is_clear, text in results if is_clear]
    assert any(text.startswith("The config now includes") for text in clear), results
    assert not any(text.startswith("# AGENTS.md") for text in clear), results


def test_a_question_writing_the_path_finds_it(codex: Context) -> None:
    results = shown(codex, "what changed in __tests__/codemie-code-reasoning.test.ts")
    assert any("/codemie-code-reasoning.test.ts" in text for _, text in results[:2]), results
    assert sum(clear for clear, _ in results) >= 3, results


def test_a_date_written_with_slashes_says_its_words_and_a_path_does_not() -> None:
    said = plain_words("We shipped it on 8/15/2023 (or 2023/08/15) after the audit.")
    assert {"15", "2023", "08", "audit"} <= said, said
    path = plain_words("it lives in src/lib/app.py and 1/2/3/setup.cfg")
    assert not {"lib", "app", "setup"} & path, path
