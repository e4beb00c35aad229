"""A question in a script the embedding model does not read: its closeness in meaning
labels nothing (English MiniLM places any two Chinese texts close), its words still do."""

from __future__ import annotations

import pytest

from memctl.api.memory import RememberRequest, remember
from memctl.api.recall import PromptRequest, RecallRequest, prompt_context, recall
from memctl.context import Context
from memctl.retrieve.query import in_unread_script

RULES = (
    "导出的 Excel 里日期格式也不对，应该是 YYYY-MM-DD，现在是美国格式。",
    "另外提交信息用中文写。",
    "以后数据库查询都要用 selectinload 预加载关联，不要在循环里查询。",
    "The order export runs with make export from the repository root.",
)


@pytest.mark.parametrize(
    ("text", "unread"),
    [
        ("明天北京的天气怎么样", True),
        ("这个项目的测试怎么跑？", True),
        ("как запустить тесты", True),
        ("서울의 내일 날씨는 어때요", True),
        ("commit message 用什么语言写？", False),  # mostly Latin letters: its words are read
        ("où est le café", False),
        ("why did the export fail", False),
    ],
)
def test_a_query_is_in_an_unread_script_when_most_letters_are_not_latin(
    text: str, unread: bool
) -> None:
    assert in_unread_script(text) is unread


def test_an_unrelated_chinese_question_gets_no_clear_match_and_no_block(
    real_ctx: Context,
) -> None:
    """Unrelated Chinese questions reached cosines of 0.44-0.75 to a project's Chinese
    memories, so they were clear and every prompt in Chinese was given a block."""
    for text in RULES:
        remember(real_ctx, RememberRequest(text))
    for question in ("明天北京的天气怎么样", "蒙娜丽莎是谁画的", "珠穆朗玛峰有多高"):
        results = recall(real_ctx, RecallRequest(question, limit=5)).result.results
        assert results and not any(r.clear for r in results)  # still offered, as possible
        assert prompt_context(real_ctx, PromptRequest(prompt=question)).block == ""
    # its words still find it: a Latin identifier the memory holds, and its Chinese words
    # (a run's bigrams, store/cjk.py)
    asked = "selectinload 用来预加载数据库的关联吗？为什么要用它"
    assert in_unread_script(asked)
    found = recall(real_ctx, RecallRequest(asked, limit=5)).result.results
    assert "selectinload" in found[0].memory.content and found[0].clear


def test_a_chinese_question_is_clear_by_its_words_and_not_by_function_words(
    real_ctx: Context,
) -> None:
    """A run of Chinese was one word to the full-text search: a question shared no word with
    its answer unless it wrote the whole run. Its bigrams are its words now; bigrams of
    function letters (我们, 什么, 这个) are not, as English "we" and "what" are not."""
    for text in RULES:
        remember(real_ctx, RememberRequest(text))
    asked = "导出文件的日期格式应该用哪种？"
    found = recall(real_ctx, RecallRequest(asked, limit=5)).result.results
    assert "YYYY-MM-DD" in found[0].memory.content and found[0].clear
    assert "YYYY-MM-DD" in prompt_context(real_ctx, PromptRequest(prompt=asked)).block
    for unrelated in ("我们现在是不是应该去吃饭了？", "这个是什么？"):
        results = recall(real_ctx, RecallRequest(unrelated, limit=5)).result.results
        assert not any(r.clear for r in results)
