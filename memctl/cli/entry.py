"""The ``memctl`` entry point: the one error wrapper, and a fast lane for the hook's ingest.

Every ``MemctlError`` is shown as one line on stderr with its exit code,
never a traceback (``MEMCTL_DEBUG=1`` shows it).

A plain ``memctl [--home DIR] [-c K=V] ingest ...`` (no --help, --wait or
--dry-run) runs in the fast lane (``memctl.cli.fastlane``), without Typer, and
so do ``memctl hook CLIENT EVENT`` (``memctl.integrations.hooks``, which never
fails) and a plain ``memctl mcp``; every other command line, and any the fast
lane does not accept, goes to the Typer app.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from memctl.cli.fastlane import SLOW_FLAGS, Refused, ingest, ingest_parser, split_command
from memctl.errors import MemctlError

if TYPE_CHECKING:
    pass


def run_fast(argv: list[str]) -> int | None:
    """The exit code of a fast-lane ingest, or None when the command is not for it."""
    try:
        options, command, rest = split_command(argv)
        if command == "hook" and not {"-h", "--help"} & set(rest):
            from memctl.integrations.hooks import main as hook

            return hook(options, rest)
        if command == "mcp" and not rest:
            from memctl.integrations.mcp_server import main as serve_mcp

            return serve_mcp(options)
        if command != "ingest" or SLOW_FLAGS & set(rest):
            return None
        args = ingest_parser().parse_args(rest)
    except (Refused, ValueError):
        return None
    return ingest(options, args)


def _error(message: str) -> None:
    red = sys.stderr.isatty() and not os.environ.get("NO_COLOR")
    sys.stderr.write(f"\x1b[31m{message}\x1b[0m\n" if red else message + "\n")


def _run_memctl() -> int:
    code = run_fast(sys.argv[1:])
    if code is None:
        from memctl.cli.main import app

        app()
        code = 0
    return code


def main(run: Callable[[], int] = _run_memctl, prog: str = "memctl") -> None:
    """Entry point: a MemctlError is one line on stderr and its exit code, never a traceback."""
    try:
        code = run()
    except MemctlError as exc:
        if os.environ.get("MEMCTL_DEBUG"):
            raise
        _error(f"{prog}: error: {' '.join(str(exc).split())}")
        code = exc.exit_code
    except KeyboardInterrupt:
        _error(f"{prog}: interrupted")
        code = 130
    except Exception as exc:
        if os.environ.get("MEMCTL_DEBUG"):
            raise
        _error(
            f"{prog}: internal error: {type(exc).__name__}: {exc} "
            "(set MEMCTL_DEBUG=1 for the traceback)"
        )
        code = 70
    sys.exit(code)
