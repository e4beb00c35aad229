"""Compaction summaries: the account a client writes of the conversation so far when it
compacts its context (Claude Code's compaction sub-agent and its ``isCompactSummary``
turn, Codex's ``compacted`` record) gives the digest its errors with their fixes and the
pending work, and a compaction that ran in a sub-folder belongs to its parent's project."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memctl.config.scope import project_scope
from memctl.context import Context
from memctl.ingest.capture import IngestOptions, capture
from memctl.ingest.pipeline import run_session
from memctl.ingest.source import Input
from memctl.store.sessions import get_session
from tests.ingest.test_ingest_sessions import (
    claude_record,
    codex_line,
    codex_message,
    digest_of,
    ingest,
)

REAL = Path(__file__).resolve().parents[2] / "benchmarks" / "sessions" / "real"
COMPACTION = "cc2-spotter-agent-acompact-f46190.jsonl"  # marot/spotter, MIT (SOURCES.md)
SUMMARY = """<analysis>
Let me go through the conversation. The user wanted the export fixed.
</analysis>

<summary>
1. Primary Request and Intent:
   The user asked to make the CSV export keep its column order.

2. Errors and fixes:
   - **pytest failed on test_export_order**: the writer sorted the keys; fixed by \
keeping the header list.

3. Pending Tasks:
   - Add a test for empty exports
</summary>"""


def in_claude_place(text: str, home: Path, project: Path) -> Path:
    """The transcript where Claude Code keeps a compaction sub-agent's: under the folder
    it names after the directory the session started in."""
    slug = "".join(c if c.isalnum() else "-" for c in str(project))
    path = home / ".claude" / "projects" / slug / "8463c716" / "subagents"
    path.mkdir(parents=True)
    (path / COMPACTION).write_text(text, encoding="utf-8")
    return path / COMPACTION


def ingest_file(ctx: Context, path: Path) -> str:
    with path.open("rb") as raw:
        report = capture(ctx, Input(raw, str(path)), IngestOptions(client=None)).report
    run_session(ctx, report.session_id, report.job_id)
    return report.session_id


def test_a_real_compaction_belongs_to_its_project_and_keeps_its_fixes(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    project = tmp_path / "spotter-fum"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "assets").mkdir()
    real = (REAL / COMPACTION).read_text(encoding="utf-8")
    cwd = "/home/USER/projects/spotter-worktrees/spotter-fum"
    text = real.replace(json.dumps(cwd)[:-1], json.dumps(str(project))[:-1])
    assert f'"{project}/assets"' in text  # it ran in a sub-folder of the project
    ctx = make_ctx()
    session = ingest_file(ctx, in_claude_place(text, tmp_path / "home", project))
    assert get_session(ctx.db, session).scope == project_scope(project, ctx.settings.scope_key)  # type: ignore[union-attr]
    digest = digest_of(ctx, session).content
    assert "create a detailed summary" not in digest  # the prompt is no request
    assert "<analysis>" not in digest
    assert "`classify_normal_line/3`" in digest  # an error and its fix
    assert "`git add -f priv/static/assets/spotter.css`" in digest
    assert "pending: spotter-fum.3 (IN PROGRESS)" in digest
    # no request of its own: its title is the one its summary states
    title = get_session(ctx.db, session).title  # type: ignore[union-attr]
    assert title.startswith("Summary: User asked to work on bead `spotter-fum`")


def test_the_same_file_elsewhere_keeps_the_directory_it_ran_in(
    make_ctx: Callable[..., Context], tmp_path: Path
) -> None:
    ctx = make_ctx()
    copy = tmp_path / COMPACTION
    shutil.copy(REAL / COMPACTION, copy)
    session = ingest_file(ctx, copy)
    scope = get_session(ctx.db, session).scope  # type: ignore[union-attr]
    assert scope == get_session(ctx.db, ingest_file(ctx, copy)).scope  # type: ignore[union-attr]
    assert "Fixed: " in digest_of(ctx, session).content


def test_a_compact_summary_turn_is_no_request_and_gives_its_fixes(
    make_ctx: Callable[..., Context],
) -> None:
    lines = [
        claude_record("user", "Fix the CSV export order please", "2025-06-01T10:00:00Z"),
        claude_record(
            "user",
            "This session is being continued from a previous conversation.\n" + SUMMARY,
            "2025-06-01T11:00:00Z",
            isCompactSummary=True,
        ),
        claude_record("assistant", "Adding the empty export test now.", "2025-06-01T11:01:00Z"),
    ]
    ctx = make_ctx()
    digest = digest_of(ctx, ingest(ctx, lines)).content
    assert "Asked: Fix the CSV export order please\n" in digest
    assert "continued from a previous conversation" not in digest
    assert "fixed by keeping the header list" in digest
    assert "pending: Add a test for empty exports" in digest
    assert "Let me go through" not in digest


def codex_compacted() -> list[dict[str, Any]]:
    at = "2025-03-02T09:00:00Z"
    return [
        codex_line("session_meta", {"id": "019a-compact", "cwd": "/home/ann/shop"}, at),
        codex_message("user", "Fix the CSV export order", at=at),
        codex_line("compacted", {"message": SUMMARY}, at),
        codex_message("assistant", "The export keeps its order now and the tests pass.", at=at),
    ]


def test_a_codex_compacted_record_gives_its_fixes_and_pending_work(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    digest = digest_of(ctx, ingest(ctx, codex_compacted(), "codex")).content
    assert "fixed by keeping the header list" in digest
    assert "pending: Add a test for empty exports" in digest
    assert "Asked: Fix the CSV export order" in digest


def opencode_compacted() -> str:
    """An `opencode export` of a session OpenCode compacted: the user message holding only
    a ``compaction`` part, then the compaction agent's summary (``summary: true``), in the
    shape of OpenCode's MessageV2 (packages/opencode/src/session/message-v2.ts)."""

    def message(role: str, parts: list[dict[str, Any]], **info: Any) -> dict[str, Any]:
        return {"info": {"role": role, "time": {"created": 1760000000000}, **info}, "parts": parts}

    return json.dumps(
        {
            "info": {"id": "ses_compacted", "title": "CSV export", "directory": "/home/ann/shop"},
            "messages": [
                message("user", [{"type": "text", "text": "Fix the CSV export order"}]),
                message("user", [{"type": "compaction", "auto": True}]),
                message(
                    "assistant",
                    [{"type": "text", "text": SUMMARY}],
                    mode="compaction",
                    agent="compaction",
                    summary=True,
                ),
                message("assistant", [{"type": "text", "text": "The export keeps its order."}]),
            ],
        }
    )


def test_an_opencode_compaction_summary_gives_its_fixes_and_pending_work(
    make_ctx: Callable[..., Context],
) -> None:
    ctx = make_ctx()
    digest = digest_of(ctx, ingest(ctx, opencode_compacted(), "opencode")).content
    assert "fixed by keeping the header list" in digest
    assert "pending: Add a test for empty exports" in digest
    assert "Asked: Fix the CSV export order" in digest
    assert "Let me go through the conversation" not in digest  # its <analysis> part
