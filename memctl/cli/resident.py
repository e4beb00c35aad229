"""``python -m memctl.cli.resident --home DIR``: the resident recall process
(``memctl.integrations.resident``), started detached by the session-start hook, by a
recall that found none, or by ``memctl daemon start``; and what its child runs for a
request: the command line, exactly as ``memctl`` would run it in the client's process.
"""

from __future__ import annotations

import io
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memctl.integrations.resident_server import Handlers, Request

if TYPE_CHECKING:
    from memctl.api.config import Settings


def warm(settings: Settings) -> None:
    """Load what a recall and the hooks load (modules, the embedder's model), so that the
    children start with it; nothing of the home's data is read or kept."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as recall: before numpy loads
    # A child must not inherit a tokenizer that ran threads (it says so on stderr).
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    from rich.console import Console
    from rich.table import Table

    import memctl.cli.entry  # what a child runs the command line through
    import memctl.cli.recall_out
    import memctl.integrations.hooks  # noqa: F401 - loaded for the children
    from memctl.api.recall import warm as warm_recall
    from memctl.cli.fastlane import recall_args

    Console(file=io.StringIO()).print(Table("a table, drawn once"))  # rich's lazy modules
    recall_args(["--all-scopes", "a question"])  # argparse's patterns, and the locale module
    warm_recall(settings)  # last: it compiles the patterns of every module loaded by then


class _Announced(io.RawIOBase):
    """The client's stdout or stderr: ``first`` is called before the first byte goes out
    (the client then knows it can no longer run the command itself)."""

    def __init__(self, fd: int, first: Callable[[], None]) -> None:
        self.fd = fd
        self.first: Callable[[], None] | None = first

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return os.isatty(self.fd)

    def write(self, data: Any) -> int:
        if self.first is not None:
            self.first()
            self.first = None
        return os.write(self.fd, data)


def _stream(fd: int, encoding: list[str], first: Callable[[], None] | None) -> io.TextIOWrapper:
    """A standard stream on ``fd`` as Python makes one at start-up: line-buffered on a
    terminal (stderr always), with the client's encoding and error handler; an output
    stream calls ``first`` before its first byte."""
    tty = os.isatty(fd)
    raw: Any = (
        open(fd, "rb", closefd=False)  # kept: sys.std* hold it
        if first is None
        else io.BufferedWriter(_Announced(fd, first))
    )
    name, errors = encoding
    return io.TextIOWrapper(
        raw, encoding=name, errors=errors, line_buffering=tty or fd == 2, write_through=fd == 2
    )


def _enter(request: Request) -> None:
    """Take on the client's environment, umask and working directory."""
    os.environ.clear()
    os.environ.update(request.env)
    os.umask(request.umask)
    os.fchdir(request.fds[3])


def needs(request: Request) -> list[str]:
    """The environment variables the request's settings read that the client did not
    send (``memctl.integrations.resident.environment`` sends only what every command
    reads): with ``llm: openai``, the one ``openai.api_key_env`` names."""
    from memctl.api.config import settings_from_flags
    from memctl.errors import MemctlError
    from memctl.integrations.resident import split_globals

    _enter(request)
    home, config, _ = split_globals(request.argv)
    try:
        settings = settings_from_flags(home, config)
    except (MemctlError, OSError, ValueError):
        return []  # the command says what is wrong with them
    name = settings.openai_api_key_env if settings.llm == "openai" else ""
    return [name] if name and name not in request.env else []


def embed(settings: Settings, texts: list[str]) -> tuple[str, int, bytes]:
    """The embedder's name, dimension and the float32 rows of ``texts`` (an MCP server's
    query: ``memctl.integrations.resident.ResidentEmbedder``), with the model ``warm``
    loaded."""
    from memctl.api.config import Context

    embedder = Context(settings).embedder
    rows = embedder.embed(texts)
    return embedder.name, embedder.dim, rows.astype("float32").tobytes()


def _once(call: Callable[[], None]) -> Callable[[], None]:
    """``call``, run at its first call only."""
    pending = [call]

    def once() -> None:
        while pending:
            pending.pop()()

    return once


def run(request: Request, first: Callable[[], None]) -> int:
    """The request's command line in the client's environment, umask, working directory
    and standard streams, through ``memctl``'s own entry point; its exit code. ``first``
    is called before the first byte of output."""
    from memctl.cli import entry
    from memctl.integrations import resident

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the server's handler is not the command's
    _enter(request)
    for target, fd in enumerate(request.fds[:3]):
        os.dup2(fd, target)
    sys.stdin = _stream(0, request.streams[0], None)
    said = _once(first)  # one "writing" for both streams: each is a wake-up of the client
    sys.stdout = _stream(1, request.streams[1], said)
    sys.stderr = _stream(2, request.streams[2], said)
    sys.argv = ["memctl", *request.argv]
    resident.CLIENT_PID = request.client_pid
    try:
        # named as the client's console script: click would name this process's module
        entry.main(lambda: entry.run_memctl(forward=False, program="memctl"))
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
    return code


def serve(settings: Settings) -> int:
    """Be the resident process of the settings' home until idle, stale or stopped; 0 at
    once when recall.resident is off or another one serves the home."""
    from memctl.integrations.resident_server import serve as serve_home

    if not settings.recall_resident:
        return 0
    handlers = Handlers(run, needs, lambda texts: embed(settings, texts))
    return serve_home(
        settings.home, settings.recall_resident_idle, lambda: warm(settings), handlers
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m memctl.cli.resident [--home DIR]`` (default: the environment's home)."""
    import argparse

    from memctl.api.config import settings_from_flags
    from memctl.errors import MemctlError
    from memctl.integrations.resident_server import say

    parser = argparse.ArgumentParser(prog="python -m memctl.cli.resident")
    parser.add_argument("--home")
    try:
        return serve(settings_from_flags(parser.parse_args(argv).home))
    except MemctlError as exc:  # the log says why it did not start
        say(f"not serving: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
