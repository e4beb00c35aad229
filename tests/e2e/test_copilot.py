"""The real GitHub Copilot CLI, offline: set up by `memctl init` and `memctl install copilot`
in a temporary HOME, against the scripted model on loopback as its own provider (BYOK:
``COPILOT_PROVIDER_BASE_URL``, Chat Completions), so no GitHub login. scripts/install-clients
installs it; without it the test skips and says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.model_server import scripted_model
from tests.e2e.test_clients import CLIENTS, FACTS, World, client_or_skip

pytestmark = pytest.mark.e2e
VERSION = "1.0.102"  # the version this test was written against (scripts/install-clients)
# A GitHub token's shape (privacy.py's github-token), said in the prompt: never stored
TOKEN = "ghp_" + "Zq7Lm2Xv9Rt4Kp8Wn3Yb6Hc1Jd5Fs0Ge2Aa"
# Copilot's own switches for a run with no person at it: every tool allowed, no update
# check, none of its built-in MCP servers (GitHub's own, which would want a login)
HEADLESS = ("--allow-all", "--no-auto-update", "--disable-builtin-mcps")


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    """A World whose Copilot CLI talks to the scripted model, none of the machine's GitHub
    or Copilot settings reaching it."""
    with scripted_model() as model:
        world = World(tmp_path, model)
        own = ("COPILOT_", "GH_", "GITHUB_")
        world.env = {k: v for k, v in world.env.items() if not k.startswith(own)}
        world.env |= {
            "COPILOT_PROVIDER_BASE_URL": f"{model.url}/v1",
            "COPILOT_PROVIDER_API_KEY": "scripted",
            "COPILOT_MODEL": "gpt-4.1",
            # the binary unpacks its package (235 MB) at first run, into the cache dir
            # (XDG_CACHE_HOME, per test): once beside the clients instead
            "COPILOT_PKG_CACHE_HOME": str(CLIENTS / "copilot-cache"),
        }
        yield world


def test_copilot_starts_with_the_context_searches_memctl_and_is_captured(world: World) -> None:
    copilot = client_or_skip("copilot")
    assert VERSION in world.run(copilot, "--version").stdout
    world.memctl("init", "--tool", "copilot")
    world.memctl("-c", "hooks.timeout=120", "install", "copilot")
    world.memctl("remember", FACTS)

    prompt = f"How do we ship? My token: {TOKEN} SEARCH: deploy release"
    done = world.run(copilot, "-p", prompt, *HEADLESS)
    assert done.returncode == 0, done.stderr
    assert "Memory says:" in done.stdout and "make release from main" in done.stdout  # MCP
    first = json.dumps(world.model.bodies("/v1/chat/completions")[0]["messages"])
    assert "<memctl-context>" in first and "We deploy with make release from main." in first

    # sessionEnd (after each turn in -p mode) stored the session from its events.jsonl
    (events,) = (world.home / ".copilot" / "session-state").glob("*/events.jsonl")
    shown = world.memctl("sessions", "show", events.parent.name, "--json")
    said = [m["content"] for m in json.loads(shown.stdout)["messages"]]
    assert any(m.startswith("How do we ship?") for m in said)
    assert "[tool result memctl-memory_search]" in said  # memctl's own answer: a bare note
    assert not any("<memctl-context>" in m for m in said)
    kept = [p for p in world.data.rglob("*") if p.is_file()]  # the database, its spool, logs
    assert kept and not [p for p in kept if TOKEN.encode() in p.read_bytes()]
    fired = json.loads(world.memctl("install", "status", "--json").stdout)
    (status,) = [s for s in fired if s["client"] == "copilot"]
    assert {"sessionStart", "sessionEnd"} <= set(status["fired"]) and status["problems"] == []
