"""A question naming two people who speak in a stored chat lifts the lines its first-named
person said, on a real store of a chat's session messages."""

from __future__ import annotations

from memctl.context import Context
from memctl.model import Message, Role, Session
from memctl.retrieve.pipeline import recall
from memctl.retrieve.stages.speakers import SPEAKER_LIFT, STAGE
from memctl.store.sessions import insert_messages, save_session
from tests.conftest import said_in_session

# a chat between two friends, each line as its export keeps it: who said it, then the text
CHAT = [
    "John: We're planning a team trip next month, any city you would suggest?",
    "Tim: Edinburgh would be great for the team trip, the old town is lovely.",
    "John: Boston was great for our last team trip, the harbour is lovely.",
    "Tim: I finished the fantasy novel you lent me, the ending was great.",
    "John: My knee is better, I'm back at basketball practice this week.",
]


def _lifted(ctx: Context, question: str) -> dict[str, float]:
    """Each recalled line's factor from the speakers stage (1.0 when it has none)."""
    found = recall(ctx, question, touch=False, sessions=True)
    return {r.memory.content: r.factors.get(STAGE, 1.0) for r in found.results}


def test_the_first_named_speaker_s_lines_are_lifted_never_filtered(ctx: Context) -> None:
    said_in_session(ctx, CHAT)
    lifted = _lifted(ctx, "What city did Tim suggest to John for the team trip?")
    assert lifted[CHAT[1]] == SPEAKER_LIFT
    assert lifted[CHAT[2]] == 1.0  # John's line is still recalled, as it was
    # the other way round, the other speaker's
    lifted = _lifted(ctx, "What city did John suggest to Tim for the team trip?")
    assert lifted[CHAT[2]] == SPEAKER_LIFT and lifted[CHAT[1]] == 1.0


def test_names_joined_as_one_subject_or_one_name_alone_lift_nobody(ctx: Context) -> None:
    said_in_session(ctx, CHAT)
    for question in (
        "Which city did Tim and John both find great for a team trip?",
        "What is the topic of discussion between John and Tim about the team trip?",
        "What city did Tim suggest for the team trip?",  # could name the wrong person
        "What city did Tim suggest to Maria for the team trip?",  # Maria says nothing here
    ):
        assert set(_lifted(ctx, question).values()) == {1.0}, question


def test_a_message_s_stored_speaker_is_read_where_its_text_names_nobody(ctx: Context) -> None:
    """An imported chat keeps who said each message in its speaker column, the text as the
    export wrote it: the stage reads the column."""
    said = [line.partition(": ") for line in CHAT]
    with ctx.db.atomic():
        save_session(ctx.db, Session(id="chat", client="import", scope="global"))
        insert_messages(
            ctx.db,
            [
                Message(Role.USER, text, session_id="chat", seq=n, speaker=name)
                for n, (name, _, text) in enumerate(said, start=1)
            ],
        )
    lifted = _lifted(ctx, "What city did Tim suggest to John for the team trip?")
    assert lifted[said[1][2]] == SPEAKER_LIFT and lifted[said[2][2]] == 1.0
