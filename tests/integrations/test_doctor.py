"""`memctl doctor`: one line a check with its fix, exit status 1 when one fails; on real
stores, a real bare git repository, a loopback Ollama and the hooks as installed."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memctl.context import Context
from memctl.integrations.doctor import FAIL, OK, WARN, Check, doctor
from memctl.memories import operations as memories
from tests.conftest import run_cli
from tests.ollama_server import FakeOllama
from tests.syncing import bare_repo


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user with Claude Code (its config directory) and no assistant binaries on PATH."""
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + ":/usr/bin:/bin")
    return home


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


def test_a_set_up_machine_passes_and_says_what_it_found(
    make_ctx: Callable[..., Context], user_home: Path, ollama_server: FakeOllama, tmp_path: Path
) -> None:
    remote = str(bare_repo(tmp_path))
    ctx = make_ctx(llm_url=ollama_server.url, embedder="hash", sync__remote=remote)
    memories.remember(ctx, "We deploy with make release.")
    checks = by_name(doctor(ctx))
    assert checks["store"].status == OK and "quick check" in checks["store"].detail
    assert checks["llm"].status == OK and ollama_server.url in checks["llm"].detail
    assert checks["sync"].status == OK
    assert checks["modes"].status == OK
    assert checks["hooks claude-code"] == Check(
        "hooks claude-code", WARN, "not installed", "`memctl install claude-code`"
    )
    assert all(check.status == OK or check.fix for check in checks.values())


def test_what_is_wrong_fails_with_its_fix(
    make_ctx: Callable[..., Context], user_home: Path, dead_ollama_url: str, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no")
    ctx = make_ctx(
        llm="ollama", ollama__host=dead_ollama_url, embedder="hash", sync__remote=missing
    )
    memories.remember(ctx, "We deploy with make release.")
    (ctx.settings.home / "loose.txt").write_text("x")
    (ctx.settings.home / "loose.txt").chmod(0o644)
    checks = by_name(doctor(ctx))
    assert checks["llm"].status == FAIL and "ollama serve" in checks["llm"].fix
    assert checks["sync"].status == FAIL and str(tmp_path / "no") in checks["sync"].detail
    assert checks["modes"].status == FAIL and "chmod -R go-rwx" in checks["modes"].fix
    assert "loose.txt" in checks["modes"].detail
    assert checks["modes"].detail.startswith("1 of its files and directories others can read")


def test_vectors_of_another_model_and_a_missing_store(
    make_ctx: Callable[..., Context], user_home: Path
) -> None:
    ctx = make_ctx(embedder="hash")
    assert by_name(doctor(ctx))["store"].status == WARN  # nothing stored yet: not an error
    memories.remember(ctx, "We deploy with make release.")
    other = make_ctx(embedder="local")
    store = by_name(doctor(other))["store"]
    assert store.status == FAIL and store.fix == "`memctl reembed`"


def test_hooks_installed_then_fired(user_home: Path, home: Path) -> None:
    assert run_cli("install", "claude-code", env={"HOME": str(user_home)}).returncode == 0
    done = run_cli("doctor", "--json", env={"HOME": str(user_home), "MEMCTL_LLM": "none"})
    hooks = by_name([Check(**c) for c in json.loads(done.stdout)])["hooks claude-code"]
    assert hooks.detail == "installed, never fired" and hooks.fix == "start a session"
    event = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "cwd": "/"})
    run_cli("hook", "claude-code", "SessionStart", input=event, env={"HOME": str(user_home)})
    done = run_cli("doctor", env={"HOME": str(user_home), "MEMCTL_LLM": "none"})
    (line,) = [line for line in done.stdout.splitlines() if "hooks claude-code" in line]
    assert line.startswith("ok") and "last fired" in line


def test_a_failing_check_is_exit_status_1_and_one_line_of_error(
    user_home: Path, dead_ollama_url: str
) -> None:
    done = run_cli("-c", "llm=ollama", "-c", f"ollama.host={dead_ollama_url}", "doctor")
    assert done.returncode == 1
    assert done.stderr.strip() == "memctl: error: 1 of 8 checks failed: llm"
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("fail")]
    assert "llm" in line and "fix: install Ollama" in line
    # on an 80-column terminal a long check wraps at words, under its own column
    terminal = {"COLUMNS": "80", "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}
    shown = run_cli(
        "-c", "llm=ollama", "-c", f"ollama.host={dead_ollama_url}", "doctor", env=terminal
    )
    lines = re.sub(r"\x1b\[[0-9;]*m", "", shown.stdout).splitlines()
    assert max(map(len, lines)) <= 80 and lines[0].startswith("warn  model")
    fail = next(i for i, line in enumerate(lines) if line.startswith("fail"))
    assert lines[fail + 1].startswith(" " * 20) and "`ollama serve`" in "\n".join(lines[fail:])


def test_an_assistant_cli_as_the_llm_is_checked_on_path(
    make_ctx: Callable[..., Context], user_home: Path, tmp_path: Path, dead_ollama_url: str
) -> None:
    ctx = make_ctx(llm="claude-code", embedder="hash")
    checks = by_name(doctor(ctx))
    assert checks["llm"] == Check("llm", FAIL, "claude is not on PATH", "install claude-code")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "codex").write_text("#!/bin/sh\n")
    (bin_dir / "codex").chmod(0o755)
    os.environ["PATH"] = f"{bin_dir}:{os.environ['PATH']}"  # user_home's monkeypatch restores
    found = by_name(doctor(make_ctx(llm="codex", embedder="hash")))["llm"]
    assert found.status == OK and "`codex` headless" in found.detail
    # with no Ollama, the fix offers the CLI found as `memctl init` does, before Ollama
    auto = make_ctx(llm="auto", ollama__host=dead_ollama_url, embedder="hash")
    offered = by_name(doctor(auto))["llm"]
    assert offered.status == WARN and offered.fix.startswith("`memctl config set llm ")
    assert "install Ollama" in offered.fix


def test_a_transcript_no_hook_captured_is_named_until_it_is_captured(
    user_home: Path, home: Path
) -> None:
    """Claude Code wrote a session an hour ago and no hook stored it: doctor says so, with
    the way to store it; once stored, the line goes."""
    env = {"HOME": str(user_home), "MEMCTL_LLM": "none"}
    assert run_cli("install", "claude-code", env=env).returncode == 0
    transcript = user_home / ".claude" / "projects" / "-work-api" / "5f1c.jsonl"
    transcript.parent.mkdir(parents=True)
    line = {"type": "user", "sessionId": "5f1c", "cwd": "/work/api", "message": {"role": "user"}}
    line["message"]["content"] = "We deploy with make release."  # type: ignore[index]
    transcript.write_text(json.dumps(line) + "\n")
    an_hour_ago = time.time() - 3600
    os.utime(transcript, (an_hour_ago, an_hour_ago))
    done = run_cli("doctor", env=env)
    (named,) = [x for x in done.stdout.splitlines() if "is not captured" in x]
    assert named.startswith("warn") and "1h ago" in named and "none captured yet" in named
    stored = run_cli(
        "-c",
        "ingest.spawn_worker=false",
        "ingest",
        "--client",
        "claude-code",
        "--transcript",
        str(transcript),
        env=env,
    )
    assert stored.returncode == 0, stored.stderr
    assert "is not captured" not in run_cli("doctor", env=env).stdout


def test_the_resident_process_is_reported(
    make_ctx: Callable[..., Context], user_home: Path
) -> None:
    off = by_name(doctor(make_ctx(embedder="hash", recall__resident=False)))["resident"]
    assert off.status == OK and off.detail.startswith("off")
    idle = by_name(doctor(make_ctx(embedder="hash", recall__resident=True)))["resident"]
    assert idle.status == OK and idle.detail.startswith("not running")
