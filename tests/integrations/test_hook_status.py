"""`install status` and `doctor` tell the truth about every hook memctl installed: the
per-prompt hook's runs and timings, and which Codex hooks are untrusted (with the fix
that works), through the real CLI in a temporary HOME."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memctl.clients import codex
from memctl.clients.base import Launcher
from memctl.integrations import setup
from tests.conftest import run_cli


@pytest.fixture
def user(tmp_path: Path) -> Path:
    """A HOME with Claude Code's and Codex's config directories."""
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir()
    return home


def env(user: Path) -> dict[str, str]:
    return {"HOME": str(user), "CODEX_HOME": str(user / ".codex"), "MEMCTL_LLM": "none"}


def status(user: Path) -> dict[str, dict[str, object]]:
    done = run_cli("install", "status", "--json", env=env(user))
    assert done.returncode == 0, done.stderr
    return {item["client"]: item for item in json.loads(done.stdout)}


def doctor_hooks(user: Path, client: str) -> dict[str, str]:
    done = run_cli("doctor", "--json", env=env(user))
    checks = [c for c in json.loads(done.stdout) if c["name"] == f"hooks {client}"]
    return checks[0]


def trust(user: Path, *events: str) -> None:
    """What Codex writes to config.toml when the user trusts hooks in /hooks."""
    hooks_file = user / ".codex" / "hooks.json"
    keys = codex.hook_keys(hooks_file, json.loads(hooks_file.read_text()))
    with open(user / ".codex" / "config.toml", "a") as out:
        for event in events:
            out.write(f'\n[hooks.state."{keys[event]}"]\ntrusted_hash = "sha256:0f1e"\n')


def test_the_per_prompt_hook_shows_its_last_run_and_timings(user: Path) -> None:
    assert run_cli("install", "claude-code", "--per-prompt", env=env(user)).returncode == 0
    payload = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    done = run_cli(
        "hook", "claude-code", "UserPromptSubmit", input=json.dumps(payload), env=env(user)
    )
    assert done.returncode == 0, done.stderr
    claude = status(user)["claude-code"]
    assert "UserPromptSubmit" in claude["hooks"]
    assert "UserPromptSubmit" in claude["fired"]  # type: ignore[operator]
    assert claude["timings"]["UserPromptSubmit"]["runs"] == 1  # type: ignore[index]
    table = run_cli("install", "status", env=env(user)).stdout
    assert "claude-code UserPromptSubmit: last" in table


def test_codex_per_prompt_names_the_hook_to_trust_and_status_says_untrusted(user: Path) -> None:
    done = run_cli("install", "codex", env=env(user))
    assert "/hooks" in done.stdout and "SessionStart, Stop" in done.stdout
    trust(user, *codex.EVENTS)
    assert status(user)["codex"]["untrusted"] == []
    again = run_cli("install", "codex", env=env(user))  # nothing changed: no note again
    assert "/hooks" not in again.stdout and "nothing to change" in again.stdout

    done = run_cli("install", "codex", "--per-prompt", env=env(user))
    assert "/hooks" in done.stdout and "(UserPromptSubmit;" in done.stdout
    codex_status = status(user)["codex"]
    assert codex_status["untrusted"] == ["UserPromptSubmit"]
    table = run_cli("install", "status", env=env(user)).stdout
    assert "NOT trusted" in table and "UserPromptSubmit" in table
    check = doctor_hooks(user, "codex")
    assert check["status"] == "warn" and "UserPromptSubmit" in check["detail"]
    assert "/hooks" in check["fix"] and "start a session" not in check["fix"]

    trust(user, "UserPromptSubmit")
    assert status(user)["codex"]["untrusted"] == []
    assert doctor_hooks(user, "codex")["detail"] == "installed, never fired"


def test_an_install_an_older_memctl_made_names_the_hooks_it_lacks(user: Path) -> None:
    """hooks.json as memctl wrote it before SubagentStart, SubagentStop and SessionEnd:
    status and doctor name those and the fix, which adds them (to be trusted)."""
    assert run_cli("install", "codex", env=env(user)).returncode == 0
    hooks_file = user / ".codex" / "hooks.json"
    doc = json.loads(hooks_file.read_text())
    doc["hooks"] = {e: doc["hooks"][e] for e in ("SessionStart", "Stop")}
    hooks_file.write_text(json.dumps(doc))
    lacking = "SubagentStart, SubagentStop, SessionEnd"
    (problem,) = status(user)["codex"]["problems"]  # type: ignore[misc]
    assert lacking in problem and "`memctl install codex`" in problem
    done = run_cli("doctor", "--json", env=env(user))
    named = [c for c in json.loads(done.stdout) if c["name"] == "hooks codex"]
    assert any(c["status"] == "warn" and lacking in c["detail"] for c in named)
    again = run_cli("install", "codex", env=env(user))
    assert f"({lacking};" in again.stdout  # to be trusted in /hooks
    assert status(user)["codex"]["problems"] == []


def test_codex_hooks_never_trusted_are_not_called_never_fired(user: Path) -> None:
    assert run_cli("install", "codex", env=env(user)).returncode == 0
    check = doctor_hooks(user, "codex")
    assert check["detail"].startswith("not trusted: SessionStart, Stop")
    assert check["fix"] == codex.TRUST_FIX


def test_doctor_names_a_hook_whose_program_is_gone(user: Path, home: Path) -> None:
    program = user.parent / "clone" / ".venv" / "bin" / "memctl"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n")
    place = setup.where(False, user, {"HOME": str(user), "PATH": ""})
    setup.install(setup.InstallRequest("claude-code"), place, Launcher((str(program),)), home)

    def programs() -> dict[str, str]:
        done = run_cli("doctor", "--json", env=env(user))
        return next(c for c in json.loads(done.stdout) if c["name"] == "programs")

    assert programs()["status"] == "ok"
    shutil.rmtree(user.parent / "clone")  # the clone moved away
    check = programs()
    assert check["status"] == "fail" and str(program) in check["detail"]
    assert "settings.json" in check["detail"] and "memctl install" in check["fix"]
