"""Shortening a memory to the tokens left for it (memctl.retrieve.fit)."""

from __future__ import annotations

from memctl.retrieve.fit import ELLIPSIS, sentences, shorten


def words(text: str) -> int:
    """One token a word: easy to count by eye."""
    return len(text.split())


REVIEW = (
    "Review of the API server. Five findings, most severe first.\n"
    "1. CORS allows `*` with credentials. Restrict it to the app's origin.\n"
    "2. Prototype pollution in the config merge. Use a null-prototype object.\n"
    "3. The upload route has no size limit. Cap it at 10 MB.\n"
    "4. Tokens are logged at debug level. Drop them from the log line.\n"
    "5. The rate limiter trusts X-Forwarded-For. Read it only behind the proxy."
)


def test_text_that_fits_is_untouched() -> None:
    assert shorten(REVIEW, 500, words) == REVIEW


def test_every_list_item_keeps_its_first_sentence_before_any_second_sentence() -> None:
    short = shorten(REVIEW, 50, words)
    assert words(short) <= 50
    for finding in ("CORS", "Prototype pollution", "size limit", "logged", "X-Forwarded-For"):
        assert finding in short
    assert "Restrict it" not in short or "Read it only" in short
    assert short.endswith(ELLIPSIS)


def test_a_first_sentence_too_long_alone_is_cut_at_a_word() -> None:
    short = shorten("one two three four five six seven eight nine ten", 4, words)
    assert short == "one two three…"


def test_cjk_sentences_split_at_full_stops() -> None:
    assert sentences("订单导出太慢。原因是循环查询。已修复") == [
        "订单导出太慢。",
        "原因是循环查询。",
        "已修复",
    ]
    assert sentences("Ran 1. then 2. Done. Next") == ["Ran 1. then 2. Done. ", "Next"]


def test_nothing_when_not_a_word_fits() -> None:
    assert shorten("alpha beta", 0, words) == ""


def test_one_long_line_does_not_take_the_budget_of_the_lines_after_it() -> None:
    """A digest whose "Found" line is one long sentence still shows its outcome."""
    digest = "Asked: map the code\nFound: " + "module " * 200 + "\nOutcome: tar support landed."
    short = shorten(digest, 60, words)
    assert words(short) <= 60
    assert "Asked: map the code" in short and "Outcome: tar support landed." in short
    assert "Found: module module" in short


def names_postgres(sentence: str) -> float:
    """A weight that marks the sentence answering "which PostgreSQL?"."""
    return float("PostgreSQL" in sentence)


def test_the_sentence_that_answers_is_kept_after_the_first_line_s_opening() -> None:
    """Weighed, a sentence deep in a line (a digest's outcome) that answers comes before
    every other line's opening and the sentences after them; a gap says "…"."""
    digest = (
        "Session of 2026-05-02: the deploy.\n"
        "Ran: make build. Then make test. Then make lint.\n"
        "Outcome: it failed twice. The fix pins PostgreSQL 16.3 in compose. Then it passed."
    )
    short = shorten(digest, 18, words, names_postgres)
    assert words(short) <= 18
    assert "Session of 2026-05-02: the deploy." in short
    assert "… The fix pins PostgreSQL 16.3 in compose. …" in short
    assert "PostgreSQL" not in shorten(digest, 18, words)


def test_a_row_with_little_room_keeps_its_answer_before_its_opening() -> None:
    """A row after a long first one has a few dozen tokens: its first line's opening (a
    digest's "Session of … —") took them, and the sentence that answers was left out. The
    best answering sentence comes first; the opening gets what is left."""
    digest = (
        "Session of 2026-05-02 (claude-code) — please look at the flaky deploy of the staging "
        "stack again today.\nOutcome: The fix pins PostgreSQL 16.3 in compose."
    )
    short = shorten(digest, 14, words, names_postgres)
    assert words(short) <= 14
    assert "Outcome: The fix pins PostgreSQL 16.3 in compose." in short
    assert short.startswith("Session of")  # the opening, cut to what is left
    assert "PostgreSQL" not in shorten(digest, 14, words)  # unweighed (session start): as before
