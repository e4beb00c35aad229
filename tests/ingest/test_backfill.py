"""memctl ingest --backfill as a user runs it: real transcript files where Claude Code,
Codex and Cursor keep them in a temporary HOME, real memctl processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_cli
from tests.ingesting import TRANSCRIPTS

SESSION = "3d1c9f2e-5b7a-4c8e-9f10-6a2b4c8d0e12"  # the Claude Code fixture's sessionId
NEW_LINE = {
    "parentUuid": None,
    "cwd": "",
    "sessionId": SESSION,
    "type": "user",
    "message": {"role": "user", "content": "One more thing: the release branch is frozen."},
    "uuid": "9f9f9f9f-0001-4000-8000-000000000099",
    "timestamp": "2025-09-14T10:00:00.000Z",
}


def user_home(tmp_path: Path, widget: Path, ledger: Path) -> tuple[Path, dict[str, str]]:
    """A HOME holding a Claude Code session run in ``widget`` (and a truncated copy of it,
    and a binary file), a Codex session run in ``ledger``, and a Cursor transcript."""
    home = tmp_path / "user"
    claude = home / ".claude" / "projects"
    text = (
        (TRANSCRIPTS / "claude-code.jsonl")
        .read_text()
        .replace("/home/alice/src/widget", str(widget))
    )
    (claude / "-widget").mkdir(parents=True)
    (claude / "-widget" / f"{SESSION}.jsonl").write_text(text)
    (claude / "-copy").mkdir()
    (claude / "-copy" / "cut.jsonl").write_text(text[: len(text) // 2])  # ends mid-line
    (claude / "-copy" / "image.jsonl").write_bytes(bytes(range(256)) * 8)
    codex = home / ".codex" / "sessions" / "2025" / "10" / "02"
    codex.mkdir(parents=True)
    rollout = (
        (TRANSCRIPTS / "codex.jsonl").read_text().replace("/home/chen/work/ledger", str(ledger))
    )
    (codex / "rollout-2025-10-02T14-21-07-0199a3f1.jsonl").write_text(rollout)
    cursor = home / ".cursor" / "projects" / "shop" / "agent-transcripts"
    cursor.mkdir(parents=True)
    (cursor / "c0ffee.txt").write_text((TRANSCRIPTS / "generic.txt").read_text())
    env = {
        "HOME": str(home),
        "CODEX_HOME": "",
        "CLAUDE_CONFIG_DIR": "",
        "MEMCTL_LLM": "none",
        "MEMCTL_INGEST_SPAWN_WORKER": "false",
    }
    return home / ".claude" / "projects" / "-widget" / f"{SESSION}.jsonl", env


def backfill(env: dict[str, str], *args: str, cwd: Path | None = None) -> dict[str, object]:
    done = run_cli("ingest", "--backfill", "--json", *args, env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def status(env: dict[str, str]) -> dict[str, object]:
    done = run_cli("status", "--json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_backfill_stores_every_session_once_in_its_own_project(tmp_path: Path) -> None:
    widget, ledger = tmp_path / "widget", tmp_path / "ledger"
    widget.mkdir()
    ledger.mkdir()
    claude_file, env = user_home(tmp_path, widget, ledger)

    dry = backfill(env, "--dry-run")
    assert dry["per_client"] == {"claude-code": 3, "codex": 1, "cursor": 1}
    assert dry["failed"] == 1 and "binary" in str(dry["failures"])
    assert dry["sessions"] == 3 and dry["messages"] > 0 and dry["bytes"] > 0  # type: ignore[operator]
    assert status(env)["sessions"] == 0  # nothing written

    first = backfill(env)
    assert (first["sessions"], first["jobs"], first["failed"]) == (3, 3, 1)
    assert first["malformed"] >= 1  # type: ignore[operator]  # the cut copy's last line
    stored = status(env)
    assert stored["sessions"] == 3 and stored["jobs"] == {"queued": 3}  # queued, not run

    again = backfill(env)
    assert (again["messages"], again["jobs"], again["stored"]) == (0, 0, 0)
    assert status(env)["messages"] == stored["messages"]

    # each session in the scope of the directory it ran in
    for project, client in ((widget, "claude-code"), (ledger, "codex")):
        done = run_cli("sessions", "list", "--json", env=env, cwd=project)
        assert [s["client"] for s in json.loads(done.stdout)] == [client], done.stderr

    # a session that went on: only its new message
    with claude_file.open("a") as grown:
        grown.write(json.dumps({**NEW_LINE, "cwd": str(widget)}) + "\n")
    more = backfill(env, "--client", "claude-code")
    assert more["per_client"] == {"claude-code": 3}
    assert (more["messages"], more["sessions"], more["jobs"]) == (1, 1, 1)
    assert status(env)["messages"] == stored["messages"] + 1  # type: ignore[operator]


def test_backfill_since_and_bad_input(tmp_path: Path) -> None:
    widget, ledger = tmp_path / "widget", tmp_path / "ledger"
    claude_file, env = user_home(tmp_path, widget, ledger)
    os.utime(claude_file, (0, 946684800))  # 2000-01-01
    recent = backfill(env, "--since", "2020-01-01", "--dry-run")
    assert recent["per_client"] == {"claude-code": 2, "codex": 1, "cursor": 1}
    assert backfill(env, "--since", "1d", "--client", "codex", "--dry-run")["transcripts"] == 1
    for args, why in (
        (("--since", "someday"), "cannot read the time"),
        (("--transcript", str(claude_file)), "--transcript does not go with --backfill"),
        (("--client", "emacs"), "emacs"),
    ):
        done = run_cli("ingest", "--backfill", *args, env=env)
        assert done.returncode == 2 and why in done.stderr, done.stderr
    done = run_cli("ingest", "--since", "1d", "--transcript", str(claude_file), env=env)
    assert done.returncode == 2 and "--since goes with --backfill" in done.stderr
    assert status(env)["sessions"] == 0
