"""Host-model distillation: the tasks a host assistant reads, and how its answers are taken.

A Claude Code transcript in the client's real shape (tool calls and their
results paired by id, a write refused at the permission prompt, a failing
command and its fix, reads that worked) goes through capture; the tasks must
carry the user's request, each change with its outcome and the project's name,
and an answer with a wrong fact is refused with its reason while the task
stays open.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from memctl.api.distil import DistilRequest, PendingRequest, distil, pending
from memctl.context import Context
from memctl.errors import InputError, UsageError
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.pipeline import run_session
from memctl.maintain.redaction import redact
from memctl.store.memories import MemoryFilter, list_memories
from tests.ingesting import claude_record as record
from tests.ingesting import claude_work_session as session
from tests.ingesting import source


def captured(ctx: Context, lines: list[dict[str, Any]]) -> str:
    text = "\n".join(json.dumps(line) for line in lines)
    report = capture(ctx, source(text), IngestOptions()).report
    run_session(ctx, report.session_id, report.job_id)
    return report.session_id


FACT = {
    "content": "The shop deploys with make ship, never by hand.",
    "l0_abstract": "deploy: make ship",
    "category": "patterns",
    "source_message": 1,
}


def test_a_task_carries_the_request_each_outcome_and_the_project(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx(ingest__host_distil=True)
    session_id = captured(ctx, session())
    result = pending(ctx, PendingRequest())
    (task,) = result.batches
    assert task.project == "shop" and task.scope.startswith("path:")
    lines = task.conversation.splitlines()
    assert lines[0] == "[1] user: Add a CLAUDE.md with our conventions, and make the tests pass."
    assert "[2] assistant: I've created CLAUDE.md with the conventions." in lines
    assert lines[2].startswith("[3] tool: Write /home/ann/shop/CLAUDE.md → refused: ")
    assert "[4] tool: ran `pnpm test` → error: exit 1: Error: Cannot find module 'vitest'" in lines
    assert "[5] tool: ran `pnpm add -D vitest` → ok" in lines
    assert "[6] tool: ran `pnpm test` → ok" in lines
    assert lines[-1] == "[7] user: We always deploy with make ship, never by hand."
    assert "Read" not in task.conversation  # a read that worked
    # the instructions and the schema come once per call, not in each task
    assert "source_message" in result.instructions and result.schema["required"] == ["facts"]
    assert "instructions" not in task.to_dict() and "schema" not in task.to_dict()
    assert (task.session_id, task.first_seq) == (session_id, 1)


def drain(ctx: Context) -> list[str]:
    """Every task's conversation, answering each with no facts, until none waits."""
    seen = []
    while batches := pending(ctx, PendingRequest(limit=1)).batches:
        (task,) = batches
        seen.append(task.conversation)
        distil(ctx, DistilRequest(task.session_id, task.through_seq, {"facts": []}))
    return seen


def test_a_task_is_sized_by_its_text_not_by_its_messages(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx(ingest__host_distil=True, extract__chunk_chars=500)
    captured(ctx, session(reads=200))  # 400 messages of reads among the real work
    tasks = drain(ctx)
    assert len(tasks) == 2 and all(len(task) <= 500 for task in tasks)
    assert "make ship" in tasks[-1]
    words = "rename the billing module " * 8
    captured(ctx, [record("user", f"Step {n}: {words}", n, "long") for n in range(6)])
    tasks = drain(ctx)
    assert len(tasks) == 3 and all(len(task) <= 500 for task in tasks)
    assert all(f"Step {n}:" in "".join(tasks) for n in range(6))


def test_an_answer_with_a_bad_fact_is_refused_with_reasons_and_the_task_stays_open(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx(ingest__host_distil=True)
    session_id = captured(ctx, session())
    where = MemoryFilter(scopes=None, states=("active",))
    before = {m.content for m in list_memories(ctx.db, where, None)}  # digest, the fix found
    (task,) = pending(ctx, PendingRequest()).batches
    wrong = [{**FACT, "category": "decision"}, {"l0_abstract": "x", "category": "cases"}]
    with pytest.raises(InputError) as refused:
        distil(ctx, DistilRequest(session_id, task.through_seq, {"facts": [FACT, *wrong]}))
    message = str(refused.value)
    assert "fact 2: category 'decision' is not one of profile, preferences" in message
    assert "fact 3: content is missing" in message and "stays open" in message
    assert {m.content for m in list_memories(ctx.db, where, None)} == before
    (again,) = pending(ctx, PendingRequest()).batches  # nothing written, the task waits
    assert again.through_seq == task.through_seq
    with pytest.raises(InputError):
        distil(ctx, DistilRequest(session_id, task.through_seq, {"nothing": []}))
    record_ = distil(ctx, DistilRequest(session_id, task.through_seq, {"facts": [FACT]})).run
    assert record_.llm == "host" and record_.counts["create"] == 1  # (the digest: skip)
    made = [m for m in list_memories(ctx.db, where, None) if m.content not in before]
    assert [m.content for m in made] == [FACT["content"]]
    assert made[0].source == f"session:{session_id}#1:user"
    with pytest.raises(UsageError):  # already distilled: nothing is written twice
        distil(ctx, DistilRequest(session_id, task.through_seq, {"facts": [FACT]}))
    assert pending(ctx, PendingRequest()).batches == []


def test_an_answer_to_a_task_a_redact_changed_since_is_refused(
    make_ctx: Callable[..., Context],
) -> None:
    """The host read the task, then the person redacted a value it holds: the host's
    answer, which may quote the value, is refused whole; the task given again has the
    value redacted, and its answer is taken."""
    ctx = make_ctx(ingest__host_distil=True)
    session_id = captured(ctx, session())
    (task,) = pending(ctx, PendingRequest()).batches
    assert "make ship" in task.conversation
    redact(ctx, "make ship")
    quoting = {"facts": [FACT]}  # written from the task as it was: it says "make ship"
    with pytest.raises(UsageError, match="changed since it was given"):
        distil(ctx, DistilRequest(session_id, task.through_seq, quoting, task.stamp))
    assert not any("make ship" in m.content for m in list_memories(ctx.db, MemoryFilter(), None))
    (again,) = pending(ctx, PendingRequest()).batches
    assert "make ship" not in again.conversation and again.stamp != task.stamp
    done = distil(ctx, DistilRequest(session_id, again.through_seq, {"facts": []}, again.stamp))
    assert done.run.status == "done"


def test_one_call_hands_out_a_sessions_consecutive_tasks_answered_in_order(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx(ingest__host_distil=True, extract__chunk_chars=500)
    session_id = captured(ctx, session(reads=200))
    first, second = pending(ctx, PendingRequest(limit=5)).batches  # one call, both tasks
    assert (first.session_id, second.session_id) == (session_id, session_id)
    assert second.first_seq == first.through_seq + 1
    with pytest.raises(UsageError, match="in order"):  # the later task before the first
        distil(ctx, DistilRequest(session_id, second.through_seq, {"facts": []}))
    distil(ctx, DistilRequest(session_id, first.through_seq, {"facts": []}))
    distil(ctx, DistilRequest(session_id, second.through_seq, {"facts": [FACT]}))
    assert pending(ctx, PendingRequest(limit=5)).batches == []


def test_the_persons_answers_to_the_assistants_questions_are_user_lines(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx(ingest__host_distil=True)
    question = "Should tar archives found on disk also be read like ZIP files? " * 3
    answered = (
        f'User has answered your questions: "{question}"="Yes, and .tgz too". '
        "You can now continue with the user's answers in mind."
    )
    captured(
        ctx,
        [
            record("user", "Add tar support to the manifest tool.", 0),
            record("assistant", [ask_call(1, question)], 1),
            record("user", [{"type": "tool_result", "tool_use_id": "q1", "content": answered}], 2),
            record("assistant", "Good choice: both.", 3),
        ],
    )
    (task,) = pending(ctx, PendingRequest()).batches
    assert f'[2] user: (answering) "{question}"="Yes, and .tgz too".' in task.conversation
    assert "continue with the user's answers" not in task.conversation


def ask_call(n: int, question: str) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"q{n}",
        "name": "AskUserQuestion",
        "input": {"questions": [{"question": question, "options": [{"label": "Yes"}]}]},
    }


def test_a_long_plan_is_condensed_keeping_its_conclusion(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx(ingest__host_distil=True)
    code = "\n".join(f"    step_{n}(value)  # detail {n}" for n in range(400))
    plan = f"## Plan\nMove sessions to a lock file.\n```python\n{code}\n```\n"
    plan += "## Conclusion\nShip it."
    captured(ctx, [record("user", "Plan the move.", 0), record("assistant", plan, 1)])
    (task,) = pending(ctx, PendingRequest()).batches
    said = task.conversation.splitlines()[1]
    assert said.startswith("[2] assistant: ") and len(said) < 2600 < len(plan)
    assert "Conclusion. Ship it." in said and "Move sessions to a lock file." in said


def test_a_long_subagent_report_reaches_the_host_with_its_findings(
    make_ctx: Callable[..., Context],
) -> None:
    """A report whose findings follow 60 lines of walk-through: the task shows each
    finding, not the headings and the opening alone."""
    ctx = make_ctx(ingest__host_distil=True)
    walk = "".join(
        f"Line {n} of the template wraps a row in a div with classes.\n" for n in range(60)
    )
    report = (
        "I now have the whole picture.\n\n## Walk-through\n" + walk + "\n## SessionLive\n"
        "- session_live.ex loads only the main session's messages.\n\n## SubagentLive\n"
        "- subagent_live.ex renders without the session's cwd, so paths stay absolute.\n"
    )
    task_call = {"type": "tool_use", "id": "t1", "name": "Task"}
    task_call["input"] = {"description": "map", "prompt": "Map the views", "subagent_type": "x"}
    result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "text", "text": report}],
    }
    captured(
        ctx,
        [
            record("user", "Map how the two views render transcripts.", 0),
            record("assistant", [task_call], 1),
            record("user", [result], 2),
            record("assistant", "Mapped.", 3),
        ],
    )
    (task,) = pending(ctx, PendingRequest()).batches
    assert "session_live.ex loads only" in task.conversation
    assert "subagent_live.ex renders without the session's cwd" in task.conversation


def test_a_host_fact_claiming_what_a_tool_result_denies_is_not_kept(
    make_ctx: Callable[..., Context],
) -> None:
    """The host read "I've created CLAUDE.md" and wrote it down; the Write was refused at
    the permission prompt, so the fact is dropped with the reason, and the digest says
    what happened. A fact saying the file was not made is kept."""
    ctx = make_ctx(ingest__host_distil=True)
    session_id = captured(ctx, session())
    (task,) = pending(ctx, PendingRequest()).batches
    claimed = {
        **FACT,
        "content": "The shop's conventions were added to CLAUDE.md.",
        "l0_abstract": "CLAUDE.md conventions",
        "source_message": 2,
    }
    honest = {
        **FACT,
        "content": "CLAUDE.md was not created: the write was refused.",
        "l0_abstract": "CLAUDE.md missing",
        "source_message": 3,
    }
    record = distil(
        ctx, DistilRequest(session_id, task.through_seq, {"facts": [claimed, FACT, honest]})
    ).run
    kept = [m.content for m in list_memories(ctx.db, MemoryFilter(scopes=None), None)]
    assert claimed["content"] not in kept
    assert FACT["content"] in kept and honest["content"] in kept
    (dropped,) = [d for d in record.decisions if d.get("stage") == "claims"]
    assert dropped["reason"].startswith("a tool result denies it: Write CLAUDE.md refused")
    (digest,) = [
        m.content
        for m in list_memories(ctx.db, MemoryFilter(scopes=None), None)
        if m.content.startswith("Session of")
    ]
    assert "Not done: Write CLAUDE.md refused" in digest
