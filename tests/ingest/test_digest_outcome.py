"""A digest's outcome says what the session ended on, not what the assistant was about to do:
two real Claude Code sessions (git-ai's and spotter's test fixtures, benchmarks/sessions/real
SOURCES.md) end on a next step whose work the transcript never shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from memctl.ingest.digest import build_digest, render
from memctl.ingest.parse import read_transcript
from memctl.ingest.source import Input
from memctl.memories.narration import without_next_steps
from memctl.model import Message

REAL = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions" / "real"


def outcome(name: str) -> str:
    path = REAL / name
    with path.open("rb") as stream:
        parsed = list(read_transcript(Input(stream, str(path)), "claude-code").messages)
    messages = [
        Message(p.role, p.content, p.created_at or "", "s", n) for n, p in enumerate(parsed, 1)
    ]
    text = render(build_digest(messages, 6, 500), "Session", 1600)
    return next(line for line in text.splitlines() if line.startswith("Outcome: "))


@pytest.mark.parametrize(
    ("name", "found", "announced"),
    [
        (
            "cc1-gitai-cb947e5b.jsonl",
            'I can see that "RED" should map to green',
            ("Now I need to", "Let me update", "Then:"),
        ),
        (
            "cc2-spotter-toolheavy.jsonl",
            "Phoenix server is starting in the background.",
            ("Let me check",),
        ),
    ],
)
def test_a_session_ending_on_a_next_step_keeps_what_it_found(
    name: str, found: str, announced: tuple[str, ...]
) -> None:
    said = outcome(name)
    assert found in said
    assert not any(step in said for step in announced)


def test_only_announcements_and_offers_of_help_go() -> None:
    assert without_next_steps("Understood. I've stopped. Let me know if you need more.") == (
        "Understood. I've stopped."
    )
    assert without_next_steps("Let me check the logs.") == ""
    kept = "I'll always run the linter before committing.\nSummary: the cache was stale.\n- a"
    assert without_next_steps(kept) == kept
    # Codex's curly apostrophe (s37-fresh9: its "I’ll read X first" stayed as the outcome)
    assert without_next_steps("The config was stale. I’ll read `RESEARCH-TASK.md` first.") == (
        "The config was stale."
    )
    assert without_next_steps("Let’s run the tests.") == ""
