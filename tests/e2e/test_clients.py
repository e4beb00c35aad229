"""The real clients, offline: Claude Code, Codex CLI and OpenCode against a scripted
model on loopback, set up by `memctl init` and `memctl install` in a temporary HOME.

OpenCode talks to the same scripted Anthropic endpoint (its provider's baseURL).
The clients come from scripts/install-clients (pinned versions, into .cache/clients or
$MEMCTL_CLIENTS_DIR); without node or the clients these tests skip and say why.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from memctl.api import sessions
from memctl.api.memory import ListRequest, list_memories, status
from memctl.clients import codex as codex_client
from memctl.clients import opencode as opencode_client
from memctl.config import load_settings
from memctl.config.files import write_private
from memctl.config.settings import SESSION_ARGUMENT
from memctl.context import Context
from memctl.errors import NotFoundError
from memctl.store import foreign
from tests.conftest import ROOT, run_memctl
from tests.e2e.model_server import ScriptedModel, scripted_model

CLIENTS = Path(os.environ.get("MEMCTL_CLIENTS_DIR") or ROOT / ".cache" / "clients")
BIN = CLIENTS / "node_modules" / ".bin"
FACTS = "I prefer tabs over spaces in Makefiles. We deploy with make release from main."
# What the model stores through memctl's memory_store (the scripted model's STORE:)
STORED = "The changelog is written by scripts/changelog.py before each release."


def client_or_skip(name: str) -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the real clients cannot run")
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed: run scripts/install-clients (into {CLIENTS})")
    return path


# Seconds the resident recall process waits for a request before it exits: longer than a
# client's run takes under load, so one process (one model load, ~0.6 CPU-s) serves a whole
# test; with 5 s one started for each run (5-7 a test). The world stops it as the test ends.
RESIDENT_IDLE = 120


class World:
    """A temporary HOME, a git project and a memctl home, and the commands run in them."""

    def __init__(self, tmp: Path, model: ScriptedModel) -> None:
        self.home = tmp / "user"
        self.project = tmp / "work" / "shop"
        self.data = tmp / "memctl"
        self.model = model
        self.project.mkdir(parents=True)
        self.home.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        # The resident recall process the MCP server starts: the same idle time (the server
        # does not see MEMCTL_RECALL_RESIDENT_IDLE: the clients pass an MCP server only some
        # of their environment)
        self.data.mkdir()
        write_private(self.data / "config.yaml", f"recall.resident_idle: {RESIDENT_IDLE}\n")
        base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCTL_", "CODEX_"))}
        self.env = {
            **base,
            "HOME": str(self.home),
            "PWD": str(self.project),  # OpenCode takes its directory from PWD, not getcwd()
            "MEMCTL_HOME": str(self.data),
            "MEMCTL_LLM": "none",  # distil by rules: no Ollama to wait for
            # The session-start hook starts the resident recall process: stopped with the
            # world (``__exit__``), or gone after RESIDENT_IDLE, not 20 minutes after the test
            "MEMCTL_RECALL_RESIDENT_IDLE": str(RESIDENT_IDLE),
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "scripted",
            "MCP_TIMEOUT": "120000",  # ms Claude Code gives an MCP server to start
            # and to connect, if Claude Code applies it to alwaysLoad servers (unproven: at load
            # 25-30 their tools missed the first request 3 runs in 3 without it)
            "MCP_CONNECT_TIMEOUT_MS": "120000",
            "CODEX_HOME": str(self.home / ".codex"),
            "NO_COLOR": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",  # its bundled model list: no network
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
        }

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the resident recall process the hooks or the MCP server started, if any."""
        run_memctl(["daemon", "stop"], self.env, cwd=self.project)

    def memctl(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        """``memctl ARGS`` in this world, forked from the worker's fork server: the hooks and
        the MCP server the clients start are fresh processes, as a user's are."""
        done = run_memctl(list(args), self.env, input=input, cwd=self.project)
        assert done.returncode == 0, done.stderr
        return done

    def run(self, *argv: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in argv],
            env=self.env,
            cwd=self.project,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=180,
        )

    def memories(self) -> list[str]:
        """Every memory's text, once the distillation the hooks queued is done."""
        settings = load_settings(home=self.data, cwd=self.project)
        with Context(settings) as ctx:  # the hooks' worker distils; this only waits for it
            for _ in range(300):
                jobs = status(ctx).jobs
                if not jobs.get("queued") and not jobs.get("running"):
                    break
                time.sleep(0.1)
            return [m.content for m in list_memories(ctx, ListRequest())]

    def memories_soon(self, word: str) -> list[str]:
        """The memories once one holds ``word``: a capture OpenCode does not wait for may
        still be running when the client exits (at most a minute)."""
        for _ in range(120):
            found = self.memories()
            if any(word in m for m in found):
                break
            time.sleep(0.5)
        return found

    def stored_soon(self, found: Callable[[Context], bool]) -> None:
        """Until ``found`` holds of the store (at most a minute): what a hook stores after
        the client exits, read in this process. A look through `memctl` commands took one
        to four processes (~0.15 s of CPU each) every half second while the hook ran."""
        settings = load_settings(home=self.data, cwd=self.project)
        for _ in range(120):
            with Context(settings) as ctx:
                if found(ctx):
                    return
            time.sleep(0.5)

    def requests_text(self, path: str, start: int = 0) -> str:
        return json.dumps(self.model.bodies(path)[start:])


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with scripted_model() as model, World(tmp_path, model) as world:
        yield world


def test_claude_code_remembers_across_sessions(world: World) -> None:
    claude = client_or_skip("claude")
    world.memctl("init", "--tool", "claude-code")
    world.memctl("-c", "hooks.timeout=120", "install", "claude-code")  # slow shared CI

    first = world.run(claude, "-p", FACTS, "--output-format", "json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["result"] == "ok"
    # Stop and SessionEnd captured the transcript; the worker (or maintain) distilled it
    assert any("make release" in m for m in world.memories())

    # a sub-agent in the second session: SubagentStop stores its own transcript with the
    # session as it ends (Stop and SessionEnd hand memctl the session's transcript only:
    # with its report). One session for both, a fourth claude run (~2.5 s of CPU) spared.
    seen = len(world.model.bodies("/v1/messages"))
    second = world.run(
        claude,
        "-p",
        "what should I know? DELEGATE: Count the files here.",
        "--output-format",
        "json",
        "--allowedTools",
        "Agent,Task",
    )
    assert second.returncode == 0, second.stderr
    later = world.requests_text("/v1/messages", seen)
    assert "SessionStart hook additional context: <memctl-context>" in later
    assert "We deploy with make release from main." in later
    session = json.loads(second.stdout)["session_id"]

    def said() -> list[str]:
        shown = world.memctl("sessions", "show", session, "--json")
        return [m["content"] for m in json.loads(shown.stdout)["messages"]]

    if "[subagent] ok" not in said():  # a busy database (load): the hooks' captures wait
        world.memctl("maintain", "--only", "jobs")  # in the spool and the pending marks
    assert "[subagent] Count the files here." in said() and "[subagent] ok" in said()
    assert any(m.startswith("[subagent report]") for m in said())  # the turn's end stored it

    before_third = len(world.model.bodies("/v1/messages"))
    third = world.run(
        claude,
        "-p",
        f"STORE: {STORED} SEARCH: how do we deploy",
        "--output-format",
        "json",
        "--allowedTools",
        "mcp__memctl__memory_search,mcp__memctl__memory_store",
    )
    assert third.returncode == 0, third.stderr
    first_request = world.model.bodies("/v1/messages")[before_third]
    tools = [t.get("name") for t in first_request.get("tools") or []]
    assert "mcp__memctl__memory_search" in tools  # alwaysLoad: listed from the first request
    answer = json.loads(third.stdout)["result"]
    assert answer.startswith("Memory says:") and "make release from main" in answer
    # what it stored names the session it came from (the server's environment names it)
    stored_in = stored_from(world, json.loads(third.stdout)["session_id"], "claude-code")
    status = json.loads(world.memctl("install", "status", "--json").stdout)
    claude_status = next(s for s in status if s["client"] == "claude-code")
    assert {"SessionStart", "Stop", "SubagentStop", "SessionEnd"} <= set(claude_status["fired"])
    # the memory goes with its session
    world.memctl("sessions", "forget", stored_in, "--yes")
    assert not any(STORED in m for m in world.memories())


def stored_from(world: World, session: str, client: str) -> str:
    """The session the memory the model stored (``STORED``) came from, once the client's
    hooks stored that session: it is ``session``, the client ``client``; `memctl get` names
    the message said then. Returns the memory's id."""
    (memory,) = [
        m for m in json.loads(world.memctl("list", "--json").stdout) if STORED in m["content"]
    ]
    assert (memory["source"], memory["session_id"], memory["agent_id"]) == ("mcp", session, client)
    world.stored_soon(lambda ctx: session_stored(ctx, session))  # by hooks not waited for
    (origin,) = json.loads(world.memctl("get", memory["id"], "--json").stdout)["origins"]
    assert origin["stored"] and origin["session_id"] == session and origin["first"] > 0
    return session


def session_stored(ctx: Context, session: str) -> bool:
    try:
        sessions.find_session(ctx, session)
    except NotFoundError:
        return False
    return True


def said_in(ctx: Context) -> list[str]:
    """Every message of the sessions `memctl sessions list` lists, as ``said`` reads them
    through `sessions list` and `sessions show`."""
    listed = sessions.list_sessions(ctx, sessions.Where())
    return [m.content for s in listed for m in sessions.show(ctx, s.id).messages]


def codex_args(world: World, *extra: str) -> list[str]:
    provider = (
        f'model_providers.scripted={{name="scripted",base_url="{world.model.url}/v1",'
        'wire_api="responses"}'
    )
    return [
        "exec",
        "--skip-git-repo-check",
        "-c",
        "model=gpt-5",
        "-c",
        "model_provider=scripted",
        "-c",
        provider,
        *extra,
    ]


def test_codex_hooks_wait_for_trust_then_capture_and_recall(world: World) -> None:
    codex = client_or_skip("codex")
    world.memctl("init", "--tool", "codex")
    installed = world.memctl("-c", "hooks.timeout=120", "install", "codex")
    assert "/hooks" in installed.stdout  # the user is told to trust the hooks

    untrusted = world.run(codex, *codex_args(world), FACTS)
    assert untrusted.returncode == 0, untrusted.stderr
    status = json.loads(world.memctl("install", "status", "--json").stdout)
    codex_status = next(s for s in status if s["client"] == "codex")
    assert codex_status["hooks"] == list(codex_client.EVENTS)
    assert codex_status["trusted"] == [] and codex_status["fired"] == {}  # skipped silently

    # a sub-agent too: SubagentStart marks its rollout with the parent's session, which
    # the parent's Stop (or the sub-agent's SubagentStop) stores it in
    review = "Review scripts/release.sh for ordering bugs."
    trusted = world.run(
        codex, *codex_args(world, "--dangerously-bypass-hook-trust"), f"{FACTS} DELEGATE: {review}"
    )
    assert trusted.returncode == 0, trusted.stderr
    assert any("make release" in m for m in world.memories())
    # the untrusted session ran no hook: the first capture since `memctl install` stored it
    listed = json.loads(world.memctl("sessions", "list", "--json").stdout)
    shown = [world.memctl("sessions", "show", s["id"], "--json").stdout for s in listed]
    said = [[m["content"] for m in json.loads(s)["messages"]] for s in shown]
    assert len(said) == 2 and all(any(m.startswith(FACTS) for m in s) for s in said)
    assert sum(f"[subagent] {review}" in s for s in said) == 1
    status = json.loads(world.memctl("install", "status", "--json").stdout)
    assert "SubagentStart" in next(s for s in status if s["client"] == "codex")["fired"]

    seen = len(world.model.bodies("/v1/responses"))
    search = world.run(  # as installed: the server is required and its tools approved
        codex,
        *codex_args(world, "--dangerously-bypass-hook-trust"),
        f"STORE: {STORED} SEARCH: how do we deploy",
    )
    assert search.returncode == 0, search.stderr
    later = world.requests_text("/v1/responses", seen)
    assert "<memctl-context>" in later and "We deploy with make release from main." in later
    assert "Memory says:" in search.stdout and "make release from main" in search.stdout
    # what it stored names its thread (each call's _meta names it)
    thread = re.search(r"^session id: (\S+)$", search.stderr, re.M)  # codex exec's header
    assert thread, search.stderr
    stored_from(world, thread.group(1), "codex")


def cut_short(world: World, argv: list[str | Path], how: signal.Signals, path: str) -> None:
    """A session sent ``how`` in its first turn: once its request to ``path`` is held (its
    prompt ends in HOLD)."""
    seen = len(world.model.bodies(path))
    running = subprocess.Popen(
        argv,
        env=world.env,
        cwd=world.project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(1200):  # the turn is in progress once its request is held
        if any("HOLD" in json.dumps(b) for b in world.model.bodies(path)[seen:]):
            break
        time.sleep(0.1)
    running.send_signal(how)
    try:
        running.wait(timeout=30)
    except subprocess.TimeoutExpired:
        # Seen once under a loaded CI run: OpenCode, SIGHUP'd with its request held, kept
        # waiting on it. A session killed outright is cut shorter still: what the test asks
        # (the session is stored all the same) holds for both.
        running.kill()
        running.wait(timeout=30)


def test_codex_sessions_cut_short_in_their_turn_are_captured(world: World) -> None:
    """Ctrl-C in a Codex turn: Codex runs no Stop for it, only SessionEnd (0.171), which
    stores the session (before, memctl installed no SessionEnd: nothing was stored). Its
    terminal closed (SIGHUP): Codex runs neither; the session-start hook marked the rollout
    pending, and the next hook, the worker or maintain stores it (before: nothing did)."""
    codex = client_or_skip("codex")
    world.memctl("init", "--tool", "codex")
    world.memctl("-c", "hooks.timeout=120", "install", "codex")

    def said() -> list[str]:
        listed = json.loads(world.memctl("sessions", "list", "--json").stdout)
        shown = [world.memctl("sessions", "show", s["id"], "--json").stdout for s in listed]
        return [m["content"] for s in shown for m in json.loads(s)["messages"]]

    def codex_session(prompt: str) -> list[str | Path]:
        return [codex, *codex_args(world, "--dangerously-bypass-hook-trust"), f"{prompt} HOLD"]

    cut_short(world, codex_session(FACTS), signal.SIGINT, "/v1/responses")
    fired = next(s for s in status_of(world) if s["client"] == "codex")["fired"]
    assert "SessionEnd" in fired and "Stop" not in fired
    if not any(m.startswith(FACTS) for m in said()):  # SessionEnd has 3 s: a capture it
        world.memctl("maintain", "--only", "jobs")  # could not finish waits, marked pending
    assert any(m.startswith(FACTS) for m in said())

    closed = "The staging cluster is rebuilt every Monday by the ops-rotate job."
    cut_short(world, codex_session(closed), signal.SIGHUP, "/v1/responses")
    world.memctl("maintain", "--only", "jobs")  # as cron runs it
    assert any(m.startswith(closed) for m in said())


def status_of(world: World) -> Any:
    return json.loads(world.memctl("install", "status", "--json").stdout)


def test_codex_keeps_what_it_wrote_to_its_config_when_memctl_runs_again(world: World) -> None:
    codex = client_or_skip("codex")
    config = world.home / ".codex" / "config.toml"
    world.memctl("init", "--tool", "codex")
    for argv in (("features", "enable", "undo"), ("mcp", "add", "other", "--", "/bin/true")):
        done = world.run(codex, *argv)  # Codex writes its own tables at the end of the file
        assert done.returncode == 0, done.stderr
    world.memctl("init", "--tool", "codex")
    world.memctl("init", "--tool", "codex")
    listed = world.run(codex, "mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {s["name"] for s in json.loads(listed.stdout)} == {"memctl", "other"}
    assert tomllib.loads(config.read_text())["features"] == {"undo": True}

    world.memctl("init", "--undo", "--tool", "codex")
    listed = world.run(codex, "mcp", "list", "--json")
    assert [s["name"] for s in json.loads(listed.stdout)] == ["other"]
    assert tomllib.loads(config.read_text())["features"] == {"undo": True}


def opencode_talks_to_the_scripted_model(world: World) -> None:
    """The user's OpenCode config: its Anthropic provider is the scripted model on loopback;
    no update check, no sharing."""
    config = world.home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    provider = {"options": {"baseURL": f"{world.model.url}/v1", "apiKey": "scripted"}}
    settings = {"provider": {"anthropic": provider}, "model": "anthropic/claude-sonnet-4-5"}
    # no git snapshot of the project at each step (OpenCode's undo), no file watcher, no
    # built-in provider plugins: OpenCode's own work, none of it memctl's
    quiet = {"autoupdate": False, "share": "disabled", "snapshot": False}
    config.write_text(json.dumps({**settings, **quiet}))
    world.env["OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER"] = "1"
    world.env["OPENCODE_DISABLE_DEFAULT_PLUGINS"] = "1"


@contextmanager
def npm_registry(world: World) -> Iterator[list[str]]:
    """A package registry on loopback, named to npm in ``world`` (its environment and
    ~/.npmrc), that answers nothing (404) and keeps each path asked."""
    asked: list[str] = []

    class Registry(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    world.env["npm_config_registry"] = url
    (world.home / ".npmrc").write_text(f"registry={url}\n")
    try:
        yield asked
    finally:
        server.shutdown()
        server.server_close()


def test_claude_code_per_prompt_hook_adds_a_stored_fact_once_and_nothing_unrelated(
    world: World,
) -> None:
    claude = client_or_skip("claude")
    world.memctl("init", "--tool", "claude-code")
    world.memctl("-c", "hooks.timeout=120", "install", "claude-code", "--per-prompt")
    fact = "The staging cluster is rebuilt every Monday at 09:00 UTC by the ops-rotate job."
    world.memctl("remember", fact)
    # sessions that start with nothing: what reaches the model comes from the prompt hook
    world.env["MEMCTL_CONTEXT_ESSENTIALS_BUDGET"] = "0"
    hooked = "UserPromptSubmit hook additional context: <memctl-context>"

    def ask(prompt: str, *session: str) -> str:
        seen = len(world.model.bodies("/v1/messages"))
        done = world.run(claude, "-p", prompt, *session, "--output-format", "json")
        assert done.returncode == 0, done.stderr
        return world.requests_text("/v1/messages", seen)

    session = "4f0c2a52-9d1e-4c3b-8a6f-2b7e5d1c9a00"
    checked = ("--session-id", session, "--allowedTools", "Bash")  # a command: a digest
    first = ask("When is the staging cluster rebuilt? RUN: echo rota-checked", *checked)
    assert hooked in first and fact in first
    assert "SessionStart hook additional context" not in first
    assert any("rota-checked" in m for m in world.memories())  # the turn's digest
    # later in the same session, another prompt about it: the session has it already, and
    # resumed, its start block gives it the other sessions' work, not its own digest
    second = "Which job rebuilds the staging cluster on Mondays?"
    resumed = ask(second, "--resume", session)
    assert f"Memories relevant to: {second}" not in resumed
    assert "SessionStart hook additional context: <memctl-context>" in resumed
    assert "(session digest)" not in resumed
    # a new session gets it: the hook as Claude Code calls it (a third claude run, ~3 s of
    # CPU, for what memctl answers)
    payload = {"session_id": "a-new-session", "hook_event_name": "UserPromptSubmit"}
    payload |= {"prompt": second, "cwd": str(world.project)}
    new = world.memctl("hook", "claude-code", "UserPromptSubmit", input=json.dumps(payload))
    assert f"Memories relevant to: {second}" in new.stdout and fact in new.stdout
    assert hooked not in ask("Write a haiku about autumn leaves falling")
    log = world.data / "logs" / "hooks.log"  # nothing above was silent by failing
    assert "UserPromptSubmit" not in (log.read_text() if log.exists() else "")


def test_codex_per_prompt_hook_adds_a_stored_fact_and_nothing_unrelated(world: World) -> None:
    codex = client_or_skip("codex")
    world.memctl("init", "--tool", "codex")
    world.memctl("-c", "hooks.timeout=120", "install", "codex", "--per-prompt")
    fact = "The staging cluster is rebuilt every Monday at 09:00 UTC by the ops-rotate job."
    world.memctl("remember", fact)
    world.env["MEMCTL_CONTEXT_ESSENTIALS_BUDGET"] = "0"  # sessions start with nothing

    def ask(prompt: str) -> str:  # once per session, as for Claude Code above
        seen = len(world.model.bodies("/v1/responses"))
        done = world.run(codex, *codex_args(world, "--dangerously-bypass-hook-trust"), prompt)
        assert done.returncode == 0, done.stderr
        return world.requests_text("/v1/responses", seen)

    prompt = "When is the staging cluster rebuilt?"
    sent = ask(prompt)
    assert f"Memories relevant to: {prompt}" in sent and fact in sent
    assert "Memories relevant to" not in ask("Write a haiku about autumn leaves falling")
    log = world.data / "logs" / "hooks.log"  # nothing above was silent by failing
    assert "UserPromptSubmit" not in (log.read_text() if log.exists() else "")


def test_codex_does_not_start_without_memctls_program_and_doctor_says_why(world: World) -> None:
    """A required MCP server whose program is gone (the clone moved) stops Codex at once:
    `memctl doctor` names the program and the fix."""
    codex = client_or_skip("codex")
    world.memctl("init", "--tool", "codex")
    config = world.home / ".codex" / "config.toml"
    gone = "/gone/clone/.venv/bin/memctl"
    doc = tomllib.loads(config.read_text())
    config.write_text(config.read_text().replace(doc["mcp_servers"]["memctl"]["command"], gone))
    done = world.run(codex, *codex_args(world), "hello")
    assert done.returncode != 0 and "required MCP servers failed" in done.stderr
    checks = subprocess.run(
        [sys.executable, "-m", "memctl", "doctor", "--json"],
        env=world.env,
        cwd=world.project,
        capture_output=True,
        text=True,
    )
    programs = next(c for c in json.loads(checks.stdout) if c["name"] == "programs")
    assert programs["status"] == "fail" and gone in programs["detail"]


def memctl_through_a_shim(world: World, tmp_path: Path) -> Path:
    """The plugin runs memctl through a shim that notes the mode of the file each
    session.idle hook reads its session from, in the file returned."""
    (plugin,) = (world.home / ".config" / "opencode").rglob("memctl*.js")
    text = plugin.read_text()
    argv = json.loads(re.search(r"^const MEMCTL = (.*);$", text, re.M).group(1))  # type: ignore[union-attr]
    modes = tmp_path / "modes"
    shim = tmp_path / "memctl-shim"
    shim.write_text(
        '#!/bin/sh\nif [ "$3" = session.idle ]; then stat -L -c %a /dev/stdin >> '
        f'"{modes}"; fi\nexec {" ".join(shlex.quote(a) for a in argv)} "$@"\n'
    )
    shim.chmod(0o755)
    plugin.write_text(
        text.replace(f"const MEMCTL = {json.dumps(argv)};", f'const MEMCTL = ["{shim}"];')
    )
    return modes


def test_opencode_starts_with_the_context_captures_and_searches_offline(
    world: World, tmp_path: Path
) -> None:
    """OpenCode with memctl installed: the first session is captured (through a 0600 file
    of the user's own) and OpenCode goes to no package registry; one whose terminal closed
    in its turn (SIGHUP: it never goes idle) is stored by the next session's hook, from
    OpenCode's database; that one, without memctl's lock, asks the registry (install status
    says so), starts with the context block and searches; its title requests get no
    context."""
    opencode = client_or_skip("opencode")
    opencode_talks_to_the_scripted_model(world)
    world.memctl("init", "--tool", "opencode")
    world.memctl("install", "opencode")
    # The plugin passes a whole session to ``memctl hook`` through a file in $TMPDIR (the
    # hook outlives OpenCode): made 0600 and new (never through a link planted at its
    # name), so another local user cannot read the session while the hook runs.
    modes = memctl_through_a_shim(world, tmp_path)
    world.env["TMPDIR"] = str(tmp_path)

    # a sub-agent too: OpenCode runs it in a child session, captured as it idles, with
    # the session whose task call started it, as Codex's are
    review = "Review scripts/release.sh for ordering bugs."
    with npm_registry(world) as asked:
        first = world.run(opencode, "run", f"{FACTS} DELEGATE: {review}")
        assert first.returncode == 0, first.stderr
        assert asked == []  # OpenCode installed nothing: offline, nothing to wait for
    stored = world.memories_soon("make release")  # captured on idle
    assert any("make release" in m for m in stored)
    assert not any(m.startswith('"') for m in stored)  # `opencode run`'s quotes are not facts
    (session,) = json.loads(world.memctl("sessions", "list", "--json").stdout)
    shown = json.loads(world.memctl("sessions", "show", session["id"], "--json").stdout)
    said = [m["content"] for m in shown["messages"]]
    assert f"[subagent] {review}" in said and any(m.startswith(FACTS) for m in said)
    assert set(modes.read_text().split()) == {"600"}
    status = json.loads(world.memctl("install", "status", "--json").stdout)
    opencode_status = next(s for s in status if s["client"] == "opencode")
    assert {"session.created", "session.idle"} <= set(opencode_status["fired"])
    assert opencode_status["problems"] == []

    closed = "The staging cluster is rebuilt every Monday by the ops-rotate job."
    cut_short(world, [opencode, "run", f"{closed} HOLD"], signal.SIGHUP, "/v1/messages")

    # the next session without memctl's lock: OpenCode asks the registry (the stall the
    # lock avoids: the first session's empty list was no registry left unasked), and
    # status says so; one session, not a fourth, to spare CI the client's start-up
    (world.home / ".config" / "opencode" / "package-lock.json").unlink()
    seen = len(world.model.bodies("/v1/messages"))
    with npm_registry(world) as asked:
        search = world.run(opencode, "run", f"STORE: {STORED} SEARCH: how do we deploy")
        assert search.returncode == 0, search.stderr
        assert asked
    systems = [json.dumps(b.get("system")) for b in world.model.bodies("/v1/messages")[seen:]]
    assert any("<memctl-context>" in s and "make release from main" in s for s in systems)
    assert "Memory says:" in search.stdout and "make release from main" in search.stdout

    def said() -> list[str]:
        listed = json.loads(world.memctl("sessions", "list", "--json").stdout)
        shown = [world.memctl("sessions", "show", s["id"], "--json").stdout for s in listed]
        return [m["content"] for s in shown for m in json.loads(s)["messages"]]

    # the closed session, stored by this one's hook (not waited for)
    world.stored_soon(lambda ctx: any(m.startswith(closed) for m in said_in(ctx)))
    assert any(m.startswith(closed) for m in said())
    # the plugin named the session to memory_search (OpenCode keeps the call as sent)
    database = world.home / ".local" / "share" / "opencode" / opencode_client.DATABASE
    searched = [
        (s.id, part["state"]["input"])
        for s in foreign.opencode_sessions(database)
        for message in foreign.opencode_export(database, s.id)["messages"]
        for part in message["parts"]
        if part.get("tool") == opencode_client.SEARCH_TOOL
    ]
    ((asking, arguments),) = searched
    assert arguments == {"query": "how do we deploy", SESSION_ARGUMENT: asking}
    stored_from(world, asking, "opencode")  # the plugin names it to memory_store too
    every = [json.dumps(b.get("system")) for b in world.model.bodies("/v1/messages")]
    titles = [s for s in every if "title generator" in s]
    assert titles and not any("<memctl-context>" in s for s in titles)
    status = json.loads(world.memctl("install", "status", "--json").stdout)
    (problem,) = next(s for s in status if s["client"] == "opencode")["problems"]
    assert "@opencode-ai/plugin" in problem and "npm install" in problem
    # the four sessions again (the sub-agent's too), from OpenCode's own database:
    # nothing unreadable, none twice, the sub-agent's still with its parent
    backfilled = json.loads(world.memctl("ingest", "--backfill", "--json").stdout)
    assert backfilled["per_client"] == {"opencode": 4} and backfilled["failed"] == 0
    listed = json.loads(world.memctl("sessions", "list", "--all-scopes", "--json").stdout)
    assert sorted(s["client"] for s in listed) == ["opencode"] * 3
    assert not list(tmp_path.glob("memctl-opencode-*"))  # each removed once handed over
