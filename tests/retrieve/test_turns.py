"""A message row shows its turn's call that answers (issue 33, retrieve/turns.py): the
command the assistant ran or the file it wrote around what it said, chosen by meaning. Real
SQLite and the real model: meaning is what is tested."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memctl.api.ingest import IngestRequest, ingest
from memctl.config.settings import load_settings
from memctl.context import Context
from memctl.embed import Embedder
from memctl.ingest.calls_shown import calls_shown
from memctl.ingest.message_vectors import embed_messages, parts
from memctl.integrations.mcp_search import hit
from memctl.maintain.pipeline import maintain
from memctl.model import Message, Role, Session
from memctl.retrieve.excerpt import query_words
from memctl.retrieve.pipeline import recall
from memctl.retrieve.turns import TurnCall, turns, worded
from memctl.store import sessions
from memctl.store.call_vectors import uncalled_count
from memctl.store.message_search import message_role
from tests.ingesting import claude_record
from tests.retrieve.test_answering import Counting

LOOK = "git branch -a && git log --oneline -5"
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
    # the announcement and the reply closing the turn both stand for its calls: the first of
    # them shows the call, the other nothing new (a row above shows it: answering.past_shown)
    turn = [r for r in found.results if r.memory.id in ("s1#2", "s1#8")]
    announcing = turn[0]
    assert len(turn) == 2 and announcing.answering is not None and turn[1].answering is None
    # the merge, not the read-only look nor the task update, though all are of its turn
    assert announcing.answering.message == "s1#6"
    assert MERGE in announcing.answering.text
    assert hit(announcing)["from"]["message"] == "s1#6"
    assert announcing.to_dict()["from"]["text"] == announcing.answering.text
    # the message about something else has no call beside it: nothing shown
    assert "s1#9" not in rows or rows["s1#9"].answering is None
    # a context block's rows, and a recall not asking for it, show no call (a user's
    # message row shows its reply: answering.py)
    assert all(r.answering is None for r in budgeted.results)
    said = [r for r in unasked.results if r.is_message and message_role(r.memory) != Role.USER]
    assert said and all(r.answering is None for r in said)


def test_only_commands_and_file_writes_are_shown() -> None:
    notes = (
        "[tool Read: /home/ann/work/shop/app/export.py]\n"
        "[tool Bash: uv run pytest -q]\n"
        '[tool TodoWrite: [{"content": "merge", "status": "pending"}]]\n'
        "[tool Write: /home/ann/work/shop/prompts/lead.txt + store as `Summary_[YYYY-MM]`]"
    )
    assert [text for _, text in calls_shown(notes)] == [
        "[tool Bash: uv run pytest -q]",
        "[tool Write: …/lead.txt + store as `Summary_[YYYY-MM]`]",
    ]


def test_only_calls_holding_a_query_word_are_weighed_else_every_one() -> None:
    notes = [
        ("s1#3", "[tool Bash: git branch -a && git log --oneline -5]"),
        ("s1#6", f"[tool Bash: {MERGE}]"),
        ("s1#7", "[tool Bash: uv run pytest -q]"),
    ]
    calls = [TurnCall(key, 0, note, note) for key, note in notes]
    asked = query_words("how were the teammates' branches combined?")
    # "branch" (a singular form of the query's) and "teammates" (in bob/teammates); not pytest
    assert [call.message for call in worded(calls, asked)] == ["s1#3", "s1#6"]
    # none holds a word of this one: all are weighed by meaning
    elsewhere = query_words("what did the weather look like in Lisbon?")
    assert [call.message for call in worded(calls, elsewhere)] == ["s1#3", "s1#6", "s1#7"]


def _call(n: int, command: str) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": command}}
    done = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok", "is_error": False}
    return [claude_record("assistant", [use], n), claude_record("user", [done], n + 1)]


def _taken_in(ctx: Context, tmp_path: Path) -> None:
    """The merge session as Claude Code writes it, through ``ingest --wait`` (its worker)."""
    lines = [
        claude_record("user", TURNS[0][1], 0),
        claude_record("assistant", TURNS[1][1], 1),
        *_call(2, LOOK),
        *_call(4, MERGE),
        claude_record("assistant", TURNS[7][1], 6),
    ]
    path = tmp_path / "merge.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ingest(ctx, IngestRequest(transcript=str(path), wait=True))


def _shown(ctx: Context) -> tuple[str, list[str]]:
    """The announcing row's call (before the rows above it take what they show already:
    the call's own message row may rank above it; answering.past_shown), and the call
    notes this recall embedded."""
    embedder = ctx.embedder
    assert isinstance(embedder, Counting)
    embedder.texts.clear()
    question = "how were the teammates' branches combined?"
    found = recall(ctx, question, touch=False, sessions=True, answers=parts, calls=calls_shown)
    announcing = next(r for r in found.results if r.memory.content == TURNS[1][1])
    assert found.run is not None
    call = turns(found.run, [r.memory for r in found.results], calls_shown)[announcing.memory.id]
    return call.text, [t for t in embedder.texts if t.startswith("[tool ")]


def test_a_turns_calls_are_embedded_when_the_session_is_taken_in(
    home: Path, tmp_path: Path, local_embedder: Embedder
) -> None:
    """The worker that embeds a session's messages embeds its calls as shown: recall looks
    the merge up (the query is all it embeds); a store made before them embeds the calls
    at query time until `maintain` fills it, and a message whose text changes loses them."""
    settings = load_settings(overrides={"recall.message_vectors": True, "llm": "none"})
    with Context(settings, Counting(local_embedder)) as ctx:
        _taken_in(ctx, tmp_path)
        assert uncalled_count(ctx.db) == 0
        shown, embedded = _shown(ctx)
        assert MERGE in shown and embedded == []
        notes = ctx.db.value("SELECT count(*) FROM call_vectors")
        ctx.db.execute("DELETE FROM call_vectors")  # a store from before m033
        again, embedded = _shown(ctx)
        assert again == shown and set(embedded) == {shown, f"[tool Bash: {LOOK}]"}
        report = maintain(ctx, only="upkeep").task("upkeep")
        assert report is not None and report.counts["calls_embedded"] == notes
        assert _shown(ctx) == (shown, [])
        merge = ctx.db.value("SELECT rowid FROM messages WHERE content LIKE ?", (f"%{MERGE}%",))
        ctx.db.execute("UPDATE messages SET content = 'redacted' WHERE rowid = ?", (merge,))
        kept = "SELECT count(*) FROM call_vectors WHERE message_rowid = ?"
        assert ctx.db.value(kept, (merge,)) == 0
