"""Forgetting reaches the spool: a hook that met a busy database keeps the transcript in
``$MEMCTL_HOME/spool`` for the next ingest or maintain to store. ``memctl redact`` and the
forget of one message must take the text out of those copies too, or it stays on disk and
the next ``maintain`` stores it back. Real processes, a real write lock held by another
process, a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import cli_ok, files_holding
from tests.holding import held
from tests.ingesting import claude_record

DOOR = "kumquat-harbour-1977"  # said in message 2 and again in message 3
DOG = "lemonzest-otter-42"  # said only in message 3, which waits in the spool
WAIT = ["-c", "ingest.lock_wait_ms=300"]


def _say(path: Path, role: str, text: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"role": role, "content": text}) + "\n")


def _spooled(home: Path, tmp_path: Path) -> str:
    """A session stored with messages 1-2; message 3 kept in the spool; the session's id."""
    transcript = tmp_path / "t.jsonl"
    _say(transcript, "user", "hello there, first message")
    _say(transcript, "user", f"our office door code is {DOOR} ok")
    cli_ok("ingest", "--transcript", str(transcript), "--wait")
    _say(transcript, "assistant", f"noted: {DOOR} again, and the dog is {DOG}")
    with held(home / "memctl.db"):
        assert "the database is busy" in cli_ok(*WAIT, "ingest", "--transcript", str(transcript))
    assert [p.name for p in (home / "spool").iterdir()]
    return str(json.loads(cli_ok("sessions", "list", "--all-scopes", "--json"))[0]["id"])


def test_redact_takes_the_value_out_of_a_spooled_transcript(home: Path, tmp_path: Path) -> None:
    _spooled(home, tmp_path)
    assert "1 spooled transcript rewritten" in cli_ok("redact", DOG)
    assert files_holding(home, DOG) == []  # the spooled copy too
    cli_ok("maintain")  # stores the spooled message 3
    assert DOG not in cli_ok("sessions", "grep", "dog", "--all-scopes")
    assert "the dog is [REDACTED]" in cli_ok("sessions", "grep", "dog", "--all-scopes")
    assert files_holding(home, DOG) == []


def test_forgetting_one_message_leaves_no_copy_in_the_spool(home: Path, tmp_path: Path) -> None:
    """Held: a spooled copy holds only what came after what was stored (message 3), so a
    stored message, the only kind one can forget, has no copy there."""
    session = _spooled(home, tmp_path)
    cli_ok("forget", f"{session}#2")
    assert files_holding(home, "our office door code") == []
    cli_ok("maintain")
    shown = cli_ok("sessions", "show", session)
    assert "our office door code" not in shown and "[forgotten]" in shown
    assert DOG in shown  # message 3 is stored all the same: nothing else is lost
    assert files_holding(home, "our office door code") == []


def test_a_spooled_transcript_keeps_no_secret_of_its_title(home: Path, tmp_path: Path) -> None:
    """A Claude Code summary line titles the session; spooled while the database was busy,
    the title was written to the spool as the transcript had it, token and all."""
    token = "ghp_Qw8Er1Ty2Ui3Op4As5Df6Gh7Jk8Lz9Xc0Vb1N"
    transcript = tmp_path / "t.jsonl"
    lines = [
        {**claude_record("user", "hello there, first message", 1), "uuid": "u1"},
        {"type": "summary", "summary": f"Rotating deploy token {token}", "leafUuid": "u1"},
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    cli_ok("status")  # the store exists, so another process can hold its lock
    with held(home / "memctl.db"):
        said = cli_ok(*WAIT, "ingest", "--client", "claude-code", "--transcript", str(transcript))
        assert "the database is busy" in said
    assert files_holding(home, token) == []  # the spool's copy neither
    cli_ok("maintain")  # stores the spooled transcript
    (session,) = json.loads(cli_ok("sessions", "list", "--all-scopes", "--json"))
    assert session["title"].startswith("Rotating deploy token [REDACTED")
    assert files_holding(home, token) == []


def _failed(home: Path, tmp_path: Path) -> str:
    """``_spooled``, then the spooled copy failed to be stored (kept as ``*.failed``)."""
    session = _spooled(home, tmp_path)
    (spooled,) = (home / "spool").iterdir()
    header, *rest = spooled.read_text(encoding="utf-8").splitlines()
    damaged = {k: v for k, v in json.loads(header).items() if k != "started_at"}
    spooled.write_text("\n".join([json.dumps(damaged), *rest]) + "\n", encoding="utf-8")
    cli_ok("maintain")
    assert [p.suffix for p in (home / "spool").iterdir()] == [".failed"]
    return session


def test_redact_and_forget_reach_a_spooled_transcript_that_failed(
    home: Path, tmp_path: Path
) -> None:
    """A spooled copy that could not be stored is kept as `*.failed`: neither `redact` nor
    `sessions forget` looked at it (they read `*.jsonl*`)."""
    session = _failed(home, tmp_path)
    assert "1 spooled transcript rewritten" in cli_ok("redact", DOG)
    assert files_holding(home, DOG) == []
    cli_ok("sessions", "forget", session, "--yes")
    assert list((home / "spool").iterdir()) == []
    assert files_holding(home, DOOR) == []
