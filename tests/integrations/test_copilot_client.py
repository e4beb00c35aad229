"""GitHub Copilot CLI as a client: its mcp-config.json, instructions and hooks file set up
and taken out again, its hooks capturing the session file it wrote, its sessions backfilled
and ingested.

``tests/fixtures/transcripts/copilot-1.0.102.jsonl`` is a session the real Copilot CLI
1.0.102 (npm ``@github/copilot``) wrote: ``copilot -p`` four times (``--session-id``, then
``--resume``) with a custom model provider (``COPILOT_PROVIDER_BASE_URL``: a scripted
OpenAI-compatible model on loopback, no GitHub login), memctl's hooks and MCP server
installed by `memctl install copilot` / `memctl init --tool copilot`. It holds a prompt with
a GitHub token, a shell command that failed (exit 2), a ``view`` of a missing file (a failed
call), a ``task`` sub-agent that ran a command, and a ``memctl-memory_search`` call; the
sessionStart hook's output (memctl's context block) is in its ``hook.end`` events. Its two
``system.message`` events have their text (GitHub's system prompt) replaced by a note, and
the memory_search result its ``detailedContent`` / ``structuredContent`` copies taken out;
nothing else is changed.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memctl.api.memory import RememberRequest, remember
from memctl.clients import copilot
from memctl.clients.base import Launcher, Where
from memctl.config import load_settings
from memctl.context import Context
from memctl.ingest import pending
from memctl.ingest.backfill import store_all
from memctl.ingest.digest import build_digest
from memctl.ingest.parse import read_transcript
from memctl.ingest.tools import writes_files
from memctl.integrations import hooks, setup
from memctl.integrations.backfill import find_transcripts
from memctl.model import Message, Role
from memctl.store.sessions import get_session, messages_after
from tests.conftest import cli_ok, files_holding
from tests.ingesting import TRANSCRIPTS, source

RUN = Launcher(("/opt/memctl/bin/memctl", "--home", "/data/memctl"))
OPTIONS = {"home": None, "config": ["ingest.spawn_worker=false"]}
SESSION = "5e0c4a1b-8d2f-4c6e-a913-2b7d4f6e8a10"  # the fixture's
RAN_IN = "/tmp/copilot-drive/e2e/proj"  # the fixture's session.start context.cwd
FIXTURE = TRANSCRIPTS / "copilot-1.0.102.jsonl"
WRITES = "copilot-1.0.102-write.jsonl"  # a file created, then edited
TOKEN = "ghp_Zx8Yq1Wv2Ut3Sr4Qp5On6Ml7Kj8Ih9Gf0Ed1"  # a made-up token, in the fixture's prompt
USERS_MCP = {"mcpServers": {"other": {"type": "local", "command": "other-server", "args": []}}}
USERS_HOOKS = {"version": 1, "hooks": {"sessionEnd": [{"type": "command", "bash": "say done"}]}}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_init_and_install_keep_the_users_files_and_uninstall_puts_back_every_byte(
    tmp_path: Path,
) -> None:
    """MCP server beside the user's, instructions, memctl's own hooks file beside the
    user's; status sees them; a second install changes nothing; uninstall restores all."""
    home = tmp_path / "user"
    (home / ".copilot" / "hooks").mkdir(parents=True)
    (home / ".copilot" / "mcp-config.json").write_text(json.dumps(USERS_MCP, indent=2) + "\n")
    (home / ".copilot" / "hooks" / "mine.json").write_text(json.dumps(USERS_HOOKS))
    data, where = tmp_path / "data", Where(home, None, {"PATH": ""})
    before = snapshot(home)
    done = setup.init(setup.InitRequest(tools=("copilot",)), where, RUN, data)
    assert done.clients == ["copilot"]
    setup.install(setup.InstallRequest("copilot", timeout=7), where, RUN, data)
    servers = json.loads((home / ".copilot" / "mcp-config.json").read_text())["mcpServers"]
    assert servers["other"] == USERS_MCP["mcpServers"]["other"]
    assert servers["memctl"] == {
        "type": "local",
        "command": "/opt/memctl/bin/memctl",
        "args": ["--home", "/data/memctl", "mcp"],
        "tools": ["*"],
    }
    ours = json.loads((home / ".copilot" / "hooks" / "memctl.json").read_text())
    assert ours["version"] == 1 and list(ours["hooks"]) == ["sessionStart", "sessionEnd"]
    assert ours["hooks"]["sessionEnd"] == [
        {
            "type": "command",
            "bash": "/opt/memctl/bin/memctl --home /data/memctl hook copilot sessionEnd",
            "timeoutSec": 7,
        }
    ]
    assert "memory_search" in (home / ".copilot" / "copilot-instructions.md").read_text()
    (status,) = [s for s in setup.status(where, data) if s.client == "copilot"]
    assert (status.mcp, status.instructions) == (True, True)
    assert set(status.hooks) == set(copilot.EVENTS)
    again = setup.install(setup.InstallRequest("copilot", timeout=7), where, RUN, data)
    assert again.plan.files() == []  # idempotent

    setup.uninstall("install", ("copilot",), where, RUN, data, False)
    setup.uninstall("init", ("copilot",), where, RUN, data, False)
    assert snapshot(home) == before


def test_project_level_files_and_copilot_home(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    where = Where(tmp_path, project, {"COPILOT_HOME": str(tmp_path / "ch")})
    assert copilot.mcp_path(where) == project / ".github" / "mcp.json"  # not Claude's .mcp.json
    assert copilot.hooks_path(where) == project / ".github" / "hooks" / "memctl.json"
    assert copilot.instructions_path(where) == project / ".github" / "copilot-instructions.md"
    user = Where(tmp_path, None, {"COPILOT_HOME": str(tmp_path / "ch")})
    assert copilot.hooks_path(user) == tmp_path / "ch" / "hooks" / "memctl.json"


def hook(argv: list[str], payload: dict[str, object], capsys: pytest.CaptureFixture[str]) -> str:
    assert hooks.main(OPTIONS, argv, io.StringIO(json.dumps(payload))) == 0
    return capsys.readouterr().out


def test_session_end_captures_the_session_file_by_its_id_and_backfill_adds_nothing(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sessionEnd payload names no transcript: it is found under $COPILOT_HOME by the
    session id, stored in the folder its session.start names, with the failures, the
    sub-agent and its report; the token, memctl's context block and memctl's own answer are
    not kept."""
    state = tmp_path / "copilot-home" / copilot.STATE_DIR / SESSION
    state.mkdir(parents=True)
    (state / copilot.TRANSCRIPT).write_bytes(FIXTURE.read_bytes())
    workspace = tmp_path / "proj"
    workspace.mkdir()
    monkeypatch.setenv(copilot.HOME_ENV, str(tmp_path / "copilot-home"))
    payload = {"sessionId": SESSION, "timestamp": 1796042493000, "cwd": str(workspace)}
    assert hook(["copilot", "sessionEnd"], {**payload, "reason": "complete"}, capsys) == ""
    with Context(load_settings()) as ctx:
        session = get_session(ctx.db, SESSION)
        assert session is not None and session.cwd == RAN_IN
        said = [m.content for m in messages_after(ctx.db, SESSION, 0)]
    assert len(said) == session.message_count == 20
    text = "\n".join(said)
    assert "Staging deploys need the token" in said[0] and TOKEN not in text
    assert "[tool error bash: exit 2: ls: cannot access '/srv/releases'" in text
    assert "[tool error view:" in text
    assert "[subagent] [tool bash: wc -l README.md]" in text and "[subagent report]" in text
    assert "[tool result memctl-memory_search]" in said  # memctl's answer: not kept again
    assert "memctl-context" not in text and "system prompt" not in text
    assert files_holding(home, TOKEN) == []

    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    targets = find_transcripts("copilot")
    assert [t.path for t in targets] == [state / copilot.TRANSCRIPT]
    with Context(load_settings()) as ctx:
        assert store_all(ctx, targets).messages == 0  # captured already


def test_session_start_answers_with_additional_context_at_the_top_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMCTL_EMBEDDER", "hash")
    with Context(load_settings()) as ctx:
        remember(ctx, RememberRequest("We deploy the shop with make release."))
    # a folder that is not there: the hook runs in the current one, where the memory is
    start = {"sessionId": SESSION, "cwd": str(tmp_path / "project"), "source": "new"}
    answer = json.loads(hook(["copilot", "sessionStart"], start, capsys))
    assert list(answer) == ["additionalContext"]
    assert answer["additionalContext"].startswith("<memctl-context>")
    assert "make release" in answer["additionalContext"]


def test_the_prompt_hook_answers_at_the_top_level_once_a_session_installed_per_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMCTL_EMBEDDER", "hash")
    fact = "The staging database runs PostgreSQL 16 on db.internal."
    with Context(load_settings()) as ctx:
        remember(ctx, RememberRequest(fact, category="entities"))
    prompt = "Which PostgreSQL does the staging database run on db.internal?"
    asked = {"sessionId": SESSION, "cwd": str(tmp_path / "gone"), "prompt": prompt}  # as above
    answer = json.loads(hook(["copilot", "userPromptSubmitted"], asked, capsys))
    assert list(answer) == ["additionalContext"] and fact in answer["additionalContext"]
    assert hook(["copilot", "userPromptSubmitted"], asked, capsys) == ""  # it has it now
    prompted = copilot.hooks_file(RUN, 10, per_prompt=True)["hooks"]
    assert set(prompted) == {"sessionStart", "sessionEnd", "userPromptSubmitted"}
    assert set(copilot.hooks_file(RUN, 10)["hooks"]) == {"sessionStart", "sessionEnd"}


def test_memctl_ingest_sniffs_a_copilot_session_file(tmp_path: Path) -> None:
    """`memctl ingest FILE` with no --client knows the file by its session.start event."""
    out = json.loads(cli_ok("ingest", str(FIXTURE), "--mode", "raw", "--json"))
    assert out["client"] == "copilot" and out["session_id"] == SESSION
    assert out["messages_new"] == 20 and out["redactions"]["secrets_by_kind"] == {"github-token": 1}


def test_the_reader_keeps_a_compaction_summary_and_passes_over_the_clis_own_prompts() -> None:
    """Events of the package's schema the fixture lacks: a skill's hidden prompt and the CLI's
    own errors are not speech; a compaction's summary is kept; an unknown kind is named."""
    events = [
        {"type": "session.start", "data": {"sessionId": "s1", "copilotVersion": "1.0.102"}},
        {"type": "user.message", "data": {"content": "Use the pdf skill", "source": "skill-pdf"}},
        {"type": "session.error", "data": {"errorType": "model", "message": "429 from the API"}},
        {
            "type": "session.compaction_complete",
            "data": {"success": True, "summaryContent": "<summary>Moved CI to Actions.</summary>"},
        },
        {"type": "user.message", "data": {"content": "Thanks"}},
        {"type": "session.future_kind", "data": {}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "c9"}},
    ]
    text = "\n".join(json.dumps({**e, "timestamp": "2026-11-30T10:00:00Z"}) for e in events)
    transcript = read_transcript(source(text), None)
    said = [(m.role, m.content) for m in transcript.messages]
    assert transcript.client == "copilot" and transcript.tally.session_id == "s1"
    assert said == [
        (Role.ASSISTANT, "[session summary] Moved CI to Actions."),
        (Role.USER, "Thanks"),
        (Role.TOOL, "[tool result]"),
    ]
    problems = transcript.tally.problems() or ""
    assert "session.future_kind ×1" in problems and "injected context" not in problems


def test_a_call_no_one_approved_is_a_refusal_and_the_persons_word_is_theirs() -> None:
    """Copilot CLI 1.0.102's refusals, in its own words: `copilot -p` without --allow-all
    (a real run's event: code "denied", no one to ask), and the person saying no with a word
    for the model (code "rejected": the wording its runtime builds, "The user rejected this
    tool call. User feedback: ..."), which is theirs."""
    call = {"toolName": "bash", "arguments": {"command": "touch release.txt"}}
    denied = "Permission denied because no interactive user response was available. Retry in "
    denied += "an interactive session so the user can approve it, or try an alternative that "
    denied += "does not require this permission."
    rejected = "The user rejected this tool call. User feedback: tag it after the build passes"
    events = [{"type": "session.start", "data": {"sessionId": "s1", "copilotVersion": "1.0.102"}}]
    for n, (message, code) in enumerate(((denied, "denied"), (rejected, "rejected"))):
        request = {"toolCallId": f"c{n}", "name": "bash", "arguments": call["arguments"]}
        events.append({"type": "assistant.message", "data": {"toolRequests": [request]}})
        error = {"message": message, "code": code}
        done = {"toolCallId": f"c{n}", "success": False, "error": error}
        events.append({"type": "tool.execution_complete", "data": done})
    text = "\n".join(json.dumps({**e, "timestamp": "2026-11-30T10:00:00Z"}) for e in events)
    said = [(m.role, m.content) for m in read_transcript(source(text), None).messages]
    assert said[1][1].startswith(f"[tool refused bash: {denied[:60]}")  # cut to its line
    assert said[3:] == [
        (Role.TOOL, "[tool refused bash: The user rejected this tool call.]"),
        (Role.USER, "tag it after the build passes"),
    ]


def test_its_create_and_edit_are_file_writes_and_its_other_write_tools_are_not() -> None:
    """``copilot-1.0.102-write.jsonl``: the real Copilot CLI 1.0.102 (``copilot -p
    --allow-all``, the scripted model, as FIXTURE) creating a file and editing it, its
    system prompt replaced by a note and its paths moved under /home/dev. Its ``create`` is
    a file written (the digest's "Created", its note the lines written), as its ``edit``
    is; its tools named write_agent and write_bash (1.0.102's tool list) write to a
    sub-agent or a shell, and memctl's memory_profile_write no file of the session's."""
    written = read_transcript(source((TRANSCRIPTS / WRITES).read_bytes()), None)
    messages = [
        Message(p.role, p.content, p.created_at or "", "s1", n)
        for n, p in enumerate(written.messages, start=1)
    ]
    path = "/home/dev/shop/docs/release.md"
    wrote = f"[tool create: {path} + Tag releases only after the smoke tests pass."
    assert any(m.content.startswith(wrote) for m in messages)
    digest = build_digest(messages, 6, 500)
    assert (digest.created, digest.edited) == ([path], [path])
    for other in ("write_agent", "write_bash", "memctl-memory_profile_write", "create_goal"):
        assert not writes_files(other), other


def test_session_end_killed_as_copilot_exits_still_stores_the_session(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copilot CLI's TUI kills its sessionEnd hook (SIGKILL, the hook's process group)
    about 1.5 s after /exit, whatever its timeoutSec (a real run in tmux): the capture the
    hook started was cut short, the session stored only by a later hook, the worker or
    maintain. It runs in a process of its own session now, which the kill does not reach."""
    state = tmp_path / "copilot-home" / copilot.STATE_DIR / SESSION
    state.mkdir(parents=True)
    transcript = state / copilot.TRANSCRIPT
    transcript.write_bytes(FIXTURE.read_bytes())
    monkeypatch.setenv(copilot.HOME_ENV, str(tmp_path / "copilot-home"))
    payload = {"sessionId": SESSION, "reason": "user_exit", "cwd": str(tmp_path)}
    argv = [sys.executable, "-m", "memctl", "-c", "ingest.spawn_worker=false"]
    ending = subprocess.Popen(
        [*argv, "hook", "copilot", "sessionEnd"], stdin=subprocess.PIPE, start_new_session=True
    )
    assert ending.stdin is not None
    ending.stdin.write(json.dumps(payload).encode())
    ending.stdin.close()
    while not pending.marked(home, str(transcript)):  # its capture has begun
        assert ending.poll() is None, "the hook ended before its capture began"
        time.sleep(0.005)
    os.killpg(ending.pid, signal.SIGKILL)
    ending.wait()
    for _ in range(600):  # the capture goes on in its own process
        with Context(load_settings()) as ctx:
            session = get_session(ctx.db, SESSION)
        if session is not None and session.message_count == 20:
            break
        time.sleep(0.1)
    assert session is not None and session.message_count == 20
    # Codex kills its SessionEnd hook at 3 s: that one forks too, in any spelling
    assert hooks.outlives(["codex", "session-end"]) and not hooks.outlives(["codex", "Stop"])
