"""Files memctl reads on its own (issue 34): `ingest --backfill` never follows a symbolic
link out of a client's transcript folder, and passes over a FIFO without waiting on it.
A temporary HOME, real memctl processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_cli
from tests.ingesting import TRANSCRIPTS

OUTSIDE = "the private ledger of another project lives here"
INSIDE = "the widget deploys with make release"


def _line(text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def test_backfill_follows_no_link_out_of_the_transcript_folder(tmp_path: Path) -> None:
    home = tmp_path / "user"
    folder = home / ".claude" / "projects" / "-widget"
    folder.mkdir(parents=True)
    (folder / "own.jsonl").write_text((TRANSCRIPTS / "claude-code.jsonl").read_text())
    (folder / "copy.jsonl").write_text(_line(INSIDE))
    (folder / "alias.jsonl").symlink_to(folder / "copy.jsonl")  # inside: fine, once
    secret = tmp_path / "elsewhere.jsonl"
    secret.write_text(_line(OUTSIDE))
    (folder / "evil.jsonl").symlink_to(secret)
    os.mkfifo(folder / "pipe.jsonl")
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": "", "MEMCTL_LLM": "none", "CODEX_HOME": ""}
    done = run_cli("ingest", "--backfill", "--client", "claude-code", env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    found = run_cli("sessions", "grep", "ledger", "--all-scopes", env=env)
    assert OUTSIDE not in found.stdout
    assert INSIDE in run_cli("sessions", "grep", "widget deploys", "--all-scopes", env=env).stdout
