"""The ``memctl`` entry point: the one error wrapper, and a fast lane for the hook's ingest.

Every ``MemctlError`` is shown as one line on stderr with its exit code,
never a traceback (``MEMCTL_DEBUG=1`` shows it).

``memctl --version`` answers before anything else is imported. A plain
``memctl [--home DIR] [-c K=V] ingest ...`` (no --help, --wait or --dry-run)
runs in the fast lane (``memctl.cli.fastlane``), without Typer, and so do a plain
``memctl recall`` (no --explain, --why-not or --help), ``memctl remember`` (no --help),
``memctl list`` and ``memctl get`` (no --help; ``memctl.cli.memory_out``),
``memctl sessions list|show`` (``memctl.cli.sessions_out``),
``memctl hook CLIENT EVENT`` (``memctl.integrations.hooks``, which never
fails) and a plain ``memctl mcp``; every other
command line, and any the fast lane does not accept, goes to a Typer app
holding the command's group only (``memctl.cli.main.build_app``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from memctl.errors import MemctlError, UsageError, os_error

GLOBAL_WITH_VALUE = ("--home", "-c", "--config")


# tried in the fast lane before Typer
FAST_COMMANDS = ("ingest", "hook", "mcp", "recall", "remember", "list", "get", "sessions")
# Commands whose process runs without the cyclic garbage collector and leaves without the
# interpreter's teardown (``script``): a recall process's collections cost ~10 ms of CPU and
# its peak memory is the same without them; the teardown (freeing every module and object)
# cost ~30 ms (docs/benchmarks.md).
QUICK_EXIT = ("recall",)


def command_of(argv: list[str]) -> str | None:
    """The command word of a command line (after the global options), or None: then
    ``--version`` or ``--help`` is asked for, or nothing is."""
    index = 0
    while index < len(argv):
        word = argv[index]
        if word in GLOBAL_WITH_VALUE:
            index += 2
        elif word.startswith("-"):
            if word == "--version":
                return None
            index += 1
        else:
            return word
    return None


def run_fast(argv: list[str], start_resident: bool = False) -> int | None:
    """The exit code of a fast-lane command, or None when the command line is not for it;
    ``start_resident``: a recall or hook that the resident process did not answer starts
    one for the next (``recall.resident``)."""
    from memctl.cli.fastlane import (
        SLOW_FLAGS,
        Refused,
        ingest,
        ingest_parser,
        recall,
        recall_args,
        remember,
        remember_args,
        split_command,
    )

    try:
        options, command, rest = split_command(argv)
        options["start_resident"] = start_resident
        if command == "hook" and not {"-h", "--help"} & set(rest):
            from memctl.integrations.hooks import main as hook
            from memctl.integrations.hooks import outlive_the_client, outlives

            if outlives(rest):
                outlive_the_client()
            return hook(options, rest)
        if command == "mcp" and not rest:
            from memctl.integrations.mcp_front import main as serve_mcp

            return serve_mcp(options)
        if command == "recall":
            args, run = recall_args(rest), recall
        elif command == "remember":
            args, run = remember_args(rest), remember
        elif command == "ingest" and not SLOW_FLAGS & set(rest):
            args, run = ingest_parser().parse_args(rest), ingest
        elif command in ("list", "get"):
            from memctl.cli.memory_out import get_args, get_fast, list_args, list_fast

            args, run = (
                (list_args(rest), list_fast) if command == "list" else (get_args(rest), get_fast)
            )
        elif command == "sessions":
            from memctl.cli.sessions_out import sessions_args, sessions_fast

            args, run = sessions_args(rest), sessions_fast
        else:
            return None
    except (Refused, ValueError):
        return None
    return run(options, args)


# The exit status after Ctrl-C: 128 + SIGINT, as a shell reports it.
INTERRUPTED_EXIT = 130


def _error(message: str) -> None:
    red = sys.stderr.isatty() and not os.environ.get("NO_COLOR")
    sys.stderr.write(f"\x1b[31m{message}\x1b[0m\n" if red else message + "\n")


def _scrubbed(message: str) -> str:
    """An error line without the secrets or private text it may quote (a value typed or
    read: stderr goes to logs, cron's among them, and to bug reports)."""
    from memctl.api.config import scrubbed  # only when there is an error to say

    return scrubbed(message)


def readable(argv: list[str]) -> list[str]:
    """Arguments that are not UTF-8 (Python keeps their bytes as lone surrogates, which
    SQLite and the tokenizer refuse) with U+FFFD in place of the bad bytes; an existing
    path is kept as given, since the file system needs its exact bytes."""
    return [
        arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        if any("\udc80" <= char <= "\udcff" for char in arg) and not os.path.lexists(arg)
        else arg
        for arg in argv
    ]


def run_memctl(forward: bool = True, program: str | None = None) -> int:
    """The command line of ``sys.argv``: a recall or a recalling hook through the resident
    process when ``forward`` and one answers (``memctl.integrations.resident``), else here;
    ``program``: the name its help and usage errors give memctl (by default click's, from
    how Python was started)."""
    sys.argv[1:] = argv = readable(sys.argv[1:])
    command = command_of(argv)
    if command is None and "--version" in argv:
        from memctl import __version__

        sys.stdout.write(f"memctl {__version__}\n")
        return 0
    if forward and command in ("recall", "hook"):
        from memctl.integrations.resident import forward as resident

        code = resident(argv)
        if code is not None:
            return code
    code = run_fast(argv, forward) if command in FAST_COMMANDS else None
    if code is not None:
        return code
    code = run_typer(command, program)
    if forward and command == "recall" and code == 0:
        _start_resident(argv)
    return code


def _start_resident(argv: list[str]) -> None:
    """A recall the fast lane does not take (``--explain``, ``--why-not``) that no resident
    process answered starts one for the next, as the fast lane's recall does, unless
    ``recall.resident`` is off."""
    from memctl.integrations.resident import split_globals, start, wanted

    if not wanted(argv):
        return
    from memctl.api.config import settings_from_flags

    home, config, _ = split_globals(argv)
    settings = settings_from_flags(home, config)
    if settings.recall_resident:
        start(settings.home)


# What other tools (and a newcomer) call a command of memctl's, spelled too far from it for
# click's "Did you mean": the viewer, a memory's history, a search, a note stored.
OTHER_NAMES = {
    "view": "ui",
    "viewer": "ui",
    "history": "events",
    "search": "recall",
    "add": "remember",
}


def _did_you_mean(message: str, top: bool) -> str:
    """click's message, its "(Possible options: A, B)" said as for one close spelling, and
    (``top``: of memctl's own commands) one named as another tool names it (``OTHER_NAMES``)."""
    import re

    said = re.sub(
        r"\(Possible options: ([^)]*)\)",
        lambda found: f"(did you mean {' or '.join(found[1].split(', '))}?)",
        message,
    )
    unknown = re.fullmatch(r"No such command '([^']*)'\.", said)
    if top and unknown and unknown[1] in OTHER_NAMES:
        said += f" Did you mean {OTHER_NAMES[unknown[1]]!r}?"
    return said


def run_typer(command: str | None, program: str | None = None) -> int:
    """The command line through a Typer app; click's usage errors (an unknown command or
    option, with its "did you mean", a missing argument, a bad value) become one line.
    ``program``: memctl's name in them and in its help (None: click's, from ``__main__``)."""
    import typer

    from memctl.cli.main import build_app

    # click's exceptions, wherever this Typer takes click from (its own copy since 0.23)
    click = sys.modules[typer.BadParameter.__module__]
    try:
        result = build_app(command)(prog_name=program, standalone_mode=False)
    except click.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `memctl` or a group alone: its help
            exc.show()
            return int(exc.exit_code)
        path = exc.ctx.command_path if exc.ctx else "memctl"
        said = _did_you_mean(exc.format_message(), top=exc.ctx is None or exc.ctx.parent is None)
        raise UsageError(f"{said} (`{path} -h` for help)") from None
    except click.ClickException as exc:
        raise MemctlError(exc.format_message()) from None
    except (getattr(click, "Abort", typer.Abort), typer.Abort):
        _error("memctl: aborted")
        return 1
    # Every command returns None; an int is the code of a typer.Exit, and Typer turns a
    # Ctrl-C into Exit(130) without a word (issue 34: an import stopped so printed nothing).
    if result == INTERRUPTED_EXIT:
        _error("memctl: interrupted")
    return result if isinstance(result, int) else 0


# The API's names the command line spells otherwise than ``--name-with-dashes``.
FLAGS = {
    "ids": "memory ids",
    "every": "--all",
    "tags": "--tag",
    "around": "--context",
    "reads": "--as",
}


def flag(name: str) -> str:
    """An API request field as the command line spells it (``page_size`` -> ``--page-size``)."""
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def main(run: Callable[[], int] = run_memctl, prog: str = "memctl") -> None:
    """Entry point: a MemctlError is one line on stderr and its exit code, never a traceback."""
    try:
        try:
            code = run()
        except OSError as exc:
            raise os_error(exc) from exc
        except OverflowError as exc:  # a number or date given beyond what can be stored
            raise UsageError(f"a value out of range: {exc}") from exc
    except MemctlError as exc:
        if os.environ.get("MEMCTL_DEBUG"):
            raise
        _error(_scrubbed(f"{prog}: error: {' '.join(exc.worded(flag).split())}"))
        code = exc.exit_code
    except KeyboardInterrupt:
        _error(f"{prog}: interrupted")
        code = INTERRUPTED_EXIT
    except Exception as exc:
        if os.environ.get("MEMCTL_DEBUG"):
            raise
        _error(
            _scrubbed(f"{prog}: internal error: {type(exc).__name__}: {exc}")
            + " (set MEMCTL_DEBUG=1 for the traceback)"
        )
        code = 70
    sys.exit(code)


def script() -> None:
    """``memctl`` as a program (the installed script, ``python -m memctl``): ``main``. A
    recall (QUICK_EXIT) runs without the cyclic garbage collector and then leaves at once,
    without the interpreter's teardown: its work is done by then and its store closed. Its
    output is flushed first, through ``main``: output nobody reads any more (a closed pipe)
    is the one-line error of any failed write. A test or a resident process's child calling
    ``main`` itself is not concerned."""
    quick = command_of(sys.argv[1:]) in QUICK_EXIT
    if quick:
        import gc

        gc.disable()
    try:
        main()
    except SystemExit as done:
        if not quick or not isinstance(done.code, int):
            raise
        _leave(done.code)


def _leave(code: int) -> None:
    """Exit at once with ``code`` once the output is flushed (or with a failed flush's)."""
    try:
        main(lambda: _flushed(code))
    except SystemExit as flushed:
        os._exit(flushed.code if isinstance(flushed.code, int) else 1)


def _flushed(code: int) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    return code
