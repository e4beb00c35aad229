"""What a prompt asks (retrieve/asking.py): the per-prompt hook recalls for the sentences
typed to ask, not for the token, log, code or thanks that came with them."""

from __future__ import annotations

import pytest

from memctl.api import recall
from memctl.api.recall import PromptRequest
from memctl.context import Context
from memctl.ingest.graph import index_pending
from memctl.memories.operations import remember
from memctl.retrieve.asking import MAX_QUESTIONS, asked, cased, searched_for

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


def test_the_per_prompt_block_says_no_password_of_the_prompt_back(
    ctx: Context,
) -> None:
    """The heading quoted the prompt's questions as typed: a password said in one went
    back into the session (and the client's transcript of it)."""
    fact = "We deploy a release with make release from the main branch."
    remember(ctx, fact)
    prompt = f"{QUESTION} The release password is Zebrafinch-204, right?"
    block = recall.prompt_context(ctx, PromptRequest(prompt)).block
    assert fact in block and "Memories relevant to: How do we deploy a release?" in block
    assert "Zebrafinch" not in block


def test_an_ide_copy_of_a_mentioned_file_is_not_what_the_prompt_asks(ctx: Context) -> None:
    """Claude Code's IDE extension copies an @-mentioned file after the person's words
    (``<context ref="file://...">``): its sentences were asked as theirs, and an unrelated
    question got a block about the file."""
    fact = "We deploy a release with make release from the main branch."
    remember(ctx, fact)
    attached = (
        '\n<context ref="file:///home/u/repo/RELEASE.md">\n# Release\n\n'
        "We deploy a release with make release from the main branch.\n</context>"
    )
    unrelated = recall.prompt_context(
        ctx, PromptRequest(f"What is the boiling point of mercury?{attached}")
    )
    assert unrelated.block == ""
    asking = recall.prompt_context(ctx, PromptRequest(f"{QUESTION}{attached}")).block
    assert fact in asking and "context ref" not in asking


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


# Tools' output as the tools document it (s33-prompt): each pasted under the question.
PASTED_OUTPUT = {
    "java": 'Exception in thread "main" java.lang.IllegalStateException: closed\n'
    "\tat com.acme.Pool.take(Pool.java:88)\n"
    "Caused by: java.io.IOException: Broken pipe\n\t... 12 more",
    "python chained": "Traceback (most recent call last):\n"
    '  File "app.py", line 3, in <module>\n    load()\n'
    "requests.exceptions.ConnectionError: refused\n\n"
    "During handling of the above exception, another exception occurred:\n\n"
    "Traceback (most recent call last):\nRuntimeError: gave up",
    "node": "/srv/app/index.js:12\n  throw new Error('no config');\n  ^\n\n"
    "Error: no config\n    at Object.<anonymous> (/srv/app/index.js:12:9)\n"
    "    at node:internal/main/run_main_module:28:49\n\nNode.js v20.11.0",
    "npm": "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm error Missing script: build",
    "rust panic": "thread 'main' panicked at src/main.rs:4:5:\n"
    "index out of bounds: the len is 3 but the index is 7\n"
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
    "cargo": "   Compiling acme v0.1.0 (/src/acme)\nerror[E0308]: mismatched types\n"
    ' --> src/main.rs:2:18\n  |\n2 |     let x: i32 = "seven";\n'
    "  |            ---   ^^^^^^^ expected `i32`, found `&str`\n"
    'error: could not compile `acme` (bin "acme") due to 1 previous error',
    "go": "panic: runtime error: invalid memory address or nil pointer dereference\n"
    "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4553e4]\n\n"
    "goroutine 1 [running]:\nmain.load(0x0)\n\t/src/main.go:9 +0x24\nexit status 2",
    "go test": "=== RUN   TestLoad\n    load_test.go:14: got 3, want 4\n"
    "--- FAIL: TestLoad (0.00s)\nFAIL\nFAIL\tacme/load\t0.004s",
    "pytest": "============================= test session starts ==============================\n"
    "collected 3 items\n\ntests/test_load.py .F.                                  [100%]\n\n"
    "____________________________________ test_load ____________________________________\n"
    ">       assert load() == 4\nE       assert 3 == 4\n\n"
    "tests/test_load.py:7: AssertionError\n"
    "FAILED tests/test_load.py::test_load - assert 3 == 4",
    "tsc": "src/load.ts(7,3): error TS2322: Type 'string' is not assignable to type 'number'.\n"
    "src/app.ts:12:5 - error TS2304: Cannot find name 'loadConfig'.",
    "shell": "(venv) dev@box:~/src/acme$ make test\nNo rule to make target 'test'.\n"
    "Stop.\n~/src/acme  $ ls\nMakefile  README.md",
    "css": "ul#models li span {\n  display: ruby-base;\n  font-size: 0.7em;\n}",
}


@pytest.mark.parametrize("kind", sorted(PASTED_OUTPUT))
def test_what_tools_print_is_no_part_of_what_is_asked(kind: str) -> None:
    assert asked(f"{QUESTION}\n\n{PASTED_OUTPUT[kind]}") == [QUESTION]
    assert asked(f"{PASTED_OUTPUT[kind]}\n\n{QUESTION}") == [QUESTION]


def test_a_line_wedged_in_a_paste_goes_with_it_and_a_question_there_stays() -> None:
    log = "01:12:38.208\n Cloning into '/srv'...\n01:12:38.300\n Host key failed.\n01:12:38.301"
    assert asked(f"Any idea?\n\n{log}") == ["Any idea?"]
    diff = "@@ -38,4 +38,3 @@\n def name(\n-    old = 1\n+    new = 2\n return new"
    assert asked(f"{QUESTION}\n{diff}") == [QUESTION]
    asking = "$ make test\nWhy does it stop here?\nmake: *** No rule"
    assert asked(asking) == ["Why does it stop here?"]


def test_a_fence_at_the_end_of_a_line_closes_its_block() -> None:
    trace = "```\nUncaught Error: branch node is `null`\n    at index.js:195:20```"
    assert asked(f"{trace}\n\n{QUESTION}") == [QUESTION]
    assert asked(f"```x = 1```\n{QUESTION}") == [QUESTION]


def test_claude_codes_line_ending_backslash_is_no_word() -> None:
    assert asked("The CSS:\\\n\\\nCan you fix it?") == ["The CSS: Can you fix it?"]


def test_a_sentence_that_only_points_at_a_file_is_left_out() -> None:
    for pointer in ("(see src/components/Header.tsx)", "I have ~/site/config.yaml open."):
        assert asked(f"{QUESTION} {pointer}") == [QUESTION]
    kept = "Fix the date format in lib/utils/date_format.py."
    assert asked(f"{QUESTION} {kept}") == [f"{QUESTION} {kept}"]
    assert asked("/init") == ["/init"]


def test_a_question_under_a_long_paste_gets_its_block(ctx: Context) -> None:
    """The hook read the prompt's first 2,000 characters: a question under a longer paste
    was never read."""
    fact = "We deploy a release with make release from the main branch."
    remember(ctx, fact)
    remember(ctx, "The staging cluster runs k3s on the office rack.")
    log = "\n".join(f"2024-06-13 18:18:{i % 60:02d} INFO request {i} done" for i in range(80))
    assert len(log) > recall.PROMPT_CHARS
    block = recall.prompt_context(ctx, PromptRequest(f"{log}\n\n{QUESTION}")).block
    assert fact in block


def test_a_question_typed_in_lower_case_names_what_the_graph_knows(ctx: Context) -> None:
    """In lower case the names that anchor a question were ordinary words to recall."""
    remember(ctx, "Caroline moved to Sweden in 2021 to work at Spotify.")
    index_pending(ctx.db)  # the knowledge graph, as maintain reads it
    assert cased(ctx.db, "when did caroline move to sweden") == "when did Caroline move to Sweden"
    assert cased(ctx.db, "When did caroline move?") == "When did caroline move?"
    assert cased(ctx.db, "what is the capital of peru") == "what is the capital of peru"


def test_an_assistant_s_turn_on_a_pasted_client_screen_is_not_asked() -> None:
    """Claude Code's screen indents an assistant's turn under its ● mark, a blank line
    between: the turn's report (its questions the assistant's) was asked as typed, and an
    unrelated question under such a screen got a block about the screen's project."""
    screen = (
        "● repiq スキルですね。いくつか試してみます。\n\n"
        "  まずスキルの内容を確認して、いくつかのリポジトリで動作を見てみます。\n"
        "  この3つはバグの可能性があるので、コードを見てみましょうか？\n"
    )
    question = "What is the capital of Australia?"
    assert asked(f"{question}\n\n{screen}") == [question]
    assert asked(f"{screen}\n{question}") == [question]
    assert asked(f"{question}\n  It moved in 1927.") == [f"{question} It moved in 1927."]
