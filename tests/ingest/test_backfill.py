"""memctl ingest --backfill as a user runs it: real transcript files where Claude Code,
Codex and Cursor keep them in a temporary HOME, real memctl processes."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from tests.conftest import run_cli
from tests.ingesting import PAIR_SESSION, TRANSCRIPTS, backfill_env, claude_code_pair

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
    env = backfill_env(home)
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


def test_a_claude_code_session_and_its_sub_agent_file_are_one_session(tmp_path: Path) -> None:
    """Claude Code keeps a sub-agent's transcript in ``<session>/subagents/``, with the
    session's id: backfill stores it with the session, after the session's own messages
    (a real pair, see tests/fixtures/transcripts/real/SOURCES.md), and once."""
    session = PAIR_SESSION
    main, agent = claude_code_pair(tmp_path / "user")
    os.utime(main, (0, 2_000_000_000))  # the session's file was written last
    env = {"HOME": str(tmp_path / "user"), "CLAUDE_CONFIG_DIR": "", "MEMCTL_LLM": "none"}
    env["MEMCTL_INGEST_SPAWN_WORKER"] = "false"
    first = backfill(env)
    assert (first["transcripts"], first["sessions"], first["failed"]) == (2, 1, 0)
    shown = json.loads(
        run_cli("sessions", "show", session, "--page-size", "1000", "--json", env=env).stdout
    )
    messages = shown["messages"]
    assert len(messages) == first["messages"]
    assert shown["session"]["source"] == str(main)  # the session's file, not its sub-agent's
    marked = [m["seq"] for m in messages if m["content"].startswith("[subagent]")]
    assert marked and min(marked) > len(messages) - len(marked)  # the sub-agent's come last
    assert "Analyze the existing CLI command structure" in messages[min(marked) - 1]["content"]
    assert backfill(env)["messages"] == 0


def opencode_home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A HOME whose OpenCode database holds what the real OpenCode 1.18.33 wrote."""
    data = tmp_path / "user" / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    with sqlite3.connect(data / "opencode.db") as db:
        db.executescript((TRANSCRIPTS / "opencode-1.18.33.sql").read_text())
    db.close()
    env = {"HOME": str(tmp_path / "user"), "XDG_DATA_HOME": "", "MEMCTL_LLM": "none"}
    return data, {**env, "MEMCTL_INGEST_SPAWN_WORKER": "false"}


def test_opencode_sessions_are_read_from_its_database_and_its_older_storage(
    tmp_path: Path,
) -> None:
    data, env = opencode_home(tmp_path)
    first = backfill(env, "--client", "opencode")
    assert (first["transcripts"], first["sessions"], first["messages"]) == (2, 2, 5)
    shown = run_cli("sessions", "show", "ses_dec3e0171", "--json", env=env)
    contents = [m["content"] for m in json.loads(shown.stdout)["messages"]]
    # the quotes `opencode run` puts around an argument with a space are not the user's
    assert contents[0] == "SEARCH: how do we deploy"
    assert contents[1].startswith("[tool memctl_memory_search: how do we deploy]")
    again = backfill(env, "--client", "opencode")
    assert (again["messages"], again["unchanged"], again["bytes"]) == (0, 2, 0)

    # OpenCode before its database kept the same objects as files: storage/session/<project>/,
    # message/<session>/, part/<message>/
    storage = data / "storage"
    with sqlite3.connect(data / "opencode.db") as db:
        for sid, project, title, directory, created, updated in db.execute(
            "SELECT id, project_id, title, directory, time_created, time_updated FROM session"
        ):
            info = {"id": f"{sid}x", "projectID": project, "title": title, "directory": directory}
            info["time"] = {"created": created, "updated": updated}
            write_json(storage / "session" / project / f"{sid}x.json", info)
        for mid, sid, body in db.execute("SELECT id, session_id, data FROM message"):
            write_json(
                storage / "message" / f"{sid}x" / f"{mid}.json", {"id": mid, **json.loads(body)}
            )
        for pid, mid, body in db.execute("SELECT id, message_id, data FROM part"):
            write_json(storage / "part" / mid / f"{pid}.json", {"id": pid, **json.loads(body)})
    db.close()
    (data / "opencode.db").write_bytes(b"not a database at all" * 100)
    older = backfill(env, "--client", "opencode")
    assert (older["transcripts"], older["sessions"], older["messages"]) == (3, 2, 5)
    assert older["failed"] == 1 and "opencode.db" in str(older["failures"])


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
