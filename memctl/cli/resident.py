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
from typing import TYPE_CHECKING

from memctl.integrations.resident_server import Request

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

    import memctl.cli.fastlane
    import memctl.cli.recall_out
    import memctl.integrations.hooks  # noqa: F401 - loaded for the children
    from memctl.api.recall import warm as warm_recall

    Console(file=io.StringIO()).print(Table("a table, drawn once"))  # rich's lazy modules
    warm_recall(settings)


def _stream(fd: int, mode: str, encoding: list[str]) -> io.TextIOWrapper:
    """A standard stream on ``fd`` as Python makes one at start-up: line-buffered on a
    terminal (stderr always), with the client's encoding and error handler."""
    tty = os.isatty(fd)
    raw = open(fd, mode + "b", closefd=False)  # kept: sys.std* hold it
    name, errors = encoding
    return io.TextIOWrapper(
        raw, encoding=name, errors=errors, line_buffering=tty or fd == 2, write_through=fd == 2
    )


def run(request: Request) -> int:
    """The request's command line in the client's environment, umask, working directory
    and standard streams, through ``memctl``'s own entry point; its exit code."""
    from memctl.cli import entry
    from memctl.integrations import resident

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the server's handler is not the command's
    os.environ.clear()
    os.environ.update(request.env)
    os.umask(request.umask)
    os.fchdir(request.fds[3])
    for target, fd in enumerate(request.fds[:3]):
        os.dup2(fd, target)
    sys.stdin = _stream(0, "r", request.streams[0])
    sys.stdout = _stream(1, "w", request.streams[1])
    sys.stderr = _stream(2, "w", request.streams[2])
    sys.argv = ["memctl", *request.argv]
    resident.CLIENT_PID = request.client_pid
    try:
        entry.main(lambda: entry.run_memctl(forward=False))
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
    return serve_home(settings.home, settings.recall_resident_idle, lambda: warm(settings), run)


def main(argv: list[str] | None = None) -> int:
    """``python -m memctl.cli.resident [--home DIR]`` (default: the environment's home)."""
    import argparse

    from memctl.api.config import settings_from_flags

    parser = argparse.ArgumentParser(prog="python -m memctl.cli.resident")
    parser.add_argument("--home")
    return serve(settings_from_flags(parser.parse_args(argv).home))


if __name__ == "__main__":
    sys.exit(main())
