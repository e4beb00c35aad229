"""Which session messages only ask a question (retrieve/echo.py): a real user's turns."""

from __future__ import annotations

import pytest

from memctl.retrieve.echo import only_asks


@pytest.mark.parametrize(
    "text",
    [
        "which reverse proxy sits in front of the app?",
        "How do we deploy the billing service? Which cluster does it run on?",
        "how do we deploy the billing service",
        "what's the command to rotate the keys",
        "can you walk me through the manual testing steps?",
    ],
)
def test_a_users_question_only_asks(text: str) -> None:
    assert only_asks("user", text)


@pytest.mark.parametrize(
    "text",
    [
        "We use nginx today. Should we move to Caddy?",
        "When you deploy, use helm.",
        "Fix the bug in parser.py",
        "Can you recommend a trail near Denver? I just moved here last month.",
        "",
    ],
)
def test_a_message_stating_anything_does_not(text: str) -> None:
    assert not only_asks("user", text)


def test_an_assistants_question_closes_a_reply_and_is_not_one() -> None:
    assert not only_asks("assistant", "Shall I run the tests?")
