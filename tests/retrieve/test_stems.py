"""A word and its inflections meet in the word share, and no word meets a function word:
"noted" and "notes" are no "not", "themes" no "them" (fuse.stem)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memctl.context import Context
from memctl.model import Memory, format_time
from memctl.retrieve.pipeline import start
from memctl.retrieve.run import Candidate
from memctl.retrieve.stages.fuse import coverage, stem

NOW = datetime(2026, 6, 10, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("words", "meet"),
    [
        (("noted", "notes", "noting", "note"), True),
        (("themes", "theme"), True),
        (("deployed", "deploys", "deploying", "deploy"), True),
        (("others", "other"), True),  # a plain "s" off a function word is still its plural
        (("noted", "not"), False),
        (("notes", "not"), False),
        (("themes", "them"), False),
        (("willing", "will"), False),
    ],
)
def test_inflections_meet_and_function_words_do_not(words: tuple[str, ...], meet: bool) -> None:
    assert (len({stem(w) for w in words}) == 1) is meet, [stem(w) for w in words]


def message(text: str) -> Candidate:
    made = Candidate(Memory(content=text, created_at=format_time(NOW)), is_message=True)
    made.ranks, made.raw = {"sessions": 1}, {"sessions": -4.0}
    return made


def test_a_denial_does_not_share_noted_or_notes(ctx: Context) -> None:
    """An assistant's reply from a real session (cc1-cclog-cbc0f75b) says "not"; asked
    about release notes it shares "release" alone, and the notes themselves share both."""
    run = start(ctx, "where are the release notes noted?", 10, now=NOW)
    run.word_weights = {"release": 1.0, "notes": 1.0, "noted": 1.0}
    denial = message("We're not doing these complex path selections for the release.")
    notes = message("I noted the fix in the release note for 0.4.")
    assert coverage(run, denial) == pytest.approx(1 / 3)
    assert coverage(run, notes) == pytest.approx(1.0)
