"""What a prompt asks (retrieve/asking.py): the per-prompt hook recalls for the sentences
typed to ask, not for the token, log, code or thanks that came with them."""

from __future__ import annotations

import pytest

from memctl.api import recall
from memctl.api.recall import PromptRequest
from memctl.context import Context
from memctl.memories.operations import remember
from memctl.retrieve.asking import MAX_QUESTIONS, asked, searched_for

QUESTION = "How do we deploy a release?"
TOKEN = "ghp_" + "yJofZDRNlInq29a4amhJdMTxEEnNI8CHasWJ"
LOG = (
    "2024-06-13 18:18:02 INFO  [main] Starting service on port 7952\n"
    "2024-05-19 13:36:07 ERROR [worker-3] request failed: upstream timed out after 30s"
)
TRACE = (
    'Traceback (most recent call last):\n  File "billing/cli.py", line 53, in <module>\n'
    "    main()\nKeyError: 'config'"
)


@pytest.mark.parametrize(
    "prompt",
    [
        f"{QUESTION} My token: {TOKEN}",
        f"{QUESTION}\n\n{LOG}",
        f"{QUESTION}\n{TRACE}",
        f"{QUESTION}\n\n```python\ndef total(items):\n    return sum(items)\n```",
        f"Hi! {QUESTION} Thanks so much.",
        f"Hey, quick question.\n{QUESTION}\n\nCheers.",
    ],
)
def test_a_prompt_asks_its_question_not_what_came_with_it(prompt: str) -> None:
    assert asked(prompt) == [QUESTION]


def test_a_question_is_asked_with_the_sentences_around_it() -> None:
    prompt = "I get a 502 from the billing service after a deploy. Any idea?"
    assert asked(prompt) == [prompt]
    assert asked(f"{prompt} Thanks!") == [prompt]
    context = "Can you update these tests? We only pick the latest path now."
    assert asked(f"{context}\n{TRACE}") == [context]


def test_each_question_of_a_prompt_is_asked_on_its_own() -> None:
    second = "Also, can you fix the failing lint check?"
    assert asked(f"{QUESTION} {second}") == [QUESTION, second]
    assert asked(f"{QUESTION} Any idea?") == [f"{QUESTION} Any idea?"]
    services = ["billing", "search", "auth", "ingest", "mail"][: MAX_QUESTIONS + 1]
    many = " ".join(f"How do we deploy the {name} service?" for name in services)
    assert len(asked(many)) == MAX_QUESTIONS


def test_a_question_in_japanese_or_korean_asks_without_a_question_mark() -> None:
    deploy, staging = "デプロイの方法は何でしたっけ。", "ステージングのサーバーはどこですか"
    assert asked(f"{deploy}{staging}") == [deploy, staging]
    assert asked("배포 방법이 뭐였나요. 스테이징 서버는 어디인가요") == [
        "배포 방법이 뭐였나요.",
        "스테이징 서버는 어디인가요",
    ]


def test_a_question_ending_in_a_number_ends_its_sentence() -> None:
    asked_then = "Where did we go in 2023?"
    assert asked(f"{asked_then} (token = {TOKEN})") == [asked_then]
    assert asked(f"{asked_then} Also, can you fix the lint check?") == [
        asked_then,
        "Also, can you fix the lint check?",
    ]


def test_a_prompt_that_is_only_a_paste_is_recalled_for_whole() -> None:
    assert asked(LOG) == [" ".join(LOG.split())]
    assert asked(f"  {QUESTION}  ") == [QUESTION]


def test_the_per_prompt_block_holds_with_a_token_or_a_log_and_names_neither(
    ctx: Context,
) -> None:
    """Recalled whole, the token's twenty parts no memory writes took the block away
    (s31-copilot2); the block's heading names the question, not the token."""
    fact = "We deploy a release with make release from the main branch."
    remember(ctx, fact)
    remember(ctx, "The staging cluster runs k3s on the office rack.")
    for prompt in (QUESTION, f"{QUESTION} My token: {TOKEN}", f"{QUESTION}\n\n{LOG}"):
        block = recall.prompt_context(ctx, PromptRequest(prompt)).block
        assert fact in block
        assert TOKEN not in block and "upstream" not in block
    unrelated = f"What is the capital of Mongolia? My token: {TOKEN}\n{LOG}"
    assert recall.prompt_context(ctx, PromptRequest(unrelated)).block == ""


def test_two_questions_of_one_prompt_each_bring_their_memory(ctx: Context) -> None:
    deploy = "We deploy a release with make release from the main branch."
    staging = "The staging cluster runs k3s on the office rack."
    remember(ctx, deploy)
    remember(ctx, staging)
    prompt = f"{QUESTION} Also, where does the staging cluster run? Thanks!"
    found = recall.prompt_context(ctx, PromptRequest(prompt))
    assert deploy in found.block and staging in found.block
    assert "Memories relevant to: How do we deploy a release? Also, where does" in found.block
    small = recall.prompt_context(ctx, PromptRequest(prompt, budget=20))
    assert len(small.ids) == 1  # one question's memory fills the budget of both


def test_each_question_keeps_the_sentences_that_do_not_ask() -> None:
    about = "I wanted to check on our talk about the billing service."
    first, second = "Which port does it listen on?", "Who deployed it last?"
    assert asked(f"{about} {first} {second}") == [f"{about} {first}", f"{about} {second}"]
    assert asked("The agent exited at once. Why?") == ["The agent exited at once. Why?"]


def test_recall_searches_what_a_query_asks_and_a_typed_query_as_written() -> None:
    assert searched_for(f"{QUESTION}\n\n{LOG}") == QUESTION
    assert searched_for(f"{QUESTION} My token: {TOKEN}") == QUESTION
    typed = "deploy  release;  why?"
    assert searched_for(typed) == typed
    assert searched_for(LOG) == LOG  # a log alone is searched for as pasted


def test_recall_of_a_question_with_a_log_pasted_is_no_clear_match(ctx: Context) -> None:
    """Searched whole, the log's words made the sessions that quote such lines clear
    matches to a question about nothing stored; the log alone still finds them."""
    remember(ctx, "The worker-3 request failed: upstream timed out after 30s; pool raised.")
    remember(ctx, "Starting service on port 7952 takes a minute after a deploy.")
    found = recall.recall(ctx, recall.RecallRequest(f"Who won the cup?\n\n{LOG}", touch=False))
    assert found.result.clear == []
    assert recall.recall(ctx, recall.RecallRequest(LOG, touch=False)).result.clear
