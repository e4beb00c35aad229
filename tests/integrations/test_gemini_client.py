"""Gemini CLI as a client: its settings.json and GEMINI.md set up and taken out again, its
hooks capturing a session file it wrote, and its earlier sessions backfilled.

``tests/fixtures/transcripts/gemini-0.61.jsonl`` is a session the real Gemini CLI 0.61.0
wrote (``gemini -p`` against a scripted model on loopback, memctl's hooks and MCP server
installed by `memctl init` / `memctl install`): its environment message, a prompt behind
the context memctl's SessionStart hook added, a memory_search call through memctl's MCP
server (its message written twice: again once the result was in) and the answer.
"""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest

from memctl.api.memory import RememberRequest, remember
from memctl.clients import gemini
from memctl.clients.base import Launcher, Where
from memctl.config import load_settings
from memctl.context import Context
from memctl.ingest.backfill import store_all
from memctl.integrations import hooks, setup
from memctl.integrations.backfill import find_transcripts
from memctl.integrations.mcp_server import INSTRUCTIONS
from memctl.memories.privacy import open_block
from memctl.store.sessions import get_session, messages_after
from tests.ingesting import TRANSCRIPTS

RUN = Launcher(("/opt/memctl/bin/memctl", "--home", "/data/memctl"))
OPTIONS = {"home": None, "config": ["ingest.spawn_worker=false"]}
SESSION = "72a4c9e0-2c9e-4ac6-97ef-ea4574d5ba2c"  # the fixture's
USERS = {
    "theme": "GitHub",
    "mcpServers": {"other": {"command": "other-server"}},
    "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "say done"}]}]},
}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def user_home(tmp_path: Path) -> Path:
    """A HOME where Gemini CLI was used: its settings and GEMINI.md hold the user's own."""
    home = tmp_path / "user"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(USERS, indent=2) + "\n")
    (home / ".gemini" / "GEMINI.md").write_text("# Mine\n\nAnswer in French.\n")
    return home


def test_init_and_install_join_the_users_settings_and_uninstall_puts_back_every_byte(
    tmp_path: Path,
) -> None:
    home = user_home(tmp_path)
    data, where = tmp_path / "data", Where(home, None, {"PATH": ""})
    before = snapshot(home)
    done = setup.init(setup.InitRequest(tools=("gemini",)), where, RUN, data)
    assert done.clients == ["gemini"] and any("folders you trust" in n for n in done.notes)
    setup.install(setup.InstallRequest("gemini", timeout=7), where, RUN, data)
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    assert settings["theme"] == "GitHub" and settings["mcpServers"]["other"] == {
        "command": "other-server"
    }
    assert settings["mcpServers"]["memctl"] == {
        "command": "/opt/memctl/bin/memctl",
        "args": ["--home", "/data/memctl", "mcp"],
    }
    hooks_set = settings["hooks"]
    assert list(hooks_set) == ["AfterAgent", "SessionStart", "PreCompress", "SessionEnd"]
    assert hooks_set["AfterAgent"][0]["hooks"][0]["command"] == "say done"  # the user's, first
    (ours,) = hooks_set["AfterAgent"][1]["hooks"]
    assert ours == {
        "type": "command",
        "name": "memctl",
        "command": "/opt/memctl/bin/memctl --home /data/memctl hook gemini AfterAgent",
        "timeout": 7000,  # Gemini CLI reads milliseconds
    }
    assert "matcher" not in hooks_set["SessionStart"][0]  # startup, resume and /clear alike
    text = (home / ".gemini" / "GEMINI.md").read_text()
    assert text.startswith("# Mine\n\nAnswer in French.\n") and "memory_search" in text
    (status,) = [s for s in setup.status(where, data) if s.client == "gemini"]
    assert (status.mcp, status.instructions, status.found.config_dir) == (
        True,
        True,
        home / ".gemini",
    )
    assert set(status.hooks) == set(gemini.EVENTS)
    again = setup.install(setup.InstallRequest("gemini", timeout=7), where, RUN, data)
    assert again.plan.files() == []  # idempotent
    setup.install(setup.InstallRequest("gemini", timeout=7, per_prompt=True), where, RUN, data)
    assert "BeforeAgent" in gemini.hooks_installed(where)
    setup.install(setup.InstallRequest("gemini", timeout=7), where, RUN, data)
    assert "BeforeAgent" not in gemini.hooks_installed(where)

    setup.uninstall("install", ("gemini",), where, RUN, data, False)
    setup.uninstall("init", ("gemini",), where, RUN, data, False)
    assert snapshot(home) == before


def test_uninstall_after_the_user_changed_the_file_takes_out_only_memctls_hooks(
    tmp_path: Path,
) -> None:
    home = user_home(tmp_path)
    data, where = tmp_path / "data", Where(home, None, {"PATH": ""})
    setup.install(setup.InstallRequest("gemini"), where, RUN, data)
    path = home / ".gemini" / "settings.json"
    doc = json.loads(path.read_text())
    doc["model"] = {"name": "gemini-2.5-pro"}  # Gemini CLI's /settings writes here too
    path.write_text(json.dumps(doc))
    assert gemini.problems(Where(home, None, {"PATH": ""})) == []
    doc["hooksConfig"] = {"disabled": ["memctl"]}  # /hooks disable memctl
    path.write_text(json.dumps(doc))
    (problem,) = [p for s in setup.status(where, data) if s.client == "gemini" for p in s.problems]
    assert "skips memctl's hooks" in problem
    removal = setup.uninstall("install", ("gemini",), where, RUN, data, False)
    assert removal.cleaned == [str(path)]
    left = {**USERS, "model": {"name": "gemini-2.5-pro"}, "hooksConfig": {"disabled": ["memctl"]}}
    assert json.loads(path.read_text()) == left


def test_gemini_cli_home_and_project_level_files(tmp_path: Path) -> None:
    """$GEMINI_CLI_HOME moves the user's .gemini; --project writes the repository's."""
    moved = tmp_path / "elsewhere"
    (moved / ".gemini").mkdir(parents=True)
    where = Where(tmp_path / "user", None, {"PATH": "", gemini.HOME_ENV: str(moved)})
    assert gemini.detect(where).config_dir == moved / ".gemini"
    assert gemini.settings_path(where) == moved / ".gemini" / "settings.json"
    assert gemini.instructions_path(where) == moved / ".gemini" / "GEMINI.md"
    repo = tmp_path / "repo"
    project = Where(tmp_path / "user", repo, {"PATH": ""})
    assert gemini.settings_path(project) == repo / ".gemini" / "settings.json"
    assert gemini.instructions_path(project) == repo / "GEMINI.md"


def hook(argv: list[str], payload: dict[str, object], capsys: pytest.CaptureFixture[str]) -> str:
    assert hooks.main(OPTIONS, argv, io.StringIO(json.dumps(payload))) == 0
    return capsys.readouterr().out


def stored_text(session_id: str) -> tuple[int, str, str]:
    with Context(load_settings()) as ctx:
        session = get_session(ctx.db, session_id)
        assert session is not None
        text = "\n".join(m.content for m in messages_after(ctx.db, session_id, 0))
        return session.message_count, session.scope, text


def test_hooks_capture_the_session_file_and_backfill_adds_nothing_twice(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`install status` names a session file not captured, with `--backfill`; AfterAgent
    stores the session file Gemini CLI names, scoped by the payload's cwd; a
    SessionEnd without transcript_path finds the file by the session id; a later turn
    (a message written again as it changed, a rewind) adds only what is new, once; backfill
    finds the earlier sessions under ~/.gemini/tmp and scopes one by its .project_root."""
    user, workspace = tmp_path / "user", tmp_path / "work" / "proj"
    workspace.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv(gemini.HOME_ENV, raising=False)
    chats = user / ".gemini" / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text(str(workspace))
    session = chats / "session-2026-11-30T03-11-72a4c9e0.jsonl"
    lines = (TRANSCRIPTS / "gemini-0.61.jsonl").read_text().splitlines()
    session.write_text("\n".join(lines) + "\n")
    os.utime(session, (time.time() - 3600,) * 2)  # a session that ended an hour ago
    where = setup.where(False, tmp_path, {"HOME": str(user), "PATH": ""})
    (problem,) = {s.client: s.problems for s in setup.status(where, home, {})}["gemini"]
    assert "not captured (none captured yet)" in problem and "--backfill" in problem

    payload = {"session_id": SESSION, "transcript_path": str(session), "cwd": str(workspace)}
    assert (
        hook(["gemini", "AfterAgent"], {**payload, "hook_event_name": "AfterAgent"}, capsys) == ""
    )
    count, scope, text = stored_text(SESSION)
    assert count == 5 and scope == load_settings(cwd=workspace).project_scope
    assert text.count("[tool mcp_memctl_memory_search: deploy shop]") == 1  # written twice there
    assert "How do we ship it? SEARCH: deploy shop" in text
    assert "memctl-context" not in text  # its own block, HTML-escaped by Gemini CLI: not kept

    turn = [
        {
            "id": "u2",
            "timestamp": "2026-11-30T03:09:00.000Z",
            "type": "user",
            "content": [{"text": "Wrong way"}],
        },
        {"$rewindTo": "u2"},
        {
            "id": "u3",
            "timestamp": "2026-11-30T03:09:10.000Z",
            "type": "user",
            "content": [{"text": "We ship on Fridays."}],
        },
        {"id": "g3", "timestamp": "2026-11-30T03:09:11.000Z", "type": "gemini", "content": ""},
        {
            "id": "g3",
            "timestamp": "2026-11-30T03:09:11.000Z",
            "type": "gemini",
            "content": "Noted: Fridays.",
        },
    ]
    with session.open("a") as out:
        out.writelines(json.dumps(record) + "\n" for record in turn)
    hook(["gemini", "SessionEnd"], {"session_id": SESSION, "cwd": str(workspace)}, capsys)
    count, _, text = stored_text(SESSION)
    assert count == 8  # the rewound message too: it was said
    assert text.endswith("Wrong way\nWe ship on Fridays.\nNoted: Fridays.")

    older = chats / "session-2026-11-29T10-00-0a0b0c0d.json"  # a version before JSONL
    messages = [{"id": "m1", "type": "user", "content": "Use pnpm, not npm."}]
    older.write_text(json.dumps({"sessionId": "0a0b0c0d-1111", "messages": messages}))
    targets = find_transcripts("gemini")
    assert {t.path for t in targets} == {session, older}
    with Context(load_settings()) as ctx:
        report = store_all(ctx, targets)
    assert (report.messages, report.failed) == (1, 0)
    count, scope, text = stored_text("0a0b0c0d-1111")
    here = load_settings(cwd=workspace).project_scope
    assert (count, scope, text) == (1, here, "Use pnpm, not npm.")


def test_memctls_server_instructions_open_no_private_block() -> None:
    """Gemini CLI writes the MCP servers' instructions into each session's first message:
    memctl's name the private tag as prose (quoted), or the scrubber would take the tag
    for a block left open and keep none of the session's later messages."""
    assert "<private>" in INSTRUCTIONS and open_block(INSTRUCTIONS) is None


def test_session_start_answers_with_the_context_block_as_additional_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMCTL_EMBEDDER", "hash")
    with Context(load_settings()) as ctx:
        remember(ctx, RememberRequest("We deploy the shop with make release."))
    start = {"session_id": SESSION, "cwd": str(tmp_path / "project"), "source": "startup"}
    answer = json.loads(hook(["gemini", "SessionStart"], start, capsys))["hookSpecificOutput"]
    assert answer["additionalContext"].startswith("<memctl-context>")
    assert "make release" in answer["additionalContext"]


def test_a_resumed_session_is_read_on_once_and_its_context_file_is_no_session(
    tmp_path: Path, ctx: Context
) -> None:
    """Gemini CLI 0.61 for real: `gemini -p` then `gemini -p --resume latest`. The resume
    writes the history again (``$set`` of messages) into the session's file, read on from
    its last capture: nothing stored twice. It also leaves a second file of the same id
    holding only ``<session_context>``: no session of its own."""
    from memctl.api.ingest import IngestRequest, ingest
    from memctl.store.sessions import count_sessions

    lines = (TRANSCRIPTS / "gemini-0.61-resumed.jsonl").read_text().splitlines(keepends=True)
    kept = tmp_path / "session-2026-11-30T14-47-67f7e016.jsonl"
    request = IngestRequest(transcript=str(kept), client="gemini", mode="raw")
    context = str(TRANSCRIPTS / "gemini-0.61-resumed-context.jsonl")
    alone = ingest(ctx, IngestRequest(transcript=context, mode="raw")).report
    assert count_sessions(ctx.db)[0] == 0 and alone.messages_new == 0
    assert "holds nothing but what gemini injected" in alone.problems[0]
    kept.write_text("".join(lines[:6]))  # as the first run left it
    assert ingest(ctx, request).report.messages_new == 3  # its context, the prompt, "ok"
    kept.write_text("".join(lines))
    again = ingest(ctx, request).report
    assert (again.messages_new, again.messages_total) == (2, 5), again
    said = [m.content for m in messages_after(ctx.db, again.session_id, 0)]
    assert said[1:] == [
        "We deploy with make release from main.",
        "ok",
        "<hook_context></hook_context>\n\nHow do we deploy?",
        "ok",
    ]
    assert ingest(ctx, IngestRequest(transcript=context, mode="raw")).report.messages_new == 0
    assert count_sessions(ctx.db)[0] == 1
