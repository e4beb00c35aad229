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


def asked_stems_of(asked: tuple[str, ...]) -> set[str]:
    from memctl.retrieve.stages.fuse import stem

    return {stem(word.lower()) for word in asked} | {stem(word) for word in asked}


def every_stem(text: str, asked: tuple[str, ...]) -> tuple[set[str], set[str]]:
    """What a share asks of a text, read the long way: every word stemmed, markup taken out."""
    from memctl.retrieve.stages.fuse import stem, text_words

    stems = asked_stems_of(asked)
    return {stem(w) for w in text_words(text)} & stems, plain_words(text) & stems


# Texts a share reads: paths and JSON keys beside the words, a word written twice (in a path
# and as a word), tokens that run on for a long way, Unicode spaces, CJK runs with Latin
# words inside them, a date, an underscore joining words, and words that end in "e".
TEXTS = [
    'ran [tool write_stdin: {"yield_time_ms": 1000}] at the time we noted',
    "the config lives in services/config/app.yaml; config it once",
    "~/notes and ./app hold notes, ../lib/noting too; C:\\temp\\notes",
    "deployed on 8/15/2023 and 2023/08/15 with the deploy_script and deployScript",
    "a\u00a0theme\u2009of\u3000themes: /usr/share/themes/x themes",
    "用python写代码 and 数据库连接 deploys the 数据库",
    "x" * 5000 + "/deploy/" + " deploy" * 3,
    '{"noted":1,"notes":[2]} "notes": said notes',
    "",
]
ASKED = [
    ("time", "notes", "deploy"),
    ("config", "themes", "python", "数据", "据库"),
    ("noted", "Notes", "deploying", "script"),
    ("e", "the"),
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("asked", ASKED)
def test_a_share_finds_the_words_it_asks_about_as_reading_every_word_does(
    text: str, asked: tuple[str, ...]
) -> None:
    """A share looks only for the stems it asks about (``asked_stems``): in any text, it finds
    each of them, everywhere and written as a word, exactly where stemming every word of
    the text finds it."""
    from memctl.retrieve.stages.fuse import asked_stems, stem_beginnings

    everywhere, plain = asked_stems(text.lower(), stem_beginnings(asked))
    stems = asked_stems_of(asked)
    assert (everywhere & stems, plain & stems) == every_stem(text.lower(), asked)
