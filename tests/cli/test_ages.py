"""Ages count from the source's time: a memory distilled from an eight-month-old session
is eight months old in list, recall and the context block, not "just now"."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memctl.cli.render import age
from tests.conftest import run_cli

OLD = "2025-03-01T10:00:00Z"
AGES = (timedelta(seconds=20), timedelta(minutes=2), timedelta(hours=3), timedelta(days=280))


def old_session(path: Path) -> Path:
    messages = [
        {"role": "user", "content": "I prefer tabs over spaces.", "timestamp": OLD},
        {"role": "assistant", "content": "Noted.", "timestamp": OLD},
    ]
    path.write_text(json.dumps({"messages": messages}))
    return path


def test_distilled_memories_show_the_age_of_their_session(tmp_path: Path) -> None:
    transcript = old_session(tmp_path / "old.json")
    done = run_cli("-c", "llm=none", "ingest", "--transcript", str(transcript), "--wait")
    assert done.returncode == 0, done.stderr
    (memory,) = json.loads(run_cli("list", "--json").stdout)
    assert memory["source"].startswith("session:")
    listed = run_cli("list").stdout
    assert re.search(r"\b\d+(mo|y)\b", listed) and " now " not in listed
    recalled = json.loads(run_cli("recall", "tabs or spaces", "--json").stdout)["results"]
    assert recalled[0]["source_time"].startswith("2025-03-01T10:00:00")
    table = run_cli("recall", "tabs or spaces").stdout
    assert re.search(r"\b\d+(mo|y)\b", table)
    block = run_cli("recall", "tabs or spaces", "--format", "context").stdout
    assert re.search(r"\(\d+(mo|y) ago\) I prefer tabs", block) and "just now" not in block


def test_remembered_memories_are_dated_by_their_creation() -> None:
    assert run_cli("remember", "the build uses make").returncode == 0
    assert "just now" in run_cli("recall", "build make", "--format", "context").stdout


def test_minutes_and_months_read_apart() -> None:
    """A table's age column wrote minutes as ``2m`` beside months as ``9mo``."""
    now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    ages = [age((now - span).isoformat(), now) for span in AGES]
    assert ages == ["now", "2min", "3h", "9mo"]
