"""A session message's share of the query's words is counted in its best passage: a long
tool output or report holds most words of any question somewhere, and was a clear match
by them ("what was the bug in the order service?" against a 10,000-character design
note that says "bug", "order" and "service" pages apart)."""

from __future__ import annotations

from memctl.context import Context
from memctl.model import Memory, format_time
from memctl.retrieve.run import Candidate
from memctl.retrieve.stages.fuse import PASSAGE_CHARS, fuse, passage
from tests.retrieve.test_recall_stages import NOW, make_run

FILLER = "the layout of the tabs and the panes is drawn again on resize. " * 60
SCATTERED = f"a bug in the parser. {FILLER} the order of the columns. {FILLER} a service."
TOGETHER = f"{FILLER} the bug in the order service: exports ran one query a row. {FILLER}"
WEIGHTS = {"bug": 1.0, "order": 1.0, "service": 1.0}


def test_the_passage_is_the_stretch_holding_the_most_of_the_words() -> None:
    best = passage(TOGETHER, WEIGHTS)
    assert len(best) <= PASSAGE_CHARS
    assert "bug in the order service" in best
    assert passage("short text", WEIGHTS) == "short text"
    # words pages apart: the passage holds one of them only
    assert sum(word in passage(SCATTERED, WEIGHTS) for word in WEIGHTS) == 1


def _message(text: str) -> Candidate:
    candidate = Candidate(Memory(content=text, created_at=format_time(NOW)), is_message=True)
    candidate.ranks, candidate.raw = {"sessions": 1}, {"sessions": -4.0}
    return candidate


def test_a_long_message_is_clear_by_the_words_of_one_passage_not_of_all_of_it(
    ctx: Context,
) -> None:
    run = make_run(ctx, "what was the bug in the order service?")
    run.word_weights = dict(WEIGHTS)
    scattered, together = _message(SCATTERED), _message(TOGETHER)
    fuse(run, [scattered, together])
    assert together.clear
    assert not scattered.clear and scattered.match_why.startswith("possible:")
