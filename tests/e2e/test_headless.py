"""``llm: claude-code`` and ``llm: codex``: the real CLIs, run headless by memctl's worker,
answer the extraction against the scripted model server; memctl's own runs are not captured."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.model_server import scripted_model
from tests.e2e.test_clients import World, client_or_skip

SESSION = "user: The staging database is called heron.\nassistant: Noted.\n"
FACT = "The staging database is called heron."


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with scripted_model() as model:
        yield World(tmp_path, model)


def distil_with(world: World, llm: str) -> dict[str, Any]:
    """Ingest a session with ``llm`` and return the run that distilled it."""
    transcript = world.project / "session.txt"
    transcript.write_text(SESSION, encoding="utf-8")
    settings = ("-c", f"llm={llm}", "-c", "llm.timeout=120")
    world.memctl(*settings, "ingest", "--wait", "--transcript", str(transcript))
    runs = json.loads(world.memctl("runs", "--json").stdout)
    return next(r for r in runs if r["kind"] == "ingest")


def _recording(world: World, tmp_path: Path, name: str) -> Path:
    """A ``name`` on PATH before the real one that writes its command line to a file, then
    runs the real CLI with the same arguments and standard input. A process's command line
    is readable by every local user (``ps``, /proc/PID/cmdline) for as long as it runs: the
    tests check the session's text went through a pipe instead."""
    real = client_or_skip(name)
    shims = tmp_path / "shims"
    shims.mkdir()
    seen = tmp_path / f"{name}.argv"
    shim = shims / name
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{seen}"\nexec "{real}" "$@"\n')
    shim.chmod(0o755)
    world.env["PATH"] = f"{shims}{os.pathsep}{world.env['PATH']}"
    return seen


def by_the_llm(run: dict[str, Any]) -> bool:
    """The run's facts came from the LLM, not the rules it falls back to."""
    return not any("rule-based" in note for note in run["notes"])


def test_claude_code_headless_distils_and_its_own_run_is_not_captured(
    world: World, tmp_path: Path
) -> None:
    seen = _recording(world, tmp_path, "claude")
    world.memctl("init", "--tool", "claude-code")
    world.memctl("-c", "hooks.timeout=120", "install", "claude-code")  # hooks that could loop
    run = distil_with(world, "claude-code")
    assert run["llm"] == "claude-code:default" and run["tokens"] > 0 and by_the_llm(run), run
    assert FACT in world.memories()
    on_the_command_line = seen.read_text(encoding="utf-8")  # the shim ran it: not empty
    assert on_the_command_line and "heron" not in on_the_command_line  # stdin had the session
    asked = world.requests_text("/v1/messages")
    assert "matching this JSON schema" in asked and "[1] user: The staging database" in asked
    assert "SessionStart hook additional context" not in asked  # memctl's hooks stood aside
    sessions = json.loads(world.memctl("sessions", "list", "--json", "--all-scopes").stdout)
    assert len(sessions) == 1  # the ingested one; the headless claude -p was not captured


def _codex_config(world: World) -> None:
    """Codex's config pointing it at the scripted model server."""
    config = world.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        'model = "gpt-5"\nmodel_provider = "scripted"\n[model_providers.scripted]\n'
        f'name = "scripted"\nbase_url = "{world.model.url}/v1"\nwire_api = "responses"\n',
        encoding="utf-8",
    )


def test_codex_headless_distils(world: World, tmp_path: Path) -> None:
    seen = _recording(world, tmp_path, "codex")
    _codex_config(world)
    run = distil_with(world, "codex")
    assert run["llm"] == "codex:default" and by_the_llm(run), run
    assert FACT in world.memories()
    on_the_command_line = seen.read_text(encoding="utf-8")  # the shim ran it: not empty
    assert on_the_command_line and "heron" not in on_the_command_line  # stdin had the session
    assert "matching this JSON schema" in world.requests_text("/v1/responses")


def test_a_missing_cli_falls_back_to_the_rules(world: World, tmp_path: Path) -> None:
    world.env["PATH"] = str(tmp_path)  # neither claude nor codex
    run = distil_with(world, "claude-code")
    assert any("claude is not on PATH" in note for note in run["notes"]), run
    assert not by_the_llm(run)  # the rules ran instead
