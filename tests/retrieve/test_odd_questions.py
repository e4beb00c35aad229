"""Odd questions get honest labels: a query whose text, as the embedding model read it,
says nothing the store or a language knows (one letter repeated, keyboard mash, an emoji,
a hash, a dump cut by the model's 256-token window) is clear by its words alone, never by
its closeness in meaning (retrieve/content.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memctl.api.memory import RememberRequest, remember
from memctl.api.recall import RecallRequest, recall
from memctl.config import load_settings
from memctl.context import Context
from memctl.retrieve.content import says_something, seen_by_model
from memctl.retrieve.params import recall_params

MEMORIES = (
    "另外提交信息用中文写。",
    "以后数据库查询都要用 selectinload 预加载关联，不要在循环里查询。",
    "The order export runs with make export from the repository root.",
    "Deploys go out from the main branch through the GitHub Actions workflow.",
    "Use ruff for linting and formatting.",
)
# What MiniLM reads as [UNK] only (a word past the tokenizer's 100 letters), an emoji, a
# hash, keyboard mash: s31-viewer saw the first reach cosine 0.46 to the Chinese rule
ODD = ("a" * 5000, "x" * 300, "\U0001f600", "asdfghjkl", "d41d8cd98f00b204e9800998ecf8427e")
# A dump the model reads up to its window, and a question after it the model never read
PASTED = ("x" * 120 + " ") * 300 + "what is the commit message language and where is it?"


@pytest.fixture(scope="module")
def store(real_store: Context) -> Iterator[Context]:
    for text in MEMORIES:
        remember(real_store, RememberRequest(text))
    yield real_store


def clear_rows(ctx: Context, query: str) -> list[str]:
    found = recall(ctx, RecallRequest(query, limit=5, touch=False)).result.results
    assert found  # still offered, as possible matches
    return [r.match_why for r in found if r.clear]


@pytest.mark.parametrize("query", ODD)
def test_a_query_saying_nothing_gets_no_clear_match_by_meaning(store: Context, query: str) -> None:
    assert clear_rows(store, query) == []


def test_a_query_is_judged_on_what_the_model_read_of_it(store: Context) -> None:
    """Its words past the window are a sentence; what the model read of it is not: its
    cosine is no evidence, and the label says why."""
    assert says_something(PASTED, {})
    found = recall(store, RecallRequest(PASTED, limit=5, touch=False)).result.results
    assert found and not any(r.clear for r in found)
    assert "characters, the model's window, say nothing known" in found[0].match_why


def test_a_question_in_other_words_stays_clear_by_meaning(store: Context) -> None:
    rows = clear_rows(store, "how do we ship a release to production?")
    assert rows and "words 0.00" in rows[0]


def test_its_words_still_label_a_query_the_model_read_nothing_of() -> None:
    """A word the store holds says something, whatever the rest is."""
    assert says_something("asdfgh selectinload", {"selectinload": 2})
    assert not says_something("asdfgh selectinload", {"selectinload": 0})
    assert says_something("parseOrderId", {"order": 1})  # an identifier's parts


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("how do I run it?", True),  # a sentence: two function words
        ("où est le café", True),  # another language's
        ("a a a a", False),  # one function word, repeated
        ("the asdfgh", False),
        ("\U0001f680\U0001f525 ???", False),
        ("0x7ffe3a2b4c10 0x00007f8a1c2b3d40", False),
    ],
)
def test_a_text_says_something_by_two_function_words(text: str, says: bool) -> None:
    assert says_something(text, {}) is says


def test_the_model_reads_a_long_query_up_to_its_window() -> None:
    params = recall_params(load_settings())
    assert seen_by_model("short question", params) == "short question"
    read = seen_by_model("word " * 1000, params)
    assert 0 < len(read) < len("word " * 1000)
    assert len(seen_by_model("数据库" * 1000, params)) < len(read)  # a token is fewer letters
