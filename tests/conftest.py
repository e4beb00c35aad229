"""Every test gets its own MEMCTL_HOME and working directory in tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from memctl.config.settings import load_settings
from memctl.context import Context
from tests.fakes import HashEmbedder
from tests.ollama_server import dead_ollama_url, ollama_server  # noqa: F401

# The same examples on every run: a property test that finds a new case fails on the
# developer's machine, never at random in CI.
settings.register_profile("memctl", derandomize=True)
settings.load_profile("memctl")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One per-user cache (XDG_CACHE_HOME) for the session, as a user has: the model's
    packed weights are written once, not once a test."""
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_cache: Path) -> Path:
    """A private home and an empty project directory; no MEMCTL_* or OLLAMA_HOST leaks in;
    the session's user cache."""
    for var in list(os.environ):
        if var.startswith("MEMCTL_") or var == "OLLAMA_HOST":
            monkeypatch.delenv(var)
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache))
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("MEMCTL_HOME", str(home))
    monkeypatch.chdir(project)
    return home


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
    for the real model.
    """
    data = input.encode() if isinstance(input, str) else input
    fast = {} if real_model else {"MEMCTL_EMBEDDER": "hash"}
    done = subprocess.run(
        [sys.executable, "-m", "memctl", *args],
        input=data,
        capture_output=True,
        env={**os.environ, "COLUMNS": "200", **fast, **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )
