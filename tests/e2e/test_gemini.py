"""The real Gemini CLI, offline: set up by `memctl init` and `memctl install gemini` in a
temporary HOME, against the scripted model on loopback (``GOOGLE_GEMINI_BASE_URL``).

scripts/install-clients does not install it, so CI skips these tests: install it where
the other clients are (``npm install --prefix .cache/clients @google/gemini-cli@0.61.0``,
100 MB) to run them. It took 24 s of wall time and 7.8 s of CPU (load ~15), `gemini mcp
list` 7-11 s of it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from memctl.config import load_settings
from memctl.context import Context
from memctl.store.sessions import get_session
from tests.e2e.model_server import scripted_model
from tests.e2e.test_clients import BIN, CLIENTS, FACTS, World

pytestmark = pytest.mark.e2e
VERSION = "0.61.0"  # the version these tests were written against


def gemini_or_skip() -> Path:
    path = BIN / "gemini"
    if shutil.which("node") is None or not path.exists():
        install = f"npm install --prefix {CLIENTS} @google/gemini-cli@{VERSION}"
        pytest.skip(f"Gemini CLI is not installed: {install}")
    return path


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    """A World whose Gemini CLI talks to the scripted model with an API key, in a folder
    it trusts for the run (as `gemini` in CI does: GEMINI_CLI_TRUST_WORKSPACE)."""
    with scripted_model() as model, World(tmp_path, model) as world:
        world.env |= {
            "GEMINI_API_KEY": "scripted",
            "GOOGLE_GEMINI_BASE_URL": model.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }
        settings = world.home / ".gemini" / "settings.json"  # the user's own choice
        settings.parent.mkdir()
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        yield world


def test_gemini_connects_to_memctl_then_starts_with_its_context_and_is_captured(
    world: World,
) -> None:
    gemini = gemini_or_skip()
    assert world.run(gemini, "--version").stdout.strip() == VERSION
    world.memctl("init", "--tool", "gemini")
    world.memctl("install", "gemini", "--per-prompt")
    world.memctl("remember", FACTS)
    settings = json.loads((world.home / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"  # kept

    listed = world.run(gemini, "mcp", "list")
    said = listed.stdout + listed.stderr  # 0.61 prints its list on stderr
    (line,) = [line for line in said.splitlines() if "memctl:" in line]
    assert line.endswith("Connected"), said

    prompt = "How do we ship? SEARCH: deploy release"
    done = world.run(gemini, "-m", "gemini-2.5-flash", "--yolo", "-p", prompt)
    assert done.returncode == 0, done.stderr
    assert "Memory says:" in done.stdout and "make release" in done.stdout  # through MCP
    asked = world.requests_text("/v1beta/models/gemini-2.5-flash:streamGenerateContent")
    assert "&lt;memctl-context&gt;" in asked  # SessionStart's block, before the prompt

    (kept,) = (world.home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl")
    session_id = json.loads(kept.read_text().splitlines()[0])["sessionId"]
    with Context(load_settings(home=world.data, cwd=world.project)) as ctx:
        session = get_session(ctx.db, session_id)
    assert session is not None and session.client == "gemini" and session.title == prompt
    assert (
        session.message_count == 5
    )  # its environment, the prompt, the call, its result, the answer
    fired = json.loads(world.memctl("install", "status", "--json").stdout)
    (status,) = [s for s in fired if s["client"] == "gemini"]
    assert {"SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd"} <= set(status["fired"])
    assert status["problems"] == []
