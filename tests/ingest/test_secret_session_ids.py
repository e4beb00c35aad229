"""A session id that holds a secret, from the transcript itself or from a client's hook
JSON (not typed by hand, which is refused): the conversation is stored under an id of
memctl's making, and the secret lands nowhere under the home (database, hooks' marks,
logs). Real SQLite files; the hook as a real process."""

from __future__ import annotations

import json
from pathlib import Path

from memctl.api import ingest as ingest_api
from memctl.api.ingest import IngestRequest
from memctl.context import Context
from tests.conftest import run_cli
from tests.ingesting import claude_record
from tests.memories.test_forget_everywhere import _files_holding

TOKEN = "ghp_Zx9Kq2Lm4Np6Rs8Tv0Wy1Ab3Cd5Ef7Gh9Ij1K"  # a GitHub token's shape


def _transcript(path: Path, session_id: str) -> Path:
    said = ["set up the deploy script", "done: tools/deploy.sh runs it"]
    lines = [
        claude_record(("user", "assistant")[n % 2], t, n, session_id) for n, t in enumerate(said)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_transcript_whose_own_session_id_is_a_secret_is_stored_under_another(
    ctx: Context, home: Path, tmp_path: Path
) -> None:
    transcript = _transcript(tmp_path / "t.jsonl", TOKEN)
    first = ingest_api.ingest(ctx, IngestRequest(str(transcript), mode="raw")).report
    assert first.messages_new == 2 and TOKEN not in first.session_id
    assert any("session id" in note for note in first.problems)  # said, without the value
    again = ingest_api.ingest(ctx, IngestRequest(str(transcript), mode="raw", client="claude-code"))
    assert (again.report.session_id, again.report.messages_new) == (first.session_id, 0)
    ctx.close()
    assert _files_holding(home, TOKEN) == []


def test_a_hook_whose_session_id_is_a_secret_captures_the_session_without_it(
    home: Path, tmp_path: Path
) -> None:
    transcript = _transcript(tmp_path / "t.jsonl", TOKEN)
    start = {"session_id": TOKEN, "cwd": str(tmp_path), "source": "startup"}
    assert run_cli("hook", "claude-code", "SessionStart", input=json.dumps(start)).returncode == 0
    end = {"session_id": TOKEN, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    done = run_cli("hook", "claude-code", "SessionEnd", input=json.dumps(end))
    assert done.returncode == 0, done.stderr
    listed = run_cli("sessions", "list", "--all-scopes", "--json")
    assert [s["message_count"] for s in json.loads(listed.stdout)] == [2], listed.stdout
    assert TOKEN not in done.stdout + done.stderr + listed.stdout
    assert _files_holding(home, TOKEN) == []
