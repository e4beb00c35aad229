"""The ``memctl`` command: global options, command groups, and the one error wrapper."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from memctl import __version__
from memctl.cli import bench, config_cmd, exchange, memory, model_cmd, recall, status
from memctl.cli.common import home_path, new_typer, split_assignments
from memctl.cli.render import err_console
from memctl.errors import MemctlError

app = new_typer(
    help="memctl: local long-term memory for AI assistants.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    home: Annotated[
        str | None,
        typer.Option(
            "--home",
            envvar="MEMCTL_HOME",
            show_envvar=True,
            help="Data directory (default: $XDG_DATA_HOME/memctl).",
        ),
    ] = None,
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config",
            "-c",
            metavar="KEY=VALUE",
            help="Set a config key for this run only; repeatable.",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """memctl keeps what your assistants learn, and hands it back when it matters."""
    ctx.obj = {"home": home_path(home), "config": split_assignments(config or [])}


for group in (memory, recall, status, exchange):
    app.add_typer(group.app)
app.add_typer(config_cmd.app, name="config", help="Show and change configuration.")
app.add_typer(model_cmd.app, name="model", help="Install and inspect the embedding model.")
app.command("reembed")(model_cmd.reembed)
app.add_typer(
    bench.app, name="bench", help="Measure recall quality (LoCoMo, LongMemEval) and speed."
)


def main() -> None:
    """Entry point: a MemctlError is one line on stderr and its exit code, never a traceback."""
    try:
        app()
    except MemctlError as exc:
        if os.environ.get("MEMCTL_DEBUG"):
            raise
        err_console.print(f"memctl: error: {exc}", style="red", markup=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err_console.print("memctl: interrupted", markup=False)
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("MEMCTL_DEBUG"):
            raise
        err_console.print(
            f"memctl: internal error: {type(exc).__name__}: {exc} "
            "(set MEMCTL_DEBUG=1 for the traceback)",
            style="red",
            markup=False,
            soft_wrap=True,
        )
        sys.exit(70)


if __name__ == "__main__":
    main()
