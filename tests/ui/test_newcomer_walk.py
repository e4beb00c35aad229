"""The newcomer walk: the 15 real public transcripts (benchmarks/sessions/real and
tests/fixtures/transcripts/real, sources and licences in their SOURCES.md) laid out where
Claude Code, Codex and Cursor keep them in a fresh HOME, `memctl ingest --backfill` run
as a person runs it, then `memctl projects`, `memctl sessions list` and the viewer
(`memctl ui`, a real server on loopback) read back: every session, in its own project,
with a title."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import memctl_command, run_cli
from tests.ingesting import REAL_SESSIONS, TRANSCRIPTS, backfill_env

CLAUDE_CODE = [
    "cc1-cclog-b25638d7",
    "cc1-cclog-fe869ecb",
    "cc1-gitai-cb947e5b",
    "cc1-sniffly-d3ad4cdc",
    "cc2-cclog-a7da6a22",
    "cc2-cctrace-132b2f66",
    "cc2-codemie-196820da",
    "cc2-codemie-e9fb405b",
    "cc2-spotter-ae4a77f8",
    "cc2-spotter-toolheavy",
]
# Sub-agent files: Claude Code keeps each under its session's directory, with its id.
SUB_AGENTS = [
    REAL_SESSIONS / "cc2-spotter-agent-a2898e3.jsonl",
    REAL_SESSIONS / "cc2-spotter-agent-acompact-f46190.jsonl",
    TRANSCRIPTS / "real" / "cc2-codemie-agent-a485154.jsonl",  # cc2-codemie-e9fb405b's
]
CODEX = REAL_SESSIONS / "codex-codemie-019e1625.jsonl"
CURSOR = REAL_SESSIONS / "cursor-gitai-hboshows.jsonl"
CURSOR_FOLDER = "Users-sam-hbo-shows"  # Cursor's name for a workspace folder that is gone
SESSIONS = 14  # 15 files: the codemie sub-agent file is part of its session


def first(path: Path, key: str) -> str:
    """The first value of ``key`` in a Claude Code transcript's records."""
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if isinstance(record, dict) and record.get(key):
            return str(record[key])
    raise AssertionError(f"{path.name} has no {key}")


def lay_out(home: Path) -> dict[str, str]:
    """The transcripts where their clients keep them: session id -> the directory it ran in
    (Cursor's: its folder name)."""
    claude = home / ".claude" / "projects"
    ran_in: dict[str, str] = {}
    for name in CLAUDE_CODE:
        path = REAL_SESSIONS / f"{name}.jsonl"
        session, cwd = first(path, "sessionId"), first(path, "cwd")
        folder = claude / cwd.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{session}.jsonl").write_bytes(path.read_bytes())
        ran_in[session] = cwd
    for path in SUB_AGENTS:
        session, cwd = first(path, "sessionId"), first(path, "cwd")
        folder = claude / cwd.replace("/", "-") / session / "subagents"
        folder.mkdir(parents=True)
        (folder / f"agent-{path.stem.rsplit('-agent-', 1)[1]}.jsonl").write_bytes(path.read_bytes())
        ran_in.setdefault(session, cwd)
    meta = json.loads(CODEX.read_text(encoding="utf-8").splitlines()[0])["payload"]
    codex = home / ".codex" / "sessions" / "2026" / "05" / "11"
    codex.mkdir(parents=True)
    (codex / f"rollout-2026-05-11T08-26-55-{meta['id']}.jsonl").write_bytes(CODEX.read_bytes())
    ran_in[meta["id"]] = meta["cwd"]
    cursor = home / ".cursor" / "projects" / CURSOR_FOLDER / "agent-transcripts"
    cursor.mkdir(parents=True)
    (cursor / "3a031a7a.jsonl").write_bytes(CURSOR.read_bytes())
    ran_in["3a031a7a"] = CURSOR_FOLDER
    return ran_in


@pytest.fixture
def walked(tmp_path: Path) -> tuple[dict[str, str], dict[str, str], Path]:
    """A fresh HOME after `ingest --backfill`: (session -> where it ran, env, cwd)."""
    home, work = tmp_path / "user", tmp_path / "work"
    work.mkdir()
    ran_in = lay_out(home)
    env = backfill_env(home)
    done = run_cli("ingest", "--backfill", "--json", env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["transcripts"] == 15 and report["sessions"] == SESSIONS, report
    assert report["jobs"] == SESSIONS  # the sub-agent's file queues its session's job
    assert report["per_client"] == {"claude-code": 13, "codex": 1, "cursor": 1}
    return ran_in, env, work


def cli_json(env: dict[str, str], work: Path, *args: str) -> Any:
    done = run_cli(*args, "--json", env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def cli_shows_every_session_in_its_own_project_with_a_title(
    ran_in: dict[str, str], env: dict[str, str], work: Path
) -> None:
    projects = cli_json(env, work, "projects")
    assert sorted(p["path"] for p in projects) == sorted(set(ran_in.values()))
    assert all(p["sessions"] == 1 for p in projects)  # no two of them ran in one directory
    path_of = {p["scope"]: p["path"] for p in projects}

    listed = cli_json(env, work, "sessions", "list", "--all-scopes")
    assert {s["id"]: path_of[s["scope"]] for s in listed} == ran_in
    assert all(s["title"].strip() for s in listed), [s["id"] for s in listed if not s["title"]]
    titles = {s["id"]: s["title"] for s in listed}
    assert titles["3a031a7a"].startswith("Generate a file with all the HBO shows")
    assert titles["cb947e5b-246e-4253-a953-631f7e464c6b"] == "Make the colors green and yellow"

    here = run_cli("sessions", "list", env=env, cwd=work)  # run where nothing ran
    assert here.returncode == 0 and f"{SESSIONS} more in other projects" in here.stdout
    # by its path, as a person types it: the newest three (Cursor's, Codex's, Claude Code's)
    for project in projects[:3]:
        one = cli_json(env, work, "sessions", "list", "--scope", project["path"])
        assert [path_of[s["scope"]] for s in one] == [project["path"]]


@pytest.fixture
def viewer(walked: tuple[dict[str, str], dict[str, str], Path]) -> Iterator[str]:
    """`memctl ui` on the walked store, signed in: its base URL (the cookie is installed
    in urllib's default opener)."""
    _, env, work = walked
    full = {**os.environ, "MEMCTL_EMBEDDER": "hash", **env}
    process = subprocess.Popen(  # forked: tests/ui/test_ui.py starts a fresh one
        memctl_command(["ui", "--port", "0"], full),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full,
        cwd=work,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split("open ", 1)[1].strip()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(url, timeout=30) as signed_in:  # follows the redirect
            assert signed_in.url.endswith("/projects")
        urllib.request.install_opener(opener)
        yield url.split("/login", 1)[0]
    finally:
        urllib.request.install_opener(urllib.request.build_opener())
        process.terminate()
        process.wait(timeout=30)


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return str(answer.read().decode("utf-8"))


def test_the_newcomer_walk(
    walked: tuple[dict[str, str], dict[str, str], Path], viewer: str
) -> None:
    """The CLI shows every session in its own project with a title; the viewer the same."""
    ran_in, env, work = walked
    cli_shows_every_session_in_its_own_project_with_a_title(ran_in, env, work)
    listed = {s["id"]: s for s in cli_json(env, work, "sessions", "list", "--all-scopes")}
    projects = json.loads(get(f"{viewer}/projects.json"))["projects"]
    assert sorted(p["path"] for p in projects) == sorted(set(ran_in.values()))
    shown = json.loads(get(f"{viewer}/sessions.json"))["sessions"]
    assert {s["id"]: s["title"] for s in shown} == {k: s["title"] for k, s in listed.items()}
    page = get(f"{viewer}/projects")
    for project in projects:
        timeline = get(f"{viewer}/timeline?project={quote(project['scope'], safe='')}")
        (session,) = [s for s in listed.values() if s["scope"] == project["scope"]]
        assert f'href="/sessions/{quote(session["id"])}"' in timeline
        assert f"/timeline?project={quote(project['scope'], safe='')}" in page
