"""Session messages in the ranking (issue 33, LongMemEval with sessions): a message far in
meaning is no clear match by its words alone; a question that counts over time gets one
message from each session first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memctl.context import Context
from memctl.model import Memory, format_time
from memctl.retrieve.run import Candidate
from memctl.retrieve.stages.fuse import fuse
from memctl.retrieve.stages.sessions_cover import (
    COVERAGE_FACTOR,
    compares_events,
    counts_over_time,
    sessions_cover,
)
from tests.cli.test_cli import ok
from tests.retrieve.test_recall_stages import NOW, make_run


def message(key: str, text: str = "a message", score: float = 1.0, clear: bool = True) -> Candidate:
    session = key.split("#")[0]
    memory = Memory(content=text, id=key, session_id=session, created_at=format_time(NOW))
    return Candidate(memory, score=score, is_message=True, clear=clear)


def test_a_message_far_in_meaning_is_no_clear_match_by_its_words_alone(ctx: Context) -> None:
    run = make_run(ctx, "How many different doctors did I visit?")
    run.word_weights = {"many": 1.0, "different": 1.0, "doctors": 1.0, "visit": 1.0}
    parks = "Palm Springs has many different parks to visit at dusk."
    found = []
    for cosine in (None, 0.05, 0.4):  # not measured; far; close enough
        candidate = Candidate(Memory(content=parks, created_at=format_time(NOW)), is_message=True)
        candidate.ranks, candidate.raw = {"sessions": 1}, {"sessions": -4.0}
        if cosine is not None:
            candidate.raw["session_vector"] = 1.0 - cosine
        found.append(candidate)
    fuse(run, found)
    unmeasured, far, close = found
    # its closeness never labels a message, but its distance does
    assert (unmeasured.clear, far.clear, close.clear) == (True, False, True)
    assert "far in meaning (cosine 0.050)" in far.match_why
    assert far.match_why.startswith("possible:")
    # all the query's words still make it clear, however far it is
    everything = Candidate(
        Memory(content="many different doctors to visit", created_at=format_time(NOW)),
        is_message=True,
    )
    everything.ranks, everything.raw = {"sessions": 1}, {"sessions": -4.0, "session_vector": 0.95}
    fuse(run, [everything])
    assert everything.clear


@pytest.mark.parametrize(
    ("question", "counts"),
    [
        ("How many times did I go to the dentist?", True),
        ("how often do we deploy on Fridays?", True),
        ("How much time did I spend on the garden in total?", True),
        ("Which restaurants have I ever been to?", True),
        ("How many days ago did I watch the match?", False),
        ("How many weeks passed between the two trips?", False),
        ("what broke in the last deploy?", False),
        ("how do we release to customers?", False),
    ],
)
def test_which_questions_count_over_time(question: str, counts: bool) -> None:
    assert counts_over_time(question) is counts


@pytest.mark.parametrize(
    ("question", "compares"),
    [
        ("Who did I meet first, Mark and Sarah or Tom?", True),
        ("Which trip did I take first, the one to Europe or the one to Thailand?", True),
        ("How many days passed between the day I repotted the fern and the day I sold it?", True),
        ("How long had I been working before I started at NovaTech?", True),
        ("How many days ago did I watch the match?", False),
        ("what is the first step of the release?", False),
        ("why does unity between the services matter?", False),
        ("how long does the test suite take?", False),
    ],
)
def test_which_questions_compare_two_events(question: str, compares: bool) -> None:
    assert compares_events(question) is compares


def test_a_question_that_counts_gets_each_sessions_best_before_a_sessions_second(
    ctx: Context,
) -> None:
    asked = "how many times did I go to the dentist?"
    scores = {"d1#1": 1.0, "d1#2": 0.9, "d1#3": 0.85, "d2#1": 0.7, "d3#1": 0.6}
    plain = sessions_cover(
        make_run(ctx, "what did the dentist say?"), [message(k, score=s) for k, s in scores.items()]
    )
    assert [c.id for c in plain][:3] == ["d1#1", "d1#2", "d1#3"]
    counting = sessions_cover(
        make_run(ctx, asked), [message(k, score=s) for k, s in scores.items()]
    )
    assert [c.id for c in counting][:3] == ["d1#1", "d2#1", "d3#1"]
    second = next(c for c in counting if c.id == "d1#2")
    assert second.factors["sessions"] == pytest.approx(COVERAGE_FACTOR)
    assert len(counting) == len(scores)  # a lean, never a filter


def test_a_question_that_compares_two_events_gets_each_sessions_best_first(ctx: Context) -> None:
    """ "Which trip did I take first, X or Y?": each trip was told in its own session, and the
    chattier one no longer fills the rows before the other's best."""
    scores = {"t1#1": 1.0, "t1#2": 0.95, "t1#3": 0.9, "t2#1": 0.6}
    asked = "Which trip did I take first, the one to Lisbon or the one to Kyoto?"
    found = sessions_cover(make_run(ctx, asked), [message(k, score=s) for k, s in scores.items()])
    assert [c.id for c in found][:2] == ["t1#1", "t2#1"]
    about_one = "what did we see on the trip to Lisbon?"
    plain = sessions_cover(
        make_run(ctx, about_one), [message(k, score=s) for k, s in scores.items()]
    )
    assert [c.id for c in plain][:2] == ["t1#1", "t1#2"]


DENTIST = {
    "d1": (
        "user: I went to the dentist on Monday for a cleaning\n"
        "assistant: good to keep up with cleanings\n"
        "user: the dentist said my gums look healthy\n"
        "user: I booked the dentist again for next month\n"
    ),
    "d2": "user: my dentist visit in March was for a filling\nassistant: fillings are common\n",
    "d3": "user: I took my son to the dentist for his first checkup\nassistant: how did it go?\n",
    "g1": "user: the tomatoes in the garden are ripe\nassistant: lovely\n",
}


def test_recall_answers_a_how_many_times_question_from_distinct_sessions(tmp_path: Path) -> None:
    """`memctl recall` on a store of several real sessions: a question that counts over time
    is answered with one message from each session that speaks of it, not three from the
    one that says it most."""
    home = ("--home", str(tmp_path / "home"))
    for session, said in DENTIST.items():
        raw = ("ingest", "--mode", "raw", "--session-id", session)
        ok(*home, *raw, input=said, env={"MEMCTL_LLM": "none"})
    counting = ("recall", "how many times did I go to the dentist?", "-n", "3", "--json")
    found = json.loads(ok(*home, *counting))["results"]
    assert len(found) == 3
    assert {r["id"].split("#")[0] for r in found} == {"d1", "d2", "d3"}
    assert all("dentist" in r["content"] for r in found)
    # a question about one visit is not bent: the session that says it most comes first
    plain = ("recall", "what did the dentist say about my gums?", "-n", "3", "--json")
    first = json.loads(ok(*home, *plain))["results"][0]
    assert first["id"] == "d1#3"
