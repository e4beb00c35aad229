"""Helpers for the ingest tests: fixture transcripts, inputs from text, generated transcripts."""

from __future__ import annotations

import io
from pathlib import Path

from memctl.context import Context
from memctl.ingest.capture import Captured, IngestOptions, capture
from memctl.ingest.pipeline import run_session
from memctl.ingest.run import Run
from memctl.ingest.source import Input

TRANSCRIPTS = Path(__file__).resolve().parent / "fixtures" / "transcripts"
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
