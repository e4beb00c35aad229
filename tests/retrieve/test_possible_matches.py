"""The possible matches a recall offers: each text once, and a line of tool notes after the
prose that says something."""

from __future__ import annotations

from typing import Any

from memctl.api.recall import RecallRequest, recall
from memctl.context import Context
from tests.ingesting import ingest_text

READ = "[tool Read: /src/shop/tests/test_unit.py]"
SESSION = "\n".join(
    [
        "user: the shop unit tests are flaky",
        f"assistant: {READ}",
        f"assistant: {READ}",
        "assistant: [tool Edit: /src/shop/tests/test_unit.py]",
        f"assistant: {READ}",
        "assistant: The shop's unit tests share one temporary directory, so two workers race.",
    ]
)


def test_possible_matches_offer_each_text_once_and_prose_before_tool_notes(
    make_ctx: Any,
) -> None:
    ctx: Context = make_ctx()
    ingest_text(ctx, SESSION, "flaky")
    found = recall(ctx, RecallRequest("why do the shop unit tests fail at random?", limit=5))
    shown = [r.memory.content for r in found.result.results]
    assert any(not r.clear for r in found.result.results), "possible matches fill the limit"
    assert shown.count(READ) <= 1  # read three times, offered once
    prose = [i for i, text in enumerate(shown) if not text.startswith("[tool ")]
    notes = [i for i, text in enumerate(shown) if text.startswith("[tool ")]
    assert prose and max(prose) < min(notes, default=len(shown))
