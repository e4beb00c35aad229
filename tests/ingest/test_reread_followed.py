"""A transcript read again from its start adds nothing, though its first read found a
secret only after a message that repeats it: lines of a real Codex Desktop rollout
(tests/fixtures/transcripts/real/SOURCES.md) through real ``memctl ingest`` runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import files_holding, run_cli
from tests.holding import held

REREAD = (
    Path(__file__).parent.parent
    / "fixtures"
    / "transcripts"
    / "real"
    / "codex-cyspbot-reread-019f21d1.jsonl"
)


def _messages(env: dict[str, str]) -> list[str]:
    listed = json.loads(run_cli("sessions", "list", "--all-scopes", "--json", env=env).stdout)
    assert len(listed) == 1
    shown = run_cli("sessions", "show", listed[0]["id"], "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    return [m["content"] for m in json.loads(shown.stdout)["messages"]]


def test_a_transcript_read_again_from_its_start_stores_no_message_twice(tmp_path: Path) -> None:
    # Entire's copy ends with no newline: no read mark, so each ingest reads it whole
    assert not REREAD.read_bytes().endswith(b"\n")
    env = {"MEMCTL_HOME": str(tmp_path / "memctl"), "MEMCTL_LLM": "none"}
    first = run_cli("ingest", str(REREAD), "--client", "codex", "--wait", "--json", env=env)
    assert first.returncode == 0, first.stderr
    stored = _messages(env)
    assert any(m.startswith("**Root Cause**") and "#oidc-token)" in m for m in stored)
    for _ in range(2):
        again = run_cli("ingest", str(REREAD), "--client", "codex", "--wait", "--json", env=env)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["messages_new"] == 0
    assert _messages(env) == stored


def test_a_package_script_named_after_a_token_labelled_repository_is_no_secret(
    tmp_path: Path,
) -> None:
    # "- cyspbot-app-token-action: `format:check`, ..." reads as a label and its value
    env = {"MEMCTL_HOME": str(tmp_path / "memctl"), "MEMCTL_LLM": "none"}
    done = run_cli("ingest", str(REREAD), "--client", "codex", "--wait", env=env)
    assert done.returncode == 0, done.stderr
    stored = _messages(env)
    assert "[tool exec_command: corepack pnpm run format:check]" in stored
    assert any("`format:check`, `typecheck`, `test`" in m for m in stored)
    assert not any("[REDACTED:secret]" in m and "pnpm" in m for m in stored)


VALUE = "Kq7Lm2Xp9Vt4"  # said bare first, then labelled a password


def test_a_transcript_read_again_through_the_spool_stores_no_message_twice(
    home: Path, tmp_path: Path
) -> None:
    """s44-leads: the same re-read, spooled by a hook that met a busy database. The spool
    hid the secret earlier captures hid in every message before the stored-message check
    ran (at replay, on the hidden text), so the first message, stored bare before the
    label showed the value, was stored again as `[REDACTED:…]`. Checked at spooling, as
    capture checks it, it is left out; the new message is stored, hidden, and neither the
    spool nor the new message holds the value."""
    transcript = tmp_path / "t.jsonl"  # no newline after the last line: no read mark
    said = [
        ("user", f"I pasted {VALUE} into the dashboard's signing field"),
        ("user", f"password: {VALUE}"),
        ("assistant", f"Noted, {VALUE} is the dashboard password."),
    ]
    lines = [json.dumps({"role": role, "content": text}) for role, text in said]
    transcript.write_text("\n".join(lines))
    env = {"MEMCTL_LLM": "none"}
    assert run_cli("ingest", str(transcript), "--wait", env=env).returncode == 0
    stored = _messages(env)
    assert len(stored) == 3
    transcript.write_text(
        "\n".join([*lines, json.dumps({"role": "user", "content": f"{VALUE} ok?"})])
    )
    wait = ("-c", "ingest.lock_wait_ms=300", "-c", "ingest.spawn_worker=false")
    with held(home / "memctl.db"):
        spooling = run_cli(*wait, "ingest", str(transcript), env=env)
        assert "the database is busy" in spooling.stdout, spooling.stdout + spooling.stderr
    assert files_holding(home / "spool", VALUE) == []
    assert run_cli("maintain", env=env).returncode == 0
    assert not list((home / "spool").iterdir())
    assert _messages(env) == [*stored, "[REDACTED:password] ok?"]
