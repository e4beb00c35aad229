"""The outcome stage: what came of a turn inherits part of its matching rows' score."""

from __future__ import annotations

from memctl.context import Context
from memctl.ingest.message_vectors import embed_messages
from memctl.model import Message, Role, Session
from memctl.retrieve.pipeline import recall
from memctl.retrieve.stages.outcome import STAGE, turn_outcomes
from memctl.store import sessions

ASK = "The nightly export job keeps failing on the staging server, find out why."
ANNOUNCE = "Let me find why the nightly export job fails on the staging server."
# the step's result, in its own words (one of the question's: "job")
FOUND = (
    "Root cause: the job lost write access to /var/dumps after the upgrade; chowned, rerun green."
)
CLOSING = "All set: dumps are written again and the cron entry is unchanged."
TURN = [
    (Role.USER, ASK),
    (Role.ASSISTANT, f"{ANNOUNCE}\n[tool Bash: journalctl -u nightly-export]"),
    (Role.TOOL, "[tool result Bash: permission denied: /var/dumps/2026-11-30.tar]"),
    (Role.ASSISTANT, FOUND),
    (Role.ASSISTANT, "[tool Bash: ls -l /var/dumps]"),
    (Role.ASSISTANT, CLOSING),
    (Role.USER, "thanks, now the docs"),
    (Role.ASSISTANT, "Updated the README's staging section."),
]


def _messages(said: list[tuple[Role, str]], session_id: str) -> list[Message]:
    return [Message(r, t, session_id=session_id, seq=n) for n, (r, t) in enumerate(said, 1)]


def test_a_turns_outcomes_are_its_steps_result_and_its_end() -> None:
    after_ask = _messages(TURN, "s")[1:6]  # the turn after the user's ask, to their next
    assert [m.seq for m in turn_outcomes(after_ask)] == [4, 6]
    # a turn that only announces and calls has no outcome, nor a chat's turn without calls
    assert turn_outcomes(_messages(TURN[1:3], "s")) == []
    chat = [(Role.ASSISTANT, "Five hours is a long drive."), (Role.ASSISTANT, CLOSING)]
    assert turn_outcomes(_messages(chat, "s")) == []


def test_a_steps_result_ranks_as_a_clear_match_through_its_turn(ctx: Context) -> None:
    with ctx.db.atomic():
        sessions.save_session(ctx.db, Session(id="s1", client="generic", scope="global"))
        sessions.insert_messages(ctx.db, _messages(TURN, "s1"))
    embed_messages(ctx.db, ctx.embedder, 100)
    question = "why did the nightly export job fail on staging?"
    found = recall(ctx, question, sessions=True)
    rows = {r.memory.id: r for r in found.results}
    # the first rows of a smaller limit are the larger one's
    fewer = recall(ctx, question, limit=3, sessions=True).results
    assert [r.memory.id for r in fewer] == [r.memory.id for r in found.results][:3]
    # the result of the step the ask and the announcement name is clear, through them
    assert rows["s1#4"].clear
    assert any(step.stage == STAGE for step in found.steps_of("s1#4"))
    # and so is the report the turn ends with; the next turn's inherits nothing
    assert rows["s1#6"].clear
    assert not any(step.stage == STAGE for step in found.steps_of("s1#8"))
