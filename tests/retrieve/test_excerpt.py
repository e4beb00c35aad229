"""The line a recalled memory shows: the part of a long memory that answers the question."""

from __future__ import annotations

from memctl.retrieve.excerpt import excerpt
from tests.conftest import run_cli

TITLE = "Session of 2026-05-11 (codex) — show tools"
DIGEST = "\n".join(
    [
        TITLE,
        "Asked: let's update the default context compaction to 90 in the env var",
        "Edited: src/agents/plugins/codemie-code.plugin.ts; src/agents/plugins/opencode.ts",
        "Ran: npm test -- --run src/agents/plugins/__tests__/reasoning.test.ts; npm run build",
        "Outcome: Implemented the compaction setting as `threshold: 0.9` in the generated "
        "OpenCode config. OpenCode documents compaction under the `compaction` object. "
        "Verification passed: npm run build.",
        "Reviewed: the pull request template now asks for a changelog line.",
    ]
)


def test_a_digest_shows_its_title_then_the_sentences_that_answer() -> None:
    line = excerpt(TITLE, DIGEST, "what compaction threshold did we pick?", 200)
    assert line.startswith(TITLE)
    assert "`threshold: 0.9`" in line
    assert "\n" not in line and len(line) <= 200
    assert "changelog" not in line  # holds none of the question's words


def test_the_vocabulary_s_words_find_the_sentence_too() -> None:
    line = excerpt(TITLE, DIGEST, "what did we change about PRs?", 200)
    assert "pull request template" in line


def test_a_short_memory_shows_whole_and_a_title_that_answers_shows_alone() -> None:
    short = "Deploys go out with make release from main."
    assert excerpt(short, short, "how do we deploy?", 200) == short
    assert excerpt(TITLE, DIGEST, "which tools were shown?", 60) == TITLE
    assert excerpt(TITLE, DIGEST, "the weather in Lisbon", 200) == TITLE


def test_a_title_cut_short_marks_the_gap_with_its_own_ellipsis() -> None:
    """A real digest (benchmarks/sessions/real cc1-cclog-fe869ecb, MIT): its title is cut
    with "…", and the line showed "…add a Github… … You can test it"."""
    title = (
        "Session of 2025-06-14 (claude-code) — Hey Claude, can you please add a Github "
        "Action to run…"
    )
    digest = "\n".join(
        [
            title,
            "Asked: Hey Claude, can you please add a Github Action to run tests and linting? "
            "You can test it with `act`.; Wait, does it only run on main? I think we should "
            "run it on every push?",
            "Ran: act -l; act --container-architecture linux/amd64 -j test",
        ]
    )
    line = excerpt(title, digest, "did we test the github action with act on linux?", 150)
    assert "… …" not in line and "…" in line
    assert "You can test it with `act`." in line and len(line) <= 150


def test_a_summary_cut_from_the_opening_is_not_shown_twice() -> None:
    """An extracted fact's summary is its own opening cut with "…": the sentence that
    answers starts with it, and the line says it once."""
    fact = (
        '`git commit -m "feat: instrument hooks"` failed: Pre-commit validation failed: '
        "[CREDO] Checking 88 source files, [DIALYZER] Finding suitable PLTs, [FORMAT] "
        "mix format --check-formatted. Fixed by editing otel_trace_helpers.ex."
    )
    summary = fact[:40] + "…"
    line = excerpt(summary, fact, "which checks does the pre-commit hook run?", 150)
    assert line.count("git commit") == 1 and "Pre-commit" in line


def test_recall_shows_the_answer_a_long_memory_holds_deep_in_its_text() -> None:
    assert run_cli("remember", DIGEST).returncode == 0
    shown = run_cli("recall", "--no-touch", "what compaction threshold did we pick?").stdout
    assert "threshold: 0.9" in shown
    assert TITLE.split(" — ")[0] in shown
