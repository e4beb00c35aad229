"""A sub-agent's own file (fresh6's real Codex and OpenCode sub-agent sessions, every turn
marked ``[subagent]``) distilled as a session of its own whose "user" is the parent agent:
its calls read, its orders neither requests nor the person's rules, its title unmarked,
its digest weighing less than its parent's."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from memctl.context import Context
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.digest import build_digest, own_thread
from memctl.ingest.extract_actions import action_facts
from memctl.ingest.parse import read_transcript
from memctl.ingest.pipeline import DIGEST_IMPORTANCE, passages, run_session
from memctl.ingest.source import Input
from memctl.ingest.title import heading_title, session_title
from memctl.memories.provenance import DIGEST_TAG
from memctl.model import Category, Message, Role
from memctl.store.memories import of_session, session_memory
from memctl.store.sessions import count_sessions, get_session, messages_after
from tests.ingesting import REAL_SESSIONS, fixture

FRESH6 = REAL_SESSIONS.parent / "fresh6"
REVIEWER = FRESH6 / "codex-entireskills-019ddb93.jsonl"  # told "Do not edit files."
CHECKER = FRESH6 / "opencode-nimbus-329e0e02.json"  # ran the worker's tests, which passed


def messages_of(path: Path, client: str) -> list[Message]:
    with path.open("rb") as raw:
        transcript = read_transcript(Input(raw, str(path)), client)
        return [
            Message(p.role, p.content, p.created_at or "", "s1", n)
            for n, p in enumerate(transcript.messages, start=1)
        ]


def test_a_sub_agents_own_file_is_read_as_a_session_whose_user_is_its_parent() -> None:
    reviewer = messages_of(REVIEWER, "codex")
    digest = build_digest(reviewer, 6, 500)
    assert own_thread(reviewer) and digest.subagent
    assert "CHANGES REQUIRED" in digest.outcome and not digest.reports and digest.useful()
    assert not digest.requests and not any("edit files" in d for d in digest.decisions)
    assert session_title([m.content for m in reviewer if m.role == Role.USER]).startswith(
        "Review Task 1"
    )
    said = passages(reviewer)
    assert said and all(p.role == Role.ASSISTANT for p in said)  # no word of it the user's
    checker = build_digest(messages_of(CHECKER, "opencode"), 6, 500)  # calls inside its turns
    commands = [f.content for f in action_facts(checker, "session:s1")]
    assert any(c.startswith("tests run with `pnpm --filter") for c in commands), commands


def test_a_sessions_own_sidechain_turns_still_end_in_a_report() -> None:
    """Marked turns inside a session the person spoke in are a sub-agent's thread: its last
    words are a report, its calls not the session's."""
    turns = [
        Message(Role.USER, "Find where the retry counter is reset, please.", "", "s1", 1),
        Message(Role.USER, "[subagent] Search the checkout code for the counter.", "", "s1", 2),
        Message(Role.ASSISTANT, "[subagent] [tool Bash: pnpm test]", "", "s1", 3),
        Message(Role.ASSISTANT, "[subagent] The counter is reset in retry.ts.", "", "s1", 4),
        Message(Role.ASSISTANT, "It is reset in retry.ts, line 12.", "", "s1", 5),
    ]
    digest = build_digest(turns, 6, 500)
    assert not own_thread(turns) and not digest.subagent and not digest.calls
    assert digest.reports == ["The counter is reset in retry.ts."]


def test_a_sub_agents_digest_says_whose_it_is_and_its_orders_are_no_rules(ctx: Context) -> None:
    rules = []
    for path, client in ((REVIEWER, "codex"), (CHECKER, "opencode")):
        with path.open("rb") as raw:
            captured = capture(ctx, Input(raw, str(path)), IngestOptions(client=client))
        run_session(ctx, captured.session.id)
        digest = session_memory(ctx.db, captured.session.id, DIGEST_TAG)
        assert digest is not None and digest.importance < DIGEST_IMPORTANCE
        heading = digest.content.splitlines()[0]
        assert f"({client} sub-agent) — " in heading and "[subagent]" not in heading, heading
        made = of_session(ctx.db, captured.session.id, 100)
        rules += [m.content for m in made if m.category == Category.PATTERNS]
    assert not any("Do not" in rule for rule in rules), rules  # the parent's orders
    assert any(rule.startswith("tests run with `pnpm --filter") for rule in rules), rules


def test_an_opencode_task_session_is_its_parents_and_its_heading_its_order(ctx: Context) -> None:
    """OpenCode's task tool runs a sub-agent in a session of its own (``parentID``), which
    its hooks capture as it idles, before the parent's turn ends: stored with the parent,
    as a Codex sub-agent's rollout is, without the task's title ("<description> (@<agent>
    subagent)", which would stand for the parent's until the parent's capture). A session
    stored so before keeps that title: the digest's heading drops the mark, as it says
    "(opencode sub-agent)" already."""
    said = [
        ("user", "Verify the retry fix in src/retry.ts and list blocking issues only."),
        ("assistant", "[tool bash: pnpm test]"),
        (
            "assistant",
            "No blocking issues: the retry counter resets in src/retry.ts and the "
            "tests pass, so the fix holds for both the timeout and the refused-connection case.",
        ),
    ]
    messages = [{"info": {"role": r}, "parts": [{"type": "text", "text": t}]} for r, t in said]
    info = {"id": "ses_2", "parentID": "ses_1", "title": "Verify the fix (@review subagent)"}
    info["time"] = {"created": 1767225600000}
    raw = json.dumps({"info": info, "messages": messages}).encode()
    captured = capture(ctx, Input(io.BytesIO(raw), "ses_2.json"), IngestOptions(client="opencode"))
    assert captured.session.id == "ses_1" and count_sessions(ctx.db)[0] == 1
    run_session(ctx, captured.session.id)
    digest = session_memory(ctx.db, captured.session.id, DIGEST_TAG)
    assert digest is not None
    heading = digest.content.splitlines()[0]
    assert "(opencode sub-agent) — Verify the retry fix in src/retry.ts" in heading, heading
    assert heading_title("Verify the fix (@review subagent)") == "Verify the fix"
    assert heading_title("Review the diff") == "Review the diff"


RESUMED = "codex-0.171-resumed.jsonl"  # its sub-agent's: codex-0.171-resumed-subagent.jsonl


@pytest.mark.parametrize("first", [RESUMED, RESUMED.replace(".jsonl", "-subagent.jsonl")])
def test_a_codex_sub_agents_thread_the_person_resumed_is_their_session(
    ctx: Context, first: str
) -> None:
    """Codex 0.171, for real (tests/ingest/test_parse_newest.py says how): the parent exited
    before its sub-agent answered (a ``<turn_aborted>`` note), and ``codex exec resume
    --last`` resumed the newest rollout, the sub-agent's. The sub-agent's rollout is
    stored with the session Codex names (its parent's), in either order; the turn the
    person started there is theirs, unmarked, and the session's digest asks it."""
    for name in (first, *{RESUMED, RESUMED.replace(".jsonl", "-subagent.jsonl")} - {first}):
        captured = capture(ctx, fixture(name), IngestOptions())
    session = get_session(ctx.db, captured.session.id)
    assert session is not None and session.id == "01a22ce4-704d-7a62-8836-eae5b7053bd9"
    assert count_sessions(ctx.db)[0] == 1
    said = [m.content for m in messages_after(ctx.db, session.id, 0)]
    assert "[subagent] Review scripts/release.sh for ordering bugs, SLOWLY." in said
    assert "What did the review find? SAY: @review" in said  # the person's, unmarked
    # named by the person's first request stored (backfill stores the parent's file first)
    asked = "We deploy with make release" if first == RESUMED else "What did the review find?"
    assert session.title.startswith(asked)
    run_session(ctx, session.id)
    digest = session_memory(ctx.db, session.id, DIGEST_TAG)
    assert digest is not None and digest.importance == DIGEST_IMPORTANCE
    assert "What did the review find?" in digest.content, digest.content
    assert "turn_aborted" not in digest.content and "sub-agent)" not in digest.content
