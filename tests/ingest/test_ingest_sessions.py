"""Real coding sessions on the default (no LLM): digests, injected text, every message distilled.

Transcripts are written here in the clients' real shapes: Claude Code with a
sub-agent, tool results and injected reminders; Codex rollouts whose first
user message is AGENTS.md and the environment context; OpenCode exports;
long sessions; sessions in Chinese.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memctl.config.scope import project_scope
from memctl.context import Context
from memctl.ingest import extract_rules, parse
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.facts import Passage
from memctl.ingest.pipeline import run_session
from memctl.ingest.tools import command_purpose
from memctl.memories.injected import INJECTIONS, all_injected, strip_injected
from memctl.model import Category, Memory, Role
from memctl.store.memories import MemoryFilter, list_memories
from memctl.store.sessions import get_session, messages_after
from tests.ingesting import fixture, source

RESUMED = "codex-0.171-resumed.jsonl"  # a real rollout: tests/ingest/test_parse_newest.py

AGENTS = (
    "# AGENTS.md instructions for /srv/shop\n\n<INSTRUCTIONS>\n"
    "- Always use tabs for indentation.\n- We deploy with `make ship` from main.\n"
    "- I prefer short commit messages.\n</INSTRUCTIONS>"
)
ENVIRONMENT = (
    "<environment_context>\n  <cwd>/srv/shop</cwd>\n  <shell>zsh</shell>\n</environment_context>"
)


def memories_of(ctx: Context, session_id: str) -> list[Memory]:
    where = MemoryFilter(scopes=None, states=("active",))
    return [m for m in list_memories(ctx.db, where, None) if m.session_id == session_id]


def digest_of(ctx: Context, session_id: str) -> Memory:
    (digest,) = [m for m in memories_of(ctx, session_id) if "digest" in m.tags]
    return digest


def ingest(ctx: Context, lines: list[dict[str, Any]] | str, client: str | None = None) -> str:
    text = lines if isinstance(lines, str) else "\n".join(json.dumps(x) for x in lines)
    report = capture(ctx, source(text), IngestOptions(client=client)).report
    run_session(ctx, report.session_id, report.job_id)
    return report.session_id


def codex_line(kind: str, payload: dict[str, Any], at: str) -> dict[str, Any]:
    return {"timestamp": at, "type": kind, "payload": payload}


def codex_message(role: str, *texts: str, at: str) -> dict[str, Any]:
    part = "input_text" if role == "user" else "output_text"
    content = [{"type": part, "text": t} for t in texts]
    return codex_line("response_item", {"type": "message", "role": role, "content": content}, at)


ANSWER = "The export command now takes --dry-run, parsed with click; the tests pass."


def codex_session(cwd: str) -> list[dict[str, Any]]:
    meta = {"id": "019a-codex-1", "timestamp": "2025-03-02T09:00:00Z", "cwd": cwd}
    shell = {"type": "function_call", "name": "shell", "call_id": "c1"}
    return [
        codex_line("session_meta", meta, "2025-03-02T09:00:00Z"),
        codex_message(
            "developer",
            "<permissions instructions>sandboxed</permissions instructions>",
            at="2025-03-02T09:00:00Z",
        ),
        codex_message("user", AGENTS, ENVIRONMENT, at="2025-03-02T09:00:01Z"),
        codex_line("turn_context", {"cwd": cwd, "model": "gpt-5"}, "2025-03-02T09:00:01Z"),
        codex_message(
            "user",
            "Add a --dry-run flag to the export command. No, use click instead of argparse.",
            at="2025-03-02T09:00:02Z",
        ),
        codex_line(
            "response_item",
            {**shell, "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q tests"]})},
            "2025-03-02T09:00:03Z",
        ),
        codex_line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": json.dumps(
                    {"output": "ImportError: click", "metadata": {"exit_code": 1}}
                ),
            },
            "2025-03-02T09:00:04Z",
        ),
        codex_line(
            "response_item",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": "c2",
                "input": "*** Begin Patch\n*** Update File: shop/export.py\n@@\n*** End Patch",
            },
            "2025-03-02T09:00:05Z",
        ),
        # Codex writes each answer twice, as an event and then as a response item: kept once
        codex_line(
            "event_msg", {"type": "agent_message", "message": ANSWER}, "2025-03-02T09:00:06Z"
        ),
        codex_message("assistant", ANSWER, at="2025-03-02T09:00:07Z"),
    ]


def test_a_codex_rollout_keeps_nothing_of_agents_md_and_digests_the_work(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = make_ctx()
    session_id = ingest(ctx, codex_session(str(tmp_path / "gone" / "shop")))
    made = memories_of(ctx, session_id)
    text = "\n".join(m.content for m in made)
    for injected in ("tabs for indentation", "make ship", "short commit", "zsh", "sandboxed"):
        assert injected not in text  # the AGENTS.md bullets are not the user's words
    assert "No, use click instead of argparse." in [m.content for m in made]
    digest = digest_of(ctx, session_id)
    assert digest.category == Category.EVENTS and digest.created_at.startswith("2025-03-02")
    assert "Asked: Add a --dry-run flag to the export command." in digest.content
    assert "Edited: shop/export.py" in digest.content
    # the test run failed and was never run again: open, not done
    assert "Left open: `pytest -q tests` still failing: ImportError: click" in digest.content
    assert "Ran:" not in digest.content
    assert "Outcome: The export command now takes --dry-run" in digest.content
    assert "the tests pass" not in digest.content  # the tool result outranks the claim
    assert "Not done: `pytest -q tests` still failing" in digest.content
    assert digest.source == "session:019a-codex-1#1-6"
    assert all(m.created_at.startswith("2025-03-02") for m in made)  # dated by the session


def test_a_turn_only_a_client_injected_is_the_clients_and_an_old_capture_is_not_doubled(
    ctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real Codex 0.171 rollout's AGENTS.md turn (memctl's own instructions in it) is a
    system message, not the person's; the turn after it is theirs. Stored as the user's
    before (as memctl did until s33), the transcript read again whole adds nothing."""
    monkeypatch.setattr(parse, "all_injected", lambda text: False)  # memctl before s33
    before = capture(ctx, fixture(RESUMED), IngestOptions()).session
    stored = [(m.role, m.content) for m in messages_after(ctx.db, before.id, 0)]
    assert stored[0][0] == Role.USER and stored[0][1].startswith("# AGENTS.md instructions")
    monkeypatch.undo()
    again = capture(ctx, fixture(RESUMED), IngestOptions())
    assert again.report.messages_new == 0 and again.session.message_count == len(stored)
    now = capture(ctx, fixture(RESUMED), IngestOptions(session_id="read-now")).session
    roles = [(m.role, m.content[:16]) for m in messages_after(ctx.db, now.id, 0)][:2]
    assert roles == [(Role.SYSTEM, "# AGENTS.md inst"), (Role.USER, "We deploy with m")]
    assert now.title.startswith("We deploy with make release")


def test_a_session_is_scoped_by_its_own_cwd(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    repo = tmp_path / "shop"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:acme/shop.git"],
        check=True,
    )
    ctx = make_ctx()
    here = ingest(ctx, codex_session(str(repo)))
    assert get_session(ctx.db, here).scope == "github.com/acme/shop"  # type: ignore[union-attr]
    assert {m.scope for m in memories_of(ctx, here)} == {"github.com/acme/shop"}
    gone = str(tmp_path / "elsewhere" / "shop")
    report = capture(
        ctx,
        source("\n".join(json.dumps(x) for x in codex_session(gone))),
        IngestOptions(session_id="other"),
    ).report
    again = capture(
        ctx,
        source("\n".join(json.dumps(x) for x in codex_session(gone))),
        IngestOptions(session_id="third"),
    ).report
    assert report.scope == again.scope and report.scope.startswith("path:")
    here = project_scope(tmp_path, ctx.settings.scope_key)
    assert report.scope != here  # not the directory memctl ran in


def claude_record(kind: str, content: Any, at: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": "cc-1",
        "cwd": "/home/ann/shop",
        "timestamp": at,
        "isSidechain": False,
        "message": {"role": kind, "content": content},
        **extra,
    }


def claude_session() -> list[dict[str, Any]]:
    reminder = (
        "<system-reminder>Contents of /home/ann/shop/CLAUDE.md (project instructions):\n"
        "We always use pnpm, never npm.</system-reminder>"
    )
    tool = [
        {
            "type": "tool_use",
            "id": "t1",
            "name": "Task",
            "input": {"description": "Find the flaky test", "prompt": "Find it"},
        }
    ]
    return [
        claude_record(
            "user",
            f"{reminder}\nThe checkout test is flaky, fix it please.",
            "2025-06-01T10:00:00Z",
        ),
        claude_record("assistant", tool, "2025-06-01T10:00:01Z"),
        claude_record(
            "user",
            "Find the flaky test and report why it fails",
            "2025-06-01T10:00:02Z",
            isSidechain=True,
        ),
        claude_record(
            "assistant",
            [{"type": "tool_use", "id": "s1", "name": "Grep", "input": {"pattern": "sleep"}}],
            "2025-06-01T10:00:03Z",
            isSidechain=True,
        ),
        claude_record(
            "assistant",
            [
                {
                    "type": "text",
                    "text": "The flaky test is test_checkout: it sleeps 1s and races the clock.",
                }
            ],
            "2025-06-01T10:00:04Z",
            isSidechain=True,
        ),
        claude_record(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "test_checkout races the clock",
                }
            ],
            "2025-06-01T10:00:05Z",
        ),
        claude_record(
            "assistant",
            [
                {"type": "text", "text": "I'll freeze the clock in the test."},
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "Edit",
                    "input": {"file_path": "/home/ann/shop/tests/test_checkout.py"},
                },
                {"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "pnpm test"}},
            ],
            "2025-06-01T10:00:06Z",
        ),
        claude_record(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t3",
                    "is_error": True,
                    "content": "FAIL tests/test_checkout.py: freezegun missing",
                }
            ],
            "2025-06-01T10:00:07Z",
        ),
        claude_record(
            "user",
            "<command-name>/compact</command-name><command-message>compact</command-message>",
            "2025-06-01T10:00:08Z",
        ),
        claude_record("user", "No, use time-machine instead of freezegun.", "2025-06-01T10:00:09Z"),
        claude_record(
            "assistant",
            "Understood. I'll always use time-machine for clock tests "
            "in this repo. The checkout test now passes with the clock frozen.",
            "2025-06-01T10:00:10Z",
        ),
    ]


def test_a_claude_code_session_with_a_subagent_becomes_a_digest_and_facts(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    report = capture(
        ctx, source("\n".join(json.dumps(x) for x in claude_session())), IngestOptions()
    ).report
    assert report.lines["kept subagent user"] == 1 and report.lines["kept subagent assistant"] == 2
    assert report.cwd == "/home/ann/shop"
    run = run_session(ctx, "cc-1", report.job_id)
    notes = [n for t in run.trace if t.stage == "injected" for n in t.notes]
    assert notes == ["2 command left out"]  # the reminder the parser already set aside
    made = {m.content for m in memories_of(ctx, "cc-1")}
    assert "No, use time-machine instead of freezegun." in made
    assert "I'll always use time-machine for clock tests in this repo." in made
    assert not any("pnpm, never npm" in m for m in made)  # CLAUDE.md is not the user's
    assert not any("Find the flaky test" in m and "digest" not in m for m in made)
    digest = digest_of(ctx, "cc-1").content
    assert "Asked: The checkout test is flaky, fix it please." in digest
    assert "Found: test_checkout races the clock" in digest  # the Task tool's result
    # the sidechain's last words are that same report: found once, not twice
    assert "The flaky test is test_checkout" not in digest
    assert "Edited: /home/ann/shop/tests/test_checkout.py" in digest
    assert "`pnpm test` still failing: FAIL tests/test_checkout.py: freezegun missing" in digest
    assert "Decided: No, use time-machine instead of freezegun." in digest
    assert "compact" not in digest.split("Outcome:")[0]


def test_a_grown_session_updates_its_one_digest(make_ctx: Callable[..., Context]) -> None:
    ctx = make_ctx()
    lines = claude_session()
    ingest(ctx, lines[:8])
    first = digest_of(ctx, "cc-1")
    assert "time-machine" not in first.content
    ingest(ctx, lines)
    grown = digest_of(ctx, "cc-1")  # still exactly one
    assert grown.id == first.id and grown.created_at == first.created_at
    assert "time-machine" in grown.content and grown.source == "session:cc-1#1-11"
    ingest(ctx, lines)  # nothing new: nothing changes
    assert digest_of(ctx, "cc-1").content == grown.content


def test_an_opencode_export_is_digested(make_ctx: Callable[..., Context]) -> None:
    export = {
        "info": {
            "id": "ses_oc1",
            "title": "Rate limiter",
            "directory": "/srv/api",
            "time": {"created": 1735725600000},
        },
        "messages": [
            {
                "info": {"role": "user", "time": {"created": 1735725600000}},
                "parts": [{"type": "text", "text": "Add a rate limiter to the login endpoint."}],
            },
            {
                "info": {"role": "assistant", "time": {"created": 1735725660000}},
                "parts": [
                    {"type": "text", "text": "Added a token bucket of 5 requests a minute."},
                    {
                        "type": "tool",
                        "tool": "write",
                        "state": {
                            "status": "completed",
                            "input": {"filePath": "/srv/api/limiter.py"},
                            "output": "ok",
                        },
                    },
                ],
            },
        ],
    }
    ctx = make_ctx()
    session_id = ingest(ctx, json.dumps(export), client="opencode")
    digest = digest_of(ctx, session_id)
    assert "Created: /srv/api/limiter.py" in digest.content
    assert "Rate limiter" in digest.content and digest.created_at.startswith("2025-01-01")


def test_a_long_session_is_distilled_whole_from_its_first_message(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx(select__messages=20)
    lines = ["user: Let's use Postgres 16 for the ledger service."]
    for n in range(300):
        lines += [
            f"assistant: [tool Bash: pytest tests/test_{n}.py]",
            f"user: next file {n} please",
        ]
    report = capture(ctx, source("\n".join(lines)), IngestOptions(session_id="long")).report
    run = run_session(ctx, "long", report.job_id)
    assert run.record.messages == 601
    assert sum(t.stage == "select" for t in run.trace) == 31
    assert get_session(ctx.db, "long").extracted_through == 601  # type: ignore[union-attr]
    assert "Let's use Postgres 16 for the ledger service." in {
        m.content for m in memories_of(ctx, "long")
    }


def test_a_chinese_session_keeps_its_design_decision_and_correction(
    make_ctx: Callable[..., Context],
) -> None:
    text = (
        "user: 帮我设计订单服务的消息队列。\n"
        "assistant: 可以用 Kafka 或 Redis Streams。\n"
        "user: 最终方案是用 Redis Streams 做订单队列，因为我们已经在用 Redis。\n"
        "user: 不要用 npm，改用 pnpm。\n"
        "assistant: 好的，我以后会一直用 pnpm。"
        "队列已经按 Redis Streams 设计完成，代码在 queue/orders.py。\n"
    )
    ctx = make_ctx()
    capture(ctx, source(text), IngestOptions(session_id="zh"))
    run_session(ctx, "zh")
    made = {m.content for m in memories_of(ctx, "zh")}
    assert "最终方案是用 Redis Streams 做订单队列，因为我们已经在用 Redis。" in made
    assert "不要用 npm，改用 pnpm。" in made
    assert any(m.startswith("好的，我以后会一直用 pnpm") for m in made)
    assert "帮我设计订单服务的消息队列。" in digest_of(ctx, "zh").content


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        (AGENTS + "\n" + ENVIRONMENT, {"agents-md": 1, "environment": 1}),
        ("<system-reminder>todo list</system-reminder>", {"system-reminder": 1}),
        ("<command-name>/clear</command-name><command-args></command-args>", {"command": 2}),
        ("<memctl-context>\n- Ann likes tea\n</memctl-context>", {"memctl-context": 1}),
        (  # Claude Code's shell mode, as in a real 1.0.55 session (claude-code-log)
            "<bash-input>uv run pytest test/test_project_display_name.py</bash-input>"
            "<bash-stdout>collected 11 items\n\ntest/test_project_display_name.py F.FFF....F."
            "</bash-stdout><bash-stderr></bash-stderr>",
            {"shell-mode": 1, "command-output": 2},
        ),
        ("Please analyze this codebase and create a CLAUDE.md file, which ...", {"command": 1}),
        (  # Claude Code 2.1.330 telling the model its background sub-agent ended
            "<task-notification>\n<task-id>a29f</task-id>\n<status>completed</status>\n"
            "</task-notification>",
            {"task-notification": 1},
        ),
        (  # Cursor: what it attaches to a prompt
            '<attached_files>\n<file path="a.py"/>\n</attached_files>'
            "<system_notification>The following task has finished.</system_notification>",
            {"attachments": 1, "notification": 1},
        ),
        (
            "## Skills\nA skill is a set of local instructions to follow.\n- pdf: read PDFs",
            {"skills": 1},
        ),
    ],
)
def test_injected_text_is_recognised_per_client(text: str, kinds: dict[str, int]) -> None:
    stripped = strip_injected(text)
    assert stripped.all_injected and dict(stripped.removed) == kinds
    assert all_injected(text)  # through the openings' union first, as recall asks it


def test_every_wrapper_opens_with_its_opening() -> None:
    """What recall tries first (``injected._opening``) is the rules' openings: a text a rule
    matches opens with a match of its opening, since its pattern is the opening then the
    rest in a group of its own, and the opening alternates nothing."""
    for injection in INJECTIONS:
        assert "|" not in injection.opening, injection
        assert injection.regex.pattern.startswith(f"{injection.opening}(?:"), injection
        assert injection.regex.pattern.endswith(")"), injection


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("<command-name>/init</command-name><command-args></command-args>", "/init"),
        (
            "<command-message>review is running…</command-message>\n"
            "<command-name>/review</command-name>\n<command-args>the auth module</command-args>",
            "/review the auth module",
        ),
        ("<command-name>/model</command-name><command-args>opus</command-args>", ""),
    ],
)
def test_a_slash_command_is_the_users_request_its_wrapper_is_injected(
    text: str, asked: str
) -> None:
    stripped = strip_injected(text)
    assert stripped.text == asked and stripped.removed["command"] >= 2


def test_a_codex_agents_md_block_without_a_path_is_injected() -> None:
    text = "# AGENTS.md instructions\n\n<INSTRUCTIONS>\nUse tabs.\n</INSTRUCTIONS>\nFix it."
    assert strip_injected(text).text == "Fix it."


def test_codex_s_ide_context_above_a_request_is_injected() -> None:
    """A real Codex Desktop turn (heldout's codemie session): its title was the heading."""
    mentioned = (
        "# Files mentioned by the user:\n\n## Demo Prep.vtt: /Users/u/Downloads/Demo Prep.vtt\n\n"
        "## My request for Codex:\nanalyze trascript and summarzie action items\n"
    )
    stripped = strip_injected(mentioned)
    assert stripped.text == "analyze trascript and summarzie action items"
    assert stripped.removed == {"ide": 1}
    tabs = "# Context from my IDE setup:\n## Active file: a.ts\n## My request for Codex:\nadd retry"
    assert strip_injected(tabs).text == "add retry"
    assert strip_injected("# Files mentioned by the user:\n## a.png: /tmp/a.png").removed == {}


def test_injected_blocks_leave_the_users_own_words() -> None:
    stripped = strip_injected(f"{ENVIRONMENT}\nFix the login bug.")
    assert stripped.text == "Fix the login bug." and not stripped.all_injected


@pytest.mark.parametrize(
    ("sentence", "role", "kind"),
    [
        ("No, use pytest instead of unittest.", Role.USER, "correction"),
        ("Don't use moment, use date-fns.", Role.USER, "correction"),
        ("We always prefix branch names with the ticket id.", Role.USER, "convention"),
        ("The project runs on Python 3.12 with FastAPI.", Role.USER, "project"),
        ("I'll never force-push to main again.", Role.ASSISTANT, "commitment"),
        ("From now on I'll run the linter before committing.", Role.ASSISTANT, "commitment"),
        ("不对，应该用 uv 管理依赖", Role.USER, "correction"),
        ("代码统一用四个空格缩进", Role.USER, "convention"),
        ("数据库是 PostgreSQL 15", Role.USER, "project"),
    ],
)
def test_rules_find_corrections_conventions_and_commitments(
    sentence: str, role: Role, kind: str
) -> None:
    (fact,) = extract_rules.extract_rules([Passage(sentence, role=role)], 50)
    assert fact.tags == [kind] and fact.content == sentence


@pytest.mark.parametrize(
    ("sentence", "role"),
    [
        ("Should we always use tabs?", Role.USER),  # a question
        ("I plan to enhance it with more comprehensive features.", Role.USER),  # which "it"?
        ("It runs on port 8080 now.", Role.USER),
        ("Let me check the config. I'll run the tests now.", Role.ASSISTANT),  # narration
        ("We deploy with make ship.", Role.ASSISTANT),  # the assistant's, not a commitment
    ],
)
def test_rules_leave_questions_narration_and_assistant_claims(sentence: str, role: Role) -> None:
    assert extract_rules.extract_rules([Passage(sentence, role=role)], 50) == []


def test_a_command_the_person_ran_with_shell_mode_is_a_tool_call_and_its_result(
    make_ctx: Callable[..., Context],
) -> None:
    """Claude Code's `!uv run pytest -m fast` writes the command, then its output, as two
    user turns: they are read as a shell call and its result, so the digest and the facts
    know how the tests run and that the edit fixed them."""
    edit = {"type": "tool_use", "id": "e1", "name": "Edit", "input": {"file_path": "cart.py"}}
    done = {"type": "tool_result", "tool_use_id": "e1", "content": "The file was updated."}
    lines = [
        claude_record("user", "The fast tests fail since the cart change.", "2025-06-01T10:00:00Z"),
        claude_record(
            "user", "<bash-input>uv run pytest -m fast</bash-input>", "2025-06-01T10:01:00Z"
        ),
        claude_record(
            "user",
            "<bash-stdout>FAILED tests/test_cart.py::test_total\n"
            "==== 1 failed, 11 passed in 0.31s ====\n</bash-stdout><bash-stderr></bash-stderr>",
            "2025-06-01T10:01:05Z",
        ),
        claude_record("assistant", [edit], "2025-06-01T10:02:00Z"),
        claude_record("user", [done], "2025-06-01T10:02:01Z"),
        claude_record(
            "user", "<bash-input>uv run pytest -m fast</bash-input>", "2025-06-01T10:03:00Z"
        ),
        claude_record(
            "user",
            "<bash-stdout>==== 12 passed in 0.30s ====\n</bash-stdout><bash-stderr></bash-stderr>",
            "2025-06-01T10:03:04Z",
        ),
    ]
    ctx = make_ctx()
    session_id = ingest(ctx, lines, "claude-code")
    said = [m.content for m in memories_of(ctx, session_id)]
    # a marker picks a part of the suite (ingest.run_scope)
    only = "tests run, on selected tests only, with `uv run pytest -m fast`"
    assert any(m.startswith(only) for m in said), said
    assert any("failed: 1 failed, 11 passed" in m and "fixed by editing cart.py" in m for m in said)
    assert "`uv run pytest -m fast` failed" in digest_of(ctx, session_id).content


@pytest.mark.parametrize(
    ("command", "purpose"),
    [
        ("uv run ty check", "type checks run"),
        ("npx tsc --noEmit", "type checks run"),
        ("uv run pytest -m fast", "tests run"),
        ('echo "test"', None),
    ],
)
def test_what_a_command_line_does(command: str, purpose: str | None) -> None:
    found = command_purpose(command)
    assert (found[0] if found else None) == purpose
