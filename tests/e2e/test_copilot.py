"""The real GitHub Copilot CLI, offline: set up by `memctl init` and `memctl install copilot
--per-prompt` in a temporary HOME, against the scripted model on loopback as its own
provider (BYOK: ``COPILOT_PROVIDER_BASE_URL``, Chat Completions), so no GitHub login.
scripts/install-clients installs it; without it the test skips and says so. One run of the
CLI (~1.2 CPU-s of its own in its offline mode, ~4 without): each hook, the MCP server and the
capture in it; a first run before it (as much), whose work the second starts with and whose
refused command is kept as such.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memctl.retrieve import identity
from tests.e2e.model_server import scripted_model
from tests.e2e.test_clients import CLIENTS, FACTS, STORED, World, client_or_skip, stored_from

pytestmark = pytest.mark.e2e
VERSION = "1.0.102"  # the version this test was written against (scripts/install-clients)
# The provider's key in an OpenAI key's shape (privacy.py's openai-key): Copilot's hooks
# and MCP server inherit its environment, and none of it may reach memctl's files
API_KEY = "sk-proj-" + "Zq7Lm2Xv9Rt4Kp8Wn3Yb6Hc1Jd5Fs0Ge2AaQw"
IDENTITY = "I keep the shop's storefront running."
RULE = "The staging cluster is rebuilt every Monday at 09:00 UTC by the ops-rotate job."
# Copilot's own switches for a run with no person at it: every tool allowed, no update
# check, none of its built-in MCP servers (GitHub's, which would want a login)
HEADLESS = ("--allow-all", "--no-auto-update", "--disable-builtin-mcps")


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    """A World whose Copilot CLI talks to the scripted model, none of the machine's GitHub
    or Copilot settings reaching it."""
    with scripted_model() as model, World(tmp_path, model) as world:
        own = ("COPILOT_", "GH_", "GITHUB_")
        world.env = {k: v for k, v in world.env.items() if not k.startswith(own)}
        world.env |= {
            "COPILOT_PROVIDER_BASE_URL": f"{model.url}/v1",
            "COPILOT_PROVIDER_API_KEY": API_KEY,
            "COPILOT_MODEL": "gpt-4.1",
            # the binary unpacks its package (235 MB) at its first run into its cache dir
            # (XDG_CACHE_HOME, one a test): once beside the clients instead (~1.5 CPU-s)
            "COPILOT_PKG_CACHE_HOME": str(CLIENTS / "copilot-cache"),
            # its offline mode (for a provider of one's own: no GitHub login, no update):
            # ~2 CPU-s less a run, 5-11 fewer processes of its own
            "COPILOT_OFFLINE": "true",
        }
        yield world


def test_copilot_gets_the_context_block_and_the_prompts_memories_searches_and_is_captured(
    world: World,
) -> None:
    copilot = client_or_skip("copilot")
    assert VERSION in world.run(copilot, "--version").stdout
    world.memctl("init", "--tool", "copilot")
    world.memctl("-c", "hooks.timeout=120", "install", "copilot", "--per-prompt")
    world.memctl("remember", FACTS)
    world.memctl("remember", RULE)
    # a first session decides, and runs a command no rule allows with no one to ask (no
    # --allow-all): kept as Copilot's refusal, not as an error of the command
    decided = "We decided to tag releases only after the smoke tests pass."
    first = world.run(copilot, "-p", f"{decided} RUN: touch release.txt", *HEADLESS[1:])
    assert first.returncode == 0, first.stderr
    (before,) = (world.home / ".copilot" / "session-state").glob("*/events.jsonl")
    shown = world.memctl("sessions", "show", before.parent.name, "--json")
    refused = "[tool refused bash: Permission denied because no interactive user response"
    assert any(m["content"].startswith(refused) for m in json.loads(shown.stdout)["messages"])
    # sessions start with the identity file and the last sessions' work only: the rule can
    # come from the prompt hook alone
    (world.data / identity.FILE_NAME).write_text(IDENTITY)
    world.env["MEMCTL_CONTEXT_ESSENTIALS_BUDGET"] = "0"

    seen = len(world.model.bodies("/v1/chat/completions"))
    prompt = f"When is the staging cluster rebuilt? STORE: {STORED} SEARCH: deploy release"
    done = world.run(copilot, "-p", prompt, *HEADLESS)
    assert done.returncode == 0, done.stderr
    assert "Memory says:" in done.stdout and "make release from main" in done.stdout  # MCP
    said = [m["content"] for m in world.model.bodies("/v1/chat/completions")[seen]["messages"]]
    assert f"<memctl-context>\nContext for: shop\n## identity\n{IDENTITY}" in "\n".join(said)
    (start,) = [m for m in said if f"Context for: shop\n## identity\n{IDENTITY}" in m]
    assert decided in start.split("</memctl-context>")[0]  # last time's work, at its start
    (prompted,) = [m for m in said if f"Memories relevant to: {prompt}" in m]  # top-level
    assert RULE in prompted  # additionalContext: Copilot's shape, not Claude Code's

    # sessionEnd (after each turn in -p mode) stored the session from its events.jsonl
    (events,) = set((world.home / ".copilot" / "session-state").glob("*/events.jsonl")) - {before}
    shown = world.memctl("sessions", "show", events.parent.name, "--json")
    stored = [m["content"] for m in json.loads(shown.stdout)["messages"]]
    assert prompt in stored
    assert "[tool result memctl-memory_search]" in stored  # memctl's own answer: a bare note
    assert not any("<memctl-context>" in m for m in stored)
    # what the model stored names the session (its MCP server's environment names it)
    stored_from(world, events.parent.name, "copilot")
    kept = [p for p in world.data.rglob("*") if p.is_file()]  # the database, its spool, logs
    assert kept and not [p for p in kept if API_KEY.encode() in p.read_bytes()]
    fired = json.loads(world.memctl("install", "status", "--json").stdout)
    (status,) = [s for s in fired if s["client"] == "copilot"]
    assert set(status["fired"]) == {"sessionStart", "userPromptSubmitted", "sessionEnd"}
    assert status["problems"] == []
