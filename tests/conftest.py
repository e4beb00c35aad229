"""Every test gets its own MEMCTL_HOME and working directory in tmp_path."""

from __future__ import annotations

import json
import os

# One BLAS thread in every worker and every memctl process the suite starts, set before
# numpy loads: three workers already share two cores, and OpenBLAS's extra threads spin
# while they wait (measured on four test files: 7 % less CPU, 9 % less wall time). A test
# of the threads sets its own (tests/embed/test_embed_local.py).
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse
import gc
import inspect
import shutil
import subprocess
import sys
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from memctl.config.settings import load_settings
from memctl.context import Context
from tests import bytecode
from tests.cli_server import Server, startup
from tests.fakes import HashEmbedder
from tests.ollama_server import dead_ollama_url, ollama_server  # noqa: F401

# The same examples on every run: a property test that finds a new case fails on the
# developer's machine, never at random in CI.
settings.register_profile("memctl", derandomize=True)
settings.load_profile("memctl")

ROOT = Path(__file__).resolve().parent.parent

# Python keeps its bytecode, as `pip install` leaves memctl byte-compiled. Under
# PYTHONDONTWRITEBYTECODE (this environment sets it) each of the ~900 memctl processes
# the suite starts compiled every module it imports from source (~0.12 s of CPU more a
# process), and each worker rewrote every test module; the benchmarks drop it too.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def pytest_sessionstart(session: pytest.Session) -> None:
    """In pytest-xdist's controller (its own hook, which starts the workers, runs last): the
    run's test modules rewritten and compiled once, before the workers start
    (``tests/bytecode.py``)."""
    if session.config.pluginmanager.has_plugin("dsession"):
        bytecode.write_for_workers(session)


@pytest.fixture(scope="session")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One per-user cache (XDG_CACHE_HOME) for the session, as a user has: the model's
    packed weights are written once, not once a test."""
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_cache: Path) -> Path:
    """A private home and an empty project directory; no MEMCTL_* or OLLAMA_HOST leaks in;
    the session's user cache (matplotlib's too: nothing is written to the real HOME); no
    resident recall process."""
    return isolate(monkeypatch, tmp_path, user_cache)


def isolate(monkeypatch: pytest.MonkeyPatch, root: Path, user_cache: Path) -> Path:
    """``isolated`` under ``root``: its home (returned) and its project, the current directory."""
    for var in list(os.environ):
        if var.startswith("MEMCTL_") or var == "OLLAMA_HOST":
            monkeypatch.delenv(var)
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache))
    # matplotlib (the benchmark plots) writes its font cache under ~/.config by default
    monkeypatch.setenv("MPLCONFIGDIR", str(user_cache / "matplotlib"))
    home = root / "home"
    project = root / "project"
    project.mkdir()
    monkeypatch.setenv("MEMCTL_HOME", str(home))
    # No resident recall process unless a test asks for one (tests/integrations/test_resident.py)
    monkeypatch.setenv("MEMCTL_RECALL_RESIDENT", "off")
    monkeypatch.chdir(project)
    return home


@dataclass(frozen=True)
class Shared:
    """A store a module's tests share, built once (``shared``): memctl runs in it with
    ``env``, from ``project`` (its memories are that project's); a test that writes to it
    works on its own ``copy``."""

    home: Path
    project: Path

    @property
    def env(self) -> dict[str, str]:
        return {"MEMCTL_HOME": str(self.home)}

    def copy(self, home: Path) -> Shared:
        """This store copied to ``home`` (a test's own), run from the same project."""
        shutil.copytree(self.home, home)
        return Shared(home, self.project)


@contextmanager
def shared(factory: pytest.TempPathFactory, user_cache: Path, name: str) -> Iterator[Shared]:
    """A module fixture's home and project: inside, memctl runs as in a test (the autouse
    ``isolated`` runs after a module fixture is built)."""
    root = factory.mktemp(name)
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield Shared(isolate(monkeypatch, root, user_cache), root / "project")


@pytest.fixture
def home(isolated: Path) -> Path:
    return isolated


@pytest.fixture
def ctx(home: Path) -> Iterator[Context]:
    """A Context on a real SQLite file with the fast deterministic embedder."""
    context = Context(load_settings(), embedder=HashEmbedder())
    yield context
    context.close()


@pytest.fixture
def make_ctx(home: Path) -> Iterator[Callable[..., Context]]:
    """Contexts with the fast embedder and config overrides; no LLM unless one is given.

    ``make_ctx(llm_url=server.url)`` talks to a fake Ollama (``llm: ollama``), with no waits
    between retries.
    """
    made: list[Context] = []

    def make(llm_url: str | None = None, **overrides: object) -> Context:
        values: dict[str, object] = (
            {"llm": "none"} if llm_url is None else {"llm": "ollama", "ollama.host": llm_url}
        )
        values["llm.backoff_seconds"] = 0
        values.update({key.replace("__", "."): v for key, v in overrides.items()})
        context = Context(load_settings(overrides=values), embedder=HashEmbedder())
        made.append(context)
        return context

    yield make
    for context in made:
        context.close()


@pytest.fixture(scope="session")
def local_embedder():  # type: ignore[no-untyped-def]
    """The real MiniLM embedder, loaded once per test session."""
    from memctl.embed.local import LocalEmbedder

    return LocalEmbedder()


@pytest.fixture
def real_ctx(home: Path, local_embedder) -> Iterator[Context]:  # type: ignore[no-untyped-def]
    context = Context(load_settings(), embedder=local_embedder)
    yield context
    context.close()


@pytest.fixture(scope="module")
def real_store(tmp_path_factory: pytest.TempPathFactory, local_embedder) -> Iterator[Context]:  # type: ignore[no-untyped-def]
    """A Context on the real model in a home of the module's own, for a module's tests to
    share: the module's fixture fills it once, its tests read it."""
    home = tmp_path_factory.mktemp("real-store")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEMCTL_HOME", str(home))
        with Context(load_settings(), embedder=local_embedder) as context:
            yield context


def options_both_ways(
    command: str, parser: argparse.ArgumentParser
) -> tuple[tuple[set[str], list[str]], tuple[set[str], list[str]]]:
    """(Typer's, the fast lane parser's) options and arguments of ``command`` ("sessions
    list"): a fast lane takes exactly what its Typer command takes."""
    import typer

    from memctl.cli.main import app

    typer_command: Any = typer.main.get_command(app)
    for word in command.split():
        typer_command = typer_command.commands[word]
    params = typer_command.params
    options = {n for p in params if p.param_type_name == "option" for n in p.opts} - {"--help"}
    arguments = [p.name for p in params if p.param_type_name == "argument"]
    actions = parser._actions
    fast = {f for action in actions for f in action.option_strings}
    return (options, arguments), (fast, [a.dest for a in actions if not a.option_strings])


def python_c(
    code: str, *args: str, env: dict[str, str] | None = None, **options: Any
) -> subprocess.CompletedProcess[str]:
    """``python -c CODE ARGS`` in a fresh interpreter with the test's environment (and
    ``env``), its output as text; ``options`` (input, cwd, timeout, check) go to
    ``subprocess.run``."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        **options,
    )


def through_typer(
    command: str,
    *args: str,
    input: str | None = None,
    env: dict[str, str],
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """A command line (``args``, its command first) through ``command``'s Typer command, as
    `python -m memctl` ran it before the fast lane (click names the program from
    ``__main__``): what a fast lane's output is held against. Forked from the fork server
    (``run_memctl``'s rule), ~0.2 s of CPU less than a fresh interpreter's probe."""
    full = {**os.environ, "COLUMNS": "200", "MEMCTL_EMBEDDER": "hash", **env}
    server = None if FRESH or _fresh_test[0] else cli_server(full)
    if server is not None:
        data = None if input is None else input.encode()
        code, out, err = server.run(list(args), data, full, str(cwd or os.getcwd()), 120, command)
        return subprocess.CompletedProcess(
            ["memctl", *args], code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        )
    probe = (
        "import sys\nsys.argv[0] = '__main__.py'\nsys.modules['__main__'].__package__ = 'memctl'\n"
        f"from memctl.cli.entry import main, run_typer\nmain(lambda: run_typer({command!r}))"
    )
    return python_c(probe, *args, input=input, env=full, cwd=cwd)


def fast_lane_run(
    argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[str, list[str]]:
    """``memctl ARGV`` run through the entry point in a fresh interpreter: what it printed,
    and which of the CLI frameworks (typer, click, rich, pydantic) it loaded to do it."""
    probe = (
        f"import json, sys\nsys.argv = {['memctl', *argv]!r}\n"
        "from memctl.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "frameworks = ('typer', 'click', 'rich', 'pydantic')\n"
        "print(json.dumps(sorted(m for m in frameworks if m in sys.modules)))"
    )
    done = python_c(probe, env={"MEMCTL_EMBEDDER": "hash", **(env or {})}, cwd=cwd)
    assert done.returncode == 0, done.stderr
    printed, _, loaded = done.stdout.rstrip("\n").rpartition("\n")
    return printed, json.loads(loaded)


def server_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a stdio MCP server a test starts: its home, PATH and the session's
    user cache. The SDK adds the real HOME, USER, ... of its own, so without
    XDG_CACHE_HOME the server would write the model's packed weights under the real
    user's cache. It has the variables Python, numpy and Typer read at start-up as the worker
    has them (OPENBLAS_NUM_THREADS, ...): without them ``memctl_command`` never forked the
    server from the fork server (a fresh process, ~1 s of CPU more a start)."""
    return {
        **startup(dict(os.environ)),
        "MEMCTL_HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
        **extra,
    }


# `MEMCTL_TESTS_FRESH=1 pytest` runs every command in a fresh `python -m memctl`, as the
# tests marked ``fresh`` (at least one for each command) always do.
FRESH = os.environ.get("MEMCTL_TESTS_FRESH") == "1"
_fresh_test: list[bool] = [False]  # the running test is marked fresh


@pytest.fixture(autouse=True)
def fresh_processes(request: pytest.FixtureRequest) -> Iterator[None]:
    _fresh_test[0] = request.node.get_closest_marker("fresh") is not None
    yield
    _fresh_test[0] = False


_server: list[Server] = []  # this worker's, started on its first command
_mcp_server: list[Server] = []  # this worker's server of `memctl mcp` processes
_server_lock = threading.Lock()


def _serving(servers: list[Server], env: dict[str, str], mcp: bool) -> Server | None:
    with _server_lock:
        if not servers or servers[0].process.poll() is not None:
            servers[:] = [Server(mcp=mcp)]
        return servers[0] if servers[0].serves(env) else None


def cli_server(env: dict[str, str]) -> Server | None:
    """This worker's fork server, when it can run a command with ``env``."""
    return _serving(_server, env, mcp=False)


def memctl_command(args: list[str], env: dict[str, str], mcp: bool = False) -> list[str]:
    """The command line of ``python -m memctl ARGS`` for a process the test starts itself
    (``subprocess.Popen``: to run alongside others) or a client starts (an MCP client its
    server), to run with ``env``: forked from this worker's fork server (``mcp``: its server
    of MCP processes, the SDK loaded once, ~1 s of CPU a start) unless the test is marked
    fresh."""
    fresh = [sys.executable, "-m", "memctl", *args]
    if FRESH or _fresh_test[0]:
        return fresh
    server = _serving(_mcp_server if mcp else _server, env, mcp)
    return fresh if server is None else server.command(args)


def pytest_sessionfinish() -> None:
    """The fork servers end with their worker, and are waited for: their CPU counts in the
    run's."""
    for server in (*_server, *_mcp_server):
        server.stop()


def run_cli(
    *args: str,
    input: str | bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
    real_model: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run ``memctl`` as a real process with the test's environment.

    Unless ``real_model``, the process embeds with the hash embedder (``embedder: hash``):
    no model to load, so a command takes a fraction of a second; tests of meaning ask
    for the real model. Unless the test is marked ``fresh`` (or ``MEMCTL_TESTS_FRESH=1``),
    the process is forked from this worker's fork server (``tests/cli_server.py``): the same
    command in its own process, without Python's start-up and memctl's imports. Each command
    keeps at least one test in a fresh ``python -m memctl`` (the README's commands all do).
    """
    fast = {} if real_model else {"MEMCTL_EMBEDDER": "hash"}
    full = {**os.environ, "COLUMNS": "200", **fast, **(env or {})}
    return run_memctl(list(args), full, input=input, cwd=cwd, timeout=timeout)


def cli_ok(*args: str, input: str | None = None, cwd: Path | None = None) -> str:
    """``run_cli``'s standard output, the command having succeeded (else its output and
    errors are the failure's message)."""
    done = run_cli(*args, input=input, cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def files_holding(home: Path, needle: str | bytes) -> list[str]:
    """Every file under ``home`` whose bytes hold ``needle``, relative to it."""
    raw = needle.encode() if isinstance(needle, str) else needle
    return sorted(
        str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and raw in p.read_bytes()
    )


def run_memctl(
    args: list[str],
    env: dict[str, str],
    input: str | bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``memctl ARGS`` as a real process with exactly ``env`` (``run_cli`` adds the test's
    environment to its own): forked from the fork server unless the test is marked fresh."""
    data = input.encode() if isinstance(input, str) else input
    command = [sys.executable, "-m", "memctl", *args]
    server = None if FRESH or _fresh_test[0] else cli_server(env)
    if server is not None:
        code, out, err = server.run(args, data, env, str(cwd or os.getcwd()), timeout)
        return subprocess.CompletedProcess(
            command, code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        )
    done = subprocess.run(
        command, input=data, capture_output=True, env=env, cwd=cwd, timeout=timeout
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def on_a_terminal(*args: str, env: dict[str, str]) -> str:
    """What `memctl ARGS` writes to a terminal (a pseudo-terminal), as text."""
    import pty  # here: only the tests of progress bars need it

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "memctl", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "TERM": "xterm", "COLUMNS": "100", **env},
    )
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the process ended: the terminal is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    assert process.wait(timeout=60) == 0, out
    return out.decode("utf-8", "replace")


# --- markers: `make test-fast` runs -m "not slow and not e2e" --------------------------------

# A test is slow when it starts processes (the CLI through run_cli, git, mypy, ruff: anything
# through subprocess; `memctl mcp` through the MCP client) or loads the real model, itself or
# through a helper or fixture of the tests; it is e2e when it lives in tests/e2e. Marked here,
# so a new test needs no marker (one slow for its sheer size says @pytest.mark.slow).
SLOW_CALLS = frozenset({"run_cli", "subprocess", "Popen", "StdioServerParameters", "LocalEmbedder"})
SLOW_FIXTURES = frozenset({"local_embedder"})


def _starts_processes(code: types.CodeType, found_in: dict[str, object], seen: set[object]) -> bool:
    """Whether code (or a function of the tests it names, or code nested in it) names a way
    to start a process."""
    if code in seen:
        return False
    seen.add(code)
    if SLOW_CALLS & set(code.co_names):
        return True
    nested = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    named = [found_in.get(name) for name in code.co_names]
    helpers = [
        function
        for thing in named
        if getattr(thing, "__module__", "").startswith("tests")
        # a helper function, or the methods of a helper class (a process behind an object)
        for function in (
            [thing]
            if isinstance(thing, types.FunctionType)
            else [f for f in vars(thing).values() if isinstance(f, types.FunctionType)]
            if isinstance(thing, type)
            else []
        )
    ]
    return any(_starts_processes(c, found_in, seen) for c in nested) or any(
        _starts_processes(f.__code__, f.__globals__, seen)  # type: ignore[attr-defined]
        for f in helpers
    )


_function_starts_processes: dict[types.CodeType, bool] = {}  # a fixture serves many tests


def _function_is_slow(function: Any) -> bool:
    """``_starts_processes`` of a test or fixture function, found once a collection (the
    fixtures every test uses were walked again for each of ~2,800 tests)."""
    function = inspect.unwrap(function)
    code = function.__code__
    if code not in _function_starts_processes:
        _function_starts_processes[code] = _starts_processes(code, function.__globals__, set())
    return _function_starts_processes[code]


def _is_slow(item: pytest.Function) -> bool:
    if SLOW_FIXTURES & set(item.fixturenames):
        return True
    functions = [item.function] + [
        definition.func
        for definitions in item._fixtureinfo.name2fixturedefs.values()
        for definition in definitions
        if getattr(definition.func, "__module__", "").startswith("tests")
    ]
    return any(_function_is_slow(f) for f in functions)


def pytest_collection_finish() -> None:
    """What collection built (every test module, item and fixture definition: most of a
    worker's heap) lives to the end: frozen, the cyclic collector no longer walks it at each
    full collection (621 in-process tests, `-n0`: 1-4 % less CPU)."""
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        if "e2e" in item.path.relative_to(ROOT).parts:
            item.add_marker(pytest.mark.e2e)
        if "browser" in item.path.relative_to(ROOT).parts:
            item.add_marker(pytest.mark.browser)
        if _is_slow(item):
            item.add_marker(pytest.mark.slow)


def store_at_version(home: Path, version: int) -> tuple[Any, Any]:
    """A real store file under ``home`` migrated only to schema ``version``, as an older
    memctl left it: (its apsw connection, a Database on it); close the connection before
    the code under test opens the file (and migrates the rest)."""
    import apsw

    from memctl.store import cjk
    from memctl.store.database import Database, sqlite_vec_path
    from memctl.store.migrations import MIGRATIONS

    home.mkdir(parents=True, exist_ok=True)
    path = home / "memctl.db"
    connection = apsw.Connection(str(path))
    connection.enable_load_extension(True)
    connection.load_extension(sqlite_vec_path())
    cjk.register(connection)  # the tokenizer of m028 on
    old = Database(connection, path)
    for migration in MIGRATIONS[:version]:
        migration(old)
    old.execute(f"PRAGMA user_version = {version}")
    return connection, old


def said_in_session(ctx: Context, texts: list[str], session_id: str = "s1") -> None:
    """A session ``session_id`` whose user messages, numbered from 1, are ``texts``."""
    from memctl.model import Message, Role, Session
    from memctl.store import sessions

    with ctx.db.atomic():
        sessions.save_session(ctx.db, Session(id=session_id, client="generic", scope="global"))
        sessions.insert_messages(
            ctx.db,
            [Message(Role.USER, t, session_id=session_id, seq=n) for n, t in enumerate(texts, 1)],
        )
