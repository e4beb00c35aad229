"""The relevance gate counts a long session message's words by its best passage
(passages.py, fuse.gate_share); ranking counts the whole text's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memctl.context import Context
from memctl.model import Memory, format_time
from memctl.retrieve.passages import PASSAGE_CHARS, passages
from memctl.retrieve.pipeline import start
from memctl.retrieve.run import Candidate
from memctl.retrieve.stages.fuse import coverage, fuse
from memctl.retrieve.stages.pack import latin_widths

NOW = datetime(2026, 6, 10, 12, tzinfo=UTC)
FILLER = "the quick brown fox jumps over a lazy dog near the river bank "


def message(text: str) -> Candidate:
    made = Candidate(Memory(content=text, created_at=format_time(NOW)), is_message=True)
    made.ranks, made.raw = {"sessions": 1}, {"sessions": -4.0}
    return made


def test_a_long_texts_windows_overlap_by_half_and_hold_every_word() -> None:
    assert passages("a short message") == ["a short message"]
    text = " ".join(f"w{i}" for i in range(2000))
    windows = passages(text)
    assert all(len(w) <= PASSAGE_CHARS for w in windows)
    for before, after in zip(windows, windows[1:], strict=False):
        assert after.split()[0] in before.split()  # each begins inside the one before
    assert {word for w in windows for word in w.split()} == set(text.split())
    assert all(len(w) <= PASSAGE_CHARS for w in passages("x" * 2000))


def test_a_long_message_is_clear_by_the_words_one_passage_holds(ctx: Context) -> None:
    """A sub-agent's report held every word of "which java version does the reporting
    service use?", scattered through 3 KB, and was a clear match to that unrelated ask."""
    run = start(ctx, "which java version does the reporting service use?", 10, now=NOW)
    run.word_weights = {"java": 1.0, "version": 1.0, "reporting": 1.0, "service": 1.0}
    pad = FILLER * 28  # ~1,740 characters between the words: a passage holds one of them
    scattered = message(f"java {pad} version {pad} reporting {pad} service")
    together = message(f"{pad} the reporting service runs on java version 21 {pad}")
    short = message("the reporting service runs on java version 21")
    # ranking still counts the whole text's words
    assert coverage(run, scattered) == pytest.approx(1.0)
    fuse(run, [scattered, together, short])
    assert (scattered.clear, together.clear, short.clear) == (False, True, True)
    assert scattered.score == pytest.approx(together.score)


def test_a_chinese_texts_windows_hold_as_many_tokens_as_an_english_ones(ctx: Context) -> None:
    params = start(ctx, "x", 10, now=NOW).params
    assert latin_widths("naïve café — the “same” measure", params) is None
    text = "".join(chr(0x4E00 + i) for i in range(1800))  # 1,800 distinct ideographs
    windows = passages(text, widths=latin_widths(text, params))
    per_letter = params.chars_per_token / params.cjk_chars_per_token  # ~3.4
    assert all(len(w) * per_letter < PASSAGE_CHARS + 1 for w in windows)
    assert all(len(w) * per_letter > PASSAGE_CHARS - 4 for w in windows[:-1])
    starts = [text.index(w) for w in windows]
    for begin, window, after in zip(starts, windows, starts[1:], strict=False):
        assert abs(after - begin - len(window) // 2) <= 1  # each begins half a window on
    assert text.endswith(windows[-1])


def test_a_long_chinese_message_is_clear_by_one_passage_not_its_length(ctx: Context) -> None:
    """fresh4's r35: long Chinese assistant messages held 打包 输出 文件 ..., scattered
    through fewer than 1,600 characters, about three English passages' worth of words."""
    run = start(ctx, "部署 数据 迁移 脚本", 10, now=NOW)
    run.word_weights = {"部署": 1.0, "数据": 1.0, "迁移": 1.0, "脚本": 1.0}
    pad = "今天天气很好我们去公园散步看花" * 32  # 480 letters: a passage holds one word
    scattered = message(f"部署。{pad}数据。{pad}迁移。{pad}脚本")
    together = message(f"{pad}部署数据迁移脚本。{pad}")
    assert len(scattered.memory.content) < PASSAGE_CHARS
    fuse(run, [scattered, together])
    assert (scattered.clear, together.clear) == (False, True)
