"""A failure is paired with the command that ran it again in the same place: ``git -C``
names a repository of its own, a retry that only added a flag says so, and a command
line whose later step reruns the failed one fixes it (a real repiq session: SOURCES.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memctl.context import Context
from memctl.ingest.digest import AGAIN, build_digest
from memctl.ingest.extract_actions import action_facts
from memctl.ingest.tools import shell_command
from memctl.memories.told_back import memctl_tool
from tests.ingest.test_compaction import ingest_file
from tests.ingest.test_ingest_digest import cc, parse, result, use
from tests.ingest.test_ingest_sessions import (
    claude_record,
    codex_line,
    codex_message,
    digest_of,
    ingest,
    memories_of,
)

REAL = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions" / "real"
FRESH = REAL.parent / "fresh"


def test_git_dash_c_names_the_repository_in_the_key() -> None:
    repiq = shell_command("git -C /src/repiq add AGENTS.md && git -C /src/repiq commit -m x")
    assert repiq.key == "git add @/src/repiq"
    assert shell_command("git -C /src/dotnix add a.md").key != repiq.key
    assert shell_command("git -C /src/repiq log --oneline -3").read_only
    assert shell_command("git -c user.name=ann commit -m x").key == "git commit"
    assert shell_command("git pull --rebase && git push").keys == ("git pull", "git push")


def test_two_repositories_failures_are_fixed_by_their_own_commands(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    digest = digest_of(ctx, ingest_file(ctx, REAL / "cc2-repiq-ce76d3df.jsonl")).content
    assert "pre-commit's script is installed in migration mode → fixed by adding `--no-verify`" in (
        digest
    )
    assert "→ fixed by `git -C …/repiq pull --rebase" in digest
    # the push's error is why it failed, not the progress line its hook printed first
    assert "push` failed: exit 1: error: failed to push some refs" in digest
    assert "Pushing session logs to origin..." not in digest
    assert "fixed by `git -C …/dotnix" not in digest  # another repository fixes nothing here
    assert "still failing" not in digest


def test_a_piped_test_run_whose_summary_counts_failures_failed(
    make_ctx: Callable[..., Context],
) -> None:
    run = {"type": "tool_use", "id": "t1", "name": "Bash"}
    run["input"] = {"command": "uv run pytest -q 2>&1 | tail -3"}
    output = "FAILED tests/test_export.py::test_order\n===== 2 failed, 6 passed in 0.41s =====\n"
    lines = [
        claude_record("user", "Make the export keep its column order", "2025-06-01T10:00:00Z"),
        claude_record("assistant", [run], "2025-06-01T10:01:00Z"),
        claude_record(
            "user",
            [{"type": "tool_result", "tool_use_id": "t1", "content": output}],
            "2025-06-01T10:02:00Z",
        ),
        claude_record("assistant", "Done, the export keeps its order.", "2025-06-01T10:03:00Z"),
    ]
    ctx = make_ctx()
    session = ingest(ctx, lines)
    digest = digest_of(ctx, session).content
    assert "still failing: 2 failed, 6 passed in 0.41s" in digest
    assert not any("tests run with" in m.content for m in memories_of(ctx, session))


AT = "2026-11-29T10:00:00Z"
MEMCTL_ANSWER = (
    '{"query": "how do we deploy", "warnings": [], "results": [{"id": "m1", "content": '
    '"Deploys go through ./deploy.sh on the bastion host, never from a laptop."}]}'
)


def searched_memctl(*then: dict[str, Any]) -> list[dict[str, Any]]:
    """A Claude Code session whose user asks and whose assistant looks in memctl first."""
    search = {"type": "tool_use", "id": "t1", "name": "mcp__memctl__memory_search"}
    search["input"] = {"query": "how do we deploy"}
    found = [{"type": "tool_result", "tool_use_id": "t1", "content": MEMCTL_ANSWER}]
    return [
        claude_record("user", "How do we deploy the shop to production?", "2026-11-29T10:00:00Z"),
        claude_record("assistant", [search], "2026-11-29T10:00:01Z"),
        claude_record("user", found, "2026-11-29T10:00:02Z"),
        claude_record(
            "assistant",
            "From memory: deploys go through ./deploy.sh on the bastion host, never from a laptop.",
            "2026-11-29T10:00:03Z",
        ),
        *then,
    ]


def test_memctls_own_search_results_are_never_distilled_back(
    make_ctx: Callable[..., Context],
) -> None:
    """A session that only asked memctl leaves no memory (its answer is memctl's memories
    told back: distilled, it would come back as "recent work" and sync to teammates); one
    that then worked keeps its request and its own outcome, not the echo."""
    assert memctl_tool("mcp__memctl__memory_search") and memctl_tool("memctl_session_search")
    assert not memctl_tool("Bash") and not memctl_tool("mcp__notes__search")
    ctx = make_ctx()
    assert memories_of(ctx, ingest(ctx, searched_memctl())) == []
    search = {"type": "function_call", "name": "mcp__memctl__memory_search", "call_id": "c1"}
    codex = [
        codex_line("session_meta", {"id": "019a-codex-9", "cwd": "/home/ann/shop"}, AT),
        codex_message("user", "How do we deploy the shop to production?", at=AT),
        codex_line("response_item", {**search, "arguments": '{"query": "deploy"}'}, AT),
        codex_line(
            "response_item",
            {"type": "function_call_output", "call_id": "c1", "output": MEMCTL_ANSWER},
            AT,
        ),
        codex_message(
            "assistant",
            "Deploys go through ./deploy.sh on the bastion host, never a laptop.",
            at=AT,
        ),
    ]
    assert memories_of(ctx, ingest(ctx, codex)) == []

    edit = {"type": "tool_use", "id": "t2", "name": "Edit"}
    edit["input"] = {"file_path": "/home/ann/shop/deploy.sh", "old_string": "a", "new_string": "b"}
    worked = searched_memctl(
        claude_record("user", "Make deploy.sh refuse to run on a laptop", "2026-11-29T10:01:00Z"),
        claude_record("assistant", [edit], "2026-11-29T10:01:01Z"),
        claude_record(
            "user",
            [{"type": "tool_result", "tool_use_id": "t2", "content": "The file has been updated."}],
            "2026-11-29T10:01:02Z",
        ),
        claude_record(
            "assistant",
            "deploy.sh now stops with an error unless it runs on the bastion host.",
            "2026-11-29T10:01:03Z",
        ),
    )
    digest = digest_of(ctx, ingest(ctx, [{**r, "sessionId": "cc-2"} for r in worked])).content
    assert "Asked: How do we deploy the shop to production?" in digest
    assert "Outcome: deploy.sh now stops with an error" in digest
    assert "From memory" not in digest


def test_memctls_own_answers_are_not_kept_in_the_session(
    make_ctx: Callable[..., Context],
) -> None:
    """The session keeps that memctl was asked and what, not the memories it answered with:
    a memory deleted for good would stay quoted there, and recall would offer the echo."""
    ctx = make_ctx()
    ingest(ctx, searched_memctl())
    said = " ".join(
        str(content)
        for (content,) in ctx.db.tuples("SELECT content FROM messages ORDER BY session_id, seq", ())
    )
    assert "[tool mcp__memctl__memory_search: how do we deploy]" in said
    assert "[tool result mcp__memctl__memory_search]" in said
    assert "bastion host, never from a laptop" not in said.split("From memory:")[0]


def test_a_case_keeps_the_end_of_its_error_where_the_missing_name_is(
    make_ctx: Callable[..., Context],
) -> None:
    """A real fresh session's failure (cc1-cclog-37f83ec9): what was missing is said last,
    and the file the failing run named is kept whole where the digest's line cuts it."""
    error = (
        "E TypeError: CacheManager.__init__() missing 1 required positional argument: "
        "'library_version'"
    )
    pytest = {"command": "uv run pytest test/test_combined_transcript_link.py -x --tb=short"}
    run = {"type": "tool_use", "id": "t1", "name": "Bash", "input": pytest}
    again = {"type": "tool_use", "id": "t2", "name": "Bash", "input": pytest}
    edit = {"type": "tool_use", "id": "t3", "name": "Edit"}
    edit["input"] = {"file_path": "/src/test_link.py", "old_string": "a", "new_string": "b"}
    lines = [
        claude_record("user", "Make the link tests pass again please", "2025-07-14T10:00:00Z"),
        claude_record("assistant", [run], "2025-07-14T10:01:00Z"),
        claude_record(
            "user",
            [{"type": "tool_result", "tool_use_id": "t1", "content": error, "is_error": True}],
            "2025-07-14T10:02:00Z",
        ),
        claude_record("assistant", [edit], "2025-07-14T10:03:00Z"),
        claude_record(
            "user",
            [{"type": "tool_result", "tool_use_id": "t3", "content": "ok"}],
            "2025-07-14T10:03:30Z",
        ),
        claude_record("assistant", [again], "2025-07-14T10:04:00Z"),
        claude_record(
            "user",
            [{"type": "tool_result", "tool_use_id": "t2", "content": "3 passed in 0.2s"}],
            "2025-07-14T10:05:00Z",
        ),
    ]
    ctx = make_ctx()
    session = ingest(ctx, lines)
    (case,) = [m for m in memories_of(ctx, session) if m.category == "cases"]
    assert "argument: 'library_version' → fixed by editing test_link.py" in case.content
    assert case.content.startswith("`uv run pytest test/test_combined_transcript_link.py …`")
    digest = digest_of(ctx, session).content
    assert "'library_version'" not in digest  # the digest's line stays short
    assert "`uv run pytest test/test_combined_transcript_link.…` failed" in digest
    assert "CacheManager.__init__() missing 1 required" in digest


def test_a_retry_from_another_place_or_a_runners_help_is_no_case() -> None:
    """A real claude-code-log session (fresh split): `cd test && ...` failed (no such
    directory) and ran without the `cd`; `pytest test/x.py` and `ruff check
    claude_code_log/renderer.py` failed (not found) and ran with the path written from
    elsewhere; `pytest -m unit` failed and `pytest --markers` only printed the markers.
    Where the shell stood is no lesson: the digest says they ran again, and no case is
    kept. The failures fixed by editing files stay cases."""
    records = [json.loads(line) for line in (FRESH / "cc1-cclog-37f83ec9.jsonl").open()]
    digest = build_digest(parse(records)[0], 6, 500)
    again = [line for line in digest.fixed if line.endswith(f"→ fixed by {AGAIN}")]
    assert len(again) == 4, digest.fixed
    assert any("no such file or directory: test" in line for line in again)
    assert any("`ruff check claude_code_log/renderer.py` failed" in line for line in again)
    cases = [f.content for f in action_facts(digest, "session:s1") if f.tags == ["case"]]
    assert not any(f"{line.split(' failed: ')[0]} failed" in c for line in again for c in cases)
    edited = [c for c in cases if "→ fixed by editing test_combined_transcript_link.py" in c]
    assert len(edited) == 2 and len(cases) == 3, cases  # and an inline script rewritten


def test_a_help_run_that_failed_and_then_worked_keeps_its_fix() -> None:
    """A real coderabbit-review-helper session: the installed tool's `--help` failed, the
    package's pyproject.toml was edited, and `--help` worked: the edit is its fix."""
    failed = "exit 1: ModuleNotFoundError: No module named 'extract_coderabbit_feedback'"
    records = [
        cc("user", "Install it as a uv tool", 1),
        cc("assistant", use(2, "Bash", command="cd /tmp && coderabbit-extract --help"), 2),
        cc("user", result(2, failed, True), 3),
        cc("assistant", use(4, "Edit", file_path="/repo/pyproject.toml"), 4),
        cc("user", result(4, "updated"), 5),
        cc("assistant", use(6, "Bash", command="cd /tmp && coderabbit-extract --help"), 6),
        cc("user", result(6, "usage: coderabbit-extract [-h]"), 7),
    ]
    digest = build_digest(parse(records)[0], 6, 500)
    assert digest.fixed and digest.fixed[0].endswith("→ fixed by editing pyproject.toml")


def test_a_command_given_what_it_lacked_after_its_cd_keeps_its_fix() -> None:
    """The same session: `cd /tmp && coderabbit-extract` failed for want of a pull request,
    not of a place; run with one, its fix is the command as it ran."""
    records = [
        cc("user", "Try it on the PR", 1),
        cc("assistant", use(2, "Bash", command="cd /tmp && coderabbit-extract"), 2),
        cc("user", result(2, "exit 1: ❌ No PR found for the current branch.", True), 3),
        cc("assistant", use(4, "Bash", command="coderabbit-extract obra/helper/pull/1"), 4),
        cc("user", result(4, "3 comments extracted"), 5),
    ]
    digest = build_digest(parse(records)[0], 6, 500)
    assert digest.fixed and digest.fixed[0].endswith(
        "fixed by `coderabbit-extract obra/helper/pull/1`"
    )
