"""A message row shows its turn's call that answers (issue 33, retrieve/turns.py): the
command the assistant ran or the file it wrote around what it said, chosen by meaning. Real
SQLite and the real model: meaning is what is tested."""

from __future__ import annotations

from pathlib import Path

from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.embed import Embedder
from memctl.ingest.calls_shown import calls_shown
from memctl.ingest.message_vectors import embed_messages, parts
from memctl.integrations.mcp_search import hit
from memctl.model import Message, Role, Session
from memctl.retrieve.excerpt import query_words
from memctl.retrieve.pipeline import recall
from memctl.retrieve.turns import worded
from memctl.store import sessions

MERGE = 'git merge --no-ff alice/plan-mode bob/teammates carol/beads -m "merge round 1"'
# a session as Claude Code's reader stores it: the turn announcing the merge, a read-only
# look first, a task update, the merge, and the reply saying it went well
TURNS = [
    (Role.USER, "The three researchers finished round one, have a look at their work."),
    (
        Role.ASSISTANT,
        "All three teammates returned with commits on their named branches. "
        "Let me verify and merge them into master.",
    ),
    (Role.ASSISTANT, "[tool Bash: git branch -a && git log --oneline -5]"),
    (Role.TOOL, "[tool result Bash: * master · alice/plan-mode · bob/teammates · carol/beads]"),
    (Role.ASSISTANT, '[tool TaskUpdate: {"taskId": "4", "status": "in_progress"}]'),
    (Role.ASSISTANT, f"[tool Bash: {MERGE}]"),
    (Role.TOOL, "[tool result Bash: Merge made by the 'octopus' strategy.]"),
    (Role.ASSISTANT, "Round one is in master now; next I will write the summary."),
    (Role.USER, "Thanks, what did the weather look like in Lisbon on our trip?"),
]


def _session(ctx: Context) -> None:
    with ctx.db.atomic():
        sessions.save_session(ctx.db, Session(id="s1", client="claude-code", scope="global"))
        sessions.insert_messages(
            ctx.db,
            [Message(r, said, session_id="s1", seq=n) for n, (r, said) in enumerate(TURNS, 1)],
        )


def test_a_message_row_shows_the_command_its_turn_ran(home: Path, local_embedder: Embedder) -> None:
    with Context(load_settings(overrides={"recall.message_vectors": True}), local_embedder) as on:
        _session(on)
        embed_messages(on.db, on.embedder, 100)
        question = "how were the teammates' branches combined?"
        found = recall(on, question, touch=False, sessions=True, answers=parts, calls=calls_shown)
        budgeted = recall(on, question, touch=False, budget=400, calls=calls_shown)
        unasked = recall(on, question, touch=False, sessions=True, answers=parts)
    rows = {r.memory.id: r for r in found.results}
    announcing = rows["s1#2"]
    assert announcing.answering is not None
    # the merge, not the read-only look nor the task update, though all are of its turn
    assert announcing.answering.message == "s1#6"
    assert MERGE in announcing.answering.text
    assert hit(announcing)["from"]["message"] == "s1#6"
    assert announcing.to_dict()["from"]["text"] == announcing.answering.text
    # the message about something else has no call beside it: nothing shown
    assert "s1#9" not in rows or rows["s1#9"].answering is None
    # a context block's rows, and a recall not asking for it, show their own text
    assert all(r.answering is None for r in budgeted.results)
    assert all(r.answering is None for r in unasked.results if r.is_message)


def test_only_commands_and_file_writes_are_shown() -> None:
    notes = (
        "[tool Read: /home/ann/work/shop/app/export.py]\n"
        "[tool Bash: uv run pytest -q]\n"
        '[tool TodoWrite: [{"content": "merge", "status": "pending"}]]\n'
        "[tool Write: /home/ann/work/shop/prompts/lead.txt + store as `Summary_[YYYY-MM]`]"
    )
    assert calls_shown(notes) == [
        "[tool Bash: uv run pytest -q]",
        "[tool Write: …/lead.txt + store as `Summary_[YYYY-MM]`]",
    ]


def test_only_calls_holding_a_query_word_are_embedded_else_every_one() -> None:
    calls = [
        ("s1#3", "[tool Bash: git branch -a && git log --oneline -5]"),
        ("s1#6", f"[tool Bash: {MERGE}]"),
        ("s1#7", "[tool Bash: uv run pytest -q]"),
    ]
    asked = query_words("how were the teammates' branches combined?")
    # "branch" (a singular form of the query's) and "teammates" (in bob/teammates); not pytest
    assert [key for key, _ in worded(calls, asked)] == ["s1#3", "s1#6"]
    # none holds a word of this one: all are weighed by meaning
    elsewhere = query_words("what did the weather look like in Lisbon?")
    assert [key for key, _ in worded(calls, elsewhere)] == ["s1#3", "s1#6", "s1#7"]
