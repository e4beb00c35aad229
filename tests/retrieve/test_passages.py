"""A long session message scored by its best passage (passages.py, fuse.passage_coverage,
the length stage)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memctl.context import Context
from memctl.model import Memory, format_time
from memctl.retrieve.passages import PASSAGE_CHARS, passages
from memctl.retrieve.pipeline import start
from memctl.retrieve.run import Candidate, Run
from memctl.retrieve.stages.fuse import coverage
from memctl.retrieve.stages.length import length

NOW = datetime(2026, 6, 10, 12, tzinfo=UTC)
FILLER = "the quick brown fox jumps over a lazy dog near the river bank "


def make_run(ctx: Context, text: str) -> Run:
    return start(ctx, text, 10, now=NOW)


def message(text: str) -> Candidate:
    return Candidate(Memory(content=text, created_at=format_time(NOW)), is_message=True)


def test_a_text_that_fits_is_its_own_passage() -> None:
    text = "a short message"
    assert passages(text) == [text]


def test_a_long_texts_windows_overlap_by_half_and_hold_every_word() -> None:
    text = " ".join(f"w{i}" for i in range(2000))
    windows = passages(text)
    assert all(len(w) <= PASSAGE_CHARS for w in windows)
    # each window begins inside the one before, half way along it
    for before, after in zip(windows, windows[1:], strict=False):
        first = after.split()[0]
        assert first in before.split()
        assert PASSAGE_CHARS // 4 < before.index(f" {first} ") <= PASSAGE_CHARS // 2
    held = {word for w in windows for word in w.split()}
    assert held == set(text.split())
    # a word longer than a window is cut inside: no window outgrows its size
    assert [len(w) for w in passages("x" * 2000)] == [800, 800, 800, 800]


def test_a_long_text_holds_the_querys_words_by_its_best_passage(ctx: Context) -> None:
    run = make_run(ctx, "rotate the staging password")
    run.word_weights = {"rotate": 1.0, "staging": 1.0, "password": 1.0}
    pad = FILLER * 20  # ~1,200 characters between the words
    scattered = message(f"rotate {pad} staging {pad} password")
    together = message(f"{pad} we rotate the staging password monthly {pad}")
    short = message("the staging password")
    assert coverage(run, together) == pytest.approx(1.0)
    # every word, each in another part of the text: one passage holds one of them
    assert coverage(run, scattered) == pytest.approx(1 / 3)
    assert coverage(run, short) == pytest.approx(2 / 3)
    # a memory's abstract is a passage of its own
    summed = Memory(content=scattered.memory.content, l0_abstract="rotate the staging password")
    assert coverage(run, Candidate(summed)) == pytest.approx(1.0)


def test_the_length_stage_is_off_by_default_and_damps_the_words_part_when_set(
    ctx: Context,
) -> None:
    run = make_run(ctx, "query")
    assert run.params.length_norm == 0
    long = message("m" * 8000)
    long.score, long.lexical = 1.0, 1.0
    assert length(run, [long])[0].score == 1.0
    damped = replace(run, params=replace(run.params, length_norm=500))
    assert length(damped, [long])[0].score == pytest.approx(1 / (1 + math.log2(8000 / 500)))
