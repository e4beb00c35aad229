"""memctl's own mark of a sub-agent's report is not its words (fuse.own_words)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memctl.context import Context
from memctl.model import Memory, format_time
from memctl.retrieve.pipeline import start
from memctl.retrieve.run import Candidate
from memctl.retrieve.stages.fuse import coverage, fuse

NOW = datetime(2026, 6, 10, 12, tzinfo=UTC)


def message(text: str) -> Candidate:
    made = Candidate(Memory(content=text, created_at=format_time(NOW)), is_message=True)
    made.ranks, made.raw = {"sessions": 1}, {"sessions": -4.0}
    return made


def test_a_reports_mark_is_not_its_words(ctx: Context) -> None:
    """The mark "[subagent report]" held the "reporting" of "which java version does the reporting
    service use?": with "version" in the report, a clear match to an unrelated ask."""
    run = start(ctx, "which java version does the reporting service use?", 10, now=NOW)
    run.word_weights = {"java": 1.0, "version": 1.0, "reporting": 1.0, "service": 1.0}
    report = message("[subagent report]\nPerfect! I now have all the version information.")
    said = message("The reporting tool prints the version of each package.")
    assert coverage(run, report) == pytest.approx(0.25)
    fuse(run, [report, said])
    assert (report.clear, said.clear) == (False, True)
