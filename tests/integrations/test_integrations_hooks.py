"""`memctl hook CLIENT EVENT`: context at session start, capture at the end, never a failure."""

from __future__ import annotations

import io
import json
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memctl.config import load_settings
from memctl.context import Context
from memctl.integrations import hooks
from memctl.store.sessions import get_session
from tests.conftest import run_cli
from tests.ingesting import SESSION, TRANSCRIPTS

OPTIONS = {"home": None, "config": ["ingest.spawn_worker=false"]}


def hook(argv: list[str], payload: object, capsys: pytest.CaptureFixture[str]) -> str:
    """Run a hook in this process, as the fast lane does; its standard output."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    assert hooks.main(OPTIONS, argv, io.StringIO(text)) == 0
    return capsys.readouterr().out


def stored(session_id: str) -> int:
    with Context(load_settings()) as ctx:
        session = get_session(ctx.db, session_id)
        return 0 if session is None else session.message_count


def test_session_start_prints_the_context_block_each_client_expects(tmp_path: Path) -> None:
    project = tmp_path / "project"
    assert run_cli("remember", "We deploy the shop with make release.").returncode == 0
    payload = json.dumps({"session_id": "s1", "cwd": str(project), "source": "startup"})
    done = run_cli("hook", "claude-code", "SessionStart", input=payload)
    assert done.returncode == 0 and done.stderr == ""
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart"
    assert answer["additionalContext"].startswith("<memctl-context>")
    assert "We deploy the shop with make release." in answer["additionalContext"]
    cursor = run_cli(
        "hook",
        "cursor",
        "sessionStart",
        input=json.dumps({"conversation_id": "c1", "workspace_roots": [str(project)]}),
    )
    assert "make release" in json.loads(cursor.stdout)["additional_context"]


def test_session_start_with_an_empty_memory_says_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert hook(["claude-code", "SessionStart"], {"session_id": "s1"}, capsys) == ""


@pytest.mark.parametrize(
    "argv, stdin",
    [
        (["claude-code", "Stop"], "this is not JSON"),
        (["claude-code", "Stop"], '["a list"]'),
        (["claude-code", "Stop"], '{"transcript_path": "/nonexistent/t.jsonl"}'),
        (["claude-code", "NoSuchEvent"], "{}"),
        ([], ""),
    ],
)
def test_bad_input_exits_zero_prints_nothing_and_is_logged(
    home: Path, argv: list[str], stdin: str
) -> None:
    done = run_cli("hook", *argv, input=stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert (home / "logs" / "hooks.log").read_text().strip()


def test_a_broken_config_does_not_fail_the_session(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("recall: [unclosed\n")
    done = run_cli("hook", "claude-code", "SessionStart", input="{}")
    assert (done.returncode, done.stdout) == (0, "")
    assert "not valid YAML" in (home / "logs" / "hooks.log").read_text()


def test_a_transcript_still_being_written_is_captured_again_without_duplicates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (TRANSCRIPTS / "claude-code.jsonl").read_text().splitlines(keepends=True)
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("".join(lines[:5]))  # the hook fired before the last lines landed
    event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    assert hook(["claude-code", "Stop"], event, capsys) == ""
    early = stored(SESSION)
    transcript.write_text("".join(lines))  # the client finishes writing
    other = tmp_path / "other.jsonl"
    shutil.copy(TRANSCRIPTS / "codex.jsonl", other)
    hook(["codex", "Stop"], {"transcript_path": str(other), "cwd": str(tmp_path)}, capsys)
    complete = stored(SESSION)
    assert 0 < early < complete
    hook(["claude-code", "SessionEnd"], event, capsys)
    assert stored(SESSION) == complete  # the same transcript again adds nothing


def test_codex_notify_finds_the_rollout_from_its_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = "0199a3f1-5c2e-7a41-9b3d-2f6e8c1d4a57"
    sessions = tmp_path / "codex" / "sessions" / "2025" / "10" / "02"
    sessions.mkdir(parents=True)
    shutil.copy(
        TRANSCRIPTS / "codex.jsonl", sessions / f"rollout-2025-10-02T14-21-07-{thread}.jsonl"
    )
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    notice = {"type": "agent-turn-complete", "thread-id": thread, "cwd": str(tmp_path)}
    stdin = io.StringIO("")
    assert hooks.main(OPTIONS, ["codex", "notify", json.dumps(notice)], stdin) == 0
    assert capsys.readouterr().out == ""
    assert stored(thread) > 0


def test_opencode_plugin_payload_is_captured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = json.loads((TRANSCRIPTS / "opencode.json").read_text())
    session_id = export["info"]["id"]
    payload = {"cwd": str(tmp_path), "session_id": session_id, "export": export}
    assert hook(["opencode", "session.idle"], payload, capsys) == ""
    assert stored(session_id) > 0


def test_hooks_record_when_they_fired(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memctl.integrations.hooks_state import last_fired

    hook(["codex", "SessionStart"], {}, capsys)
    assert last_fired(home, "codex", "SessionStart") is not None
    assert last_fired(home, "codex", "Stop") is None


def test_a_capture_that_cannot_store_is_done_again_by_the_next_hook(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The disk fills (a file size limit: writes fail as on a full disk) while SessionEnd
    stores a big transcript: the hook exits 0, and the next hook of any session stores it."""
    record = {"type": "user", "sessionId": SESSION, "cwd": str(tmp_path)}
    transcript = tmp_path / "big.jsonl"
    with transcript.open("w") as out:
        for n in range(3000):
            text = f"step {n}: the deploy script copies build {n} to the staging host " * 4
            out.write(json.dumps({**record, "message": {"role": "user", "content": text}}) + "\n")
    assert run_cli("status").returncode == 0  # the store exists, small
    limit = (home / "memctl.db").stat().st_size + 64 * 1024
    event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    full = subprocess.run(
        [sys.executable, "-m", "memctl", "-c", "ingest.spawn_worker=false"]
        + ["hook", "claude-code", "SessionEnd"],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
        timeout=120,
    )
    assert full.returncode == 0 and full.stdout == ""
    assert stored(SESSION) == 0
    other = tmp_path / "other.jsonl"
    shutil.copy(TRANSCRIPTS / "codex.jsonl", other)
    hook(["codex", "Stop"], {"transcript_path": str(other), "cwd": str(tmp_path)}, capsys)
    assert stored(SESSION) == 3000
