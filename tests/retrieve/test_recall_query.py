"""Query analysis: identifiers, phrases, paths, stop words, time windows, languages."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.memories import operations as memories
from memctl.retrieve import when
from memctl.retrieve.pipeline import recall
from memctl.retrieve.query import (
    analyse,
    is_english,
    lexical_alternatives,
    names,
    split_identifier,
    without_names,
)
from memctl.retrieve.when import time_window
from memctl.store.fts import fts_phrases
from memctl.store.memories import MemoryFilter, fts_rank
from tests.fakes import HashEmbedder
from tests.ollama_server import FakeOllama

NOW = datetime(2026, 6, 10, 12, tzinfo=UTC)  # a Wednesday


@pytest.mark.parametrize(
    ("token", "parts"),
    [
        ("parseUserId", ["parse", "user", "id"]),
        ("parse_user_id", ["parse", "user", "id"]),
        ("parse-user-id", ["parse", "user", "id"]),
        ("memctl.retrieve.pipeline", ["memctl", "retrieve", "pipeline"]),
        ("HTTPServerError", ["http", "server", "error"]),
        ("sha256sum", ["sha", "256", "sum"]),
        ("OTel", ["otel"]),  # a name in mixed case is one word: "o" is none
        ("iOS_version", ["ios", "version"]),
    ],
)
def test_identifiers_are_split(token: str, parts: list[str]) -> None:
    assert split_identifier(token) == parts


def test_alternatives_keep_phrases_and_paths_whole_and_skip_stop_words() -> None:
    found = lexical_alternatives(
        'where is "make release" used in memctl/cli/main.py for parseUserId'
    )
    assert ("make", "release") in found
    assert ("memctl", "cli", "main", "py") in found
    assert ("parse", "user", "id") in found and ("parseuserid",) in found and ("user",) in found
    assert ("where",) not in found and ("is",) not in found and ("for",) not in found
    assert lexical_alternatives("what is it") == [("what",), ("is",), ("it",)]  # only stop words


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What is Caroline's identity?", ("Caroline",)),
        ("which database does the Shop API use with PostgreSQL", ("Shop API", "PostgreSQL")),
        ("When does the New York Stock Exchange open?", ("New York Stock Exchange",)),
        ("Caroline went home. Then she slept", ()),  # a sentence's first word is no name
        ("What Is The Capital Of Australia", ()),  # title case marks no names
        ("how do we deploy", ()),
        ("did we upgrade iOS or macOS?", ("iOS", "macOS")),
    ],
)
def test_names_are_the_words_capitalised_where_a_sentence_would_not(
    text: str, expected: tuple[str, ...]
) -> None:
    assert names(text) == expected


@pytest.mark.parametrize(
    ("text", "left_out", "expected"),
    [
        ("What are Joanna's hobbies?", {"Joanna"}, "What are hobbies?"),
        ("What did Jon and Gina both start?", {"Jon", "Gina"}, "What did and both start?"),
        ("where does the Shop API log to", {"Shop API"}, "where does the log to"),
        ("who is Jonathan?", {"Jon"}, "who is Jonathan?"),  # whole words only
        ("Caroline's?", {"Caroline"}, "Caroline's?"),  # nothing else to embed: kept
        ("What are Joanna's hobbies?", set(), "What are Joanna's hobbies?"),
    ],
)
def test_the_vector_legs_embed_the_query_without_the_common_names(
    text: str, left_out: set[str], expected: str
) -> None:
    assert without_names(text, frozenset(left_out)) == expected


@given(st.text())
def test_any_query_makes_a_valid_fts_expression(text: str) -> None:
    expression = fts_phrases(lexical_alternatives(text))
    assert expression is None or expression.count('"') % 2 == 0


def test_an_identifier_query_finds_the_snake_case_memory(ctx: Context) -> None:
    target = memories.remember(ctx, "parse_user_id lives in auth/ids.py and accepts UUIDs")
    memories.remember(ctx, "users parse the release notes by hand")
    (hit, _), *_ = fts_rank(ctx.db, lexical_alternatives("parseUserId"), 5, MemoryFilter())
    assert hit == target.id
    assert recall(ctx, "parseUserId", touch=False).results[0].memory.id == target.id
    camel = memories.remember(ctx, "call getUserName before rendering")
    (hit, _), *_ = fts_rank(ctx.db, lexical_alternatives("get_user_name"), 5, MemoryFilter())
    assert hit == camel.id


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("what did we change yesterday?", "2026-06-09", "2026-06-10"),
        ("what did I get done last night?", "2026-06-09", "2026-06-10"),
        ("昨晚改了什么", "2026-06-09", "2026-06-10"),
        ("deploys last week", "2026-06-01", "2026-06-08"),
        ("the outage in May", "2026-05-01", "2026-06-01"),
        ("in July", "2025-07-01", "2025-08-01"),
        ("release on 2026-03-04", "2026-03-04", "2026-03-05"),
        ("May 3rd, 2025", "2025-05-03", "2025-05-04"),
        ("March 2024 budget", "2024-03-01", "2024-04-01"),
        ("last friday's incident", "2026-06-05", "2026-06-06"),
        ("about two years ago", "2023-06-11", "2025-06-10"),
        ("上周的会议", "2026-06-01", "2026-06-08"),
        ("what did we cook on 9 November, 2025?", "2025-11-09", "2025-11-10"),
        ("the 3rd of May", "2026-05-03", "2026-05-04"),
        ("what shipped in 2024", "2024-01-01", "2025-01-01"),
        ("what shipped recently in 2025", "2025-01-01", "2026-01-01"),
        ("where was I between August 11 and August 15 2025?", "2025-08-11", "2025-08-16"),
        ("from 2026-05-03 to 2026-05-09", "2026-05-03", "2026-05-10"),
        ("from December 28 to January 3", "2025-12-28", "2026-01-04"),
    ],
)
def test_time_expressions_become_windows(text: str, start: str, end: str) -> None:
    window = time_window(text, NOW)
    assert window is not None
    assert (window.start.date().isoformat(), window.end.date().isoformat()) == (start, end)


@pytest.mark.parametrize(
    "text",
    [
        "may we deploy on fridays?",
        "march through the backlog",
        "x",
        "plans for 2027",
        "the 2024 budget",
    ],
)
def test_words_that_only_look_like_times_are_not_windows(text: str) -> None:
    assert time_window(text, NOW) is None


DATE_WORDS = (
    "between and to from - in on of May Feb. 31 0 3rd 1999 2024 2099 2024-02-30 2024-13-01 "
    "2024-05-03 , yesterday"
).split()


@given(st.lists(st.sampled_from(DATE_WORDS) | st.text(max_size=5), max_size=10))
def test_any_run_of_date_words_is_a_valid_window_or_none(words: list[str]) -> None:
    window = time_window(" ".join(words), NOW)  # impossible dates and ranges never raise
    assert window is None or window.start < window.end


def test_the_time_phrase_leaves_the_full_text_search() -> None:
    analysed = analyse("what broke in production last week", NOW)
    assert analysed.window is not None and analysed.window.phrase == "last week"
    assert ("week",) not in analysed.alternatives and ("production",) in analysed.alternatives
    ranged = analyse("what did we do between May 3 and May 9 2026?", NOW)
    assert ranged.window is not None and ranged.window.phrase == "between May 3 and May 9 2026"
    assert ranged.words == []  # nothing but the time: its memories answer it


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("what did we do last time?", "last time"),
        ("Where did I leave off?", "leave off"),
        ("what was I working on?", "was I working on"),
        ("in our previous conversation about omelettes, how many eggs?", None),
        # the latest time of an event, which the event's words find; another "last"
        ("When was the last time Caroline went hiking?", None),
        ("What gift did I buy for Rebecca last Christmas?", None),
        ("what was I working on in the parser?", None),
    ],
)
def test_words_asking_for_the_latest_work(text: str, phrase: str | None) -> None:
    assert when.latest_phrase(text) == phrase


def test_the_words_that_only_say_work_was_done_leave_a_timed_question() -> None:
    """With a time or the latest work named, "working on", "get done", "leave off" and "in
    this project" name no subject: nothing is left to search, its memories answer it."""
    assert analyse("what was I working on yesterday?", NOW).words == []
    assert analyse("what did I get done last night?", NOW).words == []
    latest = analyse("what did we do last time in this project?", NOW)
    assert (latest.latest, latest.window, latest.words) == ("last time", None, [])
    assert analyse("what did we work on in the parser last week?", NOW).words == ["work", "parser"]
    assert analyse("what was I working on in the parser?", NOW).words == ["working", "parser"]


def test_language_guess() -> None:
    assert is_english("how do we deploy the billing service?")
    assert is_english("parseUserId")
    assert not is_english("如何部署计费服务")
    assert not is_english("comment est-ce que le service est déployé")
    assert not is_english("wie wird der Dienst ausgerollt und ist das sicher")


def test_a_non_english_query_is_also_searched_in_english(ollama_server: FakeOllama) -> None:
    settings = load_settings(overrides={"ollama.host": ollama_server.url, "recall.translate": "1"})
    ctx = Context(settings, embedder=HashEmbedder())
    target = memories.remember(ctx, "We deploy the billing service with helm")
    memories.remember(ctx, "lunch is at noon on thursdays")
    ollama_server.script_chat({"english": "how do we deploy the billing service?"})
    result = recall(ctx, "如何部署计费服务", touch=False)
    assert result.results[0].memory.id == target.id
    assert "bm25_en" in result.results[0].ranks and "vector_en" in result.results[0].ranks
    (request,) = ollama_server.requests_to("/api/chat")
    assert request["messages"][1]["content"] == "如何部署计费服务"
    ollama_server.fail_next(500, "model crashed")
    fallback = recall(ctx, "如何部署计费服务", touch=False)
    assert any("no English pass" in note for note in fallback.warnings)
    assert recall(ctx, "deploy billing", touch=False).results  # English: no translation asked
    assert len(ollama_server.requests_to("/api/chat")) == 2
    ctx.close()


# Words near the time rules' own (and some of them), in any case, with ordinary words.
NEAR_TIME = (
    "May", "MAY", "mayor", "Mon", "monday", "Sept", "dec.", "decade", "Jan", "june", "augur",
    "ago", "agog", "a few", "several", "two", "weeks", "Month", "YEAR", "daylight", "today",
    "tonight", "this morning", "recently", "lately", "last", "this", "past", "in", "on", "of",
    "between", "from", "and", "to", "-", "the", "deploy", "release", "octopus", "marching",
    "2024", "3rd", "11", "x9", ".", ",",
)  # fmt: skip


@given(st.lists(st.sampled_from(NEAR_TIME), max_size=8), st.sampled_from((" ", "  ", "\n")))
def test_a_text_passed_over_names_no_time(words: list[str], space: str) -> None:
    """A text ``may_name_time`` passes over (its rules neither compiled nor tried) is one
    that no rule matches."""
    text = space.join(words)
    if not when.may_name_time(text):
        assert not any(pattern.search(text) for pattern, _ in when.RULES), text
        assert time_window(text, datetime(2024, 6, 1, tzinfo=UTC)) is None


def test_the_time_rules_are_tried_only_where_they_could_match() -> None:
    for text in ("how do we deploy to production?", "who owns the billing service"):
        assert not when.may_name_time(text)
    for text in ("what did we decide in May?", "two weeks ago", "on 3 March", "昨天的会议"):
        assert when.may_name_time(text) and time_window(text, datetime.now(UTC)) is not None
