"""`memctl hook CLIENT EVENT`: context at session start, capture at the end, never a failure."""

from __future__ import annotations

import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memctl.api.sessions import last_captured
from memctl.clients.base import Launcher, Where
from memctl.config import load_settings
from memctl.context import Context
from memctl.ingest import pending
from memctl.integrations import hooks, setup
from memctl.maintain.spawn import NICENESS
from memctl.store.sessions import count_sessions, get_session, messages_after
from tests.conftest import run_cli
from tests.ingesting import PAIR_SESSION, SESSION, TRANSCRIPTS, claude_code_pair

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


@pytest.mark.fresh
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
    opencode = run_cli("hook", "opencode", "session.created", input=payload)
    assert opencode.stdout.startswith("<memctl-context>")  # its plugin adds the text as it is


def test_session_start_with_an_empty_memory_says_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert hook(["claude-code", "SessionStart"], {"session_id": "s1"}, capsys) == ""


def test_session_start_brings_the_identity_file_before_any_memory(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "identity.md").write_text("<!-- about you -->\nI'm Dana; answer briefly.\n")
    output = hook(["claude-code", "SessionStart"], {"session_id": "s1"}, capsys)
    context = json.loads(output)["hookSpecificOutput"]["additionalContext"]
    assert "## identity\nI'm Dana; answer briefly.\n" in context
    assert "about you" not in context
    assert not (home / "memctl.db").exists()


TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a folder named after a token


@pytest.mark.parametrize(
    "argv, stdin",
    [
        (["claude-code", "Stop"], "this is not JSON"),
        (["claude-code", "Stop"], '["a list"]'),
        (["claude-code", "Stop"], json.dumps({"transcript_path": f"/nonexistent/{TOKEN}/t.jsonl"})),
    ],
)
def test_bad_input_exits_zero_prints_nothing_and_is_logged(
    home: Path, argv: list[str], stdin: str
) -> None:
    done = run_cli("hook", *argv, input=stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    logged = (home / "logs" / "hooks.log").read_text()
    assert logged.strip() and TOKEN not in logged  # a secret in a path is scrubbed


def test_a_broken_config_does_not_fail_the_session(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("recall: [unclosed\n")
    done = run_cli("hook", "claude-code", "SessionStart", input="{}")
    assert (done.returncode, done.stdout) == (0, "")
    assert "not valid YAML" in (home / "logs" / "hooks.log").read_text()


def test_a_transcript_still_being_written_is_captured_again_without_duplicates(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
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
    with transcript.open("a") as more:  # what Claude Code writes after its Stop hook
        more.write(json.dumps({"type": "system", "subtype": "turn_duration"}) + "\n")
    hook(["claude-code", "SessionEnd"], event, capsys)
    log = home / "logs" / hooks.LOG
    assert stored(SESSION) == complete and not (log.exists() and log.read_text())


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


def test_a_codex_stop_stores_the_sub_agents_it_started_and_later_hooks_what_they_say_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex 0.171 runs no hook in a sub-agent's thread (nor in one the person resumes,
    s32's real runs): the parent's Stop marks the rollout its ``spawn_agent`` result names
    pending, its recapture stores what the sub-agent said so far, under the parent's
    session, and a later hook what it says after (the person's resumed question)."""
    parent, agent = "01a22ce4-704d-7a62-8836-eae5b7053bd9", "01a22ce4-83e5-7ea2-a65f-f6b74e18ff02"
    sessions = tmp_path / "codex" / "sessions" / "2026" / "11" / "30"
    sessions.mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    rollout = sessions / f"rollout-2026-11-30T14-38-18-{parent}.jsonl"
    shutil.copy(TRANSCRIPTS / "codex-0.171-resumed.jsonl", rollout)
    lines = (TRANSCRIPTS / "codex-0.171-resumed-subagent.jsonl").read_text().splitlines(True)
    thread = sessions / f"rollout-2026-11-30T14-38-23-{agent}.jsonl"
    thread.write_text("".join(lines[:12]))  # up to its turn aborted when the parent exited
    event = {"session_id": parent, "transcript_path": str(rollout), "cwd": str(tmp_path)}
    hook(["codex", "Stop"], event, capsys)
    with Context(load_settings()) as ctx:
        said = [m.content for m in messages_after(ctx.db, parent, 0)]
        assert count_sessions(ctx.db)[0] == 1
    assert "[subagent] Review scripts/release.sh for ordering bugs, SLOWLY." in said
    thread.write_text("".join(lines))  # `codex exec resume --last`: no hook of its own
    other = tmp_path / "other.jsonl"
    shutil.copy(TRANSCRIPTS / "codex.jsonl", other)
    hook(["codex", "Stop"], {"transcript_path": str(other), "cwd": str(tmp_path)}, capsys)
    with Context(load_settings()) as ctx:
        said = [m.content for m in messages_after(ctx.db, parent, 0)]
    assert said.count("What did the review find? SAY: @review") == 1  # the person's words


def test_the_worker_stores_the_sub_agents_of_a_rollout_a_hook_left_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parent rollout too big for its hook (handed to the worker, or left to maintain):
    the chunked capture marks the rollouts its ``spawn_agent`` results name, found beside
    the parent's (not through $CODEX_HOME, which the worker may not have), and stores them
    in the same run, under the parent's session."""
    parent, agent = "01a22ce4-704d-7a62-8836-eae5b7053bd9", "01a22ce4-83e5-7ea2-a65f-f6b74e18ff02"
    root = tmp_path / "codex" / "sessions"
    (root / "2026" / "11" / "30").mkdir(parents=True)
    (root / "2026" / "12" / "01").mkdir(parents=True)  # the sub-agent wrote after midnight
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "elsewhere"))
    rollout = root / "2026" / "11" / "30" / f"rollout-2026-11-30T14-38-18-{parent}.jsonl"
    shutil.copy(TRANSCRIPTS / "codex-0.171-resumed.jsonl", rollout)
    thread = root / "2026" / "12" / "01" / f"rollout-2026-11-30T14-38-23-{agent}.jsonl"
    shutil.copy(TRANSCRIPTS / "codex-0.171-resumed-subagent.jsonl", thread)
    settings = load_settings()
    left = pending.Pending(str(rollout), "codex", parent, str(tmp_path), -1, time.time(), "codex")
    pending.remember(settings.home, left)  # as a hook marks a rollout it hands on
    with Context(settings) as ctx:
        done = pending.capture_grown(ctx, print)
        said = [m.content for m in messages_after(ctx.db, parent, 0)]
        assert count_sessions(ctx.db)[0] == 1
    assert [Path(entry.path) for entry, _ in done] == [rollout, thread]
    assert "[subagent] Review scripts/release.sh for ordering bugs, SLOWLY." in said
    assert said.count("What did the review find? SAY: @review") == 1  # the person's words
    assert pending.grown(settings.home, "", 1, None) == []  # each recorded as captured


def test_the_first_codex_capture_after_install_stores_the_session_no_hook_ran_in(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex reads its hooks as a session starts: the session in which the person trusted
    them (at Codex 0.171's prompt, in its TUI) runs none. The first capture hook after
    ``memctl install`` stores it too, once; a session over before the install stays out
    (``ingest --backfill`` is for those)."""
    codex_home = tmp_path / "codex"
    day = codex_home / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    earlier = day / "rollout-2025-10-02T14-21-07-0199a3f1-5c2e-7a41-9b3d-2f6e8c1d4a57.jsonl"
    shutil.copy(TRANSCRIPTS / "codex.jsonl", earlier)
    an_hour_ago = time.time() - 3600
    os.utime(earlier, (an_hour_ago, an_hour_ago))
    where = Where(tmp_path / "user", None, {"CODEX_HOME": str(codex_home), "PATH": ""})
    setup.install(setup.InstallRequest("codex", force=True), where, Launcher(("memctl",)), home)
    trusting = day / "rollout-2026-11-30T11-58-33-01a22c52-2f5e-7272-bc87-24c106a88ffa.jsonl"
    shutil.copy(TRANSCRIPTS / "codex-0.171.jsonl", trusting)  # no hook ran in it
    hooked = day / "rollout-2026-11-30T14-38-18-01a22ce4-704d-7a62-8836-eae5b7053bd9.jsonl"
    shutil.copy(TRANSCRIPTS / "codex-0.171-resumed.jsonl", hooked)
    event = {"transcript_path": str(hooked), "cwd": str(tmp_path)}
    hook(["codex", "Stop"], event, capsys)
    ids = {"01a22c52-2f5e-7272-bc87-24c106a88ffa", "01a22ce4-704d-7a62-8836-eae5b7053bd9"}
    assert {s for s in ids if stored(s)} == ids
    assert not stored("0199a3f1-5c2e-7a41-9b3d-2f6e8c1d4a57")
    os.utime(earlier)  # changed now: a later hook does not catch up again
    hook(["codex", "Stop"], event, capsys)
    assert not stored("0199a3f1-5c2e-7a41-9b3d-2f6e8c1d4a57")


def test_opencode_plugin_payload_is_captured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = json.loads((TRANSCRIPTS / "opencode.json").read_text())
    session_id = export["info"]["id"]
    payload = {"cwd": str(tmp_path), "session_id": session_id, "export": export}
    assert hook(["opencode", "session.idle"], payload, capsys) == ""
    assert stored(session_id) > 0
    # a sub-agent's child session (OpenCode 1.18's task tool), which idles before its
    # parent: stored with the parent, as a Codex sub-agent's rollout is
    child = {**export, "info": {**export["info"], "id": "ses_child", "parentID": session_id}}
    payload = {"cwd": str(tmp_path), "session_id": "ses_child", "export": child}
    before = stored(session_id)
    assert hook(["opencode", "session.idle"], payload, capsys) == ""
    assert stored("ses_child") == 0 and stored(session_id) > before


def test_hooks_record_when_they_fired(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from memctl.integrations.hooks_state import last_fired

    hook(["codex", "SessionStart"], {}, capsys)
    assert last_fired(home, "codex", "SessionStart") is not None
    assert last_fired(home, "codex", "Stop") is None


@pytest.mark.parametrize(
    "spelling", ["SessionStart", "session-start", "session_start", "sessionstart"]
)
def test_event_names_in_any_spelling(
    home: Path, spelling: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from memctl.integrations.hooks_state import last_fired

    hook(["claude-code", spelling], {}, capsys)
    assert last_fired(home, "claude-code", "SessionStart") is not None


@pytest.mark.parametrize(
    "argv, said",
    [
        (["claude-code", "NoSuchEvent"], "claude-code has no event 'NoSuchEvent'; known: "),
        (
            ["vim", "Stop"],
            "unknown client 'vim'; known: claude-code, codex, copilot, cursor, gemini, opencode",
        ),
        ([], "unknown client ''"),
    ],
)
def test_an_unknown_hook_says_so_in_one_line_and_exits_zero(
    home: Path, argv: list[str], said: str
) -> None:
    done = run_cli("hook", *argv, input="{}")
    assert (done.returncode, done.stdout) == (0, "")
    assert said in done.stderr and done.stderr.count("\n") == 1
    assert said in (home / "logs" / "hooks.log").read_text()


def test_each_run_records_its_duration_and_status_shows_it(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memctl.integrations import hooks_state, setup

    for _ in range(3):
        hook(["codex", "SessionStart"], {}, capsys)
    took = hooks_state.timing(home, "codex", "SessionStart")
    assert took is not None and took.runs == 3 and took.last_ms > 0 and took.p95_ms > 0
    for ms in [100] * 18 + [900, 120]:  # one slow run in twenty: the 95th percentile
        hooks_state.record_duration(home, "cursor", "stop", ms)
    took = hooks_state.timing(home, "cursor", "stop")
    assert took == hooks_state.Timing(120, 120, 20) and not took.slow
    hooks_state.record_duration(home, "cursor", "stop", 900)
    assert hooks_state.timing(home, "cursor", "stop").slow  # type: ignore[union-attr]
    where = setup.where(False, home, {"HOME": str(home), "PATH": ""})
    status = {s.client: s for s in setup.status(where, home)}
    assert status["cursor"].to_dict()["timings"]["stop"]["slow"] is True
    shown = run_cli("install", "status")
    assert "cursor stop: last 900 ms" in shown.stdout and "slow: over 300 ms" in shown.stdout


def test_hook_state_is_private(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "hooks").mkdir(parents=True, mode=0o755)  # as older versions made it
    hook(["codex", "SessionStart"], {}, capsys)
    assert (home / "hooks").stat().st_mode & 0o777 == 0o700
    for path in (home / "hooks").rglob("*"):
        assert path.stat().st_mode & 0o777 == (0o700 if path.is_dir() else 0o600), path


def session_text(session_id: str) -> tuple[int, str, str, int]:
    """A stored session's message count, scope and messages' text, and how many sessions
    the store holds."""
    with Context(load_settings()) as ctx:
        session = get_session(ctx.db, session_id)
        assert session is not None
        text = "\n".join(m.content for m in messages_after(ctx.db, session_id, 0))
        return session.message_count, session.scope, text, count_sessions(ctx.db)[0]


def backfill_adds(client: str) -> int:
    """How many messages a backfill of ``client``'s transcripts stores now."""
    from memctl.ingest.backfill import store_all
    from memctl.integrations.backfill import find_transcripts

    with Context(load_settings()) as ctx:
        return store_all(ctx, find_transcripts(client)).messages


def test_cursor_hooks_and_backfill_store_a_real_conversation_once(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real Cursor transcript (tests/fixtures/transcripts/real/SOURCES.md) where Cursor
    keeps it: a stop without ``transcript_path`` (the CLI never sends one) finds it by the
    conversation id; the session is that id, scoped to the workspace Cursor named the
    folder after; backfill, a sub-agent's file and a later sessionEnd add each message once."""
    from memctl.integrations import setup

    user, workspace = tmp_path / "user", tmp_path / "work" / "testing-gitflows.git-ai"
    workspace.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(user))
    conversation = "4f3c2b1a-0d9e-4c8b-a7f6-5e4d3c2b1a09"
    stop = {"conversation_id": conversation, "hook_event_name": "stop", "status": "completed"}
    stop |= {"workspace_roots": [str(workspace)], "transcript_path": None, "loop_count": 0}
    hook(["cursor", "stop"], stop, capsys)
    where = setup.where(False, tmp_path, {"HOME": str(user), "PATH": ""})
    problems = {s.client: s.problems for s in setup.status(where, home)}["cursor"]
    assert any(f"session {conversation!r}" in p and "stop" in p for p in problems)
    (logged,) = (home / "logs" / "hooks.log").read_text().splitlines()  # one line, no traceback
    assert "nothing captured" in logged and "Traceback" not in logged

    slug = "-".join(re.sub("[^A-Za-z0-9]+", "-", p).strip("-") for p in workspace.parts[1:])
    folder = user / ".cursor" / "projects" / slug / "agent-transcripts"
    (folder / conversation / "subagents").mkdir(parents=True)
    real = (TRANSCRIPTS / "real" / "cursor-gitai-hboshows.jsonl").read_text().splitlines()
    transcript = folder / f"{conversation}.jsonl"
    transcript.write_text("\n".join(real[:9]) + "\n")
    os.utime(transcript, (time.time() - 3600,) * 2)  # its session ended an hour ago
    problems = {s.client: s.problems for s in setup.status(where, home, {})}["cursor"]
    assert any("changed 1h ago is not captured (none captured yet)" in p for p in problems)
    hook(["cursor", "stop"], "\ufeff" + json.dumps(stop), capsys)  # as Cursor on Windows
    with Context(load_settings()) as ctx:
        captured = last_captured(ctx)
    assert {s.client: s.problems for s in setup.status(where, home, captured)}["cursor"] == []
    shown = run_cli("install", "status", "--json", env={"HOME": str(user)})
    assert next(s for s in json.loads(shown.stdout) if s["client"] == "cursor")["captured"]
    count, scope, text, _ = session_text(conversation)
    assert count == 9 and scope == load_settings(cwd=workspace).project_scope
    assert text.startswith("Generate a file with all the HBO shows from the 90's in it\n")
    assert "[REDACTED]" not in text and "<user_query>" not in text
    assert "[tool WebSearch: HBO original series 1990s list complete]" in text

    agent = folder / conversation / "subagents" / "0a1b2c3d.jsonl"  # two of its lines, as a
    agent.write_text("\n".join([real[0], real[2], '{"type":"turn_ended"}']) + "\n")  # sub-agent
    transcript.write_text("\n".join(real) + "\n")
    assert backfill_adds("cursor") == 2 + 2
    hook(["cursor", "sessionEnd"], {**stop, "hook_event_name": "sessionEnd"}, capsys)
    assert backfill_adds("cursor") == 0
    count, _, text, sessions = session_text(conversation)
    assert (count, sessions, text.count("[subagent] ")) == (13, 1, 2)
    assert text.index("Here’s what I added.") < text.index("[subagent] ")


def test_claude_code_subagent_stop_stores_the_sub_agent_with_its_session(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SubagentStop (its input as Claude Code's hooks reference gives it) stores the
    sub-agent's own transcript with the parent session, as it happens: a real pair (see
    tests/fixtures/transcripts/real/SOURCES.md); a later backfill adds nothing."""
    session = PAIR_SESSION
    main, agent = claude_code_pair(tmp_path / "user")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")
    payload = {
        "session_id": session,
        "transcript_path": str(main),
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": "SubagentStop",
        "stop_hook_active": False,
        "agent_id": "a485154",
        "agent_type": "solution-architect",
        "agent_transcript_path": str(agent),
        "last_assistant_message": "The specification is written.",
    }
    assert hook(["claude-code", "subagent-stop"], payload, capsys) == ""
    count, _, text, sessions = session_text(session)
    assert text.count("[subagent] ") == count > 10 and sessions == 1  # the sub-agent's alone
    hook(["claude-code", "SubagentStop"], {**payload, "agent_transcript_path": "/nowhere"}, capsys)
    assert "transcript /nowhere does not exist" in (home / "logs" / "hooks.log").read_text()
    assert session_text(session)[0] == count
    stop = {k: payload[k] for k in ("session_id", "transcript_path", "cwd")}
    hook(["claude-code", "Stop"], {**stop, "hook_event_name": "Stop"}, capsys)  # the turn's end
    assert "[subagent report]\n" in session_text(session)[2]  # its call and report together
    assert backfill_adds("claude-code") == 0
    with Context(load_settings()) as ctx:  # the session's, though its sub-agent came first
        stored = get_session(ctx.db, session)
    assert stored is not None and stored.source == str(main)
    assert stored.title.startswith('@"solution-architect (agent)" analyze existing CLI')
    assert stored.started_at == "2026-01-14T19:20:03.207Z"  # its first turn, not its agent's


def test_codex_subagent_start_keeps_the_sub_agent_for_its_parents_session(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex 0.171's SubagentStart (its input as the binary's schema and a real run give
    it: the parent's session_id, the sub-agent's rollout) marks the rollout pending with
    the parent's session, so the parent's next capture stores the sub-agent's turns there,
    though nothing in the parent's own rollout leads to it (kept in another folder here);
    SubagentStop then adds nothing twice."""
    parent, agent = tmp_path / "parent", tmp_path / "elsewhere"
    parent.mkdir(), agent.mkdir()
    main = shutil.copy(TRANSCRIPTS / "codex-0.171.jsonl", parent / "rollout-main.jsonl")
    sub = shutil.copy(TRANSCRIPTS / "codex-0.171-subagent.jsonl", agent / "rollout-sub.jsonl")
    session = "01a22c52-2f5e-7272-bc87-24c106a88ffa"
    start = {"session_id": session, "transcript_path": str(sub), "cwd": str(tmp_path)}
    start |= {
        "hook_event_name": "SubagentStart",
        "agent_id": "01a22c52-3db4-79f1-8731-b3c591119731",
    }
    assert hook(["codex", "SubagentStart"], {**start, "agent_type": "default"}, capsys) == ""
    (marked,) = [e for e in pending.grown(home, "", 1, None) if e.path == str(sub)]
    assert marked.session_id == session and marked.size == -1
    stop = {"session_id": session, "transcript_path": str(main), "cwd": str(tmp_path)}
    hook(["codex", "Stop"], {**stop, "hook_event_name": "Stop"}, capsys)
    count, _, text, sessions = session_text(session)
    assert sessions == 1 and "[subagent] Review scripts/release.sh" in text
    agent_stop = {**stop, "hook_event_name": "SubagentStop", "agent_transcript_path": str(sub)}
    hook(["codex", "SubagentStop"], agent_stop, capsys)
    assert session_text(session)[0] == count
    assert not (home / "logs" / "hooks.log").exists()


def test_a_session_just_started_stays_pending_through_another_sessions_capture(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex writes a rollout's first records as a session starts, and its SessionStart
    hook marks it pending (a session killed in its first turn runs no capture hook). A
    capture hook of another session, recapturing what is pending, found no message in it
    yet: it dropped the mark and logged a traceback (seen with Copilot CLI's /clear: the
    old session's sessionEnd ran as the new one started), so that session, killed in its
    first turn, was never stored. It stays pending, quietly, and is stored once it grows."""
    lines = (TRANSCRIPTS / "codex-0.171.jsonl").read_text().splitlines(keepends=True)
    starting = tmp_path / "rollout-starting.jsonl"
    starting.write_text("".join(lines[:3]))  # its meta, its task, its instructions
    start = {"session_id": "starting", "transcript_path": str(starting), "cwd": str(tmp_path)}
    hook(["codex", "SessionStart"], {**start, "hook_event_name": "SessionStart"}, capsys)
    with Context(load_settings()) as ctx:  # maintain or the worker first: no failure either
        assert [why for _, why in pending.capture_grown(ctx, print) if isinstance(why, str)] == []
    other = shutil.copy(TRANSCRIPTS / "codex.jsonl", tmp_path / "rollout-other.jsonl")
    stop = {"transcript_path": str(other), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    hook(["codex", "Stop"], stop, capsys)
    assert not (home / "logs" / "hooks.log").exists()
    assert pending.marked(home, str(starting))
    starting.write_text("".join(lines))  # its first turn; then its terminal closed
    hook(["codex", "Stop"], stop, capsys)  # the next hook of any session
    with Context(load_settings()) as ctx:
        said = [m.content for m in messages_after(ctx.db, "starting", 0)]
    assert said and not (home / "logs" / "hooks.log").exists()


def big_transcript(path: Path, cwd: Path, messages: int, repeat: int, padding: int = 0) -> Path:
    """A Claude Code transcript of ``messages`` user messages, each its line ``repeat`` times
    and followed by a file-history snapshot of ``padding`` bytes (a record that holds no
    message, as Claude Code writes them)."""
    record = {"type": "user", "sessionId": SESSION, "cwd": str(cwd)}
    snapshot = {"type": "file-history-snapshot", "snapshot": {"backup": "x" * padding}}
    with path.open("w") as out:
        for n in range(messages):
            text = f"step {n}: the deploy script copies build {n} to the staging host " * repeat
            out.write(json.dumps({**record, "message": {"role": "user", "content": text}}) + "\n")
            if padding:
                out.write(json.dumps(snapshot) + "\n")
    return path


def test_a_capture_that_cannot_store_is_done_again_by_the_next_hook(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The disk fills (a file size limit: writes fail as on a full disk) while SessionEnd
    stores a big transcript: the hook exits 0; the next hook, on the still full disk, fails
    to store it too and keeps it pending; once there is room, the next hook stores it."""
    transcript = big_transcript(tmp_path / "big.jsonl", tmp_path, 600, 8)
    assert run_cli("status").returncode == 0  # the store exists, small
    limit = (home / "memctl.db").stat().st_size + 64 * 1024
    other = tmp_path / "other.jsonl"
    shutil.copy(TRANSCRIPTS / "codex.jsonl", other)

    def on_a_full_disk(argv: list[str], event: dict[str, str]) -> None:
        full = subprocess.run(
            [sys.executable, "-m", "memctl", "-c", "ingest.spawn_worker=false", "hook", *argv],
            input=json.dumps(event),
            capture_output=True,
            text=True,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
            timeout=120,
        )
        assert full.returncode == 0 and full.stdout == ""

    event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    on_a_full_disk(["claude-code", "SessionEnd"], event)
    assert stored(SESSION) == 0
    on_a_full_disk(["codex", "Stop"], {"transcript_path": str(other), "cwd": str(tmp_path)})
    assert stored(SESSION) == 0
    hook(["codex", "Stop"], {"transcript_path": str(other), "cwd": str(tmp_path)}, capsys)
    assert stored(SESSION) == 600


def wait_for(found: Callable[[], bool], what: str) -> None:
    """Wait (at most two minutes, on a loaded machine) until ``found()``."""
    deadline = time.monotonic() + 120
    while not found():
        assert time.monotonic() < deadline, f"waited two minutes for {what}"
        time.sleep(0.2)


def test_a_first_capture_too_big_for_the_hook_is_finished_by_the_worker(
    home: Path, tmp_path: Path
) -> None:
    """A transcript with more new bytes than a hook can store within the client's timeout:
    the hook returns at once and the worker it starts stores every message, once."""
    transcript = big_transcript(tmp_path / "huge.jsonl", tmp_path, 400, 1, 6000)
    assert transcript.stat().st_size > hooks.INLINE_BYTES
    event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    done = run_cli("hook", "claude-code", "SessionEnd", input=json.dumps(event))
    assert (done.returncode, done.stdout) == (0, "")
    log = home / "logs" / "worker.log"
    wait_for(lambda: log.is_file() and "jobs done" in log.read_text(), "the worker")
    assert f"captured {transcript}: 400 new messages" in log.read_text()
    niceness = int(re.findall(r"\(nice (\d+)\)", log.read_text())[-1])
    assert niceness >= NICENESS  # the background work yields the CPU to the person's
    assert stored(SESSION) == 400
    again = run_cli("hook", "claude-code", "SessionEnd", input=json.dumps(event))
    assert again.returncode == 0 and stored(SESSION) == 400


def test_maintain_captures_what_a_hook_left_pending(home: Path, tmp_path: Path) -> None:
    """With no worker to hand it to, a big transcript waits for maintain: its dry run plans
    the capture and stores nothing, its run stores every message, the next run nothing."""
    transcript = big_transcript(tmp_path / "huge.jsonl", tmp_path, 400, 1, 6000)
    event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(tmp_path)}
    hook = ["-c", "ingest.spawn_worker=false", "hook", "claude-code", "SessionEnd"]
    assert run_cli(*hook, input=json.dumps(event)).returncode == 0
    assert stored(SESSION) == 0
    maintain = ("maintain", "--only", "jobs", "--json")

    def captured(*flags: str) -> list[dict[str, object]]:
        done = run_cli(*maintain, *flags)
        assert done.returncode == 0, done.stderr
        (task,) = json.loads(done.stdout)["tasks"]
        return [c for c in task["changes"] if c["action"] == "captured"]

    plan = captured("--dry-run")
    assert [(c["id"], c["messages"]) for c in plan] == [(SESSION, 400)]
    assert stored(SESSION) == 0
    assert captured() == plan
    assert stored(SESSION) == 400
    assert captured() == []


PROMPT_OPTIONS = {"home": None, "config": ["embedder=hash"]}


def prompt_hook(prompt: str, capsys: pytest.CaptureFixture[str], session: str = "p1") -> str:
    payload = {"session_id": session, "prompt": prompt, "hook_event_name": "UserPromptSubmit"}
    argv = ["claude-code", "UserPromptSubmit"]
    assert hooks.main(PROMPT_OPTIONS, argv, io.StringIO(json.dumps(payload))) == 0
    return capsys.readouterr().out


def test_the_per_prompt_hook_adds_a_relevant_memory_once_and_nothing_unrelated(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert prompt_hook("Which database does staging run?", capsys) == ""  # no store yet
    fact = "The staging database runs PostgreSQL 16 on db.internal."
    assert run_cli("remember", fact, "--category", "entities").returncode == 0
    prompt = "Which PostgreSQL does the staging database run on db.internal?"
    answer = json.loads(prompt_hook(prompt, capsys))["hookSpecificOutput"]
    assert answer["hookEventName"] == "UserPromptSubmit"
    assert fact in answer["additionalContext"]
    assert prompt_hook(prompt, capsys) == ""  # the session has it now
    assert prompt_hook("Write a haiku about autumn leaves falling", capsys, "p2") == ""
    again = prompt_hook("staging database PostgreSQL db.internal", capsys, "p3")
    assert fact in again  # another session has not had it yet


def test_a_private_part_of_a_prompt_is_not_asked_and_the_rest_is(home: Path) -> None:
    """A prompt holding a ``<private>`` part got no block: its words, names no memory
    mentions, were asked with the question. The hook command asks the rest alone: the
    private words reach no SQL statement (the store's tracer), nor the block."""
    fact = "The staging database runs PostgreSQL 16 on db.internal."
    assert run_cli("remember", fact, "--category", "entities").returncode == 0
    secret = "Quokkaville Zebrafinch Marmalade Hollowbrook"
    question = "Which PostgreSQL does the staging database run on db.internal?"
    prompt = f"<private>{secret} owes {secret}</private> {question}"
    payload = {"session_id": "pv1", "prompt": prompt, "hook_event_name": "UserPromptSubmit"}
    done = run_cli(
        "hook",
        "claude-code",
        "UserPromptSubmit",
        input=json.dumps(payload),
        env={"MEMCTL_DEBUG_SQL": "1"},
    )
    assert done.returncode == 0, done.stderr
    block = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert fact in block
    statements = (home / "logs" / hooks.LOG).read_text()  # a hook's stderr goes to its log
    assert "SQL: " in statements  # the tracer ran
    for word in secret.split():
        assert word not in block and word not in statements
    # a prompt that is all private asks nothing
    payload |= {"session_id": "pv2", "prompt": f"<private>{fact}</private>"}
    done = run_cli("hook", "claude-code", "UserPromptSubmit", input=json.dumps(payload))
    assert done.returncode == 0 and done.stdout == "", done.stderr


def test_the_per_prompt_hook_wants_stronger_evidence_than_recall(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fact = "The staging database runs PostgreSQL 16 on db.internal."
    assert run_cli("remember", fact, "--category", "entities").returncode == 0
    # with the hash embedder: cosine 0.43 + 0.3 x word share 0.17, over recall's floor of
    # 0.45 and under the per-prompt floor of 0.55
    weak = "Which PostgreSQL version does the staging database run?"
    recalled = run_cli("-c", "embedder=hash", "recall", weak, "--json", "--no-touch")
    assert fact in recalled.stdout
    assert prompt_hook(weak, capsys, "p5") == ""


def test_compact_context_caps_the_per_prompt_block_at_three_memories(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for place in ("Lisbon", "Porto", "Faro", "Braga", "Coimbra"):
        fact = f"The staging database replica in {place} runs PostgreSQL 16 on db.internal."
        assert run_cli("remember", fact, "--category", "entities").returncode == 0
    prompt = "Which PostgreSQL does the staging database replica run on db.internal?"

    def lines(options: dict[str, Any], session: str) -> int:
        payload = {"session_id": session, "prompt": prompt}
        argv = ["claude-code", "UserPromptSubmit"]
        assert hooks.main(options, argv, io.StringIO(json.dumps(payload))) == 0
        block = json.loads(capsys.readouterr().out)["hookSpecificOutput"]["additionalContext"]
        return sum(line.startswith("- (") for line in block.splitlines())

    assert lines(PROMPT_OPTIONS, "c1") == 5
    compact = {**PROMPT_OPTIONS, "config": [*PROMPT_OPTIONS["config"], "context.compact=true"]}
    assert lines(compact, "c2") == 3


def test_a_memory_given_at_session_start_is_not_given_again_per_prompt(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fact = "The staging database runs PostgreSQL 16 on db.internal."
    assert run_cli("remember", fact, "--category", "entities").returncode == 0
    prompt = "Which PostgreSQL does the staging database run on db.internal?"
    assert fact in prompt_hook(prompt, capsys, "p6")  # what a new session is given
    start = {"session_id": "p4"}
    assert (
        hooks.main(PROMPT_OPTIONS, ["claude-code", "SessionStart"], io.StringIO(json.dumps(start)))
        == 0
    )
    assert fact in capsys.readouterr().out
    assert prompt_hook(prompt, capsys, "p4") == ""


@pytest.mark.parametrize(
    ("client", "hooks_file"),
    [("claude-code", ".claude/settings.json"), ("codex", ".codex/hooks.json")],
)
def test_install_per_prompt_adds_user_prompt_submit_and_plain_install_takes_it_out(
    home: Path, tmp_path: Path, client: str, hooks_file: str
) -> None:
    env = {"HOME": str(tmp_path / "user"), "CODEX_HOME": str(tmp_path / "user" / ".codex")}
    settings = tmp_path / "user" / hooks_file
    settings.parent.mkdir(parents=True)
    done = run_cli("install", client, "--per-prompt", "--force", env=env)
    assert done.returncode == 0, done.stderr
    assert "UserPromptSubmit" in json.loads(settings.read_text())["hooks"]
    assert run_cli("install", client, "--force", env=env).returncode == 0
    assert "UserPromptSubmit" not in json.loads(settings.read_text())["hooks"]


def test_memctls_own_headless_runs_are_not_sessions(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``llm: claude-code`` runs ``claude -p`` with MEMCTL_HEADLESS set: its hooks fire and
    must neither inject a context block nor capture the run as a session (no loop)."""
    from memctl.integrations.hooks_state import last_fired

    assert run_cli("remember", "We deploy the shop with make release.").returncode == 0
    transcript = str(TRANSCRIPTS / "claude-code.jsonl")
    monkeypatch.setenv("MEMCTL_HEADLESS", "1")
    assert hook(["claude-code", "SessionStart"], {"session_id": SESSION}, capsys) == ""
    ended = {"session_id": SESSION, "transcript_path": transcript}
    assert hook(["claude-code", "SessionEnd"], ended, capsys) == ""
    assert stored(SESSION) == 0 and last_fired(home, "claude-code", "SessionEnd") is None
    monkeypatch.delenv("MEMCTL_HEADLESS")
    hook(["claude-code", "SessionEnd"], ended, capsys)
    assert stored(SESSION) > 0  # the same hook, in a person's session, captures


def test_a_transcript_the_client_closed_just_after_its_capture_was_captured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Codex writes its turn's task_complete after its Stop hook returned (0.3 s after the
    capture, s24-walk): `install status` and `doctor` said of every captured Codex session
    that it was not captured. A change minutes after the last capture still is named."""
    from datetime import UTC, datetime, timedelta

    from memctl.integrations import setup

    captured = datetime.now(UTC) - timedelta(hours=1)
    closed = captured.timestamp() + 0.3
    monkeypatch.setattr(setup, "newest_transcript", lambda name: closed)
    assert setup._uncaptured("codex", captured.isoformat()) == []
    monkeypatch.setattr(setup, "newest_transcript", lambda name: closed + 300)
    (problem,) = setup._uncaptured("codex", captured.isoformat())
    assert problem.startswith("codex: a transcript changed 5") and "is not captured" in problem
