"""Helpers for the ingest tests: fixture transcripts, inputs from text, generated transcripts."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from memctl.context import Context
from memctl.ingest.capture import Captured, IngestOptions, capture
from memctl.ingest.pipeline import run_session
from memctl.ingest.run import Run
from memctl.ingest.source import Input

TRANSCRIPTS = Path(__file__).resolve().parent / "fixtures" / "transcripts"
REAL_SESSIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "sessions" / "real"
# Real sessions of clients and versions the other sets lack (SOURCES.md there): Gemini CLI
FRESH_SESSIONS = REAL_SESSIONS.parent / "fresh"
# Likewise, the second fresh split: Amp and GitHub Copilot Chat among them
FRESH2_SESSIONS = REAL_SESSIONS.parent / "fresh2"
# And the third: SpecStory Markdown histories of Cursor, Copilot Chat, Claude Code and Codex
FRESH3_SESSIONS = REAL_SESSIONS.parent / "fresh3"
# A real Claude Code 2.x session and its sub-agent (tests/fixtures/transcripts/real/SOURCES.md)
PAIR_SESSION = "e9fb405b-169f-40eb-9396-7e75076f045d"


def claude_code_pair(user_home: Path) -> tuple[Path, Path]:
    """The real session and its sub-agent's file where Claude Code keeps them under
    ``user_home`` (``~/.claude/projects/<project>/<session>.jsonl`` and
    ``<session>/subagents/``): (the session's file, the sub-agent's)."""
    project = user_home / ".claude" / "projects" / "-codemie"
    (project / PAIR_SESSION / "subagents").mkdir(parents=True)
    main = project / f"{PAIR_SESSION}.jsonl"
    main.write_bytes((REAL_SESSIONS / "cc2-codemie-e9fb405b.jsonl").read_bytes())
    agent = project / PAIR_SESSION / "subagents" / "agent-a485154.jsonl"
    agent.write_bytes((TRANSCRIPTS / "real" / "cc2-codemie-agent-a485154.jsonl").read_bytes())
    return main, agent


def backfill_env(home: Path) -> dict[str, str]:
    """A user's environment with ``home`` as HOME, where the assistants keep their
    transcripts (the clients' own home variables unset), no LLM and no detached worker."""
    return {
        "HOME": str(home),
        "CODEX_HOME": "",
        "CLAUDE_CONFIG_DIR": "",
        "COPILOT_HOME": "",
        "MEMCTL_LLM": "none",
        "MEMCTL_INGEST_SPAWN_WORKER": "false",
    }


SESSION = "3d1c9f2e-5b7a-4c8e-9f10-6a2b4c8d0e12"  # the Claude Code fixture's session


def source(data: str | bytes, name: str = "standard input") -> Input:
    raw = data.encode() if isinstance(data, str) else data
    return Input(io.BytesIO(raw), name)


def fixture(name: str) -> Input:
    path = TRANSCRIPTS / name
    return Input(path.open("rb"), str(path))


def ingest_text(ctx: Context, text: str, session_id: str = "s1", **options: object) -> Captured:
    """Capture a plain-text transcript (``user: ...`` lines) as one session."""
    return capture(ctx, source(text), IngestOptions(session_id=session_id, **options))  # type: ignore[arg-type]


def distil(ctx: Context, text: str, session_id: str = "s1") -> Run:
    """Capture a plain-text transcript and run the slow path on it in the foreground."""
    ingest_text(ctx, text, session_id)
    return run_session(ctx, session_id)


REFUSAL = "The user doesn't want to proceed with this tool use. The tool use was rejected."


def claude_record(kind: str, content: Any, n: int, session_id: str = "cc-host") -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": session_id,
        "cwd": "/home/ann/shop",
        "timestamp": f"2025-06-01T10:{n // 60:02d}:{n % 60:02d}Z",
        "message": {"role": kind, "content": content},
    }


def _call(n: int, name: str, **arguments: str) -> dict[str, Any]:
    return claude_record(
        "assistant", [{"type": "tool_use", "id": f"t{n}", "name": name, "input": arguments}], n
    )


def _result(n: int, text: str, error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": f"t{n}", "content": text, "is_error": error}
    return claude_record("user", [block], n)


def claude_work_session(reads: int = 1) -> list[dict[str, Any]]:
    """A Claude Code session in the client's real shape: a request, a claim, the write it
    claims refused at the permission prompt, ``reads`` reads that worked, a failing test
    run, its fix and the passing run, then a rule from the user."""
    lines = [
        claude_record("user", "Add a CLAUDE.md with our conventions, and make the tests pass.", 0),
        claude_record("assistant", "I've created CLAUDE.md with the conventions.", 1),
        _call(2, "Write", file_path="/home/ann/shop/CLAUDE.md", content="# Shop"),
        _result(2, REFUSAL, error=True),
    ]
    for n in range(3, 3 + reads):  # reads that worked show nothing an answer does not
        lines += [_call(n, "Read", file_path=f"/home/ann/shop/src/m{n}.py"), _result(n, "1→x")]
    n = 3 + reads
    lines += [
        _call(n, "Bash", command="pnpm test"),
        _result(n, "Exit code 1\nError: Cannot find module 'vitest'", error=True),
        _call(n + 1, "Bash", command="pnpm add -D vitest"),
        _result(n + 1, "+ vitest 1.6.0"),
        _call(n + 2, "Bash", command="pnpm test"),
        _result(n + 2, "Tests 12 passed"),
        claude_record("user", "We always deploy with make ship, never by hand.", n + 3),
    ]
    return lines
