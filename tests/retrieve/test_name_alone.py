"""A name the store knows, and nothing else of the question: a possible match, never a clear
one (fuse.name_alone), on the real model and the Quick start's memories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memctl.api import memory as api
from memctl.context import Context
from memctl.retrieve.pipeline import recall

EXAMPLES = Path(__file__).parents[2] / "examples" / "memories.jsonl"


@pytest.fixture
def quick_start(real_ctx: Context) -> Context:
    for line in EXAMPLES.read_text("utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            api.remember(real_ctx, api.RememberRequest(record["content"], category="events"))
    return real_ctx


def _labels(ctx: Context, question: str) -> dict[str, str]:
    found = recall(ctx, question, touch=False)
    return {r.memory.content: r.match for r in found.results}


def _about(labels: dict[str, str], words: str) -> str:
    return next(match for content, match in labels.items() if words in content)


def test_a_name_the_store_knows_is_no_clear_answer_to_what_no_memory_says(
    quick_start: Context,
) -> None:
    # one memory names Sam, and says nothing of an editor
    assert "clear" not in _labels(quick_start, "what editor does Sam use?").values()
    found = recall(quick_start, "what editor does Sam use?", touch=False)
    sam = next(r for r in found.results if "Sam prefers" in r.memory.content)
    assert "holds Sam and none of the query's other words" in sam.match_why
    # a name with what is asked of it is still a clear answer
    assert _about(_labels(quick_start, "how does Tidepool deploy?"), "make release") == "clear"
    reviews = _labels(quick_start, "who reviews Sam's pull requests?")
    assert _about(reviews, "Sam prefers small pull requests") == "clear"


def test_a_name_many_memories_mention_is_no_clear_answer_when_none_says_what_is_asked(
    quick_start: Context,
) -> None:
    # five of the fifteen memories name Tidepool, and none says anything of a logo
    question = "what is Tidepool's logo colour?"
    assert "clear" not in _labels(quick_start, question).values()
    found = recall(quick_start, question, touch=False)
    engineer = next(r for r in found.results if "backend engineer" in r.memory.content)
    assert "holds Tidepool and none of the query's other words" in engineer.match_why
    # one memory of Tidepool that says what is asked keeps the names rule for every one
    rotation = _labels(quick_start, "when does Tidepool's on-call rotate?")
    assert _about(rotation, "On-call rotates weekly") == "clear"
    assert _about(rotation, "backend engineer on Tidepool") == "clear"
