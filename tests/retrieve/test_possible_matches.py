"""The possible matches a recall offers: each text once, and a line of tool notes after the
prose that says something."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from memctl.api.memory import RememberRequest, remember
from memctl.api.recall import RecallRequest, recall
from memctl.context import Context
from memctl.retrieve.pipeline import rarer_words_first
from memctl.retrieve.run import Candidate
from memctl.retrieve.stages.fuse import coverage
from memctl.store.message_search import get_message
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


NARRATED = "\n".join(
    [
        "user: the shop unit tests need the database",
        "assistant: Now let me run the shop unit tests:",
        "assistant: [tool Bash: make test]",
        "assistant: Let me run the unit tests again:",
        "assistant: The shop unit tests run with `make test-shop`, which starts the database.",
        "assistant: Perfect! Now let me run the unit tests once more:",
        "assistant: Let's also run the shop unit tests with the database up:",
    ]
)


def test_narration_of_a_step_ranks_below_what_was_said(make_ctx: Any) -> None:
    """ "Now let me run the tests:" holds the question's words and answers nothing: it is
    weighed as tool notes are, and is never alone a clear match."""
    ctx: Context = make_ctx()
    ingest_text(ctx, NARRATED, "narrated")
    found = recall(ctx, RecallRequest("how do I run the shop unit tests?", limit=5))
    results = found.result.results
    shown = [r.memory.content for r in results]
    answer = shown.index(NARRATED.splitlines()[4].removeprefix("assistant: "))
    # a line ending in a colon announces the next step, however it is worded
    narrated = [i for i, text in enumerate(shown) if text.endswith(":")]
    assert len(narrated) >= 2 and answer < min(narrated)
    assert any(shown[i].startswith("Let's also run") for i in narrated)
    assert not any(r.clear for r in results if r.memory.content.endswith(":"))


WROTE = "\n".join(
    [
        "user: make the shop's invoice export a module of its own",
        *(f"assistant: [tool Write: /src/shop/invoice_export_{n}.py]" for n in range(8)),
        "assistant: The invoice export now lives in its own package.",
    ]
)


def test_one_sessions_tool_notes_take_at_most_two_possible_rows(make_ctx: Any) -> None:
    """Eight files a session wrote, each named like the question: two of its notes are
    offered, not eight, and the list still holds the prose that says what was done."""
    ctx: Context = make_ctx()
    ingest_text(ctx, WROTE, "wrote")
    found = recall(ctx, RecallRequest("where is the invoice export code?", limit=10))
    shown = [r.memory.content for r in found.result.results]
    notes = [text for text in shown if text.startswith("[tool Write:")]
    assert len(notes) == 2, shown
    assert "The invoice export now lives in its own package." in shown


NAMED = "\n".join(
    [
        "user: the shop's order export is slow, make it faster",
        "assistant: Now let me look at how the order export works:",
        "assistant: [tool Read: /src/shop/app.py]",
        "assistant: Now let me examine the `export_orders` method of the shop app:",
        "assistant: [tool Edit: /src/shop/app.py]",
    ]
)


def test_narration_naming_code_weighs_as_what_was_said(make_ctx: Any) -> None:
    """ "Now let me examine the `export_orders` method:" says where the work is: it is
    weighed as any message is, above narration that names nothing."""
    ctx: Context = make_ctx()
    ingest_text(ctx, NAMED, "named")
    found = recall(ctx, RecallRequest("where is the order export implemented?", limit=10))
    shown = [r.memory.content for r in found.result.results]
    named = shown.index(NAMED.splitlines()[3].removeprefix("assistant: "))
    plain = shown.index(NAMED.splitlines()[1].removeprefix("assistant: "))
    assert named < plain, shown


UNRELATED = (
    "Sam prefers small pull requests.",
    "The staging database is called pelican-stage.",
    "Releases go out on Thursdays after the freeze.",
    "The on-call rota lives in the ops wiki.",
    "We pin node to 20 in every service.",
    "Invoices are exported nightly to the finance bucket.",
)


def test_a_row_with_no_evidence_is_no_possible_match(make_ctx: Any) -> None:
    """A memory whose vector points away from the question's and shares none of its words
    ("ok" at relevance -0.006, offered by MCP in a walk) is offered as nothing."""
    ctx: Context = make_ctx()
    for text in UNRELATED:
        remember(ctx, RememberRequest(text))
    found = recall(ctx, RecallRequest("quantum chromodynamics lattice gauge", limit=10))
    results = found.result.results
    shown = [(r.score, r.memory.content) for r in results]
    assert results and len(results) < len(UNRELATED), shown  # some are offered, not all
    assert all(r.score > 0 for r in results), shown


ROTATED = [
    "user: the billing service's signing keys expire next month",
    "assistant: The billing service keeps its signing keys in its own config directory, and "
    "every invoice it sends is signed with them; the signing keys of the billing service are "
    "loaded once at start.",
    "assistant: I read the billing service's startup code: it loads the signing keys from the "
    "config directory, checks their dates, and refuses to start when the signing keys have "
    "expired.",
    "assistant: The billing service's tests build throwaway signing keys of their own, so the "
    "expiry of the real signing keys does not show in the billing service's test run.",
]
ANSWER = "Vault's transit engine now swaps the keys every quarter."
ROTATION = "how are the billing service signing keys rotated?"


def test_a_sessions_third_clear_turn_gives_its_row_to_the_turn_that_answers(
    make_ctx: Any,
) -> None:
    """Four turns repeat the question's words and are clear; the short turn that answers
    holds one of them and is possible. With four rows, main showed the four clear turns
    only: the session's third clear turn gives its row to the answer, still labelled
    possible, and a larger limit shows that turn next."""
    ctx: Context = make_ctx()
    # a turn of its own: what came of the first turn's would be clear through it (outcome)
    ingest_text(ctx, "\n".join([*ROTATED, "user: ok", f"assistant: {ANSWER}"]), "rotated")
    rows = recall(ctx, RecallRequest(ROTATION, limit=4)).result.results
    shown = [r.memory.content for r in rows]
    assert len(rows) == 4 and shown[2] == ANSWER and not rows[2].clear, shown
    assert all(r.clear for i, r in enumerate(rows) if i != 2)
    more = [r.memory.content for r in recall(ctx, RecallRequest(ROTATION, limit=5)).result.results]
    assert more[:4] == shown  # the first rows of a larger limit are the smaller one's


def test_another_sessions_possible_turn_waits_for_the_rows_the_clear_ones_leave(
    make_ctx: Any,
) -> None:
    """The same answer said in another session: no session's clear turns give way to it."""
    ctx: Context = make_ctx()
    ingest_text(ctx, "\n".join(ROTATED), "rotated")
    ingest_text(ctx, f"user: keys\nassistant: {ANSWER}", "vault")
    rows = recall(ctx, RecallRequest(ROTATION, limit=4)).result.results
    assert len(rows) == 4 and all(r.clear for r in rows)
    assert ANSWER not in [r.memory.content for r in rows]


def test_a_sessions_possible_turn_holding_the_rarer_words_takes_its_sessions_first_row(
    make_ctx: Any,
) -> None:
    """Of one session's possible turns among the rows, the one holding more of the question's
    words by rarity comes first, in the rows that session's possible turns hold; another
    session's row and a clear turn stay where they are (pipeline.rarer_words_first). Every
    turn of ROTATED and every note says "billing service signing keys"; only the answer
    says "rotated"."""
    ctx: Context = make_ctx()
    said = "assistant: Vault rotated them last quarter; the billing team was told."
    ingest_text(ctx, "\n".join([*ROTATED, "user: ok", said]), "rotated")
    ingest_text(ctx, "user: keys\nassistant: The billing signing keys live in Vault.", "vault")
    for team in ("payments", "invoicing", "tax", "refunds"):  # the common words, by rarity
        remember(ctx, RememberRequest(f"The {team} team owns the billing service signing keys."))
    run = recall(ctx, RecallRequest(ROTATION, limit=4)).result.run
    assert run is not None

    def turn(key: str, clear: bool = False) -> Candidate:
        return Candidate(get_message(ctx.db, key).as_memory(), is_message=True, clear=clear)

    rows = [turn("rotated#2", clear=True), turn("rotated#3"), turn("vault#2"), turn("rotated#6")]
    assert coverage(run, rows[3]) > coverage(run, rows[1])  # "rotated" is the rarest word
    moved = [c.id for c in rarer_words_first(run, rows)]
    assert moved == ["rotated#2", "rotated#6", "vault#2", "rotated#3"]
    rows[1].clear = True  # a clear turn keeps its row
    assert [c.id for c in rarer_words_first(run, rows)] == [c.id for c in rows]


def test_a_tools_output_holds_none_of_the_rarer_words(make_ctx: Any) -> None:
    """A tool's output that repeats the question's words (a web search's results describing
    the topic) is not what the session made of it: it holds none of the question's words
    for the order (pipeline.rarer_words_first), so the turn saying what came of it takes
    the session's first possible row, and the output the last. A call with its output is
    ordered by its words as before."""
    ctx: Context = make_ctx()
    found = (
        "assistant: [tool result WebSearch: billing service signing keys rotated · how to "
        "rotate the signing keys of a billing service · signing keys rotated quarterly]"
    )
    said = "assistant: Vault rotated them last quarter; the billing team was told."
    ingest_text(ctx, "\n".join([*ROTATED, "user: ok", found, said]), "rotated")
    ingest_text(ctx, "user: keys\nassistant: The billing signing keys live in Vault.", "vault")
    for team in ("payments", "invoicing", "tax", "refunds"):  # the common words, by rarity
        remember(ctx, RememberRequest(f"The {team} team owns the billing service signing keys."))
    run = recall(ctx, RecallRequest(ROTATION, limit=4)).result.run
    assert run is not None

    def turn(key: str) -> Candidate:
        return Candidate(get_message(ctx.db, key).as_memory(), is_message=True)

    rows = [turn("rotated#6"), turn("vault#2"), turn("rotated#7")]
    assert rows[0].only_tool_output and not rows[2].says_nothing, [c.memory.content for c in rows]
    assert coverage(run, rows[0]) > coverage(run, rows[2])  # the output holds more of them
    moved = [c.id for c in rarer_words_first(run, rows)]
    assert moved == ["rotated#7", "vault#2", "rotated#6"]
    called = replace(rows[0].memory, content=f"[tool WebSearch: signing keys]\n{found[11:]}")
    assert not Candidate(called, is_message=True).only_tool_output
